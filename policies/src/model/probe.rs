//! Probe handlers, their identity and their timing with Kubernetes defaults.

use k8s_openapi::api::core::v1::{Container, HTTPGetAction, Probe, TCPSocketAction};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::command::{SimpleCommand, simple_commands};

/// Which of the three probes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProbeKind {
    /// `startupProbe`
    Startup,
    /// `livenessProbe`
    Liveness,
    /// `readinessProbe`
    Readiness,
}

impl ProbeKind {
    /// The field name in a container (`livenessProbe`, ...).
    pub fn field(self) -> &'static str {
        match self {
            ProbeKind::Startup => "startupProbe",
            ProbeKind::Liveness => "livenessProbe",
            ProbeKind::Readiness => "readinessProbe",
        }
    }

    /// The word used in messages (`liveness`, ...).
    pub fn word(self) -> &'static str {
        match self {
            ProbeKind::Startup => "startup",
            ProbeKind::Liveness => "liveness",
            ProbeKind::Readiness => "readiness",
        }
    }

    /// The probe of this kind in a container, if set.
    pub fn of(self, c: &Container) -> Option<&Probe> {
        match self {
            ProbeKind::Startup => c.startup_probe.as_ref(),
            ProbeKind::Liveness => c.liveness_probe.as_ref(),
            ProbeKind::Readiness => c.readiness_probe.as_ref(),
        }
    }
}

/// A resolved port: a number, or a name the container does not declare.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Port {
    /// A port number (given as a number, a numeric string, or a resolved name).
    Number(i32),
    /// A name the container's `ports` do not declare.
    Unresolved(String),
}

impl std::fmt::Display for Port {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Port::Number(n) => write!(f, "{n}"),
            Port::Unresolved(s) => write!(f, "{s:?}"),
        }
    }
}

/// Resolves a probe port against the container's declared ports, the way the
/// kubelet does: a name is looked up in `ports`, and a numeric string is
/// taken as the number as a last resort.
pub fn resolve_port(c: &Container, port: &IntOrString) -> Port {
    match port {
        IntOrString::Int(n) => Port::Number(*n),
        IntOrString::String(name) => {
            let declared =
                c.ports.iter().flatten().find(|p| p.name.as_deref() == Some(name.as_str())).map(|p| p.container_port);
            match declared {
                Some(n) => Port::Number(n),
                None => match name.trim().parse::<i32>() {
                    Ok(n) => Port::Number(n),
                    Err(_) => Port::Unresolved(name.clone()),
                },
            }
        }
    }
}

/// The ports of a handler (a probe's or a lifecycle hook's `httpGet` and
/// `tcpSocket`) that are names the container's `ports` do not declare,
/// each with its field (`httpGet`, `tcpSocket`), as [`resolve_port`] reads
/// them. The kubelet cannot resolve such a port (`probe.ResolveContainerPort`
/// errors), so it cannot send the check at all: a probe's every check
/// errors, and its worker discards an errored result (prober/worker.go,
/// `doProbe`), so the probe keeps its first value for good; a hook fails.
pub fn unresolved_ports<'h>(
    c: &Container,
    http: Option<&'h HTTPGetAction>,
    tcp: Option<&'h TCPSocketAction>,
) -> impl Iterator<Item = (&'static str, &'h str)> {
    let ports = [("httpGet", http.map(|h| &h.port)), ("tcpSocket", tcp.map(|t| &t.port))];
    ports.into_iter().filter_map(move |(field, port)| match port? {
        port @ IntOrString::String(name) if matches!(resolve_port(c, port), Port::Unresolved(_)) => {
            Some((field, name.as_str()))
        }
        _ => None,
    })
}

/// The identity of a probe handler: two probes with equal handlers check the
/// same thing. Defaults are filled in so `path: ""` equals `path: /`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Handler {
    /// `httpGet`
    Http { scheme: String, host: String, port: Port, path: String },
    /// `tcpSocket`
    Tcp { host: String, port: Port },
    /// `exec`
    Exec { command: Vec<String> },
    /// `grpc`
    Grpc { port: i32, service: String },
}

