//! The kubelet's probe and restart state machine over one container's
//! timeline: the probes here, kills, exits, the back-off and restarts in
//! `kubelet/restart.rs`, the postStart hook and the readiness gates in
//! `kubelet/lifecycle.rs` (deletion is in `termination.rs`).
//!
//! Times are milliseconds. Each probe runs on a grid of its own, one tick
//! every `periodSeconds`, kept across restarts as the kubelet's probe worker
//! keeps it: a container is first checked at the first tick once the
//! kubelet has seen it start ([`STARTED_SEEN_MS`]) and its
//! `initialDelaySeconds` have passed; liveness and readiness are held until the startup
//! probe succeeds. A check answered later than `timeoutSeconds` is a
//! failure. `failureThreshold` consecutive failures of startup or liveness
//! kill the container; of readiness, take it out of the Service's
//! endpoints, where `successThreshold` consecutive successes bring it back
//! (once the pod's readiness gates are True, `gates.rs`). A check whose
//! port does not resolve errors and counts neither way. A postStart hook
//! holds the first check until it ends, and a failed one kills the
//! container (`hooks.rs`).

use crate::model::ProbeKind;

mod lifecycle;
mod restart;

use super::checks::Check;
use super::gates::GateClock;
use super::hooks::seen_after_start;
use super::pod::{ContainerModel, ProbeModel};
use super::timeline::{Event, EventKind, Span};
use lifecycle::Timer;
use restart::{Backoff, Cause};

/// CrashLoopBackOff's first delay; each delay the kubelet waits doubles the
/// next, up to the ceiling ([`BACKOFF_MAX_MS`] unless the kubelet's
/// `crashLoopBackOff.maxContainerRestartPeriod` says otherwise).
pub const BACKOFF_INITIAL_MS: i64 = 10_000;
/// The kubelet's default ceiling of the CrashLoopBackOff delay.
pub const BACKOFF_MAX_MS: i64 = 300_000;

const MS: i64 = 1000;

/// How long after a container starts the kubelet's probe workers first see
/// it running, and so first probe it: the pod lifecycle event generator
/// relists containers every second (`genericPlegRelistPeriod`), and a worker
/// skips its ticks until the pod's status shows the new container
/// (prober/worker.go, `doProbe`). The model takes the whole second. A
/// postStart hook holds it longer (`hooks.rs`, `seen_after_start`).
pub const STARTED_SEEN_MS: i64 = 1000;

/// A time that never comes (a postStart hook that never ends), far enough
/// from `i64::MAX` that adding periods to it does not overflow.
const NEVER_MS: i64 = i64::MAX / 4;

/// What the app does during the run, in milliseconds from the run's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct World {
    /// `Some(phase)`: the container has long been running, started and
    /// ready, and its probes' grids sit `phase` ms before the disruption
    /// (the run's 0). `None`: the container starts at 0.
    pub steady_phase: Option<i64>,
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
    /// Whether a SIGKILL ended a container.
    pub sigkill: bool,
    /// Whether some container's app finished booting before it was killed.
    pub booted: bool,
    /// For a deletion: how long in-flight work still needed when SIGKILL came.
    pub cut_ms: Option<i64>,
    /// The longest CrashLoopBackOff delay waited.
    pub max_backoff_ms: i64,
    /// Why the postStart hook failed, when a failure killed a container.
    pub hook_failure: Option<&'static str>,
    /// Whether a container was left stopped (`restartPolicy: Never`).
    pub stopped: bool,
    /// Whether the pod was in the Service's endpoints at some time.
    pub served: bool,
}

struct ProbeRun {
    model: ProbeModel,
    /// The probe's grid: the kubelet's worker for it ticks at `anchor` plus
    /// whole periods for as long as the pod lives, across restarts.
    anchor: i64,
    next: i64,
    /// A check off the grid: readiness is run at once when the kubelet
    /// syncs a started container that is not ready.
    triggered: Option<i64>,
    fails: i64,
    oks: i64,
    /// How long after a container starts the kubelet first sees it running.
    seen: i64,
}

impl ProbeRun {
    fn period(&self) -> i64 {
        self.model.timing.period.max(1) * MS
    }

