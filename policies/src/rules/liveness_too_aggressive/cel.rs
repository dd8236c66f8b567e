//! `liveness-too-aggressive` in CEL, exactly: a liveness probe whose one
//! failure restarts the container, or whose failure window is shorter than
//! the policy's minimum, with the API server's defaults for unset fields.
//! Its fix, for `export map`, raises the failure threshold (and a 1 s
//! timeout paired with a single failure) as `lifeguard fix` does.

use crate::cel::check::CelCheck;
use crate::cel::int::{I32_MAX, ceil_div_of, max};
use crate::cel::mutation::{Change, Mutation, Set, fixes_at};
use crate::finding::Severity;
use crate::policy::Policy;
use crate::rules::Rule;

/// A liveness field of container `c`, or its default.
pub(crate) fn field(name: &str, default: i64) -> String {
    format!("(has(c.livenessProbe.{name}) ? c.livenessProbe.{name} : {default})")
}

/// `(period, failure, timeout)` of container `c`'s liveness probe.
pub(crate) fn timing() -> (String, String, String) {
    (field("periodSeconds", 10), field("failureThreshold", 3), field("timeoutSeconds", 1))
}

/// Whether liveness fails after one check (`failureThreshold` 1 below the
/// policy's minimum).
pub(crate) fn single_failure(policy: &Policy) -> String {
    let (_, failure, _) = timing();
    format!("({failure} == 1 && {failure} < {})", policy.settings.min_liveness_failure_threshold)
}

/// Whether container `c` has the finding.
pub(crate) fn bad(policy: &Policy) -> String {
    let s = &policy.settings;
    let (period, failure, timeout) = timing();
    // Values below 1 are probe-invalid's (the API server rejects them).
    format!(
        "has(c.livenessProbe) && {period} >= 1 && {failure} >= 1 && {timeout} >= 1 && \
         ({} || {failure} * {period} < {min_budget})",
        single_failure(policy),
        min_budget = s.min_liveness_budget_seconds,
    )
}

pub(crate) fn checks(rule: &Rule, policy: &Policy) -> Vec<CelCheck> {
    let s = &policy.settings;
    let (period, failure, timeout) = timing();
    vec![CelCheck {
        rule: rule.name,
        severity: policy.severity_override(rule.name).unwrap_or(rule.severity),
        per_container: true,
        bad: bad(policy),
        describe: format!(
            "'container \"' + c.name + '\": liveness failureThreshold ' + string({failure}) + ' x periodSeconds ' + \
             string({period}) + ' with timeoutSeconds ' + string({timeout})"
        ),
        tail: format!(
            ": tolerate a GC pause: failureThreshold of at least {} and a window of {} s or more",
            s.min_liveness_failure_threshold, s.min_liveness_budget_seconds
        ),
    }]
}

/// The fix: failureThreshold to at least the minimum and enough periods for
/// the minimum window; a 1 s timeout beside a single failure to the
/// policy's timeout. No fix where a value would not fit the API's int32.
pub(crate) fn fixes(rule: &Rule, policy: &Policy, _exempt: &str) -> Vec<Mutation> {
    if !fixes_at(policy, rule.name, Severity::Warning) {
        return Vec::new();
    }
    let s = &policy.settings;
    let (period, failure, timeout) = timing();
    let raised = max(&[
        &failure,
        &s.min_liveness_failure_threshold.to_string(),
        &ceil_div_of(s.min_liveness_budget_seconds, &period),
    ]);
    let slow =
        format!("({} && {timeout} <= 1 && {timeout} < {})", single_failure(policy), s.min_liveness_timeout_seconds);
    let mut which = format!("{} && {raised} <= {I32_MAX}", bad(policy));
    if s.min_liveness_timeout_seconds > I32_MAX {
        which.push_str(&format!(" && !{slow}"));
    }
    let timeout_value = format!("({slow} ? {} : {timeout})", s.min_liveness_timeout_seconds);
    vec![Mutation {
        rule: rule.name,
        variable: "fixLivenessTooAggressive",
        as_submitted: false,
        change: Change::fields(
            which,
            &[
                Set { part: "livenessProbe", field: "failureThreshold", value: raised, when: None },
                // Written where it is raised, or kept where it was set: an
                // unset timeout stays unset, as `lifeguard fix` leaves it.
                Set {
                    part: "livenessProbe",
                    field: "timeoutSeconds",
                    value: timeout_value,
                    when: Some(format!("({slow} || has(c.livenessProbe.timeoutSeconds))")),
                },
            ],
        ),
    }]
}
