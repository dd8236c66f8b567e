//! Running a scenario over every phase offset that matters and keeping the
//! best and the worst case.

use std::cmp::Reverse;

use crate::model::ProbeKind;

use super::assumptions::Assumptions;
use super::gates::GateDelay;
use super::kubelet::{Run, World, simulate, simulate_figures};
use super::never::{blind, never_serves};
use super::pod::ContainerModel;
use super::pod_outcome::PodOutcome;
use super::reading::Refused;
use super::scenario::{Scenario, ScenarioKind};
use super::termination::{Turn, delete_in_turn};
use super::timeline::EventKind;
use super::timeline::{Event, Span, intersect, total};
use super::verdict::{Figures, Reading, Verdict, judge};
use crate::assumption::Assumption;

const MS: i64 = 1000;
/// Phase offsets step by half a second: probe times and durations are
/// whole seconds, so a half-second step meets every distinct case (on a
/// tick, or between two).
const STEP_MS: i64 = 500;
/// The probes' common period (their least common multiple) is swept in
/// full up to this long; beyond it, the longest period only.
const MAX_SWEEP_MS: i64 = 120_000;
/// No run looks further than this past the disruption.
const MAX_TAIL_MS: i64 = 3_600_000;

/// One container in one scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct ContainerOutcome {
    /// Container name.
    pub container: String,
    /// Pointer to the container.
    pub pointer: String,
    /// The scenario as given.
    pub scenario: String,
    /// The consequence.
    pub verdict: Verdict,
    /// The verdict's line (`restart storm: all 3 replicas restart ...`).
    pub message: String,
    /// Figures of the worst phase offset.
    pub worst: Figures,
    /// Figures of the best phase offset.
    pub best: Figures,
    /// How long every phase offset is out of endpoints at once, ms: the
    /// least time all replicas are out together, whatever their offsets,
    /// when the verdict's line speaks of them all at once (a stall of
    /// several replicas); `None` otherwise.
    pub unready_at_once_ms: Option<i64>,
    /// The worst case's timeline.
    pub events: Vec<Event>,
    /// How many phase offsets were run.
    pub offsets: usize,
    /// The container's probes, in the order startup, liveness, readiness.
    pub probes: Vec<ProbeKind>,
    /// What the verdict rests on beyond the spec, with sources
    /// ([`ContainerModel::assumptions_for`]).
    pub assumptions: Vec<Assumption>,
    /// The pod's readiness in the same scenario, for a pod of more than
    /// one container (`None` for one: the container's is the pod's).
    pub pod: Option<PodOutcome>,
    /// The worst case's spans the container itself is not ready, and the
    /// run's end: what the pod's readiness reads of it.
    pub(crate) not_ready: Vec<Span>,
    pub(crate) horizon_ms: i64,
    /// What the verdict read, for the pod's to judge it again.
    pub(crate) reading: Reading,
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// The phase offsets (ms) at which a disruption can start relative to the
/// probes' grids: every half second over their common period.
pub fn phase_offsets(model: &ContainerModel) -> Vec<i64> {
    let periods: Vec<i64> =
        model.probes.iter().filter(|p| p.kind != ProbeKind::Startup).map(|p| p.timing.period.max(1) * MS).collect();
    let Some(&longest) = periods.iter().max() else {
        return vec![0];
    };
    let lcm = periods.iter().try_fold(MS, |acc, &p| {
        let l = acc / gcd(acc, p) * p;
        (l <= MAX_SWEEP_MS).then_some(l)
    });
    let span = lcm.unwrap_or(longest);
    (0..span / STEP_MS).map(|i| i * STEP_MS).collect()
}

/// How long after a disruption a run must go on to see its consequences
/// end: every probe's failure and success windows, a restart, a boot, a
/// postStart hook and the readiness gates' stated wait.
fn tail_ms(model: &ContainerModel) -> i64 {
    let hook = model.poststart.and_then(|h| h.length.finite()).unwrap_or(0).max(0);
    let gates = match model.readiness_gates.stated {
        Some(GateDelay::After(s)) if !model.readiness_gates.conditions.is_empty() => s.max(0),
        _ => 0,
    };
    let probes: i64 = model
        .probes
        .iter()
        .map(|p| {
            let t = p.timing;
            (t.initial_delay.max(0) + (t.failure.max(1) + t.success.max(1) + 1) * t.period.max(1) + t.timeout.max(1))
                * MS
        })
        .sum();
    let own = model.grace.max(0) + model.cold_start + model.drain + model.shutdown + hook + gates + 10;
    (probes + own.saturating_mul(MS)).min(MAX_TAIL_MS)
}

