//! Maps a line of what Helm rendered to the line of the template that wrote
//! it. Helm's `# Source:` comment names the template but counts nothing:
//! `{{ if }}`/`{{- end }}` lines vanish, `include`/`nindent` add lines the
//! template does not hold, a multi-document template is split into several
//! documents and Helm reorders documents by kind. So the rendered document
//! is aligned with the template text (a line diff on each line's
//! indentation and key), and a rendered line maps to a template line only
//! when the diff pairs them and their parents are paired too; any other line
//! maps to nothing, and the caller keeps the rendered position.

use similar::{Algorithm, DiffOp, capture_diff_slices};

/// Which template line, if any, holds each line of one rendered document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineMap {
    /// Indexed by the rendered line's offset in the document (0 = its first
    /// line); the template's 1-based line.
    lines: Vec<Option<u32>>,
}

impl LineMap {
    /// The template line holding the same key as the rendered line at
    /// `offset` (0-based within the document), when one is matched with
    /// confidence.
    pub fn get(&self, offset: usize) -> Option<u32> {
        self.lines.get(offset).copied().flatten()
    }
}

/// One line that takes part in the alignment.
#[derive(Debug)]
struct Line {
    /// 0-based line index in its text.
    index: usize,
    indent: usize,
    /// What must be equal on both sides: indentation and key, or
    /// indentation and the whole line when it has no key.
    signature: String,
    /// The line without indentation.
    content: String,
    /// Whether the line holds no template action: then the rendered line
    /// must be the same text, not only the same key.
    literal: bool,
    /// The nearest line above with less indentation (its index in the
    /// same `Vec<Line>`): the key this one sits under.
    parent: Option<usize>,
}

/// Aligns a rendered document with its template's text.
pub fn align(rendered: &str, template: &str) -> LineMap {
    let rendered_lines = lines_of(rendered.lines().enumerate());
    let mut lines = vec![None; rendered.lines().count()];
    let mut best: Option<Vec<(usize, usize)>> = None;
    let mut tie = false;
    for part in documents(template) {
        let matched = confident(&rendered_lines, &part, &pairs(&rendered_lines, &part));
        let best_count = best.as_ref().map_or(0, Vec::len);
        if matched.len() > best_count {
            tie = false;
            best = Some(matched);
        } else if matched.len() == best_count && best_count > 0 {
            tie = true;
        }
    }
    // Two template documents that match equally well (the same shape twice):
    // either could be the source, so no line is claimed.
    if tie {
        return LineMap { lines };
    }
    if let Some(matched) = best {
        for (r, t) in matched {
            if let Some(slot) = lines.get_mut(r) {
                *slot = u32::try_from(t + 1).ok();
            }
        }
    }
    LineMap { lines }
}

/// The template's documents, split at `---` lines (Helm splits a template's
/// output there too), each as its aligned lines.
fn documents(template: &str) -> Vec<Vec<Line>> {
    let mut parts: Vec<Vec<(usize, &str)>> = vec![Vec::new()];
    for (i, line) in template.lines().enumerate() {
        if is_document_marker(line) {
            parts.push(Vec::new());
        } else if let Some(part) = parts.last_mut() {
            part.push((i, line));
        }
    }
    parts.into_iter().map(|p| lines_of(p.into_iter())).collect()
}

fn is_document_marker(line: &str) -> bool {
    let line = line.trim_end();
    line == "---" || line.starts_with("--- ") || line.starts_with("---#")
}

/// The lines that can be matched, with their parents: blank lines, comments
/// and lines that are only template actions render to nothing that a
/// finding can point at.
fn lines_of<'a>(text: impl Iterator<Item = (usize, &'a str)>) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::new();
    for (index, raw) in text {
        let content = raw.trim();
        if content.is_empty() || content.starts_with('#') || is_action_only(content) || is_document_marker(raw) {
            continue;
        }
        let indent = raw.len() - raw.trim_start().len();
        let signature = format!("{indent}|{}", key_of(content).unwrap_or(content));
        let parent = out.iter().rposition(|l| l.indent < indent);
        let literal = !content.contains("{{");
        out.push(Line { index, indent, signature, content: content.to_owned(), literal, parent });
    }
    out
}

/// `{{- if .Values.x }}`, `{{ include "x" . | nindent 4 }}`: a line that is
/// one template action and nothing else.
fn is_action_only(content: &str) -> bool {
    content.starts_with("{{") && content.ends_with("}}")
}

/// The key part of a mapping line, with any list dashes before it
/// (`- name:` of `- name: api`); `None` when the line holds no plain key.
/// Values are left out: the template writes `{{ .Values.x }}` where the
/// rendered line has the value.
fn key_of(content: &str) -> Option<&str> {
    let mut rest = content;
    while let Some(after) = rest.strip_prefix("- ") {
        rest = after.trim_start();
    }
    let end = rest.find(": ").or_else(|| rest.ends_with(':').then(|| rest.len() - 1))?;
    let key = &rest[..end];
    if key.is_empty() || key.contains("{{") || key.starts_with(['{', '[', '"', '\'']) {
        return None;
    }
    let start = content.len() - rest.len();
    Some(&content[..start + end + 1])
}

