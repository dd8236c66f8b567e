//! What a container needs between deletion and SIGKILL: its preStop sleep
//! and the drain and shutdown budgets it declares.
//!
//! Over 400 lines: reading a hook's sleep in each spelling (native, `exec`, a
//! shell, busybox, units; about 200 lines) and the declared drain and shutdown
//! budgets (about 160) both feed `ShutdownNeed`, which adds them up, so they
//! stay together; the tests (about 50 lines) pin the sleep reader.

use k8s_openapi::api::core::v1::{Container, LifecycleHandler};

use super::annotations::{ANNOTATION_DRAIN, ANNOTATION_SHUTDOWN};
use super::knowledge::Knowledge;
use super::model_server::is_model_server;
use super::workload::{ContainerView, Workload};
use crate::assumption::{About, Assumption, Source};

/// A sleep this long (a day) is a hold-until-killed, not a duration anybody
/// sized: it is read like `sleep infinity`, so no fix sizes a grace period to it.
pub const FOREVER_SECONDS: i64 = 86_400;

/// How long a preStop sleep lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SleepSeconds {
    /// A finite sleep, in whole seconds (rounded up).
    Finite(i64),
    /// `sleep infinity`, or a sleep of [`FOREVER_SECONDS`] or more.
    Forever,
}

impl SleepSeconds {
    fn from_f64(total: f64) -> SleepSeconds {
        if total >= FOREVER_SECONDS as f64 { SleepSeconds::Forever } else { SleepSeconds::Finite(total.ceil() as i64) }
    }

    /// The seconds, or `None` for a sleep that never ends.
    pub fn finite(self) -> Option<i64> {
        match self {
            SleepSeconds::Finite(s) => Some(s),
            SleepSeconds::Forever => None,
        }
    }
}

impl std::fmt::Display for SleepSeconds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SleepSeconds::Finite(s) => write!(f, "{s}s"),
            SleepSeconds::Forever => f.write_str("forever"),
        }
    }
}

/// The sleep a preStop hook starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreStopSleep {
    /// How long it sleeps.
    pub seconds: SleepSeconds,
    /// Whether the hook does nothing but sleep.
    pub sleep_only: bool,
    /// Whether it is the native `sleep` action (else an `exec` of `sleep`).
    pub native: bool,
}

/// The sleep at the start of a container's preStop hook: the native `sleep`
/// action, or an `exec` of `sleep N`, `sh -c "sleep N"`, `sh -c "sleep N && ..."`.
/// `None` when the hook does not start with a sleep of readable length
/// (`sleep $DELAY`, a script file, an `httpGet`, several handlers).
pub fn prestop_sleep(c: &Container) -> Option<PreStopSleep> {
    hook_sleep(c.lifecycle.as_ref()?.pre_stop.as_ref()?)
}

/// The sleep a lifecycle hook (preStop or postStart) starts with: the native
/// `sleep` action, or an `exec` of a readable sleep (see [`prestop_sleep`]).
pub(super) fn hook_sleep(hook: &LifecycleHandler) -> Option<PreStopSleep> {
    if handlers(hook).count() != 1 {
        return None;
    }
    if let Some(s) = &hook.sleep {
        if s.seconds < 0 {
            return None;
        }
        return Some(PreStopSleep {
            seconds: SleepSeconds::from_f64(s.seconds as f64),
            sleep_only: true,
            native: true,
        });
    }
    let command = hook.exec.as_ref()?.command.as_deref()?;
    let (seconds, sleep_only) = exec_sleep(command)?;
    Some(PreStopSleep { seconds, sleep_only, native: false })
}

/// The sleep of a preStop hook that sets exactly two handlers, an `exec`
/// that only sleeps a finite time and the native `sleep` action: the state
/// a re-apply leaves when a file's `exec: sleep N` was rewritten into the
/// native action once stored (`kubectl apply` and server-side apply send
/// the file's `exec` back, and keep the stored `sleep` beside it). The API
/// server refuses a hook with two handlers; the exec's seconds are the
/// file's, so what the rewrite makes of them again.
pub fn exec_sleep_beside_native(c: &Container) -> Option<i64> {
    let hook = c.lifecycle.as_ref()?.pre_stop.as_ref()?;
    if !handlers(hook).eq(["exec", "sleep"]) {
        return None;
    }
    let (seconds, sleep_only) = exec_sleep(hook.exec.as_ref()?.command.as_deref()?)?;
    seconds.finite().filter(|_| sleep_only)
}