    /// When its next check runs: the grid's next tick, or a triggered check before it.
    fn due(&self) -> i64 {
        self.triggered.map_or(self.next, |t| t.min(self.next))
    }

    fn delay(&self) -> i64 {
        self.model.timing.initial_delay.max(0) * MS
    }

    /// When the first check of a container comes after its start: its
    /// `initialDelaySeconds`, once the kubelet has seen it running.
    fn first_after_start(&self) -> i64 {
        self.delay().max(self.seen)
    }

    /// The first tick of the grid at or after `at`.
    fn tick_at_or_after(&self, at: i64) -> i64 {
        let period = self.period();
        self.anchor + (at - self.anchor + period - 1).div_euclid(period) * period
    }

    /// The first check of a container started at `start`, made no sooner
    /// than `at`: the grid's first tick once the kubelet has seen the
    /// container and its `initialDelaySeconds` has passed.
    fn tick_from(&self, start: i64, at: i64) -> i64 {
        self.tick_at_or_after(at.max(start + self.first_after_start()))
    }
}

struct Machine<'a> {
    model: &'a ContainerModel,
    record: bool,
    world: World,
    run: Run,
    probes: Vec<ProbeRun>,
    first: bool,
    start: i64,
    healthy_at: i64,
    running: bool,
    startup_done: bool,
    /// The container is ready (its readiness probe passed, or it has none).
    ready: bool,
    /// The pod is in the Service's endpoints: the container is ready and
    /// the readiness gates are True.
    serving: bool,
    gates: GateClock,
    unready_since: Option<i64>,
    /// When the current container's postStart hook ends, while it runs.
    hook_ends: Option<i64>,
    /// When the current container's postStart hook fails, and why.
    hook_fails: Option<(i64, &'static str)>,
    backoff: Option<Backoff>,
    /// When the latest container that exited did.
    last_exit: Option<i64>,
    pending_start: Option<i64>,
}

/// Runs the kubelet over a container in a world, keeping every event.
pub fn simulate(model: &ContainerModel, world: World) -> Run {
    run(model, world, true)
}

/// [`simulate`] without the events: the figures only, for the phase sweep.
pub fn simulate_figures(model: &ContainerModel, world: World) -> Run {
    run(model, world, false)
}

fn run(model: &ContainerModel, world: World, record: bool) -> Run {
    let seen = seen_after_start(model.poststart.as_ref()).unwrap_or(NEVER_MS);
    let mut m = Machine {
        model,
        record,
        world,
        run: Run::default(),
        probes: model
            .probes
            .iter()
            .map(|&p| ProbeRun { model: p, anchor: 0, next: 0, triggered: None, fails: 0, oks: 0, seen })
            .collect(),
        first: true,
        start: 0,
        healthy_at: world.boot_ms,
        running: true,
        startup_done: model.probe(ProbeKind::Startup).is_none(),
        ready: false,
        serving: false,
        gates: GateClock::new(&model.readiness_gates, world.steady_phase.is_some()),
        unready_since: Some(0),
        hook_ends: None,
        hook_fails: None,
        backoff: None,
        last_exit: None,
        pending_start: None,
    };
    match world.steady_phase {
        Some(phase) => {
            // A probe that cannot be sent keeps its first value however
            // long the pod has run: startup never succeeds, readiness never passes.
            m.startup_done = model.unresolved(ProbeKind::Startup).is_none();
            m.ready = m.startup_done && model.unresolved(ProbeKind::Readiness).is_none();
            // Gates that are never True keep a long-running pod out all along.
            if m.ready && !m.gates.never() {
                m.serving = true;
                m.run.served = true;
                m.unready_since = None;
            }
            m.healthy_at = i64::MIN / 4;
            m.run.booted = true;
            for p in &mut m.probes {
                p.next = (p.delay() - phase).rem_euclid(p.period());
                p.anchor = p.next;
            }
        }
        None => {
            m.event(0, None, EventKind::Started, String::new);
            m.start_hook(0);
            // The workers' grids start with the first check: the model
            // takes the earliest the kubelet allows.
            for p in &mut m.probes {
                p.next = p.first_after_start();
                p.anchor = p.next;
            }
            m.ready_without_probe(0);
        }
    }
    for (span, what) in [(world.stall, "stall"), (world.pause, "pause")] {
        if let Some((from, to)) = span {
            m.event(from, None, EventKind::DisruptionStart, || what.to_owned());
            m.event(to, None, EventKind::DisruptionEnd, || what.to_owned());
        }
    }
    if let Some(from) = world.wedge_from {
        m.event(from, None, EventKind::DisruptionStart, || "the process hangs".to_owned());
    }
    m.go();
    m.finish()
}