/// The (rendered, template) pairs of a line diff, as indexes into the two
/// `Vec<Line>`s.
fn pairs(rendered: &[Line], template: &[Line]) -> Vec<(usize, usize)> {
    let old: Vec<&str> = template.iter().map(|l| l.signature.as_str()).collect();
    let new: Vec<&str> = rendered.iter().map(|l| l.signature.as_str()).collect();
    let mut out = Vec::new();
    for op in capture_diff_slices(Algorithm::Myers, &old, &new) {
        if let DiffOp::Equal { old_index, new_index, len } = op {
            out.extend((0..len).map(|k| (new_index + k, old_index + k)));
        }
    }
    out
}

/// The pairs whose every parent is paired with the template line's parent
/// (a key under an `include`d block is not claimed by a same-named key of
/// the template elsewhere), as (rendered line index, template line index).
fn confident(rendered: &[Line], template: &[Line], pairs: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut partner: Vec<Option<usize>> = vec![None; rendered.len()];
    for &(r, t) in pairs {
        partner[r] = Some(t);
    }
    // Parents come first, so one pass in order decides each line after its parent.
    let mut sure = vec![false; rendered.len()];
    for (r, line) in rendered.iter().enumerate() {
        let Some(t) = partner[r] else { continue };
        // `kind: Service` is not `kind: Deployment`, though both hold `kind`.
        if template[t].literal && template[t].content != line.content {
            continue;
        }
        sure[r] = match (line.parent, template[t].parent) {
            (None, None) => true,
            (Some(rp), Some(tp)) => sure[rp] && partner[rp] == Some(tp),
            _ => false,
        };
    }
    rendered
        .iter()
        .enumerate()
        .filter(|(r, _)| sure[*r])
        .filter_map(|(r, line)| Some((line.index, template[partner[r]?].index)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The template line each rendered line maps to (1-based, `None` for
    /// no confident match).
    fn mapped(rendered: &str, template: &str) -> Vec<Option<u32>> {
        let map = align(rendered, template);
        (0..rendered.lines().count()).map(|i| map.get(i)).collect()
    }

    #[test]
    fn an_if_on_line_one_and_templated_values_still_map_to_the_key() {
        let template = "{{- if .Values.enabled }}\napiVersion: apps/v1\nkind: Deployment\nspec:\n  replicas: {{ .Values.replicas }}\n{{- end }}\n";
        let rendered = "apiVersion: apps/v1\nkind: Deployment\nspec:\n  replicas: 3\n";
        assert_eq!(mapped(rendered, template), vec![Some(2), Some(3), Some(4), Some(5)]);
    }

    #[test]
    fn lines_an_include_added_map_to_nothing() {
        let template = "spec:\n  template:\n    spec:\n      {{- include \"pod\" . | nindent 6 }}\n";
        let rendered = "spec:\n  template:\n    spec:\n      containers:\n      - name: api\n        livenessProbe:\n";
        assert_eq!(mapped(rendered, template), vec![Some(1), Some(2), Some(3), None, None, None]);
    }

    #[test]
    fn a_key_under_an_unmatched_parent_is_not_claimed() {
        // The rendered `port:` sits under a key the template does not write
        // (`httpGet:` came from an include); the template's `port:` is a
        // different field.
        let template = "containers:\n  - name: api\n    ports:\n      - port: 80\n";
        let rendered = "containers:\n  - name: api\n    probe:\n      - port: 80\n";
        assert_eq!(mapped(rendered, template), vec![Some(1), Some(2), None, None]);
    }

    #[test]
    fn each_document_of_a_multi_document_template_maps_to_its_own_part() {
        let template = "apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a\nspec:\n  replicas: 1\n";
        let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a\nspec:\n  replicas: 1\n";
        assert_eq!(mapped(deployment, template), vec![Some(6), Some(7), Some(8), Some(9), Some(10), Some(11)]);
        let service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n";
        assert_eq!(mapped(service, template), vec![Some(1), Some(2), Some(3), Some(4)]);
    }

    #[test]
    fn two_template_documents_of_the_same_shape_claim_no_line() {
        let template =
            "kind: ConfigMap\ndata:\n  a: {{ .Values.a }}\n---\nkind: ConfigMap\ndata:\n  a: {{ .Values.b }}\n";
        assert_eq!(mapped("kind: ConfigMap\ndata:\n  a: x\n", template), vec![None, None, None]);
    }

    #[test]
    fn keys_are_found_after_list_dashes_and_not_in_flow_or_templated_keys() {
        assert_eq!(key_of("- name: api"), Some("- name:"));
        assert_eq!(key_of("livenessProbe:"), Some("livenessProbe:"));
        assert_eq!(key_of("image: registry:5000/x"), Some("image:"));
        assert_eq!(key_of("{{ $k }}: v"), None);
        assert_eq!(key_of("- {path: /x}"), None);
        assert_eq!(key_of("- sleep"), None);
    }
}
