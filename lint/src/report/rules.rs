//! `lifeguard rules` and `lifeguard explain`, generated from the registry.

use std::fmt::Write as _;

use policies::rules::{FixAvailability, RULES, Rule};

/// One line per rule: name, default severity, fixable, summary.
pub fn text() -> String {
    let width = RULES.iter().map(|r| r.name.len()).max().unwrap_or(0);
    let mut s = String::new();
    for r in RULES {
        let fix = if matches!(r.fix, FixAvailability::Fix(_)) { "fix" } else { "   " };
        let _ = writeln!(s, "{:width$}  {:7}  {fix}  {}", r.name, r.severity.as_str(), r.summary);
    }
    s
}

/// The rules as a JSON array (name, severity, fixable, summary).
pub fn json() -> String {
    let items: Vec<serde_json::Value> = RULES
        .iter()
        .map(|r| {
            serde_json::json!({
                "name": r.name,
                "severity": r.severity.as_str(),
                "fixable": matches!(r.fix, FixAvailability::Fix(_)),
                "summary": r.summary,
            })
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&items).unwrap_or_else(|_| "[]".to_owned());
    s.push('\n');
    s
}

/// A rule's full documentation.
pub fn explain(r: &Rule) -> String {
    let fix = match r.fix {
        FixAvailability::Fix(what) => format!("Automatic fix (`lifeguard fix`): {what}"),
        FixAvailability::NoFix(why) => format!("No automatic fix: {why}"),
    };
    format!("# {}\n\nDefault severity: {}. {}\n\n{}\n{fix}\n", r.name, r.severity, r.summary, r.doc.trim_end())
}
