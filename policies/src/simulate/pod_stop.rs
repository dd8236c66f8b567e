//! A deleted pod's stop order: every container's preStop hook starts at
//! the deletion (kuberuntime_container.go, `killContainersWithSyncResult`,
//! a goroutine per container); a regular container gets SIGTERM after its
//! own hook; a native sidecar, after its own hook, waits until every
//! regular container and every sidecar after it in the spec has exited
//! (kuberuntime_termination_order.go, `newTerminationOrdering`,
//! `waitForTurn`), all in the one grace period ([`super::termination`]).

use super::assumptions::Assumptions;
use super::pod::ContainerModel;
use super::pod_outcome::PodStop;
use super::scenario::Scenario;
use super::sweep::{ContainerOutcome, run_scenario_in_turn};
use super::termination::Turn;
use super::timeline::{Event, EventKind};

/// Runs the native sidecars of a deleted pod in their turn, once the
/// regular containers' outcomes are in `outcomes`: each, in reverse spec
/// order, waits (after its own preStop hook) until every regular container
/// and every sidecar after it in the spec has exited
/// (kuberuntime_termination_order.go, `newTerminationOrdering`; the hooks
/// all start at the deletion, `killContainersWithSyncResult`).
pub(super) fn stop_sidecars_in_turn(
    bare: &[ContainerModel],
    order: &[usize],
    scenario: &Scenario,
    a: &Assumptions,
    outcomes: &mut [Option<(ContainerOutcome, bool)>],
) {
    for &i in order.iter().filter(|&&i| bare[i].sidecar).rev() {
        let mut last: Option<(i64, Vec<String>)> = None;
        for (j, o) in outcomes.iter().enumerate() {
            let Some(end) = o.as_ref().and_then(|(o, _)| stop_of(&o.events)).map(|(_, end, _)| end) else {
                continue;
            };
            let name = format!("\"{}\"", bare[j].name);
            match &mut last {
                Some((at, names)) if *at == end => names.push(name),
                Some((at, _)) if *at > end => {}
                _ => last = Some((end, vec![name])),
            }
        }
        let turn = last.map(|(at_ms, names)| Turn { at_ms, after: names.join(", ") });
        let outcome = run_scenario_in_turn(&bare[i], scenario, a, 0, turn.as_ref());
        outcomes[i] = Some((outcome, true));
    }
}

/// A deleted container's SIGTERM (or stop signal), its end and whether
/// SIGKILL was that end, from its timeline.
fn stop_of(events: &[Event]) -> Option<(i64, i64, bool)> {
    let at = |kind: EventKind| events.iter().find(|e| e.kind == kind).map(|e| e.at_ms);
    let killed = at(EventKind::Sigkill);
    let end = killed.or_else(|| at(EventKind::Exited))?;
    Some((at(EventKind::Sigterm).unwrap_or(end), end, killed.is_some()))
}

/// Each container's stop in a deletion, in the order they stop: by
/// SIGTERM, and at the same time the regular containers first, then the
/// sidecars from the last (their turns).
pub(super) fn stops(models: &[ContainerModel], order: &[usize], outcomes: &[(ContainerOutcome, bool)]) -> Vec<PodStop> {
    let sidecars = order.iter().filter(|&&i| models[i].sidecar).count();
    let mut out: Vec<(usize, PodStop)> = order
        .iter()
        .enumerate()
        .filter_map(|(at, &i)| {
            let rank = if at < sidecars { order.len() + sidecars - at } else { at };
            let (sigterm_ms, end_ms, killed) = stop_of(&outcomes.get(i)?.0.events)?;
            Some((rank, PodStop { container: models[i].name.clone(), sigterm_ms, end_ms, killed }))
        })
        .collect();
    out.sort_by_key(|(rank, s)| (s.sigterm_ms, *rank));
    out.into_iter().map(|(_, s)| s).collect()
}
