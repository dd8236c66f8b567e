//! The summary line every format ends with (on stderr for machine formats).

use policies::Severity;

use crate::outcome::Outcome;

/// `3 findings (1 error, 2 warnings, 0 info) in 4 objects across 2 files; 2 suppressed; 1 input error; 1 input with no object checked; policy .lifeguard.yaml`
pub fn line(out: &Outcome) -> String {
    let n = out.finding_count();
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut s = format!(
        "{} ({}, {}, {}) in {} across {}",
        plural(n, "finding", "findings"),
        plural(out.count(Severity::Error), "error", "errors"),
        plural(out.count(Severity::Warning), "warning", "warnings"),
        plural(out.count(Severity::Info), "info", "info"),
        plural(out.objects, "object", "objects"),
        match out.origin {
            crate::outcome::Origin::File => plural(out.files, "file", "files"),
            crate::outcome::Origin::Cluster => plural(out.files, "namespace", "namespaces"),
        },
    );
    // Suppressed findings are counted, not hidden: a reviewer sees how many
    // the policy and the annotations set aside.
    let suppressed = out.suppressed_count();
    if suppressed > 0 {
        s.push_str(&format!("; {suppressed} suppressed"));
    }
    let baselined = out.baselined_count();
    if baselined > 0 {
        s.push_str(&format!("; {baselined} accepted by the baseline"));
    }
    if !out.errors.is_empty() {
        s.push_str(&format!("; {}", plural(out.errors.len(), "input error", "input errors")));
    }
    // Never silent: the inputs that gave no object to check are counted
    // where the run's result is read, their notes say why.
    if !out.notes.is_empty() {
        s.push_str(&format!("; {} with no object checked", plural(out.notes.len(), "input", "inputs")));
    }
    if let Some(policy) = &out.policy {
        s.push_str(&format!("; {policy}"));
    }
    s
}
