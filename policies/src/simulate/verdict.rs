//! Verdicts: the consequence of a scenario in the sources' terms.
//!
//! Over 400 lines: the fourteen verdicts with their names and severities (about
//! 115 lines) and `judge` with `judge_lifecycle` (about 220 lines), one match
//! from each scenario's reading to its verdict and line, kept whole so every
//! scenario's verdicts can be compared; the tests are about 60 lines.

use crate::finding::Severity;

use super::endpoints::{NO_SERVICE, for_span, out_for, pod_clause, zero_endpoints, zero_span};
pub use super::reading::{Figures, seconds};
pub(crate) use super::reading::{Reading, Refused};
use super::scenario::ScenarioKind;

/// The consequence of a scenario for a container; the names are stable
/// (the `verdict` field of the JSON output).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verdict {
    /// Nothing restarts and the Service keeps endpoints.
    Ok,
    /// A stall restarts every replica, whenever it starts.
    RestartStorm,
    /// The container restarts (in the worst case).
    Restarts,
    /// The app never finishes booting: the kubelet restarts it in a loop.
    BootLoop,
    /// Readiness follows a stalled dependency: every replica leaves the
    /// Service at once and comes back when the dependency does, without a
    /// restart. The outage the readiness check chose, not one the pod causes.
    DependencyOutage,
    /// The pod's own failure (a pause of its only replica) leaves the
    /// Service without an endpoint for a while, without a restart.
    OutOfService,
    /// SIGKILL ends the container while admitted work is still running.
    SigkillInFlight,
    /// Requests are sent to a process that cannot take them: in the
    /// endpoints before the app answers (boot), or still routed to it after
    /// it stopped accepting (delete).
    ConnectionsRefused,
    /// Liveness sees the wedge and the kubelet restarts the container.
    WedgeDetected,
    /// Nothing restarts the hung process.
    WedgeUndetected,
    /// A Deployment's rollout goes without progress for its
    /// `progressDeadlineSeconds` while a new pod boots: the controller marks
    /// it `ProgressDeadlineExceeded`, and tools that gate on it fail it.
    ProgressDeadlineExceeded,
    /// The rollout never completes: a new pod never becomes Ready.
    RolloutStuck,
    /// A rollout keeps fewer pods available than the policy's
    /// `minRolloutCapacityPercent`, for longer than a quick boot.
    CapacityShort,
    /// A drain never completes: a PodDisruptionBudget refuses the eviction for ever.
    EvictionBlocked,
}

/// Every verdict, in the order of [`Verdict`].
pub const VERDICTS: &[Verdict] = &[
    Verdict::Ok,
    Verdict::RestartStorm,
    Verdict::Restarts,
    Verdict::BootLoop,
    Verdict::DependencyOutage,
    Verdict::OutOfService,
    Verdict::SigkillInFlight,
    Verdict::ConnectionsRefused,
    Verdict::WedgeDetected,
    Verdict::WedgeUndetected,
    Verdict::ProgressDeadlineExceeded,
    Verdict::RolloutStuck,
    Verdict::CapacityShort,
    Verdict::EvictionBlocked,
];

impl Verdict {
    /// The stable name (`restart-storm`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::RestartStorm => "restart-storm",
            Verdict::Restarts => "restarts",
            Verdict::BootLoop => "boot-loop",
            Verdict::DependencyOutage => "dependency-outage",
            Verdict::OutOfService => "out-of-service",
            Verdict::SigkillInFlight => "sigkill-in-flight",
            Verdict::ConnectionsRefused => "connections-refused",
            Verdict::WedgeDetected => "wedge-detected",
            Verdict::WedgeUndetected => "wedge-undetected",
            Verdict::ProgressDeadlineExceeded => "progress-deadline-exceeded",
            Verdict::RolloutStuck => "rollout-stuck",
            Verdict::CapacityShort => "capacity-short",
            Verdict::EvictionBlocked => "eviction-blocked",
        }
    }

    /// The verdict of a name.
    pub fn from_name(name: &str) -> Option<Verdict> {
        VERDICTS.iter().copied().find(|v| v.name() == name)
    }

    /// What the verdict means for the user, in the terms of a finding's
    /// severity: `None` for what a well-configured pod does (`ok`, a wedge
    /// the kubelet restarts); `info` for the outage a dependency-aware
    /// readiness chooses; `warning` for harm some of the time or to one
    /// replica; `error` for the verdicts that fail a run unless told otherwise.
    pub fn severity(self) -> Option<Severity> {
        match self {
            Verdict::Ok | Verdict::WedgeDetected => None,
            Verdict::DependencyOutage => Some(Severity::Info),
            Verdict::Restarts
            | Verdict::OutOfService
            | Verdict::ConnectionsRefused
            | Verdict::WedgeUndetected
            | Verdict::ProgressDeadlineExceeded
            | Verdict::CapacityShort
            | Verdict::EvictionBlocked => Some(Severity::Warning),
            Verdict::RestartStorm | Verdict::BootLoop | Verdict::SigkillInFlight | Verdict::RolloutStuck => {
                Some(Severity::Error)
            }
        }
    }

    /// The verdicts that fail a run unless told otherwise: those of severity `error`.
    pub fn fails_by_default(self) -> bool {
        self.severity() == Some(Severity::Error)
    }
}

