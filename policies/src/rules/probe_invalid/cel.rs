//! `probe-invalid` in CEL, partly: the part an admission policy can see.
//! The API server rejects most invalid probes itself before any admission
//! policy runs (negative values, no or several handlers, ports out of
//! range), and replaces a 0 by the default before, so neither reaches CEL;
//! a `pgrep` pattern longer than a process name needs the command line
//! read. What is left, exactly: an exec command whose program is empty.

use crate::cel::check::CelCheck;
use crate::policy::Policy;
use crate::rules::Rule;

/// The probes, as CEL paths from a container `c`, and their words.
const PROBES: [(&str, &str); 3] =
    [("c.startupProbe", "startup"), ("c.livenessProbe", "liveness"), ("c.readinessProbe", "readiness")];

/// Whether probe `probe` is an exec whose program is empty (or blank).
pub(crate) fn empty_program(probe: &str) -> String {
    format!(
        "({} && size({probe}.exec.command) > 0 && {probe}.exec.command[0].trim() == '')",
        crate::cel::fragments::present(&format!("{probe}.exec.command"))
    )
}

pub(crate) fn checks(rule: &Rule, policy: &Policy) -> Vec<CelCheck> {
    let empty: Vec<(String, &str)> = PROBES.iter().map(|(p, word)| (empty_program(p), *word)).collect();
    vec![CelCheck {
        rule: rule.name,
        severity: policy.severity_override(rule.name).unwrap_or(rule.severity),
        per_container: true,
        bad: empty.iter().map(|(e, _)| e.as_str()).collect::<Vec<_>>().join(" || "),
        describe: format!(
            "'container \"' + c.name + '\": ' + [{}].filter(w, w != '').join(', ') + ' exec command starts with an empty program'",
            empty.iter().map(|(e, word)| format!("{e} ? '{word}' : ''")).collect::<Vec<_>>().join(", ")
        ),
        tail: ", so every attempt fails: put the program to run first".to_owned(),
    }]
}
