//! What people read: deny messages, warnings (one line each, at most 120
//! characters, as the Kubernetes API conventions recommend) and audit
//! annotations (keys the API server accepts once it prefixes the webhook's
//! name).

use policies::Finding;
use serde::Serialize;

/// The Kubernetes recommendation for one warning.
pub const MAX_WARNING_CHARS: usize = 120;

/// At most this many findings are listed in a deny message or as warnings
/// (then one line says how many more): the API server passes both to the
/// client whole, and caps warnings at a few KiB anyway.
pub const MAX_LISTED: usize = 20;

/// At most this many findings go into the `findings` audit annotation.
pub const MAX_AUDITED: usize = 100;

/// Cuts a list of lines at [`MAX_LISTED`], ending with a line naming the rest.
pub fn capped(mut lines: Vec<String>) -> Vec<String> {
    if lines.len() > MAX_LISTED {
        let more = lines.len() - (MAX_LISTED - 1);
        lines.truncate(MAX_LISTED - 1);
        lines.push(format!("... and {more} more findings (`lifeguard lint` lists them all)"));
    }
    lines
}

/// One warning line: printable, single line, at most [`MAX_WARNING_CHARS`]
/// characters (cut with `...`).
pub fn warning_line(text: &str) -> String {
    let clean: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    if clean.chars().count() <= MAX_WARNING_CHARS {
        return clean;
    }
    let mut cut: String = clean.chars().take(MAX_WARNING_CHARS - 3).collect();
    cut.truncate(cut.trim_end().len());
    cut.push_str("...");
    cut
}

/// A finding's warning: `rule: message`, or, for one the old object already
/// had, `rule (already there before this update): message`.
pub fn finding_warning(finding: &Finding, preexisting: bool) -> String {
    let tag = if preexisting { " (already there before this update)" } else { "" };
    warning_line(&format!("{}{tag}: {}", finding.rule, finding.message))
}

/// The deny message: who is denied, then one line per finding.
pub fn deny_message(object: &str, policy: &str, findings: &[&Finding]) -> String {
    let n = findings.len();
    let mut text = format!(
        "lifeguard denied {object}: {n} finding{} at or above the deny severity of {policy}",
        if n == 1 { "" } else { "s" }
    );
    for f in findings.iter().take(MAX_LISTED) {
        let container = f.container.as_deref().map(|c| format!(" container {c:?}")).unwrap_or_default();
        let fix = match &f.fix {
            Some(fix) => format!("lifeguard fix (or /mutate) would apply: {}", fix.description),
            None => "no automatic fix".to_owned(),
        };
        let body = f.message.strip_prefix(&format!("container {:?}: ", f.container.as_deref().unwrap_or_default()));
        text.push_str(&format!(
            "\n- {}{container} at {}: {}; help: {}; {fix}",
            f.rule,
            f.pointer,
            body.unwrap_or(&f.message),
            f.help
        ));
    }
    if n > MAX_LISTED {
        text.push_str(&format!("\n- ... and {} more (`lifeguard lint` lists them all)", n - MAX_LISTED));
    }
    text
}

/// The `findings` audit annotation: the findings as a JSON array.
pub fn findings_annotation(findings: &[(&Finding, bool)]) -> String {
    let items: Vec<Audited<'_>> = findings
        .iter()
        .take(MAX_AUDITED)
        .map(|(f, pre)| Audited {
            rule: &f.rule,
            severity: f.severity.as_str(),
            container: f.container.as_deref(),
            pointer: &f.pointer,
            message: &f.message,
            preexisting: *pre,
        })
        .collect();
    serde_json::to_string(&items).unwrap_or_default()
}

/// One finding in the audit annotation. A struct rather than `json!`: it
/// is written on every review, and a map per finding costs more than the
/// string it becomes.
#[derive(Serialize)]
struct Audited<'a> {
    rule: &'a str,
    severity: &'a str,
    container: Option<&'a str>,
    pointer: &'a str,
    message: &'a str,
    preexisting: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lists_are_cut_with_a_count() {
        let lines: Vec<String> = (0..25).map(|i| i.to_string()).collect();
        let cut = capped(lines);
        assert_eq!(cut.len(), MAX_LISTED);
        assert_eq!(cut[MAX_LISTED - 1], "... and 6 more findings (`lifeguard lint` lists them all)");
        assert_eq!(capped(vec!["a".into()]), ["a"]);
    }

    #[test]
    fn warnings_are_one_short_printable_line() {
        assert_eq!(warning_line("a\nb\tc"), "a b c");
        let long = "x".repeat(300);
        let line = warning_line(&long);
        assert_eq!(line.chars().count(), MAX_WARNING_CHARS);
        assert!(line.ends_with("..."));
        let wide = "é".repeat(200);
        assert_eq!(warning_line(&wide).chars().count(), MAX_WARNING_CHARS);
    }
}
