//! Running a scenario over every phase offset that matters and keeping the
//! best and the worst case.

use std::cmp::Reverse;

use crate::model::ProbeKind;

use super::Assumptions;
use super::kubelet::{Run, World, delete, simulate, simulate_figures};
use super::pod::ContainerModel;
use super::scenario::{Scenario, ScenarioKind};
use super::timeline::{Event, Span, intersect, total};
use super::verdict::{Figures, Reading, Verdict, judge};

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
    /// The worst case's timeline.
    pub events: Vec<Event>,
    /// How many phase offsets were run.
    pub offsets: usize,
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
/// end: every probe's failure and success windows, a restart and a boot.
fn tail_ms(model: &ContainerModel) -> i64 {
    let probes: i64 = model
        .probes
        .iter()
        .map(|p| {
            let t = p.timing;
            (t.initial_delay.max(0) + (t.failure.max(1) + t.success.max(1) + 1) * t.period.max(1) + t.timeout.max(1))
                * MS
        })
        .sum();
    (probes + (model.grace.max(0) + model.cold_start + model.drain + model.shutdown + 10) * MS).min(MAX_TAIL_MS)
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
    let mut reading = Reading { replicas: model.replicas, ..Reading::default() };
    let (runs, worst_at): (Vec<Run>, usize) = match scenario.kind {
        ScenarioKind::Delete => {
            let run = delete(model, a.endpoint_propagation_seconds.max(0) * MS, a.request_seconds.max(0) * MS);
            reading.cut_ms = run.cut_ms;
            (vec![run], 0)
        }
        ScenarioKind::Boot(boot) => {
            let boot_ms = boot.unwrap_or(model.cold_start).max(0) * MS;
            let windows = tail_ms(model);
            // Long enough to boot and settle, or to show a loop's first back-offs (10 + 20 + 40 s).
            let horizon = (boot_ms + windows + 70 * MS).min(boot_ms + MAX_TAIL_MS);
            let world = World { boot_ms, restart_boot_ms: boot_ms, horizon_ms: horizon, ..World::default() };
            let run = simulate(model, world);
            reading.booted = run.booted;
            reading.boot_ms = boot_ms;
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
            // Every replica out at once: the span even the best-placed one is out.
            reading.zero_endpoints_ms = if model.replicas <= 1 {
                total(&runs[worst].unready)
            } else if matches!(scenario.kind, ScenarioKind::Stall(_)) {
                let all: Option<Vec<Span>> = runs.iter().map(|r| r.unready.clone()).reduce(|a, b| intersect(&a, &b));
                total(&all.unwrap_or_default())
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
    let (verdict, message) = judge(scenario.kind, &reading);
    ContainerOutcome {
        container: model.name.clone(),
        pointer: model.pointer.clone(),
        scenario: scenario.label.clone(),
        verdict,
        message,
        worst: reading.worst,
        best,
        events: worst_run.events,
        offsets: runs.len(),
    }
}
