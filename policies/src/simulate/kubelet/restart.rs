//! What ends a container and starts the next: a kill (a probe's, a failed
//! postStart hook's), the app's own exit, the CrashLoopBackOff between them
//! (kuberuntime_manager.go, `doBackOff`) and the new container's start.

use crate::model::ProbeKind;

use super::state::{Backoff, Cause, Machine};
use super::world::{BACKOFF_INITIAL_MS, BACKOFF_MAX_MS, MS, NEVER_MS};
use crate::simulate::hooks::seen_after_start;
use crate::simulate::termination::{hook_ms, stop_times};
use crate::simulate::timeline::{Event, EventKind};
use crate::simulate::verdict::plural;

impl Machine<'_> {
    /// The kubelet kills the container at `at`: the preStop hook, the stop
    /// signal, SIGKILL when the grace period ends (`termination.rs`).
    pub(super) fn kill(&mut self, at: i64, cause: Cause) {
        self.note_healthy(at);
        self.run.restarts += 1;
        self.run.first_restart_ms.get_or_insert(at);
        let (probe, probe_grace) = match cause {
            Cause::Probe(by, grace) => (Some(by), grace),
            Cause::PostStart(why) => {
                self.run.hook_failure = Some(why);
                (None, None)
            }
        };
        let times = probe.map_or(0, |by| self.failure_of(by));
        self.event(at, probe, EventKind::Kill, || match cause {
            Cause::Probe(by, _) => format!("{} failed {}", by.word(), plural(times, "time")),
            Cause::PostStart(_) => "postStart hook failed: FailedPostStartHook".to_owned(),
        });
        self.hook_fails = None;
        self.hook_ends = None;
        let grace = probe_grace.unwrap_or(self.model.grace).max(0) * MS;
        let (sigterm, sigkill) = stop_times(hook_ms(self.model), grace);
        // A stuck process handles SIGTERM only once it answers again; a
        // stop signal of SIGKILL leaves it nothing to handle.
        let handled = sigterm.max(self.stuck_until(at).map_or(0, |until| until - at));
        let needed = handled.saturating_add((self.model.drain + self.model.shutdown) * MS);
        let kills_at_once = self.model.stop_signal.kills();
        let exit = at + if kills_at_once { sigterm } else { needed.min(sigkill) };
        // A container a probe killed runs until it exits, and is ready as
        // long as its readiness probe says: the kubelet counts a container
        // ready only while it runs, from its readiness result
        // (prober/prober_manager.go, `UpdatePodStatus`), and the readiness
        // worker goes on checking it. A wedged or paused process so stays
        // in the endpoints until its readiness fails or SIGKILL ends it.
        match cause {
            Cause::Probe(..) if exit > at => self.stopping = Some(exit),
            _ => self.exited(at),
        }
        if kills_at_once {
            self.run.sigkill = true;
            self.event(exit, None, EventKind::Sigkill, || "lifecycle.stopSignal SIGKILL".to_owned());
        } else if needed > sigkill {
            self.run.sigkill = true;
            let why = if sigkill > grace { "2s after SIGTERM" } else { "the grace period ended" };
            self.event(exit, None, EventKind::Sigkill, || why.to_owned());
        } else {
            self.event(exit, None, EventKind::Exited, String::new);
        }
        if !self.model.restarts {
            self.run.stopped = true;
            self.event(exit, None, EventKind::NotRestarted, || "restartPolicy Never".to_owned());
            return;
        }
        // A probe's kill restarts in the same sync, judged by the container
        // that exited before; a failed postStart hook ends that sync, and
        // the next one judges the back-off by this exit, as for a crash.
        let judged_by = match cause {
            Cause::Probe(..) => self.last_exit,
            Cause::PostStart(_) => Some(exit),
        };
        let start = self.start_after(exit, judged_by);
        self.last_exit = Some(exit);
        self.pending_start = Some(start);
    }

    /// The killed container is gone at `at`: no longer running, so not ready.
    pub(super) fn exited(&mut self, at: i64) {
        self.stopping = None;
        self.set_ready(at, false);
        self.running = false;
    }

    /// When the kubelet starts the container again after it exited at `exit`,
    /// judging the back-off by the exit at `judged_by` (kuberuntime_manager.go,
    /// `doBackOff`): with no exited container to judge by, at once and
    /// without a back-off; when that exit is further back than the delay (or
    /// the delay is forgotten), at once, raising it; else after the whole
    /// delay from this exit, raising it then.
    ///
    /// After a probe's kill the kubelet restarts in the same sync, whose
    /// status still shows the killed container running: it judges by the
    /// container that exited *before* ([`Machine::kill`]). So the first two
    /// restarts are immediate, and a container that ran longer than the
    /// delay since the previous exit restarts at once. A container that
    /// exits by itself is judged by its own exit ([`Machine::crash`]): the
    /// first time at once, then always the whole delay.
    fn start_after(&mut self, exit: i64, judged_by: Option<i64>) -> i64 {
        let Some(judged_by) = judged_by else {
            return exit;
        };
        let waiting = self.backoff.filter(|b| !self.forgotten(*b, judged_by) && exit - judged_by < b.delay);
        let Some(Backoff { delay, .. }) = waiting else {
            self.raise_backoff(judged_by, exit);
            return exit;
        };
        self.wait_out(exit, delay)
    }

    /// Backs off `delay` from the exit at `exit`, then raises the delay as
    /// the sync that starts the container does; returns that start.
    fn wait_out(&mut self, exit: i64, delay: i64) -> i64 {
        self.run.max_backoff_ms = self.run.max_backoff_ms.max(delay);
        self.push(exit, || Event {
            delay_ms: Some(delay),
            ..Event::new(exit, None, EventKind::BackOff, format!("CrashLoopBackOff {}s", delay / MS))
        });
        self.raise_backoff(exit, exit + delay);
        exit + delay
    }

    fn max_backoff(&self) -> i64 {
        self.world.max_backoff_ms.unwrap_or(BACKOFF_MAX_MS).max(1)
    }

    /// Whether the entry is forgotten for a container that exited at `exit`
    /// (not raised for more than twice the ceiling before it).
    fn forgotten(&self, b: Backoff, exit: i64) -> bool {
        exit - b.raised > 2 * self.max_backoff()
    }

    /// `Backoff.Next`, judged by the exit at `exit`, at time `now`.
    fn raise_backoff(&mut self, exit: i64, now: i64) {
        let delay = match self.backoff {
            Some(b) if !self.forgotten(b, exit) => (b.delay * 2).min(self.max_backoff()),
            _ => BACKOFF_INITIAL_MS.min(self.max_backoff()),
        };
        self.backoff = Some(Backoff { delay, raised: now });
    }

    /// The app exits by itself at `at` (code 1); the kubelet's next sync
    /// sees it exited and judges the back-off by this exit
    /// ([`Machine::start_after`]). `restartPolicy: OnFailure` restarts an
    /// exit code 1 as Always does.
    pub(super) fn crash(&mut self, at: i64) {
        self.note_healthy(at);
        self.hook_fails = None;
        self.hook_ends = None;
        self.event(at, None, EventKind::Exited, || "by itself, code 1".to_owned());
        self.set_ready(at, false);
        self.running = false;
        if !self.model.restarts {
            self.run.stopped = true;
            self.event(at, None, EventKind::NotRestarted, || "restartPolicy Never".to_owned());
            self.pending_start = None;
            return;
        }
        self.run.restarts += 1;
        self.run.first_restart_ms.get_or_insert(at);
        let start = self.start_after(at, Some(at));
        self.last_exit = Some(at);
        self.pending_start = Some(start);
    }

    pub(super) fn restart_at(&mut self, at: i64) {
        self.pending_start = None;
        self.first = false;
        self.start = at;
        self.healthy_at = at + self.world.restart_boot_ms;
        self.running = true;
        self.startup_done = self.model.probe(ProbeKind::Startup).is_none();
        for p in &mut self.probes {
            p.next = p.tick_from(at, at);
            p.triggered = None;
            p.fails = 0;
            p.oks = 0;
        }
        self.event(at, None, EventKind::Started, String::new);
        self.start_hook(at);
        let seen = seen_after_start(self.model.poststart.as_ref()).unwrap_or(NEVER_MS);
        if self.startup_done {
            self.trigger_readiness(at + seen);
        }
        self.ready_without_probe(at);
    }
}
