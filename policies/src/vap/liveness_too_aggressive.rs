//! `liveness-too-aggressive` in CEL, exactly: a liveness probe whose one
//! failure restarts the container, or whose failure window is shorter than
//! the policy's minimum, with the API server's defaults for unset fields.

use super::Check;
use crate::policy::Policy;
use crate::rules::liveness_too_aggressive::RULE;

/// A liveness field of container `c`, or its default.
fn field(name: &str, default: i64) -> String {
    format!("(has(c.livenessProbe.{name}) ? c.livenessProbe.{name} : {default})")
}

pub(super) fn check(policy: &Policy) -> Check {
    let s = &policy.settings;
    let (period, failure, timeout) =
        (field("periodSeconds", 10), field("failureThreshold", 3), field("timeoutSeconds", 1));
    // Values below 1 are probe-invalid's (the API server rejects them).
    let bad = format!(
        "has(c.livenessProbe) && {period} >= 1 && {failure} >= 1 && {timeout} >= 1 && \
         (({failure} == 1 && {failure} < {min_failure}) || {failure} * {period} < {min_budget})",
        min_failure = s.min_liveness_failure_threshold,
        min_budget = s.min_liveness_budget_seconds,
    );
    Check {
        rule: RULE.name,
        severity: policy.severity_override(RULE.name).unwrap_or(RULE.severity),
        per_container: true,
        bad,
        describe: format!(
            "'container \"' + c.name + '\": liveness failureThreshold ' + string({failure}) + ' x periodSeconds ' + \
             string({period}) + ' with timeoutSeconds ' + string({timeout})"
        ),
        tail: format!(
            ": tolerate a GC pause: failureThreshold of at least {} and a window of {} s or more",
            s.min_liveness_failure_threshold, s.min_liveness_budget_seconds
        ),
    }
}