/// `1-2.5` from two times in either order, `1` when they are equal.
fn range(a: i64, b: i64) -> String {
    let (lo, hi) = (a.min(b), a.max(b));
    if lo == hi { seconds(hi) } else { format!("{}-{}", seconds(lo), seconds(hi)) }
}

/// `1 restart`, `2 restarts`.
pub fn plural(n: i64, word: &str) -> String {
    if n == 1 { format!("1 {word}") } else { format!("{n} {word}s") }
}

/// The longest CrashLoopBackOff waited, for a verdict's line.
fn backoff(ms: i64) -> String {
    if ms > 0 { format!("back-off up to {} s", seconds(ms)) } else { "each restarted at once".to_owned() }
}

/// The verdict and its line.
pub(crate) fn judge(kind: ScenarioKind, r: &Reading) -> (Verdict, String) {
    let w = &r.worst;
    let first = |f: &Figures| f.restart_at_ms.map_or_else(|| "-".to_owned(), seconds);
    let out_at_most = || match &r.pod {
        Some(_) => format!("no restart{}", pod_clause(r)),
        None => format!("no restart; out of endpoints for at most {} s", seconds(w.unready_ms)),
    };
    if let Some(lifecycle) = judge_lifecycle(kind, r) {
        return lifecycle;
    }
    match kind {
        ScenarioKind::Boot(_) if !r.booted && w.restarts > 0 => (
            Verdict::BootLoop,
            format!(
                "boot never completes: restart loop (the {} s boot is killed at {} s; {} in the timeline, {})",
                seconds(r.boot_ms),
                first(w),
                plural(i64::from(w.restarts), "restart"),
                backoff(r.backoff_ms)
            ),
        ),
        ScenarioKind::Boot(_) if w.restarts > 0 => (
            Verdict::Restarts,
            format!("boots after {}, the first at {} s", plural(i64::from(w.restarts), "restart"), first(w)),
        ),
        ScenarioKind::Boot(_) if r.refused.is_some() => {
            let refused = r.refused.unwrap_or(Refused { from_ms: 0, for_ms: 0 });
            let (why, rule) = if r.has_readiness {
                ("readiness passes before the app answers", "readiness-port-only")
            } else {
                ("no readiness probe holds it back", "readiness-probe-missing")
            };
            (
                Verdict::ConnectionsRefused,
                format!(
                    "connections refused while it boots: in the endpoints from {} s, {} s before the app answers at {} s \
                     ({why}; {rule} reports it)",
                    seconds(refused.from_ms),
                    seconds(refused.for_ms),
                    seconds(r.boot_ms)
                ),
            )
        }
        ScenarioKind::Boot(_) => (
            Verdict::Ok,
            format!(
                "boots in {} s without a restart; {}{}",
                seconds(r.boot_ms),
                out_for(r, w.unready_ms),
                r.blind.as_deref().map_or_else(String::new, |why| format!("; but {why}"))
            ),
        ),
        ScenarioKind::Stall(_) if r.best.restarts > 0 => {
            let at = range(w.restart_at_ms.unwrap_or(0), r.best.restart_at_ms.unwrap_or(0));
            let span = for_span(zero_span(r));
            let out = match (zero_endpoints(r), r.replicas > 1) {
                (Some(zero), _) => format!("{zero} {span}"),
                (None, true) => format!("are all unready at once {span} ({NO_SERVICE})"),
                (None, false) => format!("is unready {span} ({NO_SERVICE})"),
            };
            let who = if r.replicas > 1 {
                format!("all {} replicas restart", r.replicas)
            } else {
                "every replica restarts".to_owned()
            };
            (Verdict::RestartStorm, format!("restart storm: {who} (at {at} s) and {out}{}", pod_clause(r)))
        }
        ScenarioKind::Stall(_) | ScenarioKind::Pause(_) if w.restarts > 0 => (
            Verdict::Restarts,
            format!(
                "restarts: up to {} depending on when it starts, the first at {} s{}",
                plural(i64::from(w.restarts), "restart"),
                first(w),
                pod_clause(r)
            ),
        ),
        // Nothing restarts, so only readiness checking the stalled dependency takes replicas out.
        ScenarioKind::Stall(_) if r.zero_endpoints_ms > 0 => {
            let (who, back) = if r.replicas > 1 {
                (format!("all {} replicas leave the endpoints at once", r.replicas), "return")
            } else {
                ("every replica leaves the endpoints".to_owned(), "returns")
            };
            let span = for_span(zero_span(r));
            let zero = zero_endpoints(r).unwrap_or_else(|| NO_SERVICE.to_owned());
            (
                Verdict::DependencyOutage,
                format!(
                    "dependency outage, no restart: readiness follows the stalled dependency, so {who} {span} \
                     ({zero}) and {back} when it recovers{}",
                    pod_clause(r)
                ),
            )
        }
        ScenarioKind::Pause(_) if r.zero_endpoints_ms > 0 => {
            let span = for_span(zero_span(r));
            let out = match zero_endpoints(r) {
                Some(zero) => format!(", so {zero} {span}"),
                None => format!(" and is out of endpoints {span} ({NO_SERVICE})"),
            };
            (Verdict::OutOfService, format!("out of service, no restart: the only replica does not answer{out}"))
        }
        ScenarioKind::Stall(_) | ScenarioKind::Pause(_) => (Verdict::Ok, out_at_most()),
        ScenarioKind::Wedge if r.best.restarts > 0 => {
            (Verdict::WedgeDetected, format!("wedge detected and restarted after {} s", first(w)))
        }
        ScenarioKind::Wedge => {
            let why = r.blind.as_deref().map_or_else(String::new, |why| format!(" ({why})"));
            let rest = if r.never_serves.is_some() {
                "it is never ready either"
            } else if w.unready_ms > 0 {
                "readiness only takes it out of endpoints"
            } else {
                "it stays in endpoints"
            };
            (Verdict::WedgeUndetected, format!("wedge undetected: nothing restarts the hung process{why}; {rest}"))
        }
        ScenarioKind::Crash(_) if w.restarts == 0 => (
            Verdict::OutOfService,
            "exits and stays stopped (restartPolicy Never): out of endpoints for good".to_owned(),
        ),
        ScenarioKind::Crash(_) => (
            Verdict::Restarts,
            format!(
                "crash loop: {} in the timeline, {}; out of endpoints for {} s",
                plural(i64::from(w.restarts), "restart"),
                backoff(r.backoff_ms),
                seconds(w.unready_ms)
            ),
        ),
        // Judged by the controller's run (`controllers`), never here.
        ScenarioKind::Rollout | ScenarioKind::Drain => {
            (Verdict::Ok, "a workload scenario: its verdict is the controller's run".to_owned())
        }
        ScenarioKind::Delete => match r.cut_ms {
            Some(cut) if cut > 0 => (
                Verdict::SigkillInFlight,
                format!("SIGKILL cuts in-flight requests {} s before the drain ends", seconds(cut)),
            ),
            _ => match r.refused {
                Some(refused) => (
                    Verdict::ConnectionsRefused,
                    format!(
                        "connections refused for {} s: the process stops accepting at the stop signal ({} s), before \
                         endpoint removal reaches the proxies ({} s assumed, --endpoint-propagation-seconds); a preStop sleep \
                         bridges it (prestop-bridge-missing, opt-in: addPrestopBridge)",
                        seconds(refused.for_ms),
                        seconds(refused.from_ms),
                        seconds(r.propagation_ms)
                    ),
                ),
                None => (Verdict::Ok, "drains and exits within the grace period".to_owned()),
            },
        },
        // Judged by `judge_lifecycle`.
        ScenarioKind::PostStartFail => (Verdict::Ok, "the postStart hook does not fail".to_owned()),
    }
}

