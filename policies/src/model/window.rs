//! A probe's failure window against the policy's limits: whether it is too
//! long, and the threshold that brings it back (`probe-window-too-long`
//! reports and fixes it; `startup-probe-missing`'s fix lowers it too).

use super::budget::ceil_div;
use super::probe::{ProbeKind, ProbeTiming};
use crate::settings::Settings;

/// The policy's limit on a probe kind's failure window; 0 is off.
pub fn window_limit(kind: ProbeKind, s: &Settings) -> i64 {
    match kind {
        ProbeKind::Readiness => s.max_readiness_window_seconds,
        ProbeKind::Liveness => s.max_liveness_window_seconds,
        ProbeKind::Startup => 0,
    }
}

/// Whether a probe's failure window exceeds the policy's limit.
pub fn too_long(kind: ProbeKind, t: &ProbeTiming, s: &Settings) -> bool {
    let limit = window_limit(kind, s);
    // Non-positive values are probe-invalid's business.
    limit > 0 && t.period >= 1 && t.failure >= 1 && t.failure_window() > limit
}

/// The `failureThreshold` a too-long window is brought back to: 3 (the
/// Kubernetes default) within the limit, and for liveness no lower than
/// `liveness-too-aggressive` accepts. `None` when no threshold fits (one
/// period already exceeds the limit, or the policy's minimum does).
pub fn window_threshold(kind: ProbeKind, t: &ProbeTiming, s: &Settings) -> Option<i64> {
    if !too_long(kind, t, s) {
        return None;
    }
    let cap = window_limit(kind, s) / t.period;
    let floor = match kind {
        ProbeKind::Liveness => {
            s.min_liveness_failure_threshold.max(ceil_div(s.min_liveness_budget_seconds, t.period)).max(1)
        }
        _ => 1,
    };
    if cap < floor {
        return None;
    }
    let n = floor.max(3).min(cap);
    i32::try_from(n).ok().map(i64::from)
}
