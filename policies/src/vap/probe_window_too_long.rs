//! `probe-window-too-long` in CEL, exactly: a readiness probe, or a
//! liveness probe beside a startup probe (without one, liveness is the boot
//! budget and `startup-probe-missing` speaks), whose `failureThreshold x
//! periodSeconds` passes the policy's limit, with the API server's defaults.

use super::Check;
use crate::policy::Policy;
use crate::rules::probe_window_too_long::RULE;

/// Whether `failureThreshold x periodSeconds` of probe `probe` of container
/// `c` passes `limit` (never, for a limit of 0 or less).
fn too_long(probe: &str, limit: i64) -> String {
    if limit <= 0 {
        return "false".to_owned();
    }
    let field = |name: &str, default: i64| format!("(has(c.{probe}.{name}) ? c.{probe}.{name} : {default})");
    let (period, failure) = (field("periodSeconds", 10), field("failureThreshold", 3));
    // Non-positive values are probe-invalid's.
    format!("(has(c.{probe}) && {period} >= 1 && {failure} >= 1 && {failure} * {period} > {limit})")
}

/// The window of probe `probe` of container `c`, as a CEL string.
fn window(probe: &str) -> String {
    let field = |name: &str, default: i64| format!("(has(c.{probe}.{name}) ? c.{probe}.{name} : {default})");
    format!("string({} * {})", field("failureThreshold", 3), field("periodSeconds", 10))
}

pub(super) fn check(policy: &Policy) -> Check {
    let s = &policy.settings;
    let readiness = too_long("readinessProbe", s.max_readiness_window_seconds);
    let liveness = format!("(has(c.startupProbe) && {})", too_long("livenessProbe", s.max_liveness_window_seconds));
    Check {
        rule: RULE.name,
        severity: policy.severity_override(RULE.name).unwrap_or(RULE.severity),
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
    }
}