impl Handler {
    /// A short human form: `httpGet :8080/healthz`, `exec "pg_isready"`.
    pub fn describe(&self) -> String {
        match self {
            Handler::Http { scheme, host, port, path } => {
                let scheme = if scheme == "HTTP" { String::new() } else { format!("{} ", scheme.to_lowercase()) };
                format!("httpGet {scheme}{host}:{port}{path}")
            }
            Handler::Tcp { host, port } => format!("tcpSocket {host}:{port}"),
            Handler::Exec { command } => format!("exec {:?}", command.join(" ")),
            Handler::Grpc { port, service } if service.is_empty() => format!("grpc :{port}"),
            Handler::Grpc { port, service } => format!("grpc :{port} service {service:?}"),
        }
    }
}

/// How many handlers a probe sets (the API requires exactly one).
pub fn handler_count(p: &Probe) -> usize {
    usize::from(p.http_get.is_some())
        + usize::from(p.tcp_socket.is_some())
        + usize::from(p.exec.is_some())
        + usize::from(p.grpc.is_some())
}

/// The probe's handler, or `None` when it has none or several.
pub fn handler_of(c: &Container, p: &Probe) -> Option<Handler> {
    if handler_count(p) != 1 {
        return None;
    }
    if let Some(h) = &p.http_get {
        let path = h.path.clone().unwrap_or_default();
        let path = if path.is_empty() { "/".to_owned() } else { path };
        return Some(Handler::Http {
            scheme: h.scheme.clone().unwrap_or_else(|| "HTTP".to_owned()).to_uppercase(),
            host: h.host.clone().unwrap_or_default(),
            port: resolve_port(c, &h.port),
            path,
        });
    }
    if let Some(t) = &p.tcp_socket {
        return Some(Handler::Tcp { host: t.host.clone().unwrap_or_default(), port: resolve_port(c, &t.port) });
    }
    if let Some(e) = &p.exec {
        return Some(Handler::Exec { command: e.command.clone().unwrap_or_default() });
    }
    p.grpc.as_ref().map(|g| Handler::Grpc { port: g.port, service: g.service.clone().unwrap_or_default() })
}

/// The handler liveness and readiness share, when they check the same thing.
/// Shared by the rules that decide which of them reports such a container.
pub fn shared_liveness_readiness(c: &Container) -> Option<Handler> {
    let of = |k: ProbeKind| k.of(c).and_then(|p| handler_of(c, p));
    let live = of(ProbeKind::Liveness)?;
    (of(ProbeKind::Readiness)? == live).then_some(live)
}

/// The path an `httpGet` probe requests, as the kubelet sends it and as
/// path lists match it: no query or fragment, a leading slash, `/` when empty.
pub fn request_path(raw: Option<&str>) -> String {
    let raw = raw.unwrap_or("/");
    let path = raw.split(['?', '#']).next().unwrap_or(raw);
    if path.starts_with('/') { path.to_owned() } else { format!("/{path}") }
}

/// What a command that only checks that a process exists looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessCheck {
    /// PID 1's `/proc` entry or `kill -0 1`: true for as long as the container runs.
    Pid1,
    /// A process found by name (`pgrep nginx`, `pidof nginx`, `ps | grep nginx`).
    Named(String),
}

/// Whether an exec command does nothing but check that a process exists:
/// such a check passes while the process is wedged, draining or not yet
/// serving. `None` when any part of it does more (or cannot be read).
pub fn process_existence(command: &[String]) -> Option<ProcessCheck> {
    let cmds = simple_commands(command);
    let has_ps = cmds.iter().any(|c| c.program == "ps");
    let mut found = None;
    for cmd in &cmds {
        let this = match cmd.program.as_str() {
            "pgrep" | "pidof" => ProcessCheck::Named(last_operand(cmd)?),
            // `ps | grep -q nginx`: the grep is part of the process lookup.
            "grep" | "egrep" if has_ps => ProcessCheck::Named(last_operand(cmd)?),
            "ps" | "wc" | "head" if has_ps => continue,
            "kill" if cmd.args == ["-0", "1"] => ProcessCheck::Pid1,
            "cat" | "test" | "[" | "ls" | "stat" | "head" if cmd.args.iter().any(|a| is_pid1_entry(a)) => {
                ProcessCheck::Pid1
            }
            _ => return None,
        };
        // A lookup by name is the weaker claim, and the last grep of a
        // pipeline (`grep -v grep | grep nginx`) names the process.
        if found.is_none() || matches!(this, ProcessCheck::Named(_)) {
            found = Some(this);
        }
    }
    found
}

fn last_operand(cmd: &SimpleCommand) -> Option<String> {
    cmd.args.iter().rev().find(|a| !a.starts_with('-')).cloned()
}