fn figures(run: &Run) -> Figures {
    Figures {
        restarts: run.restarts,
        restart_at_ms: run.first_restart_ms,
        unready_ms: total(&run.unready),
        sigkill: run.sigkill,
    }
}

fn harm(f: &Figures) -> (u32, i64, bool) {
    (f.restarts, f.unready_ms, f.sigkill)
}

/// Runs one scenario on one container.
pub fn run_scenario(model: &ContainerModel, scenario: &Scenario, a: &Assumptions) -> ContainerOutcome {
    run_scenario_from(model, scenario, a, 0)
}

/// Runs one scenario on one container of a pod whose start (`boot`,
/// `crash`, `poststart-fail`) reaches it `start_ms` after the pod's: the
/// kubelet starts a pod's containers in order (`pod_run.rs`).
pub(crate) fn run_scenario_from(
    model: &ContainerModel,
    scenario: &Scenario,
    a: &Assumptions,
    start_ms: i64,
) -> ContainerOutcome {
    run_scenario_in_turn(model, scenario, a, start_ms, None)
}

/// [`run_scenario_from`] for a native sidecar of a deleted pod, which the
/// kubelet stops only in its [`Turn`] (`pod_run.rs`).
pub(crate) fn run_scenario_in_turn(
    model: &ContainerModel,
    scenario: &Scenario,
    a: &Assumptions,
    start_ms: i64,
    turn: Option<&Turn>,
) -> ContainerOutcome {
    let mut reading = Reading {
        replicas: model.replicas,
        services: model.services.clone(),
        blind: blind(model),
        has_readiness: model.probe(ProbeKind::Readiness).is_some(),
        ..Reading::default()
    };
    let (runs, worst_at): (Vec<Run>, usize) = match scenario.kind {
        ScenarioKind::Delete => {
            // A deletion's own grace period wins over the pod's
            // (kuberuntime_container.go, `setTerminationGracePeriod`).
            let deleted = a.delete_grace_seconds.map(|grace| ContainerModel { grace, ..model.clone() });
            let model = deleted.as_ref().unwrap_or(model);
            let propagation = a.endpoint_propagation_seconds.max(0) * MS;
            let run = delete_in_turn(model, propagation, a.request_seconds.max(0) * MS, turn);
            reading.cut_ms = run.cut_ms;
            reading.propagation_ms = a.endpoint_propagation_seconds.max(0) * MS;
            reading.refused = run.refused_ms.map(|for_ms| Refused { from_ms: reading.propagation_ms - for_ms, for_ms });
            (vec![run], 0)
        }
        // A workload scenario runs its pods through `boot` and `delete`
        // (`controllers`); one that reached a single pod boots it.
        ScenarioKind::Boot(_) | ScenarioKind::Rollout | ScenarioKind::Drain => {
            let boot = if let ScenarioKind::Boot(b) = scenario.kind { b } else { None };
            let boot_ms = boot.unwrap_or(model.cold_start).max(0) * MS;
            let windows = tail_ms(model);
            // Long enough to boot and settle, or to show a loop's first back-offs (10 + 20 + 40 s).
            let horizon = start_ms + (boot_ms + windows + 70 * MS).min(boot_ms + MAX_TAIL_MS);
            let world = World {
                start_ms,
                boot_ms,
                restart_boot_ms: boot_ms,
                horizon_ms: horizon,
                max_backoff_ms: Some(a.max_backoff_seconds * MS),
                ..World::default()
            };
            let run = simulate(model, world);
            reading.booted = run.booted;
            reading.boot_ms = boot_ms;
            // In the endpoints before the app answers: requests fail until it does.
            let joined = run.events.iter().find(|e| e.kind == EventKind::Ready).map(|e| e.at_ms);
            let answers = start_ms + boot_ms;
            if let Some(at) = joined.filter(|&at| model.receives_traffic && run.booted && at < answers) {
                reading.refused = Some(Refused { from_ms: at, for_ms: answers - at });
            }
            (vec![run], 0)
        }
        ScenarioKind::Crash(_) | ScenarioKind::PostStartFail => {
            let boot_ms = model.cold_start.max(0) * MS;
            let (crash_after_ms, poststart_fails) = match scenario.kind {
                ScenarioKind::Crash(after) => (Some(after.max(0) * MS), false),
                _ => (None, true),
            };
            let cycle = crash_after_ms.or_else(|| model.poststart.and_then(|h| h.ms())).unwrap_or(0);
            // The first exits and the back-offs that follow (10 + 20 + 40 + 80 s).
            let horizon = start_ms + 6 * (cycle.min(MAX_TAIL_MS) + boot_ms) + 160 * MS;
            let world = World {
                start_ms,
                boot_ms,
                restart_boot_ms: boot_ms,
                horizon_ms: horizon,
                max_backoff_ms: Some(a.max_backoff_seconds * MS),
                crash_after_ms,
                poststart_fails,
                ..World::default()
            };
            let run = simulate(model, world);
            reading.booted = run.booted;
            (vec![run], 0)
        }
        ScenarioKind::Stall(_) | ScenarioKind::Pause(_) | ScenarioKind::Wedge => {
            let d_ms = match scenario.kind {
                ScenarioKind::Stall(d) | ScenarioKind::Pause(d) => d * MS,
                _ => 0,
            };
            let horizon = d_ms + tail_ms(model);
            let phases = phase_offsets(model);
            let world_at = |phase: i64| {
                let mut world = World {
                    steady_phase: Some(phase),
                    restart_boot_ms: model.cold_start * MS,
                    horizon_ms: horizon,
                    max_backoff_ms: Some(a.max_backoff_seconds * MS),
                    ..World::default()
                };
                match scenario.kind {
                    ScenarioKind::Stall(_) => world.stall = Some((0, d_ms)),
                    ScenarioKind::Pause(_) => world.pause = Some((0, d_ms)),
                    _ => world.wedge_from = Some(0),
                }
                world
            };
            let mut runs: Vec<Run> = phases.iter().map(|&phase| simulate_figures(model, world_at(phase))).collect();
            // The worst case restarts earliest, the best latest, among equal harm.
            let worst = (0..runs.len())
                .max_by_key(|&i| {
                    let f = figures(&runs[i]);
                    (harm(&f), Reverse(f.restart_at_ms.unwrap_or(i64::MAX)), Reverse(i))
                })
                .unwrap_or(0);
            // Every replica out at once: one replica is out as long as its
            // offset says; several, in a stall that hits them all, at least
            // as long as every offset is out together.
            reading.zero_endpoints_ms = if model.replicas <= 1 {
                total(&runs[worst].unready)
            } else if matches!(scenario.kind, ScenarioKind::Stall(_)) {
                let all: Option<Vec<Span>> = runs.iter().map(|r| r.unready.clone()).reduce(|a, b| intersect(&a, &b));
                let at_once = total(&all.unwrap_or_default());
                reading.at_once_ms = Some(at_once);
                at_once
            } else {
                0
            };
            // The sweep keeps figures only; the worst case runs again for its timeline.
            if let Some(&phase) = phases.get(worst) {
                runs[worst] = simulate(model, world_at(phase));
            }
            (runs, worst)
        }
    };
    let best = runs.iter().map(figures).min_by_key(|f| (harm(f), Reverse(f.restart_at_ms))).unwrap_or_default();
    let worst_run = runs.get(worst_at).cloned().unwrap_or_default();
    reading.worst = figures(&worst_run);
    reading.best = best;
    reading.backoff_ms = worst_run.max_backoff_ms;
    reading.hook_failure = worst_run.hook_failure;
    reading.stopped = worst_run.stopped;
    reading.has_poststart = model.poststart.is_some();
    reading.never_serves = (!runs.iter().any(|r| r.served)).then(|| never_serves(model)).flatten();
    let (verdict, message) = judge(scenario.kind, &reading);
    let horizon_ms = worst_run.horizon_ms;
    let at_once_said = matches!(verdict, Verdict::RestartStorm | Verdict::DependencyOutage);
    ContainerOutcome {
        container: model.name.clone(),
        pointer: model.pointer.clone(),
        scenario: scenario.label.clone(),
        verdict,
        message,
        worst: reading.worst,
        best,
        unready_at_once_ms: reading.at_once_ms.filter(|_| at_once_said),
        events: worst_run.events,
        offsets: runs.len(),
        probes: model.probes.iter().map(|p| p.kind).collect(),
        assumptions: model.assumptions_for(scenario.kind, a),
        pod: None,
        not_ready: worst_run.not_ready,
        horizon_ms,
        reading,
    }
}

