//! The machine's loop over one container's timeline and its probes'
//! checks; kills, exits and restarts are in `restart.rs`, the postStart
//! hook and the readiness gates in `lifecycle.rs`.

use crate::model::ProbeKind;
use crate::simulate::checks::ProbeCheck;
use crate::simulate::gates::GateClock;
use crate::simulate::hooks::seen_after_start;
use crate::simulate::pod::{ContainerModel, ProbeModel};
use crate::simulate::timeline::{Event, EventKind, Span};

use super::state::{Cause, Machine, ProbeRun, Timer};
use super::world::{MS, NEVER_MS, Run, World};

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
        start: world.start_ms,
        healthy_at: world.start_ms + world.boot_ms,
        running: true,
        startup_done: model.probe(ProbeKind::Startup).is_none(),
        ready: false,
        serving: false,
        gates: GateClock::new(&model.readiness_gates, world.steady_phase.is_some()),
        unready_since: Some(0),
        not_ready_since: Some(0),
        hook_ends: None,
        hook_fails: None,
        stopping: None,
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
            if m.ready {
                m.not_ready_since = None;
            }
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
            let start = world.start_ms;
            m.event(start, None, EventKind::Started, String::new);
            m.start_hook(start);
            // The workers' grids start with the first check: the model
            // takes the earliest the kubelet allows.
            for p in &mut m.probes {
                p.next = start + p.first_after_start();
                p.anchor = p.next;
            }
            m.ready_without_probe(start);
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
    pub(super) fn event(
        &mut self,
        at: i64,
        probe: Option<ProbeKind>,
        kind: EventKind,
        detail: impl FnOnce() -> String,
    ) {
        self.push(at, || Event::new(at, probe, kind, detail()));
    }

    pub(super) fn push(&mut self, at: i64, event: impl FnOnce() -> Event) {
        if self.record && at <= self.world.horizon_ms {
            self.run.events.push(event());
        }
    }

    /// Whether the probe's worker checks the container now. Once a probe
    /// has killed it, liveness and startup are on hold until the next
    /// container (prober/worker.go, `doProbe`: `onHold`), and readiness
    /// goes on while it stops.
    fn active(&self, kind: ProbeKind) -> bool {
        let held = self.stopping.is_some() && kind != ProbeKind::Readiness;
        self.running && !held && (kind == ProbeKind::Startup) != self.startup_done
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
                    Timer::Exit => self.exited(when),
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
            && self.stopping.is_none()
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
    pub(super) fn stuck_until(&self, at: i64) -> Option<i64> {
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
        if matches!(p.check, ProbeCheck::ProcessOnly) {
            return (true, at, false);
        }
        if at < self.healthy_at {
            // Booting: nothing listens yet, the check is refused at once.
            return (false, at, false);
        }
        if matches!(p.check, ProbeCheck::PortOnly) {
            return (true, at, false);
        }
        if let Some(until) = self.stuck_until(at) {
            return if until - at > timeout { (false, at + timeout, true) } else { (true, until, false) };
        }
        // A stalled dependency answers when the stall ends: in time for a
        // probe whose timeout reaches that far.
        if let Some((_, to)) =
            self.world.stall.filter(|&(from, to)| p.check == ProbeCheck::Dependency && at >= from && at < to)
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
        if model.check == ProbeCheck::Unresolved {
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

    pub(super) fn note_healthy(&mut self, until: i64) {
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
    pub(super) fn trigger_readiness(&mut self, at: i64) {
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

    pub(super) fn failure_of(&self, kind: ProbeKind) -> i64 {
        self.model.probe(kind).map_or(0, |p| p.timing.failure)
    }

    fn finish(mut self) -> Run {
        let horizon = self.world.horizon_ms;
        self.run.horizon_ms = horizon;
        if self.running {
            self.note_healthy(horizon);
        }
        if let Some(since) = self.unready_since.take() {
            self.run.unready.push((since, horizon));
        }
        if let Some(since) = self.not_ready_since.take() {
            self.run.not_ready.push((since, horizon));
        }
        self.run.unready.retain(|(a, b)| b > a);
        self.run.not_ready.retain(|(a, b)| b > a);
        self.run.events.sort_by_key(|e| e.at_ms);
        self.run
    }
}
