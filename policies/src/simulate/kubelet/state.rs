//! The machine's state: the container's probes on their grids, what the
//! kubelet holds between events, and the timers and causes its parts pass
//! each other. The machine's behaviour is split over `machine.rs` (the
//! loop and the probes), `lifecycle.rs` and `restart.rs`, siblings that
//! all read this.

use crate::model::ProbeKind;
use crate::simulate::gates::GateClock;
use crate::simulate::pod::{ContainerModel, ProbeModel};

use super::world::{MS, Run, World};

pub(super) struct ProbeRun {
    pub(super) model: ProbeModel,
    /// The probe's grid: the kubelet's worker for it ticks at `anchor` plus
    /// whole periods for as long as the pod lives, across restarts.
    pub(super) anchor: i64,
    pub(super) next: i64,
    /// A check off the grid: readiness is run at once when the kubelet
    /// syncs a started container that is not ready.
    pub(super) triggered: Option<i64>,
    pub(super) fails: i64,
    pub(super) oks: i64,
    /// How long after a container starts the kubelet first sees it running.
    pub(super) seen: i64,
}

impl ProbeRun {
    pub(super) fn period(&self) -> i64 {
        self.model.timing.period.max(1) * MS
    }

    /// When its next check runs: the grid's next tick, or a triggered check before it.
    pub(super) fn due(&self) -> i64 {
        self.triggered.map_or(self.next, |t| t.min(self.next))
    }

    pub(super) fn delay(&self) -> i64 {
        self.model.timing.initial_delay.max(0) * MS
    }

    /// When the first check of a container comes after its start: its
    /// `initialDelaySeconds`, once the kubelet has seen it running.
    pub(super) fn first_after_start(&self) -> i64 {
        self.delay().max(self.seen)
    }

    /// The first tick of the grid at or after `at`.
    pub(super) fn tick_at_or_after(&self, at: i64) -> i64 {
        let period = self.period();
        self.anchor + (at - self.anchor + period - 1).div_euclid(period) * period
    }

    /// The first check of a container started at `start`, made no sooner
    /// than `at`: the grid's first tick once the kubelet has seen the
    /// container and its `initialDelaySeconds` has passed.
    pub(super) fn tick_from(&self, start: i64, at: i64) -> i64 {
        self.tick_at_or_after(at.max(start + self.first_after_start()))
    }
}

pub(super) struct Machine<'a> {
    pub(super) model: &'a ContainerModel,
    pub(super) record: bool,
    pub(super) world: World,
    pub(super) run: Run,
    pub(super) probes: Vec<ProbeRun>,
    pub(super) first: bool,
    pub(super) start: i64,
    pub(super) healthy_at: i64,
    pub(super) running: bool,
    pub(super) startup_done: bool,
    /// The container is ready (its readiness probe passed, or it has none).
    pub(super) ready: bool,
    /// The pod is in the Service's endpoints: the container is ready and
    /// the readiness gates are True.
    pub(super) serving: bool,
    pub(super) gates: GateClock,
    pub(super) unready_since: Option<i64>,
    /// Since when the container itself is not ready, while it is not.
    pub(super) not_ready_since: Option<i64>,
    /// When the current container's postStart hook ends, while it runs.
    pub(super) hook_ends: Option<i64>,
    /// When the current container's postStart hook fails, and why.
    pub(super) hook_fails: Option<(i64, &'static str)>,
    /// When a container a probe killed exits, while it stops: until then
    /// it runs, and keeps the readiness its readiness probe gives it
    /// ([`Machine::kill`]).
    pub(super) stopping: Option<i64>,
    pub(super) backoff: Option<Backoff>,
    /// When the latest container that exited did.
    pub(super) last_exit: Option<i64>,
    pub(super) pending_start: Option<i64>,
}

/// What happens at a time of its own, not at a probe's check.
#[derive(Debug, Clone, Copy)]
pub(super) enum Timer {
    /// The app exits by itself.
    Crash,
    /// The postStart hook fails, and why.
    HookFails(&'static str),
    /// The postStart hook ends: a container without a readiness probe is ready.
    HookEnds,
    /// The readiness gates become True.
    GatesTrue,
    /// The container a probe killed exits.
    Exit,
}

/// The kubelet's back-off entry for the container (client-go's
/// `flowcontrol.Backoff`): the current delay and when it was last raised.
#[derive(Debug, Clone, Copy)]
pub(super) struct Backoff {
    pub(super) delay: i64,
    pub(super) raised: i64,
}

/// Why the kubelet kills a container.
#[derive(Debug, Clone, Copy)]
pub(super) enum Cause {
    /// Startup or liveness reached its `failureThreshold`; the probe's own
    /// `terminationGracePeriodSeconds`, if set.
    Probe(ProbeKind, Option<i64>),
    /// The postStart hook failed (`FailedPostStartHook`), and why.
    PostStart(&'static str),
}