/// `/proc/1`, `/proc/1/status`, ...: present for as long as PID 1 lives.
fn is_pid1_entry(arg: &str) -> bool {
    arg.strip_prefix("/proc/1").is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// A probe's timing with the Kubernetes defaults filled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeTiming {
    /// `initialDelaySeconds` (default 0)
    pub initial_delay: i64,
    /// `periodSeconds` (default 10)
    pub period: i64,
    /// `timeoutSeconds` (default 1)
    pub timeout: i64,
    /// `successThreshold` (default 1)
    pub success: i64,
    /// `failureThreshold` (default 3)
    pub failure: i64,
}

impl ProbeTiming {
    /// Reads a probe's timing, defaulting unset fields as the API server does.
    pub fn of(p: &Probe) -> ProbeTiming {
        ProbeTiming {
            initial_delay: i64::from(p.initial_delay_seconds.unwrap_or(0)),
            period: i64::from(p.period_seconds.unwrap_or(10)),
            timeout: i64::from(p.timeout_seconds.unwrap_or(1)),
            success: i64::from(p.success_threshold.unwrap_or(1)),
            failure: i64::from(p.failure_threshold.unwrap_or(3)),
        }
    }

    /// `failureThreshold x periodSeconds`: how long a failing check is tolerated.
    pub fn failure_window(&self) -> i64 {
        self.failure.saturating_mul(self.period)
    }

    /// `initialDelaySeconds + failureThreshold x periodSeconds`: the longest
    /// time a probe lets a container boot before it restarts it.
    pub fn boot_budget(&self) -> i64 {
        self.initial_delay.saturating_add(self.failure_window())
    }

    /// When the kubelet restarts a boot that never answers, at the
    /// earliest: the first check runs at `initialDelaySeconds`, one more every
    /// `periodSeconds`, and the `failureThreshold`-th failure restarts the
    /// container, so `initialDelaySeconds + (failureThreshold - 1) x
    /// periodSeconds` (a refused connection fails at once; a check that hangs
    /// adds up to `timeoutSeconds`). This, not the nominal
    /// [`ProbeTiming::boot_budget`], is what a replacement probe must not undercut.
    pub fn earliest_restart(&self) -> i64 {
        self.initial_delay
            .max(0)
            .saturating_add(self.failure.saturating_sub(1).max(0).saturating_mul(self.period.max(0)))
    }
}

#[cfg(test)]
mod tests {
    use super::{ProcessCheck, process_existence, request_path};

    fn check_of(words: &[&str]) -> Option<ProcessCheck> {
        process_existence(&words.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn process_existence_checks() {
        assert_eq!(check_of(&["cat", "/proc/1/status"]), Some(ProcessCheck::Pid1));
        assert_eq!(check_of(&["sh", "-c", "test -d /proc/1"]), Some(ProcessCheck::Pid1));
        assert_eq!(check_of(&["kill", "-0", "1"]), Some(ProcessCheck::Pid1));
        assert_eq!(check_of(&["pgrep", "-f", "gunicorn"]), Some(ProcessCheck::Named("gunicorn".into())));
        assert_eq!(check_of(&["pidof", "nginx"]), Some(ProcessCheck::Named("nginx".into())));
        assert_eq!(
            check_of(&["sh", "-c", "ps aux | grep -v grep | grep -q celery"]),
            Some(ProcessCheck::Named("celery".into()))
        );
    }

    #[test]
    fn anything_more_is_not_a_process_check() {
        assert_eq!(check_of(&["cat", "/proc/12/status"]), None);
        assert_eq!(check_of(&["cat", "/proc/1stuff"]), None);
        assert_eq!(check_of(&["cat", "/tmp/healthy"]), None);
        assert_eq!(check_of(&["grep", "-q", "ok", "/tmp/status"]), None);
        assert_eq!(check_of(&["sh", "-c", "pgrep nginx && curl -f localhost/ok"]), None);
        assert_eq!(check_of(&["sh", "/probe.sh"]), None);
        assert_eq!(check_of(&["pgrep"]), None);
        assert_eq!(check_of(&[]), None);
    }

    #[test]
    fn request_paths() {
        assert_eq!(request_path(None), "/");
        assert_eq!(request_path(Some("")), "/");
        assert_eq!(request_path(Some("ready?x=1")), "/ready");
        assert_eq!(request_path(Some("/a#b")), "/a");
    }
}
