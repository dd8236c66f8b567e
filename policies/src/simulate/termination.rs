//! The termination sequence on deletion: endpoint removal, preStop,
//! SIGTERM, the app's drain and shutdown, SIGKILL at the grace period's end.

use crate::model::SleepSeconds;

use super::hooks::length_detail;
use super::kubelet::Run;
use super::pod::ContainerModel;
use super::timeline::{Event, EventKind};

const MS: i64 = 1000;

/// What the kubelet leaves between SIGTERM and SIGKILL at the least, however
/// long the preStop hook took (kuberuntime_container.go,
/// `minimumGracePeriodInSeconds`).
pub const MIN_SIGTERM_TO_SIGKILL_MS: i64 = 2 * MS;

/// When the kubelet sends SIGTERM and SIGKILL to a container it stops with
/// `grace_ms`, behind a preStop hook that runs `hook_ms` (`None`: no hook),
/// counted from the stop (kuberuntime_container.go, `killContainer`): the
/// hook runs first, for at most the grace period; the whole seconds it took
/// come out of the grace period; SIGTERM follows, and SIGKILL when what is
/// left of the grace period ends, never sooner than 2 s after SIGTERM.
pub fn stop_times(hook_ms: Option<i64>, grace_ms: i64) -> (i64, i64) {
    stop_times_in_turn(hook_ms, grace_ms, None)
}

/// [`stop_times`] for a container that must wait for its turn: a native
/// sidecar of a deleted pod gets SIGTERM only once `turn_ms` has come (the
/// regular containers and every sidecar after it have exited), waiting
/// after its own preStop hook for at most what is left of the grace period
/// (kuberuntime_termination_order.go, `waitForTurn`). The wait, as the
/// hook, comes out of the grace period in whole seconds, rounded down; the
/// 2 s floor holds after both.
pub fn stop_times_in_turn(hook_ms: Option<i64>, grace_ms: i64, turn_ms: Option<i64>) -> (i64, i64) {
    let grace_ms = grace_ms.max(0);
    let waited = match hook_ms {
        Some(hook) if grace_ms > 0 => hook.clamp(0, grace_ms),
        _ => 0,
    };
    // The kubelet counts the hook's time in whole seconds, rounded down.
    let mut left = grace_ms - waited / MS * MS;
    let mut sigterm = waited;
    // No grace left, no wait (`waitForTurn` is skipped at 0).
    if let Some(turn) = turn_ms.filter(|_| left > 0) {
        let wait = (turn - sigterm).clamp(0, left);
        sigterm += wait;
        left -= wait / MS * MS;
    }
    (sigterm, sigterm + left.max(MIN_SIGTERM_TO_SIGKILL_MS))
}

/// When a native sidecar's turn to stop comes, and what it waits for:
/// `turn_ms` from the deletion, and the containers that exit last then
/// (`"app"`, or a later sidecar), for the SIGTERM event's detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    /// When the last of the containers it waits for has exited, ms.
    pub at_ms: i64,
    /// Those that exit last, quoted and joined (`"app"`).
    pub after: String,
}

/// How long the model takes the container's preStop hook to run, if it has one.
pub fn hook_ms(model: &ContainerModel) -> Option<i64> {
    model.prestop.map(|p| match p {
        SleepSeconds::Forever => i64::MAX / 4,
        SleepSeconds::Finite(s) => s.max(0) * MS,
    })
}

/// The preStop event's detail: the hook and where its length comes from.
fn hook_detail(model: &ContainerModel) -> String {
    length_detail(model.prestop, model.prestop_length, "prestop", "sleep forever".to_owned())
}

/// What deletion does: endpoint removal takes `propagation_ms`; the preStop
/// hook runs from deletion, then the stop signal, SIGTERM unless
/// `lifecycle.stopSignal` is sent (see [`stop_times`]); the app stops
/// admitting requests at that signal or when no more arrive, finishes those
/// in flight (each up to `request_ms`), drains and shuts down within its
/// declared budgets; SIGKILL comes when what is left of the grace period,
/// counted from deletion, ends. A stop signal of SIGKILL ends it all at once.
pub fn delete(model: &ContainerModel, propagation_ms: i64, request_ms: i64) -> Run {
    delete_in_turn(model, propagation_ms, request_ms, None)
}