#[cfg(test)]
mod tests {
    use super::{phase_offsets, run_scenario};
    use crate::model::{ProbeKind, ProbeTiming};
    use crate::simulate::checks::ProbeCheck;
    use crate::simulate::pod::{ContainerModel, ProbeModel};
    use crate::simulate::{Assumptions, Scenario, Verdict};

    fn model(probes: &[(ProbeKind, ProbeCheck, i64, i64)]) -> ContainerModel {
        let probes = probes
            .iter()
            .map(|&(kind, check, period, failure)| ProbeModel {
                kind,
                timing: ProbeTiming { initial_delay: 0, period, timeout: 1, success: 1, failure },
                check,
                grace: None,
            })
            .collect();
        ContainerModel { replicas: 3, ..ContainerModel::with_probes(probes) }
    }

    #[test]
    fn offsets_cover_the_common_period_every_half_second() {
        let live = |period| (ProbeKind::Liveness, ProbeCheck::Local, period, 3);
        let ready = |period| (ProbeKind::Readiness, ProbeCheck::Local, period, 3);
        assert_eq!(phase_offsets(&model(&[live(10), ready(5)])).len(), 20);
        assert_eq!(phase_offsets(&model(&[live(3), ready(10)])).len(), 60);
        // A common period past 120 s: the longest period only.
        assert_eq!(phase_offsets(&model(&[live(7), ready(60)])).len(), 120);
        assert_eq!(phase_offsets(&model(&[])), vec![0]);
    }