/// The verdicts a postStart hook or the readiness gates decide: a hook
/// that fails kills every container at its start, so whatever restarts
/// the container (a boot, a wedge's kill) never gets a new one up; and a
/// pod whose gates are never True (or whose hook never ends) never serves,
/// whatever else the scenario does, unless something restarts.
fn judge_lifecycle(kind: ScenarioKind, r: &Reading) -> Option<(Verdict, String)> {
    let w = &r.worst;
    if let Some(why) = r.hook_failure {
        let killed = format!("{why}, so the kubelet kills the container (FailedPostStartHook)");
        let restarts = plural(i64::from(w.restarts), "restart");
        return Some(match kind {
            _ if r.stopped => (
                Verdict::OutOfService,
                format!("{killed} and leaves it stopped (restartPolicy Never): out of endpoints for good"),
            ),
            // The user's what-if: what the restart policy and the back-off make of it.
            ScenarioKind::PostStartFail => (
                Verdict::Restarts,
                format!(
                    "crash loop: {killed}: {restarts} in the timeline, {}; out of endpoints for {} s",
                    backoff(r.backoff_ms),
                    seconds(w.unready_ms)
                ),
            ),
            ScenarioKind::Boot(_) => (
                Verdict::BootLoop,
                format!(
                    "boot never completes: {killed}: restart loop ({restarts} in the timeline, {})",
                    backoff(r.backoff_ms)
                ),
            ),
            _ => (
                Verdict::BootLoop,
                format!(
                    "no new container comes up: {killed} at every start: restart loop from {} s ({restarts} in \
                     the timeline, {})",
                    w.restart_at_ms.map_or_else(|| "-".to_owned(), seconds),
                    backoff(r.backoff_ms)
                ),
            ),
        });
    }
    let quiet = matches!(
        kind,
        ScenarioKind::Boot(_) | ScenarioKind::Stall(_) | ScenarioKind::Pause(_) | ScenarioKind::PostStartFail
    ) && w.restarts == 0;
    if let Some(why) = r.never_serves.as_deref().filter(|_| quiet) {
        let message = if r.services.is_empty() {
            format!("never ready: {why}")
        } else {
            format!("never in the endpoints of {}: {why}", r.services.join(", "))
        };
        return Some((Verdict::OutOfService, message));
    }
    match kind {
        ScenarioKind::PostStartFail if !r.has_poststart => Some((Verdict::Ok, "no postStart hook to fail".to_owned())),
        _ => None,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::{Figures, Reading, VERDICTS, Verdict, judge};
    use crate::finding::Severity;
    use crate::simulate::ScenarioKind;

    /// Every offset out of endpoints for `ms`, no restart (shared with endpoints.rs).
    pub(crate) fn unready(ms: i64, replicas: i64) -> Reading {
        let f = Figures { unready_ms: ms, ..Figures::default() };
        let at_once_ms = (replicas > 1).then_some(ms);
        Reading { best: f, worst: f, zero_endpoints_ms: ms, at_once_ms, replicas, ..Reading::default() }
    }

    #[test]
    fn readiness_following_a_stalled_dependency_is_a_dependency_outage_not_a_failure() {
        let mut outage = unready(109_000, 3);
        outage.services = vec!["Service/web".to_owned()];
        let (v, line) = judge(ScenarioKind::Stall(120), &outage);
        assert_eq!(v, Verdict::DependencyOutage);
        assert_eq!(v.name(), "dependency-outage");
        assert_eq!(
            line,
            "dependency outage, no restart: readiness follows the stalled dependency, so all 3 replicas leave the endpoints at once for 109 s (Service/web has zero endpoints) and return when it recovers"
        );
        assert_eq!(v.severity(), Some(Severity::Info));
        assert!(!v.fails_by_default());
        // A pause of the only replica is the pod's own outage.
        let (v, line) = judge(ScenarioKind::Pause(5), &unready(4_000, 1));
        assert_eq!(v, Verdict::OutOfService);
        assert!(line.contains("the only replica does not answer"), "{line}");
        assert_eq!(v.severity(), Some(Severity::Warning));
    }

    #[test]
    fn severities_say_what_a_verdict_means_and_errors_fail_by_default() {
        let by = |s: Option<Severity>| -> Vec<&str> {
            VERDICTS.iter().filter(|v| v.severity() == s).map(|v| v.name()).collect()
        };
        assert_eq!(by(None), ["ok", "wedge-detected"]);
        assert_eq!(by(Some(Severity::Info)), ["dependency-outage"]);
        assert_eq!(
            by(Some(Severity::Warning)),
            [
                "restarts",
                "out-of-service",
                "connections-refused",
                "wedge-undetected",
                "progress-deadline-exceeded",
                "capacity-short",
                "eviction-blocked"
            ]
        );
        assert_eq!(by(Some(Severity::Error)), ["restart-storm", "boot-loop", "sigkill-in-flight", "rollout-stuck"]);
        let fail: Vec<&str> = VERDICTS.iter().filter(|v| v.fails_by_default()).map(|v| v.name()).collect();
        assert_eq!(fail, ["restart-storm", "boot-loop", "sigkill-in-flight", "rollout-stuck"]);
        for v in VERDICTS {
            assert_eq!(Verdict::from_name(v.name()), Some(*v));
        }
    }
}