/// [`delete`] for a container that stops in its [`Turn`] (a native sidecar
/// of a deleted pod): SIGTERM after its preStop hook and its turn, SIGKILL
/// when what is left of the grace period after both ends.
pub(crate) fn delete_in_turn(model: &ContainerModel, propagation_ms: i64, request_ms: i64, turn: Option<&Turn>) -> Run {
    let mut run = Run::default();
    let mut events = Vec::new();
    let mut event = |at: i64, kind: EventKind, detail: String| events.push(Event::new(at, None, kind, detail));
    let grace = model.grace.max(0) * MS;
    event(0, EventKind::Deleted, format!("terminationGracePeriodSeconds {}", model.grace));
    event(propagation_ms, EventKind::EndpointsRemoved, String::new());
    let hook = hook_ms(model);
    if hook.is_some() {
        event(0, EventKind::PreStop, hook_detail(model));
    }
    let (sigterm, sigkill) = stop_times_in_turn(hook, grace, turn.map(|t| t.at_ms));
    let cut_short = hook.is_some_and(|h| h >= grace);
    // What its SIGTERM waited for: the containers of its turn, or the
    // grace period, when they outlast it.
    let expired = turn.is_some_and(|t| t.at_ms > sigterm);
    let waited = turn.filter(|t| t.at_ms > hook.unwrap_or(0).min(grace)).map(|t| {
        if !expired {
            format!("in its turn, after {} exited", t.after)
        } else {
            format!("the grace period ran out before {} exited", t.after)
        }
    });
    let budgets = model.assumed_stop.unwrap_or(model.drain + model.shutdown) * MS;
    let last_admitted = propagation_ms.min(sigterm);
    let work_end = (sigterm + budgets).max(last_admitted + request_ms);
    // New connections still arrive until endpoint removal reaches the
    // proxies; a process that has stopped accepting at the stop signal
    // refuses them (what a preStop bridge is for).
    if model.receives_traffic && sigterm < propagation_ms {
        run.refused_ms = Some(propagation_ms - sigterm);
    }
    let signal = &model.stop_signal;
    if signal.kills() {
        // `stopSignal: SIGKILL`: nothing of the in-flight work, drain or shutdown gets done.
        run.sigkill = true;
        run.cut_ms = Some(work_end - sigterm);
        event(sigterm, EventKind::Sigkill, "lifecycle.stopSignal SIGKILL: no graceful stop".to_owned());
    } else {
        let cut = cut_short.then(|| "the preStop hook used the grace period; 2s left".to_owned());
        let notes = [waited, cut, Some(signal.detail()).filter(|d| !d.is_empty())];
        let detail = notes.into_iter().flatten().collect::<Vec<_>>().join("; ");
        events.push(Event {
            signal: signal.sent().map(str::to_owned),
            ..Event::new(sigterm, None, EventKind::Sigterm, detail)
        });
        let mut event = |at: i64, kind: EventKind, detail: String| events.push(Event::new(at, None, kind, detail));
        let assumed = model.assumed_stop.map(|s| {
            format!(
                "stopping takes {s} s assumed: the policy's prestopMinRemainingSeconds, no drain or shutdown declared"
            )
        });
        if work_end <= sigkill {
            event(work_end, EventKind::WorkDone, assumed.unwrap_or_default());
            event(work_end, EventKind::Exited, String::new());
        } else {
            // In flight: what the app still had to do when SIGKILL came.
            run.sigkill = true;
            run.cut_ms = Some(work_end - sigkill);
            let why = if cut_short || expired { "2s after SIGTERM" } else { "the grace period ended" };
            let why = match assumed {
                Some(a) => format!("{why}; {a}"),
                None => why.to_owned(),
            };
            event(sigkill, EventKind::Sigkill, why);
        }
    }
    events.sort_by_key(|e| e.at_ms);
    run.events = events;
    run
}
