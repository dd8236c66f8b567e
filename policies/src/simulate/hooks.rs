//! Lifecycle hooks as the simulation runs them: how long a preStop or a
//! postStart hook takes (read from the hook, stated, or unknown and taken
//! as 0 s), and how a postStart hook holds the container and fails.
//!
//! The kubelet runs a postStart hook right after the runtime starts the
//! container, in the same sync, and returns only when it ends
//! (kuberuntime_container.go, `startContainer`, step 4): until then the pod's
//! status does not show the container running, so no probe runs
//! (prober/worker.go, `doProbe`) and it cannot be ready. A hook that fails
//! makes the kubelet kill the container (`FailedPostStartHook`: preStop,
//! SIGTERM, SIGKILL at the grace period's end, as any kill), and the next
//! sync restarts it under the restart policy, judging the back-off by that
//! exit.

use k8s_openapi::api::core::v1::Container;

use crate::assumption::{About, Assumption, Source};
use crate::model::{
    ANNOTATION_POSTSTART, ANNOTATION_PRESTOP, PostStartFailure, PreStopSleep, SleepSeconds, poststart_failure,
    poststart_handler, poststart_sleep, prestop_handler, unresolved_ports,
};

use super::kubelet::world::STARTED_SEEN_MS;
use crate::model::shell_flow::shell_script;
use crate::model::shell_loop::endless_loop;

const MS: i64 = 1000;

