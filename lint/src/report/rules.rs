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
    // The doc's own "## Fix" section says what the fix does, or why there is none.
    let fix = match r.fix {
        FixAvailability::Fix(_) => "yes (`lifeguard fix`)",
        FixAvailability::NoFix(_) => "none",
    };
    format!(
        "# {}

Finds: {}.
Default severity: {}. Automatic fix: {fix}.

{}
",
        r.name,
        r.summary,
        r.severity,
        r.doc.trim_end()
    )
}