    #[test]
    fn best_and_worst_offsets_differ_when_the_stall_falls_between_checks() {
        // One dependency check every 10 s, one failure kills: a 2 s stall
        // meets a check at some offsets only, so some replicas restart, not all.
        let m = model(&[(ProbeKind::Liveness, ProbeCheck::Dependency, 10, 1)]);
        let stall = Scenario::parse("stall:2s").expect("valid");
        let o = run_scenario(&m, &stall, &Assumptions::default());
        assert_eq!(o.offsets, 20);
        assert_eq!(o.best.restarts, 0);
        assert!(o.worst.restarts >= 1);
        assert_eq!(o.worst.restart_at_ms, Some(1000), "the worst offset checks at the stall's start");
        assert_eq!(o.verdict, Verdict::Restarts);
        // A stall longer than the period meets a check whatever the offset: every replica restarts.
        let long = Scenario::parse("stall:11s").expect("valid");
        assert_eq!(run_scenario(&m, &long, &Assumptions::default()).verdict, Verdict::RestartStorm);
    }

    #[test]
    fn a_wedge_is_detected_only_by_a_check_that_needs_the_process() {
        let wedge = Scenario::parse("wedge").expect("valid");
        let local =
            run_scenario(&model(&[(ProbeKind::Liveness, ProbeCheck::Local, 10, 3)]), &wedge, &Assumptions::default());
        assert_eq!(local.verdict, Verdict::WedgeDetected);
        // Timeouts at 1, 11, 21 s in the worst case, 10.5, 20.5, 30.5 s in the best.
        assert_eq!(local.worst.restart_at_ms, Some(21_000));
        let port = run_scenario(
            &model(&[(ProbeKind::Liveness, ProbeCheck::PortOnly, 10, 3)]),
            &wedge,
            &Assumptions::default(),
        );
        assert_eq!(port.verdict, Verdict::WedgeUndetected);
    }

    #[test]
    fn a_deletions_own_grace_period_wins_over_the_pods() {
        use crate::model::SleepSeconds;
        // A 5 s sleep preStop and a 4 s drain fit the pod's 10 s; deleted
        // with --grace-period=3, the hook is cut at 3 s and SIGKILL comes 2 s
        // after SIGTERM, before the drain ends.
        let m = ContainerModel { prestop: Some(SleepSeconds::Finite(5)), drain: 4, grace: 10, ..model(&[]) };
        let delete = Scenario::parse("delete").expect("valid");
        assert_eq!(run_scenario(&m, &delete, &Assumptions::default()).verdict, Verdict::Ok);
        let short = Assumptions { delete_grace_seconds: Some(3), ..Assumptions::default() };
        let o = run_scenario(&m, &delete, &short);
        assert_eq!(o.verdict, Verdict::SigkillInFlight);
        let at = |kind: crate::simulate::EventKind| o.events.iter().find(|e| e.kind == kind).map(|e| e.at_ms);
        assert_eq!(at(crate::simulate::EventKind::Sigterm), Some(3_000));
        assert_eq!(at(crate::simulate::EventKind::Sigkill), Some(5_000));
    }
}
