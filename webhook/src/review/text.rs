//! What people read: deny messages, warnings (one line each, at most 120
//! characters, as the Kubernetes API conventions recommend) and audit
//! annotations (keys the API server accepts once it prefixes the webhook's
//! name).

use std::borrow::Cow;

use policies::Finding;
use policies::finding::cut_at_word;
use serde::Serialize;

/// The Kubernetes recommendation for one warning.
pub const MAX_WARNING_CHARS: usize = policies::finding::SHORT_LINE_CHARS;

/// At most this many findings are listed in a deny message or as warnings
/// (then one line says how many more): the API server passes both to the
/// client whole.
pub const MAX_LISTED: usize = 20;

/// The API server keeps at most this many characters of warning text per
/// request, from every webhook together (its warning recorder; exact
/// duplicates are dropped). Past it, it cuts each warning to 256 characters
/// and drops whatever comes after the limit.
pub const API_SERVER_WARNING_CHARS: usize = 4096;

/// lifeguard's share of [`API_SERVER_WARNING_CHARS`] in one answer: both
/// `/mutate` and `/validate` may answer the same request, and the API
/// server's own warnings (deprecations, Pod Security) and other webhooks
/// need room too. Within it every answer keeps its "N more" line.
pub const WARNING_BUDGET_CHARS: usize = 1800;

// Both endpoints' answers together stay within what the API server keeps.
const _: () = assert!(2 * WARNING_BUDGET_CHARS < API_SERVER_WARNING_CHARS);

/// At most this many findings go into the `findings` audit annotation.
pub const MAX_AUDITED: usize = 100;

/// Fits warning lines into [`MAX_LISTED`] lines and [`WARNING_BUDGET_CHARS`]
/// characters; when some do not fit, the last line says how many `what`
/// (`findings`, `fixes`) were left out. The nouns differ between endpoints
/// so the API server never drops one endpoint's line as a duplicate of the
/// other's.
pub fn fitted(lines: Vec<String>, what: &str) -> Vec<String> {
    let chars = |line: &str| line.chars().count();
    let total: usize = lines.iter().map(|l| chars(l)).sum();
    if lines.len() <= MAX_LISTED && total <= WARNING_BUDGET_CHARS {
        return lines;
    }
    let more = |n: usize| format!("... and {n} more {what} (`lifeguard lint` lists them all)");
    // The count is at most the number of lines, so this reserves enough.
    let reserve = chars(&more(lines.len()));
    let mut used = 0;
    let mut kept = Vec::new();
    for line in &lines {
        let n = chars(line);
        if kept.len() + 1 >= MAX_LISTED || used + n + reserve > WARNING_BUDGET_CHARS {
            break;
        }
        used += n;
        kept.push(line.clone());
    }
    let left_out = lines.len() - kept.len();
    kept.push(more(left_out));
    kept
}

/// One warning line: printable, single line, at most [`MAX_WARNING_CHARS`]
/// characters (cut after a whole word, with `...`, when longer).
pub fn warning_line(text: &str) -> String {
    let clean: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    cut_at_word(&clean, MAX_WARNING_CHARS)
}

/// A finding's warning: `rule: short`, or, for one the old object already
/// had, `rule (already there before this update): short`. The rules write
/// the short form to fit; a long name the user gave (a container, a path)
/// can still make it longer, and then it is cut after a whole word.
pub fn finding_warning(finding: &Finding, preexisting: bool) -> String {
    let tag = if preexisting { " (already there before this update)" } else { "" };
    warning_line(&format!("{}{tag}: {}", finding.rule, finding.located_short()))
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
        // The fix `lint` names; an info finding's opt-in fix is named as such.
        let fix = match (f.automatic_fix(), f.fix_note()) {
            (Some(fix), _) => format!("lifeguard fix (or /mutate) would apply: {}", fix.description),
            (None, Ok(opt_in)) => format!("fix: {opt_in}"),
            (None, Err(_)) => "no automatic fix".to_owned(),
        };
        text.push_str(&format!("\n- {}{container} at {}: {}; help: {}; {fix}", f.rule, f.pointer, f.message, f.help));
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
            message: f.located_message(),
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
    message: Cow<'a, str>,
    preexisting: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lists_are_cut_with_a_count() {
        let lines: Vec<String> = (0..25).map(|i| i.to_string()).collect();
        let cut = fitted(lines, "findings");
        assert_eq!(cut.len(), MAX_LISTED);
        assert_eq!(cut[MAX_LISTED - 1], "... and 6 more findings (`lifeguard lint` lists them all)");
        assert_eq!(fitted(vec!["a".into()], "fixes"), ["a"]);
    }

    #[test]
    fn long_lines_fit_the_budget_with_their_count() {
        let lines: Vec<String> = (0..20).map(|i| format!("{i:03}{}", "x".repeat(MAX_WARNING_CHARS - 3))).collect();
        let cut = fitted(lines, "fixes");
        let total: usize = cut.iter().map(|l| l.chars().count()).sum();
        assert!(total <= WARNING_BUDGET_CHARS, "{total}");
        let kept = cut.len() - 1;
        assert_eq!(kept, 14);
        assert_eq!(cut[kept], format!("... and {} more fixes (`lifeguard lint` lists them all)", 20 - kept));
        // Exactly at the budget nothing is cut.
        let exact: Vec<String> = (0..15).map(|_| "y".repeat(WARNING_BUDGET_CHARS / 15)).collect();
        assert_eq!(fitted(exact.clone(), "fixes"), exact);
    }

    #[test]
    fn the_deny_message_names_the_fix_lint_names() {
        let fix = |d: &str, applicability| {
            Some(policies::Fix { description: d.to_owned(), operations: Vec::new(), applicability })
        };
        let finding = |rule: &str, fix: Option<policies::Fix>| Finding {
            rule: rule.to_owned(),
            severity: policies::Severity::Info,
            message: "m".to_owned(),
            short: "m".to_owned(),
            help: "h".to_owned(),
            pointer: "/spec".to_owned(),
            container: None,
            naming: policies::Naming::Prefix,
            fix,
            availability: policies::rules::find(rule).map(|r| r.fix),
            assumptions: Vec::new(),
        };
        let applied = finding("prestop-sleep-only", fix("native sleep", policies::Applicability::Automatic));
        let opt_in = finding("prestop-sleep-only", fix("native sleep", policies::Applicability::OptIn));
        let none = finding("probe-endpoint-reused", None);
        let message = deny_message("Deployment/web", "policy default", &[&applied, &opt_in, &none]);
        let lines: Vec<&str> = message.lines().skip(1).collect();
        assert!(lines[0].ends_with("; lifeguard fix (or /mutate) would apply: native sleep"), "{message}");
        let Ok(note) = opt_in.fix_note() else { panic!("an opt-in note") };
        assert!(lines[1].ends_with(&format!("; fix: {note}")) && note.contains("fixInfoFindings: true"), "{message}");
        assert!(lines[2].ends_with("; no automatic fix"), "{message}");
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
        // Words are never cut: the line ends after the last one that fits.
        let words = "probe-endpoint-reused: container \"vllm\": ".to_owned() + &"forking a process ".repeat(8);
        let line = warning_line(&words);
        assert!(line.chars().count() <= MAX_WARNING_CHARS, "{line}");
        assert!(line.ends_with(" process...") || line.ends_with(" forking...") || line.ends_with(" a..."), "{line}");
        assert!(words.starts_with(line.trim_end_matches("...")), "{line}");
    }
}