/// Where the length of a lifecycle hook comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookLength {
    /// Read from the hook: a sleep (native, or an `exec` of `sleep N`), or
    /// no hook.
    Read,
    /// The hook (`exec` or `httpGet`, named) does not show it; stated by
    /// the flag or the annotation ([`crate::model::ANNOTATION_PRESTOP`], [`crate::model::ANNOTATION_POSTSTART`]).
    Stated(&'static str),
    /// The hook does not show it and nobody said: taken as 0 s, and the
    /// timeline says so.
    Unknown(&'static str),
    /// The kubelet fails the hook at once, whatever anybody states (the
    /// hook, and why): it records `FailedPreStopHook` and goes on to stop
    /// the container (kuberuntime_container.go, `executePreStopHook`).
    FailsAtOnce(&'static str),
    /// An `exec` whose loop has no way out (`prestop-loop-unbounded`'s
    /// reading, its head named): it runs until the grace period ends,
    /// unless a length is stated.
    Endless(&'static str),
}

/// A container's postStart hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PostStart {
    /// How long it runs.
    pub length: SleepSeconds,
    /// Where that length comes from.
    pub source: HookLength,
    /// Why the kubelet fails it whatever the app does, or while the app boots.
    pub fails: Option<PostStartFailure>,
}

impl PostStart {
    /// How long it runs, ms (`None`: it never ends).
    pub fn ms(&self) -> Option<i64> {
        self.length.finite().map(|s| s.max(0) * MS)
    }

    /// When a container started at `start` fails its hook, if it does,
    /// and why: at once for a hook the kubelet cannot run or an `httpGet`
    /// to an app still booting (`booting`), at its end when the scenario
    /// says it fails (`scenario`).
    pub fn failure_at(&self, start: i64, booting: bool, scenario: bool) -> Option<(i64, &'static str)> {
        match self.fails {
            Some(PostStartFailure::Unsupported) => {
                return Some((start, "its postStart hook is a tcpSocket, which the kubelet cannot run"));
            }
            Some(PostStartFailure::UnresolvedPort) => {
                return Some((start, "its postStart httpGet names a port the container does not declare"));
            }
            Some(PostStartFailure::RefusedWhileBooting) if booting => {
                return Some((start, "its postStart httpGet to the container is refused while the app boots"));
            }
            _ => {}
        }
        let end = self.ms()?;
        scenario.then_some((start + end, "its postStart hook fails"))
    }

    /// The `poststart` event's detail: the hook and where its length comes from.
    pub fn detail(&self) -> String {
        match self.fails {
            Some(PostStartFailure::Unsupported) => {
                return "tcpSocket, which the kubelet cannot run: it fails at once".to_owned();
            }
            Some(PostStartFailure::UnresolvedPort) => {
                return "httpGet to a port the container does not declare: it fails at once".to_owned();
            }
            _ => {}
        }
        let forever = "sleep forever: the kubelet never sees the container running".to_owned();
        length_detail(Some(self.length), self.source, "poststart", forever)
    }
}

/// How long after a container starts the kubelet first sees it running,
/// and so first probes it: once its postStart hook has ended, and not
/// before the relist that follows the start ([`STARTED_SEEN_MS`]). `None`:
/// never (a hook that never ends).
pub fn seen_after_start(poststart: Option<&PostStart>) -> Option<i64> {
    match poststart {
        None => Some(STARTED_SEEN_MS),
        Some(hook) => hook.ms().map(|ms| ms.max(STARTED_SEEN_MS)),
    }
}

/// A preStop hook's length: its sleep when it starts with one, 0 s when
/// the kubelet fails it at once ([`prestop_fails_at_once`]), else what
/// `stated` says (the flag, else the annotation), else 0 s, unknown.
pub(super) fn prestop_of(
    c: &Container,
    sleep: Option<PreStopSleep>,
    stated: Option<i64>,
) -> (Option<SleepSeconds>, HookLength) {
    match (sleep, prestop_handler(c)) {
        (Some(sleep), _) => (Some(sleep.seconds), HookLength::Read),
        (None, None) => (None, HookLength::Read),
        (None, Some(handler)) => match prestop_fails_at_once(c, handler) {
            Some(why) => (Some(SleepSeconds::Finite(0)), HookLength::FailsAtOnce(why)),
            None if stated.is_none() && endless_prestop(c) => {
                (Some(SleepSeconds::Forever), HookLength::Endless("an exec loop with no break, exit or timeout"))
            }
            None => stated_or_unknown(handler, stated),
        },
    }
}

/// Whether the preStop `exec` loops with no way out, as
/// `prestop-loop-unbounded` reads it.
fn endless_prestop(c: &Container) -> bool {
    let command = c.lifecycle.as_ref().and_then(|l| l.pre_stop.as_ref()?.exec.as_ref()?.command.as_deref());
    command.and_then(shell_script).as_ref().and_then(endless_loop).is_some()
}

/// Why the kubelet fails a preStop hook before it runs, whatever the app
/// does: a `tcpSocket` hook its handler runner has no case for
/// (lifecycle/handlers.go, `Run`), or an `httpGet` whose port is a name
/// the container does not declare ([`unresolved_ports`], as the probes'
/// are read): it cannot build the request.
fn prestop_fails_at_once(c: &Container, handler: &str) -> Option<&'static str> {
    let hook = c.lifecycle.as_ref()?.pre_stop.as_ref()?;
    match handler {
        "tcpSocket" => Some("tcpSocket, which the kubelet cannot run"),
        "httpGet" if unresolved_ports(c, hook.http_get.as_ref(), None).next().is_some() => {
            Some("httpGet to a port the container does not declare")
        }
        _ => None,
    }
}

/// A postStart hook as the simulation runs it, read as a preStop hook's
/// length is ([`prestop_of`]).
pub(super) fn poststart_of(c: &Container, stated: Option<i64>) -> Option<PostStart> {
    let handler = poststart_handler(c)?;
    let (length, source) = match poststart_sleep(c) {
        Some(sleep) => (Some(sleep), HookLength::Read),
        None => stated_or_unknown(handler, stated),
    };
    Some(PostStart { length: length.unwrap_or(SleepSeconds::Finite(0)), source, fails: poststart_failure(c) })
}

fn stated_or_unknown(handler: &'static str, stated: Option<i64>) -> (Option<SleepSeconds>, HookLength) {
    match stated {
        Some(s) => (Some(SleepSeconds::Finite(s.max(0))), HookLength::Stated(handler)),
        None => (Some(SleepSeconds::Finite(0)), HookLength::Unknown(handler)),
    }
}

/// A hook's length as an assumption: read from the hook (its sleep), stated
/// (`stated_by`: the flag or the annotation), or unknown and taken as 0 s.
/// `None` without a hook.
pub(super) fn hook_assumption(
    about: About,
    length: Option<SleepSeconds>,
    source: HookLength,
    stated_by: Source,
) -> Option<Assumption> {
    let length = length?;
    let value = length.to_string();
    Some(match source {
        HookLength::Read => Assumption::new(about, value, Source::Spec, "the sleep it starts with"),
        HookLength::Stated(handler) => {
            let flag = if about == About::Prestop { "--prestop-seconds" } else { "--poststart-seconds" };
            let named = if stated_by == Source::CommandLine {
                flag
            } else if about == About::Prestop {
                ANNOTATION_PRESTOP
            } else {
                ANNOTATION_POSTSTART
            };
            Assumption::new(about, value, stated_by, format!("{named}, for its {handler}"))
        }
        HookLength::Unknown(handler) => {
            Assumption::new(about, value, Source::Default, format!("an {handler} whose length the spec does not show"))
        }
        HookLength::FailsAtOnce(why) => Assumption::new(about, "0s", Source::Spec, format!("{why}: it fails at once")),
        HookLength::Endless(what) => Assumption::new(about, value, Source::Spec, what),
    })
}

/// A hook's event detail: `sleep 5s`, `exec, 5s as stated`, or that its
/// length is unknown and how to state it (`--HOOK-seconds`, the
/// `lifeguard.dev/HOOK-seconds` annotation).
pub(super) fn length_detail(length: Option<SleepSeconds>, source: HookLength, hook: &str, forever: String) -> String {
    match (length, source) {
        (_, HookLength::Endless(what)) => format!("{what}: it runs until the grace period ends"),
        (Some(SleepSeconds::Forever), _) => forever,
        (Some(SleepSeconds::Finite(s)), HookLength::Read) => format!("sleep {s}s"),
        (Some(SleepSeconds::Finite(s)), HookLength::Stated(handler)) => format!("{handler}, {s}s as stated"),
        (_, HookLength::FailsAtOnce(why)) => format!("{why}: it fails at once"),
        (_, HookLength::Unknown(handler)) => format!(
            "{handler} of unknown length, taken as 0s (state it with --{hook}-seconds or the \
             lifeguard.dev/{hook}-seconds annotation)"
        ),
        (None, _) => String::new(),
    }
}
