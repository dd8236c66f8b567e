//! The lifecycle in the kubelet's timeline: the postStart hook that holds a
//! new container (`hooks.rs`), and the readiness gates between a ready
//! container and the Service's endpoints (`gates.rs`).

use crate::model::ProbeKind;

use super::state::{Machine, Timer};
use super::world::NEVER_MS;
use crate::simulate::gates::Admission;
use crate::simulate::timeline::EventKind;

impl Machine<'_> {
    /// The next thing that happens at a time of its own rather than at a
    /// check: the app's crash, the postStart hook's failure or end, the
    /// readiness gates becoming True.
    pub(super) fn next_timer(&self) -> Option<(i64, Timer)> {
        // A killed container that stops does not crash any more.
        let alive = self.running && self.stopping.is_none();
        let crash = self.world.crash_after_ms.filter(|_| alive).map(|after| self.start + after.max(0));
        let fails = self.hook_fails.filter(|_| self.running);
        let ends = self.hook_ends.filter(|_| self.running);
        [
            crash.map(|t| (t, Timer::Crash)),
            fails.map(|(t, why)| (t, Timer::HookFails(why))),
            ends.map(|t| (t, Timer::HookEnds)),
            self.gates.due().map(|t| (t, Timer::GatesTrue)),
            self.stopping.map(|t| (t, Timer::Exit)),
        ]
        .into_iter()
        .flatten()
        .min_by_key(|&(t, _)| t)
    }

    /// The container started at `at`: its postStart hook runs, and fails
    /// when the scenario or its handler says so.
    pub(super) fn start_hook(&mut self, at: i64) {
        self.hook_fails = None;
        self.hook_ends = None;
        let Some(hook) = self.model.poststart else { return };
        self.event(at, None, EventKind::PostStart, || hook.detail());
        self.hook_fails = hook.failure_at(at, at < self.healthy_at, self.world.poststart_fails);
        self.hook_ends = Some(hook.ms().map_or(NEVER_MS, |ms| at + ms));
    }

    /// The readiness gates become True at `at`.
    pub(super) fn gates_true(&mut self, at: i64) {
        let detail = self.gates.open(&self.model.readiness_gates);
        if self.ready {
            self.set_serving(at, true, None, detail);
        }
    }

    /// Without a readiness probe the container is ready once started (and
    /// its postStart hook has ended).
    pub(super) fn ready_without_probe(&mut self, at: i64) {
        if self.startup_done && self.hook_ends.is_none() && self.model.probe(ProbeKind::Readiness).is_none() {
            self.set_ready(at, true);
        }
    }

    /// The container becomes ready or unready; the pod follows when its
    /// readiness gates let it.
    pub(super) fn set_ready(&mut self, at: i64, ready: bool) {
        if self.ready == ready {
            return;
        }
        self.ready = ready;
        match (ready, self.not_ready_since.take()) {
            (true, Some(since)) => self.run.not_ready.push((since, at)),
            (true, None) => {}
            (false, since) => self.not_ready_since = Some(since.unwrap_or(at)),
        }
        if !ready {
            self.set_serving(at, false, Some(ProbeKind::Readiness), String::new());
            return;
        }
        match self.gates.containers_ready(at, &self.model.readiness_gates) {
            Admission::In(detail) => self.set_serving(at, true, Some(ProbeKind::Readiness), detail),
            Admission::Waiting(detail) => {
                self.event(at, Some(ProbeKind::Readiness), EventKind::ContainerReady, || detail);
            }
        }
    }

    /// The pod enters or leaves the Service's endpoints.
    pub(super) fn set_serving(&mut self, at: i64, serving: bool, probe: Option<ProbeKind>, detail: String) {
        if self.serving == serving {
            return;
        }
        self.serving = serving;
        if serving {
            self.run.served = true;
            if let Some(since) = self.unready_since.take() {
                self.run.unready.push((since, at));
            }
            self.event(at, probe, EventKind::Ready, || detail);
        } else {
            self.unready_since = Some(at);
            self.event(at, probe, EventKind::Unready, || detail);
        }
    }
}