impl Machine<'_> {
    /// Records an event; the detail is only written when events are kept.
    fn event(&mut self, at: i64, probe: Option<ProbeKind>, kind: EventKind, detail: impl FnOnce() -> String) {
        self.push(at, || Event::new(at, probe, kind, detail()));
    }

    fn push(&mut self, at: i64, event: impl FnOnce() -> Event) {
        if self.record && at <= self.world.horizon_ms {
            self.run.events.push(event());
        }
    }

    fn active(&self, kind: ProbeKind) -> bool {
        self.running && (kind == ProbeKind::Startup) != self.startup_done
    }

    fn go(&mut self) {
        loop {
            let next_probe = (0..self.probes.len())
                .filter(|&i| self.active(self.probes[i].model.kind))
                .min_by_key(|&i| self.probes[i].due());
            let at = match (next_probe, self.pending_start) {
                (_, Some(start)) if !self.running => Some(start),
                (Some(i), _) => Some(self.probes[i].due()),
                (None, _) => None,
            };
            // What comes at its own time wins a tie with a check.
            if let Some((when, timer)) = self.next_timer().filter(|&(t, _)| at.is_none_or(|at| t <= at)) {
                if when > self.world.horizon_ms {
                    break;
                }
                match timer {
                    Timer::Crash => self.crash(when),
                    Timer::HookFails(why) => self.kill(when, Cause::PostStart(why)),
                    Timer::HookEnds => {
                        self.hook_ends = None;
                        self.ready_without_probe(when);
                    }
                    Timer::GatesTrue => self.gates_true(when),
                }
                continue;
            }
            let Some(at) = at else { break };
            if at > self.world.horizon_ms || self.settled(at) {
                break;
            }
            match next_probe {
                Some(i) if self.running => self.probe(i),
                _ => self.restart_at(at),
            }
        }
    }

    /// Whether nothing can happen any more: the disruption is over, the
    /// container runs, started and ready, and no probe has a failure pending.
    fn settled(&self, at: i64) -> bool {
        let over = |span: Option<Span>| span.is_none_or(|(_, to)| at >= to);
        let stuck = self.first && (self.world.wedge_from.is_some() || !over(self.world.pause));
        self.running
            && self.world.crash_after_ms.is_none()
            && self.hook_fails.is_none()
            && self.startup_done
            && self.ready
            && (self.serving || self.gates.never())
            && at >= self.healthy_at
            && over(self.world.stall)
            && !stuck
            && self.probes.iter().all(|p| p.fails == 0)
    }

    /// Until when the current process answers nothing, if it is stuck at `at`.
    fn stuck_until(&self, at: i64) -> Option<i64> {
        if !self.first {
            return None;
        }
        if self.world.wedge_from.is_some_and(|w| at >= w) {
            return Some(i64::MAX / 4);
        }
        self.world.pause.filter(|&(from, to)| at >= from && at < to).map(|(_, to)| to)
    }

    /// A check started at `at`: whether it passed, when its result came, and whether it timed out.
    fn check(&self, p: &ProbeModel, at: i64) -> (bool, i64, bool) {
        let timeout = p.timing.timeout.max(1) * MS;
        if matches!(p.check, Check::ProcessOnly) {
            return (true, at, false);
        }
        if at < self.healthy_at {
            // Booting: nothing listens yet, the check is refused at once.
            return (false, at, false);
        }
        if matches!(p.check, Check::PortOnly) {
            return (true, at, false);
        }
        if let Some(until) = self.stuck_until(at) {
            return if until - at > timeout { (false, at + timeout, true) } else { (true, until, false) };
        }
        // A stalled dependency answers when the stall ends: in time for a
        // probe whose timeout reaches that far.
        if let Some((_, to)) =
            self.world.stall.filter(|&(from, to)| p.check == Check::Dependency && at >= from && at < to)
        {
            return if to - at > timeout { (false, at + timeout, true) } else { (true, to, false) };
        }
        (true, at, false)
    }

    fn probe(&mut self, i: usize) {
        let model = self.probes[i].model;
        let at = self.probes[i].due();
        // A triggered check leaves the grid where it is.
        let off_grid = self.probes[i].triggered.take().is_some_and(|t| t < self.probes[i].next);
        let period = self.probes[i].period();
        if model.check == Check::Unresolved {
            // The kubelet cannot send it, and its worker discards the
            // errored result (prober/worker.go, `doProbe`): nothing counts.
            self.probes[i].next = if off_grid { self.probes[i].next } else { at + period };
            let container = self.model;
            self.event(at, Some(model.kind), EventKind::ProbeErrored, || {
                let port = container.unresolved(model.kind).unwrap_or("its port");
                format!("{port} not found; the result is discarded")
            });
            return;
        }
        let (ok, done, timed_out) = self.check(&model, at);
        let mut next = if off_grid { self.probes[i].next } else { at + period };
        while next < done {
            next += period;
        }
        self.probes[i].next = next;
        let kind = model.kind;
        if ok {
            self.probes[i].fails = 0;
            self.probes[i].oks += 1;
            match kind {
                ProbeKind::Startup => {
                    self.startup_done = true;
                    self.event(done, Some(kind), EventKind::StartupSucceeded, String::new);
                    let start = self.start;
                    for p in self.probes.iter_mut().filter(|p| p.model.kind != ProbeKind::Startup) {
                        p.next = p.tick_from(start, done);
                        p.fails = 0;
                        p.oks = 0;
                    }
                    // The startup result syncs the pod: readiness is run at once.
                    self.trigger_readiness(done);
                    self.ready_without_probe(done);
                }
                ProbeKind::Readiness if !self.ready && self.probes[i].oks >= model.timing.success.max(1) => {
                    self.set_ready(done, true);
                }
                _ => {}
            }
            return;
        }
        self.probes[i].oks = 0;
        self.probes[i].fails += 1;
        let fails = self.probes[i].fails;
        let what = if timed_out { EventKind::ProbeTimedOut } else { EventKind::ProbeFailed };
        let threshold = model.timing.failure.max(1);
        // The kubelet acts on a count up to the threshold; past it, the
        // container is already unready and a failure changes nothing.
        let past_threshold = fails > threshold;
        self.push(done, || {
            let detail = if past_threshold {
                format!("{}; already unready", model.check.word())
            } else {
                format!("{} {fails}/{threshold}", model.check.word())
            };
            Event { past_threshold, ..Event::new(done, Some(kind), what, detail) }
        });
        if fails < threshold {
            return;
        }
        match kind {
            ProbeKind::Readiness if self.ready => self.set_ready(done, false),
            ProbeKind::Readiness => {}
            ProbeKind::Startup | ProbeKind::Liveness => self.kill(done, Cause::Probe(kind, model.grace)),
        }
    }

    fn note_healthy(&mut self, until: i64) {
        if self.healthy_at < until && self.healthy_at > self.start {
            self.event(self.healthy_at, None, EventKind::AppHealthy, String::new);
        }
        if self.healthy_at < until {
            self.run.booted = true;
        }
    }

    /// The kubelet syncs the pod at `at` with the container started and not
    /// ready: it runs readiness at once, off its grid, once its
    /// `initialDelaySeconds` have passed (prober_manager.go, `UpdatePodStatus`).
    fn trigger_readiness(&mut self, at: i64) {
        if self.ready {
            return;
        }
        let start = self.start;
        for p in self.probes.iter_mut().filter(|p| p.model.kind == ProbeKind::Readiness) {
            if at >= start + p.delay() {
                p.triggered = Some(at);
            }
        }
    }

    fn failure_of(&self, kind: ProbeKind) -> i64 {
        self.model.probe(kind).map_or(0, |p| p.timing.failure)
    }

    fn finish(mut self) -> Run {
        let horizon = self.world.horizon_ms;
        if self.running {
            self.note_healthy(horizon);
        }
        if let Some(since) = self.unready_since.take() {
            self.run.unready.push((since, horizon));
        }
        self.run.unready.retain(|(a, b)| b > a);
        self.run.events.sort_by_key(|e| e.at_ms);
        self.run
    }
}