/// The handler a container's preStop hook runs (`exec`, `httpGet`, `sleep`
/// or `tcpSocket`, the first when it sets several), if it has a hook.
pub fn prestop_handler(c: &Container) -> Option<&'static str> {
    handlers(c.lifecycle.as_ref()?.pre_stop.as_ref()?).next()
}

/// The handlers a lifecycle hook sets, by their field names.
pub(super) fn handlers(hook: &LifecycleHandler) -> impl Iterator<Item = &'static str> {
    [
        (hook.exec.is_some(), "exec"),
        (hook.http_get.is_some(), "httpGet"),
        (hook.sleep.is_some(), "sleep"),
        (hook.tcp_socket.is_some(), "tcpSocket"),
    ]
    .into_iter()
    .filter_map(|(set, name)| set.then_some(name))
}

fn basename(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

fn exec_sleep(command: &[String]) -> Option<(SleepSeconds, bool)> {
    let mut argv: Vec<&str> = command.iter().map(String::as_str).collect();
    if argv.first().is_some_and(|a| basename(a) == "busybox") {
        argv.remove(0);
    }
    let program = basename(argv.first()?);
    if program == "sleep" {
        return Some((sleep_args(&argv[1..])?, true));
    }
    if !matches!(program, "sh" | "bash" | "ash" | "dash" | "zsh" | "ksh") {
        return None;
    }
    // `sh -c SCRIPT`, `sh -ec SCRIPT`, `sh -e -c -- SCRIPT`.
    let mut saw_c = false;
    let mut rest = argv[1..].iter();
    let script = loop {
        let arg = rest.next()?;
        if *arg == "--" {
            break rest.next()?;
        }
        match arg.strip_prefix('-') {
            Some(flags) => saw_c |= flags.contains('c'),
            None => break arg,
        }
    };
    if !saw_c {
        return None;
    }
    script_sleep(script)
}

/// Reads `sleep N[; || && ...]` at the start of a shell script.
fn script_sleep(script: &str) -> Option<(SleepSeconds, bool)> {
    let script = script.trim();
    let end = script.find([';', '&', '|', '\n']).unwrap_or(script.len());
    let (first, rest) = script.split_at(end);
    // A backgrounded or piped sleep does not hold the hook.
    if (rest.starts_with('&') && !rest.starts_with("&&")) || (rest.starts_with('|') && !rest.starts_with("||")) {
        return None;
    }
    let mut words = first.split_whitespace().peekable();
    if words.peek() == Some(&"exec") {
        words.next();
    }
    if basename(words.next()?) != "sleep" {
        return None;
    }
    let args: Vec<&str> = words.collect();
    let seconds = sleep_args(&args)?;
    let sleep_only = rest
        .split([';', '&', '|', '\n'])
        .map(str::trim)
        .all(|cmd| matches!(cmd, "" | "true" | ":" | "exit" | "exit 0"));
    Some((seconds, sleep_only))
}

/// Parses `sleep` operands the way coreutils and busybox do: each is a number
/// with an optional `s`, `m`, `h` or `d` suffix, and they add up.
fn sleep_args(args: &[&str]) -> Option<SleepSeconds> {
    if args.is_empty() {
        return None;
    }
    let mut total = 0f64;
    for raw in args {
        let arg = raw.trim_matches(|c| c == '"' || c == '\'');
        if arg.eq_ignore_ascii_case("infinity") || arg.eq_ignore_ascii_case("inf") {
            return Some(SleepSeconds::Forever);
        }
        let (number, factor) = match arg.as_bytes().last()? {
            b's' => (&arg[..arg.len() - 1], 1.0),
            b'm' => (&arg[..arg.len() - 1], 60.0),
            b'h' => (&arg[..arg.len() - 1], 3600.0),
            b'd' => (&arg[..arg.len() - 1], 86_400.0),
            _ => (arg, 1.0),
        };
        if !number.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
            return None;
        }
        let value: f64 = number.parse().ok()?;
        total += value * factor;
    }
    total.is_finite().then(|| SleepSeconds::from_f64(total))
}

/// A declared drain or shutdown budget and where it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    /// Seconds.
    pub seconds: i64,
    /// Where it was read: an annotation, an env var, or the policy.
    pub origin: Source,
    /// What it was read from: `lifeguard.dev/drain-seconds`,
    /// `AISUITE_DRAIN_SECONDS`, or the policy's setting and why it applies.
    pub from: String,
}

impl Term {
    /// Whether the manifest declares nothing and the policy assumes it
    /// (`modelServerDrainSeconds`): messages must say so.
    pub fn assumed(&self) -> bool {
        self.origin == Source::Policy
    }

