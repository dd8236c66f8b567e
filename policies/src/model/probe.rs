//! Probe handlers, their identity and their timing with Kubernetes defaults.

use k8s_openapi::api::core::v1::{Container, Probe};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

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
