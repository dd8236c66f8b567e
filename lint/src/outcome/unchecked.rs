//! Why an input gave no object to check: the words of its note, so a run
//! that checked nothing of an input never passes in silence.

use policies::model::{names_custom_pod_kind, names_pod_kind};

use super::input_error::InputError;
use crate::input::blank::holds_no_document;

/// Kinds named in a note before "and N more".
const KINDS_SHOWN: usize = 5;

/// The note of an input that was read and parsed but gave no object to
/// check: the kinds it holds (`other_kinds`, none of which has a pod
/// template lifeguard reads), else why it holds none.
pub fn no_object(text: &str, other_kinds: &[String]) -> String {
    if !other_kinds.is_empty() {
        // A pod-bearing kind gave nothing because it has no containers (a
        // Pod without a spec); any other kind, because it has no pod template.
        let (empty, others): (Vec<&String>, Vec<&String>) =
            other_kinds.iter().partition(|k| names_pod_kind(k) || names_custom_pod_kind(k));
        let mut why = Vec::new();
        if !empty.is_empty() {
            why.push(format!("its {} has no containers", listed(&empty)));
        }
        if !others.is_empty() {
            why.push(format!("its kinds ({}) hold no pod template lifeguard reads", listed(&others)));
        }
        return format!("no object checked: {}", why.join("; "));
    }
    if holds_no_document(text) {
        "no object checked: it holds no document".to_owned()
    } else {
        "no object checked: no document in it has a `kind` (not a Kubernetes manifest)".to_owned()
    }
}

/// The note of a file a Kustomize build of the same walk reads (a base's
/// resource, a patch, a component's file), naming the kustomization that
/// does: its objects are checked as built, never alone (a patch is not an
/// object).
pub fn read_by_build(kustomization: &std::path::Path) -> String {
    format!(
        "not linted on its own: {} reads it (a resource, patch or component file); its objects are checked as built",
        kustomization.display()
    )
}

/// Kinds as a list, the first few named.
fn listed(kinds: &[&String]) -> String {
    let mut s = kinds.iter().take(KINDS_SHOWN).map(|k| k.as_str()).collect::<Vec<_>>().join(", ");
    if kinds.len() > KINDS_SHOWN {
        s.push_str(&format!(" and {} more", kinds.len() - KINDS_SHOWN));
    }
    s
}

/// Template markers of tools other than Helm, with what they are.
const MARKERS: [(&str, &str); 5] = [
    ("{{", "Go or Jinja template"),
    ("{%", "Jinja template"),
    ("{#", "Jinja template"),
    ("${", "Terraform or envsubst template"),
    ("%{", "Terraform template"),
];

/// Another tool's template marker in `text`, outside comments: the one
/// on the line the parser stopped at (`error_line`) if it holds one, else
/// the first; `(line, marker, what it is)`. Asked only of a file that does
/// not parse: a manifest with `${IMAGE}` in a value parses and is linted.
pub fn templated(text: &str, error_line: Option<u32>) -> Option<(u32, &'static str, &'static str)> {
    let marked = text.lines().enumerate().filter_map(|(i, line)| {
        let code = line.trim_start();
        if code.starts_with('#') {
            return None;
        }
        let (_, marker, what) = MARKERS.iter().filter_map(|&(m, w)| Some((code.find(m)?, m, w))).min()?;
        Some((u32::try_from(i + 1).unwrap_or(u32::MAX), marker, what))
    });
    let mut first = None;
    for found in marked {
        if Some(found.0) == error_line {
            return Some(found);
        }
        first = first.or(Some(found));
        if error_line.is_some_and(|l| found.0 > l) {
            break;
        }
    }
    first
}

/// Settles the syntax error `e` of one input that looks like another
/// tool's template: met in a walk (`walked`), its note is returned and the
/// error is to be dropped (the file is skipped); named directly, the error
/// stays and now says what the file looks like.
pub fn settle_templated(e: &mut InputError, text: &str, walked: bool) -> Option<InputError> {
    let (line, marker, what) = templated(text, e.line)?;
    if !walked {
        e.message.push_str(&templated_hint(line, marker, what));
        return None;
    }
    let message = templated_note(line, marker, what);
    Some(InputError { file: e.file.clone(), line: Some(line), column: None, message })
}

/// The note of a file met in a walk that does not parse because it is
/// another tool's template: skipped, never an input error.
fn templated_note(line: u32, marker: &str, what: &str) -> String {
    format!(
        "not linted: templated text ({what}: `{marker}` at line {line}), not YAML until rendered; lint what it renders to"
    )
}

/// What a syntax error of a file named directly adds when the file looks
/// templated.
fn templated_hint(line: u32, marker: &str, what: &str) -> String {
    format!(" (it looks like templated text, {what}: `{marker}` at line {line}; lint what it renders to)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_names_the_kinds_or_why_there_are_none() {
        let kinds = |k: &[&str]| k.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let one = no_object("kind: Service\n", &kinds(&["Service"]));
        assert_eq!(one, "no object checked: its kinds (Service) hold no pod template lifeguard reads");
        let many = no_object("", &kinds(&["A", "B", "C", "D", "E", "F", "G"]));
        assert!(many.contains("(A, B, C, D, E and 2 more)"), "{many}");
        assert_eq!(no_object("# only\n---\n", &[]), "no object checked: it holds no document");
        assert!(no_object("a: 1\n", &[]).contains("has a `kind`"));
        let pod = no_object("", &kinds(&["Pod", "Service"]));
        assert_eq!(
            pod,
            "no object checked: its Pod has no containers; its kinds (Service) hold no pod template lifeguard reads"
        );
    }

    #[test]
    fn the_first_marker_outside_a_comment_is_named() {
        let jinja = "# {{ in a comment }}\nkind: Deployment\nmetadata:\n  name: {{ name }}\n";
        assert_eq!(templated(jinja, None), Some((4, "{{", "Go or Jinja template")));
        assert_eq!(templated("a: 1\n%{ if x }\nb: ${y}\n", None), Some((2, "%{", "Terraform template")));
        assert_eq!(templated("a: ${x} {{ y }}\n", None), Some((1, "${", "Terraform or envsubst template")));
        assert_eq!(templated("a: [1, 2]\nb: {c: d}\n", Some(1)), None);
        // The marker where the parser stopped, over an earlier one.
        let terraform = "a: ${x}\n%{ if y ~}\nb: 1\n";
        assert_eq!(templated(terraform, Some(2)), Some((2, "%{", "Terraform template")));
        assert_eq!(templated(terraform, Some(3)), Some((1, "${", "Terraform or envsubst template")));
    }
}