    /// Where it was read, for a message: `annotation
    /// lifeguard.dev/drain-seconds`, `env AISUITE_DRAIN_SECONDS`, or the
    /// policy's words.
    pub fn source(&self) -> String {
        match self.origin {
            Source::Annotation => format!("annotation {}", self.from),
            Source::Env => format!("env {}", self.from),
            _ => self.from.clone(),
        }
    }

    /// The budget as an assumption (`about` the drain or the shutdown).
    pub fn assumption(&self, about: About) -> Assumption {
        Assumption::new(about, format!("{}s", self.seconds), self.origin, self.from.clone())
    }
}

/// A budget from the annotation (pod-wide, wins when valid) or else from
/// the first env var of the container whose name matches.
fn declared(w: &Workload, c: &ContainerView<'_>, annotation: &str, env: impl Fn(&str) -> bool) -> Option<Term> {
    if let Some(Ok(seconds)) = w.annotation_seconds(annotation) {
        return Some(Term { seconds, origin: Source::Annotation, from: annotation.to_owned() });
    }
    c.env_seconds(env).map(|(name, seconds)| Term { seconds, origin: Source::Env, from: name })
}

/// What one container needs between deletion and SIGKILL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShutdownNeed {
    /// Container name (`<unnamed>` when empty).
    pub container: String,
    /// Pointer to the container.
    pub pointer: String,
    /// The sleep its preStop hook starts with.
    pub prestop: Option<PreStopSleep>,
    /// Declared drain time.
    pub drain: Option<Term>,
    /// Declared shutdown budget.
    pub shutdown: Option<Term>,
}

impl ShutdownNeed {
    /// Whether anything is known: a preStop sleep, a drain or a shutdown budget.
    pub fn declared(&self) -> bool {
        self.prestop.is_some() || self.drain.is_some() || self.shutdown.is_some()
    }

    /// The drain and shutdown budgets it declares (or the policy assumes),
    /// as the assumptions a finding about its stop rests on.
    pub fn assumptions(&self) -> Vec<Assumption> {
        let drain = self.drain.iter().map(|t| t.assumption(About::Drain));
        drain.chain(self.shutdown.iter().map(|t| t.assumption(About::Shutdown))).collect()
    }

    /// What the app is taken to need after SIGTERM when at least
    /// `min_remaining` (`prestopMinRemainingSeconds`) is required of it: the
    /// drain, then the shutdown budget where it says as much, else the
    /// policy's floor, which stands in for what the manifest leaves unsaid.
    pub fn stop_assumptions(&self, min_remaining: i64) -> Vec<Assumption> {
        let mut out: Vec<Assumption> = self.drain.iter().map(|t| t.assumption(About::Drain)).collect();
        match &self.shutdown {
            Some(t) if t.seconds >= min_remaining => out.push(t.assumption(About::Shutdown)),
            shutdown => out.push(assumed_stop(min_remaining, shutdown.is_some())),
        }
        out
    }

    /// Seconds of the drain, 0 when undeclared.
    pub fn drain_seconds(&self) -> i64 {
        self.drain.as_ref().map_or(0, |t| t.seconds)
    }

    /// Seconds of the shutdown budget, 0 when undeclared.
    pub fn shutdown_seconds(&self) -> i64 {
        self.shutdown.as_ref().map_or(0, |t| t.seconds)
    }

    /// The grace period this container needs behind a preStop sleep of
    /// `sleep` seconds: the sleep, the drain, then its shutdown budget but
    /// never less than `min_remaining` (`prestopMinRemainingSeconds`), so
    /// neither `grace-period-too-short` nor `prestop-sleep-only` fires.
    pub fn grace_after_sleep(&self, sleep: i64, min_remaining: i64) -> i64 {
        sleep.saturating_add(self.drain_seconds()).saturating_add(self.shutdown_seconds().max(min_remaining))
    }

    /// preStop sleep + drain + shutdown budget; `Forever` when the sleep never ends.
    pub fn total(&self) -> SleepSeconds {
        match self.prestop.map(|p| p.seconds) {
            Some(SleepSeconds::Forever) => SleepSeconds::Forever,
            sleep => SleepSeconds::Finite(
                sleep
                    .and_then(SleepSeconds::finite)
                    .unwrap_or(0)
                    .saturating_add(self.drain_seconds())
                    .saturating_add(self.shutdown_seconds()),
            ),
        }
    }
}

