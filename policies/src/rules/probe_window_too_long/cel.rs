//! `probe-window-too-long` in CEL, exactly: a readiness probe, or a
//! liveness probe beside a startup probe (without one, liveness is the boot
//! budget and `startup-probe-missing` speaks), whose `failureThreshold x
//! periodSeconds` passes the policy's limit, with the API server's defaults.
//! Its fix, for `export map`, lowers the failure threshold as `lifeguard
//! fix` does.

use crate::cel::check::CelCheck;
use crate::cel::int::{I32_MAX, ceil_div_of, max};
use crate::cel::mutation::{Change, Mutation, Set, fixes_at};
use crate::finding::Severity;
use crate::policy::Policy;
use crate::rules::Rule;

/// A field of probe `probe` of container `c`, or its default.
pub(crate) fn field(probe: &str, name: &str, default: i64) -> String {
    format!("(has(c.{probe}.{name}) ? c.{probe}.{name} : {default})")
}

/// Whether `failureThreshold x periodSeconds` of probe `probe` of container
/// `c` passes `limit` (never, for a limit of 0 or less).
pub(crate) fn too_long(probe: &str, limit: i64) -> String {
    if limit <= 0 {
        return "false".to_owned();
    }
    let (period, failure) = (field(probe, "periodSeconds", 10), field(probe, "failureThreshold", 3));
    // Non-positive values are probe-invalid's.
    format!("(has(c.{probe}) && {period} >= 1 && {failure} >= 1 && {failure} * {period} > {limit})")
}

/// The window of probe `probe` of container `c`, as a CEL string.
pub(crate) fn window(probe: &str) -> String {
    format!("string({} * {})", field(probe, "failureThreshold", 3), field(probe, "periodSeconds", 10))
}

pub(crate) fn checks(rule: &Rule, policy: &Policy) -> Vec<CelCheck> {
    let s = &policy.settings;
    let readiness = too_long("readinessProbe", s.max_readiness_window_seconds);
    let liveness = format!("(has(c.startupProbe) && {})", too_long("livenessProbe", s.max_liveness_window_seconds));
    vec![CelCheck {
        rule: rule.name,
        severity: policy.severity_override(rule.name).unwrap_or(rule.severity),
        per_container: true,
        bad: format!("{readiness} || {liveness}"),
        describe: format!(
            "'container \"' + c.name + '\": ' + [{readiness} ? 'readiness keeps a replica that stops answering in its \
             Services for up to ' + {} + 's (limit {}s)' : '', {liveness} ? 'liveness leaves a wedged process running \
             for up to ' + {} + 's (limit {}s)' : ''].filter(m, m != '').join(', ')",
            window("readinessProbe"),
            s.max_readiness_window_seconds,
            window("livenessProbe"),
            s.max_liveness_window_seconds,
        ),
        tail: ": lower failureThreshold".to_owned(),
    }]
}

/// `window_threshold` of probe `probe` of container `c`: `(fits, n)`, CEL
/// for whether a threshold fits the limit (and, for liveness, the minimums
/// of `liveness-too-aggressive`) and the threshold, 3 or the largest that
/// fits. Meaningful where [`too_long`] holds (a period of 1 or more).
pub(crate) fn lowered(probe: &str, policy: &Policy) -> (String, String) {
    let s = &policy.settings;
    let (limit, floor) = match probe {
        "livenessProbe" => (
            s.max_liveness_window_seconds,
            max(&[
                &s.min_liveness_failure_threshold.to_string(),
                &ceil_div_of(s.min_liveness_budget_seconds, "p"),
                "1",
            ]),
        ),
        _ => (s.max_readiness_window_seconds, "1".to_owned()),
    };
    // p: the period, f: the lowest threshold allowed.
    let bound = |e: &str| format!("[int({})].map(p, [{floor}].map(f, {e})[0])[0]", field(probe, "periodSeconds", 10));
    let n = format!("[[f, 3].max(), {limit} / p].min()");
    (bound(&format!("{limit} / p >= f && {n} <= {I32_MAX}")), bound(&n))
}

/// The fixes: readiness's threshold, then liveness's beside a startup probe.
pub(crate) fn fixes(rule: &Rule, policy: &Policy, _exempt: &str) -> Vec<Mutation> {
    if !fixes_at(policy, rule.name, Severity::Warning) {
        return Vec::new();
    }
    let s = &policy.settings;
    let fix = |variable, probe: &'static str, finding: String| {
        let (fits, n) = lowered(probe, policy);
        Mutation {
            rule: rule.name,
            variable,
            as_submitted: false,
            change: Change::fields(
                format!("{finding} && {fits}"),
                &[Set { part: probe, field: "failureThreshold", value: n, when: None }],
            ),
        }
    };
    vec![
        fix("fixReadinessWindow", "readinessProbe", too_long("readinessProbe", s.max_readiness_window_seconds)),
        fix(
            "fixLivenessWindow",
            "livenessProbe",
            format!("(has(c.startupProbe) && {})", too_long("livenessProbe", s.max_liveness_window_seconds)),
        ),
    ]
}
