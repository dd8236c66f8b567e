//! What a run of the kubelet machine takes and gives: the app's behaviour
//! ([`World`]), the outcome ([`Run`]), and the kubelet's constants. Below
//! the machine, so the simulation's other parts read them without
//! importing it.

use super::super::timeline::{Event, Span};

/// CrashLoopBackOff's first delay; each delay the kubelet waits doubles the
/// next, up to the ceiling ([`BACKOFF_MAX_MS`] unless the kubelet's
/// `crashLoopBackOff.maxContainerRestartPeriod` says otherwise).
pub const BACKOFF_INITIAL_MS: i64 = 10_000;
/// The kubelet's default ceiling of the CrashLoopBackOff delay.
pub const BACKOFF_MAX_MS: i64 = 300_000;

pub(super) const MS: i64 = 1000;

/// How long after a container starts the kubelet's probe workers first see
/// it running, and so first probe it: the pod lifecycle event generator
/// relists containers every second (`genericPlegRelistPeriod`), and a worker
/// skips its ticks until the pod's status shows the new container
/// (prober/worker.go, `doProbe`). The model takes the whole second. A
/// postStart hook holds it longer (`hooks.rs`, `seen_after_start`).
pub const STARTED_SEEN_MS: i64 = 1000;

/// A time that never comes (a postStart hook that never ends), far enough
/// from `i64::MAX` that adding periods to it does not overflow.
pub(super) const NEVER_MS: i64 = i64::MAX / 4;

/// What the app does during the run, in milliseconds from the run's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct World {
    /// `Some(phase)`: the container has long been running, started and
    /// ready, and its probes' grids sit `phase` ms before the disruption
    /// (the run's 0). `None`: the container starts at 0.
    pub steady_phase: Option<i64>,
    /// When the container first starts, for a run that starts the pod
    /// (`steady_phase` `None`): its pod's init containers start one after
    /// another and the regular containers after them (`pod_run.rs`).
    pub start_ms: i64,
    /// How long the first container takes to boot (from its start).
    pub boot_ms: i64,
    /// How long a restarted container takes to boot.
    pub restart_boot_ms: i64,
    /// Every dependency check started in this span fails (a stall hits all
    /// incarnations: the dependency is outside the pod).
    pub stall: Option<Span>,
    /// The first container answers nothing in this span (a new process is not paused).
    pub pause: Option<Span>,
    /// The first container answers nothing from this time on.
    pub wedge_from: Option<i64>,
    /// The run ends here.
    pub horizon_ms: i64,
    /// The kubelet's CrashLoopBackOff ceiling; `None`: [`BACKOFF_MAX_MS`].
    pub max_backoff_ms: Option<i64>,
    /// Every container exits by itself (code 1) this long after it starts.
    pub crash_after_ms: Option<i64>,
    /// Every container's postStart hook fails when it ends.
    pub poststart_fails: bool,
}

/// What one run produced.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Run {
    /// Events in time order.
    pub events: Vec<Event>,
    /// Kills by startup, liveness or a failed postStart hook (and, for a
    /// crash, exits the kubelet restarts).
    pub restarts: u32,
    /// When the first of them was decided.
    pub first_restart_ms: Option<i64>,
    /// Spans out of the Service's endpoints, within the run.
    pub unready: Vec<Span>,
    /// Spans the container itself is not ready, within the run, whatever
    /// the readiness gates say: what the pod's readiness reads of it.
    pub not_ready: Vec<Span>,
    /// Whether a SIGKILL ended a container.
    pub sigkill: bool,
    /// Whether some container's app finished booting before it was killed.
    pub booted: bool,
    /// For a deletion: how long in-flight work still needed when SIGKILL came.
    pub cut_ms: Option<i64>,
    /// For a deletion: how long proxies still send new connections after
    /// the process stopped accepting them (the stop signal came before
    /// endpoint removal reached them).
    pub refused_ms: Option<i64>,
    /// The longest CrashLoopBackOff delay waited.
    pub max_backoff_ms: i64,
    /// Why the postStart hook failed, when a failure killed a container.
    pub hook_failure: Option<&'static str>,
    /// Whether a container was left stopped (`restartPolicy: Never`).
    pub stopped: bool,
    /// Whether the pod was in the Service's endpoints at some time.
    pub served: bool,
    /// Where the run ended ([`World::horizon_ms`]).
    pub horizon_ms: i64,
}