/// The shutdown needs of every container the kubelet stops with a grace period.
pub fn shutdown_needs(w: &Workload, policy: &dyn Knowledge) -> Vec<ShutdownNeed> {
    let mut out = Vec::new();
    w.for_each_container(|c| {
        out.push(ShutdownNeed {
            container: c.name().to_owned(),
            pointer: c.pointer.to_owned(),
            prestop: prestop_sleep(c.container),
            drain: declared(w, &c, ANNOTATION_DRAIN, |n| policy.is_drain_env(n))
                .or_else(|| model_server_drain(w, &c, policy)),
            shutdown: declared(w, &c, ANNOTATION_SHUTDOWN, |n| policy.is_shutdown_env(n)),
        });
    });
    out
}

/// What a deleted app is taken to need after SIGTERM where it declares no
/// shutdown budget (or a shorter one): the policy's
/// `prestopMinRemainingSeconds`, the least `prestop-sleep-only` leaves it.
pub fn assumed_stop(min_remaining: i64, shorter_declared: bool) -> Assumption {
    let from = if shorter_declared {
        "prestopMinRemainingSeconds, more than the declared shutdown budget"
    } else {
        "prestopMinRemainingSeconds: nothing declared of the app's shutdown"
    };
    Assumption::new(About::Stop, format!("{min_remaining}s"), Source::Policy, from)
}

/// The policy's assumed drain for a serving model server that declares none:
/// its longest admitted request (`modelServerDrainSeconds`; 0 assumes nothing).
fn model_server_drain(w: &Workload, c: &ContainerView<'_>, policy: &dyn Knowledge) -> Option<Term> {
    let seconds = policy.settings().model_server_drain_seconds;
    let model_server = is_model_server(c, policy);
    (seconds > 0 && w.long_running && !c.sidecar && model_server).then(|| Term {
        seconds,
        origin: Source::Policy,
        from: "the policy's modelServerDrainSeconds for a model server that declares no drain".to_owned(),
    })
}

/// The grace period the declared needs add up to: the largest finite total
/// over containers that declare anything (`None` when none does).
pub fn required_grace(needs: &[ShutdownNeed]) -> Option<i64> {
    needs.iter().filter(|n| n.declared()).filter_map(|n| n.total().finite()).max()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exec(cmd: &[&str]) -> Option<(SleepSeconds, bool)> {
        exec_sleep(&cmd.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn reads_exec_sleeps() {
        let f = SleepSeconds::Finite;
        assert_eq!(exec(&["sleep", "5"]), Some((f(5), true)));
        assert_eq!(exec(&["/bin/sleep", "5s"]), Some((f(5), true)));
        assert_eq!(exec(&["sleep", "1m", "30"]), Some((f(90), true)));
        assert_eq!(exec(&["sleep", "1.5"]), Some((f(2), true)));
        assert_eq!(exec(&["busybox", "sleep", "3"]), Some((f(3), true)));
        assert_eq!(exec(&["sh", "-c", "sleep 20"]), Some((f(20), true)));
        assert_eq!(exec(&["/bin/bash", "-ec", " sleep 20;\n"]), Some((f(20), true)));
        assert_eq!(exec(&["sh", "-c", "sleep 5 || true"]), Some((f(5), true)));
        assert_eq!(exec(&["sh", "-c", "exec /bin/sleep '7'"]), Some((f(7), true)));
        assert_eq!(exec(&["sh", "-c", "sleep 5 && /app/drain"]), Some((f(5), false)));
        assert_eq!(exec(&["/bin/sh", "-c", "sleep 5; nginx -s quit"]), Some((f(5), false)));
    }

    #[test]
    fn forever_and_absurd_sleeps() {
        assert_eq!(exec(&["sleep", "infinity"]), Some((SleepSeconds::Forever, true)));
        assert_eq!(exec(&["sleep", "99999999"]), Some((SleepSeconds::Forever, true)));
        assert_eq!(exec(&["sleep", "1e400"]), None);
    }

    #[test]
    fn other_hooks_are_not_sleeps() {
        for cmd in [
            &["sleep"][..],
            &["sleep", "$DELAY"],
            &["sh", "-c", "sleep $DELAY"],
            &["sh", "-c", "sleep 5 &"],
            &["sh", "-c", "echo bye; sleep 5"],
            &["sh", "/pre-stop.sh"],
            &["/bin/bash", "/pre-stop-hook.sh"],
            &["nginx", "-s", "quit"],
            &["sleep 5"],
            &["sleep", "-5"],
        ] {
            assert_eq!(exec(cmd), None, "{cmd:?}");
        }
    }
}
