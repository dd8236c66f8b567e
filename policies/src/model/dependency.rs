//! What a liveness probe reaches beyond its own process: a database,
//! cache or other service, by host or by an aggregating path. Read by
//! `liveness-checks-dependency`, `probe-endpoint-reused` and `simulate`.

use k8s_openapi::api::core::v1::Container;

use super::command::{SimpleCommand, simple_commands};
use super::host::{Locality, describe_host, host_locality};
use super::knowledge::Knowledge;
use super::probe::{ProbeKind, request_path};
use super::reach::targets;
use super::workload::ContainerView;
use crate::finding::Severity;

/// What a liveness probe reaches beyond its own process, as
/// `liveness-checks-dependency` reports it; `probe-endpoint-reused` names it
/// when it reports the probe instead, and `simulate` reads the probe as
/// depending on it.
#[derive(Debug, Clone)]
pub struct Dependency {
    /// How much it matters: an error, or a warning for a readiness path.
    pub severity: Severity,
    /// The field that reaches it, in the object.
    pub pointer: String,
    /// The finding's message.
    pub message: String,
    /// The finding's short form.
    pub short: String,
    /// The finding's help.
    pub help: &'static str,
    /// A phrase for a message that names it (`a readiness path`).
    pub note: String,
}

/// How a path a liveness probe requests is known to behave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PathClass {
    /// It aggregates dependency checks or names a dependency (`dependencyPaths`).
    Aggregate,
    /// It is a readiness endpoint by its name only (`readinessPaths`).
    Readiness,
}

impl PathClass {
    fn of(path: &str, policy: &dyn Knowledge) -> Option<PathClass> {
        if policy.is_dependency_path(path) {
            Some(PathClass::Aggregate)
        } else if policy.is_readiness_path(path) {
            Some(PathClass::Readiness)
        } else {
            None
        }
    }
}

/// What one command of a liveness exec reaches beyond the container.
fn command_targets(cmd: &SimpleCommand, c: &Container, policy: &dyn Knowledge) -> Vec<(Severity, String)> {
    let s = &policy.settings();
    let tool = if cmd.program.is_empty() { "a /dev/tcp connection" } else { cmd.program.as_str() };
    let mut out = Vec::new();
    for t in targets(cmd, &s.dependency_clients, &s.network_tools) {
        match host_locality(&t.host, c, &cmd.assignments) {
            Locality::Remote => {
                out.push((Severity::Error, format!("{tool} against {:?}", describe_host(&t.host, c, &cmd.assignments))))
            }
            Locality::Local => match t.path.as_deref().map(|p| (p, PathClass::of(p, policy))) {
                Some((path, Some(PathClass::Aggregate))) => {
                    out.push((Severity::Error, format!("{tool} on {path:?}, which aggregates dependencies")));
                }
                Some((path, Some(PathClass::Readiness))) => {
                    out.push((Severity::Warning, format!("{tool} on readiness path {path:?}")));
                }
                _ => {}
            },
            Locality::Unknown => {}
        }
    }
    out
}

/// Everything a container's liveness probe reaches beyond its own process.
pub fn dependencies(c: ContainerView<'_>, policy: &dyn Knowledge) -> Vec<Dependency> {
    let mut out = Vec::new();
    let Some(probe) = ProbeKind::Liveness.of(c.container) else {
        return out;
    };
    let live = ProbeKind::Liveness.field();
    let remote_host = |h: &Option<String>| {
        h.as_deref().filter(|h| host_locality(h, c.container, &[]) == Locality::Remote).map(str::to_owned)
    };
    if let Some(h) = &probe.http_get {
        if let Some(host) = remote_host(&h.host) {
            out.push(host_dependency(c, "httpGet", &host));
        }
        let path = request_path(h.path.as_deref());
        let pointer = c.at(&[live, "httpGet", "path"]);
        match PathClass::of(&path, policy) {
            Some(PathClass::Aggregate) => out.push(Dependency {
                severity: Severity::Error,
                pointer,
                message: format!(
                    "liveness httpGet path {path:?} aggregates dependencies, so their failures restart the container"
                ),
                short: "liveness path checks dependencies; use a liveness-only one".to_owned(),
                help: "point liveness at a liveness-only endpoint (e.g. /actuator/health/liveness, /q/health/live, /v2/health/live, /livez) and keep this path for readiness",
                note: "which aggregates dependencies".to_owned(),
            }),
            Some(PathClass::Readiness) => out.push(Dependency {
                severity: Severity::Warning,
                pointer,
                message: format!(
                    "liveness uses a readiness path ({path:?}); if it fails on drain or on a slow dependency, as readiness may, the container restarts"
                ),
                short: format!("liveness uses readiness path {path:?}; give it its own"),
                help: "point liveness at a liveness endpoint (e.g. /livez, /healthz) that fails only when the process is wedged, and keep this path for readiness",
                note: "a readiness path".to_owned(),
            }),
            None => {}
        }
    }
    if let Some(host) = probe.tcp_socket.as_ref().and_then(|t| remote_host(&t.host)) {
        out.push(host_dependency(c, "tcpSocket", &host));
    }
    let Some(command) = probe.exec.as_ref().and_then(|e| e.command.as_ref()) else {
        return out;
    };
    let targets: Vec<(Severity, String)> =
        simple_commands(command).iter().flat_map(|cmd| command_targets(cmd, c.container, policy)).collect();
    let Some(severity) = targets.iter().map(|(s, _)| *s).max() else {
        return out;
    };
    let reached = targets.into_iter().map(|(_, t)| t).collect::<Vec<_>>().join(" and ");
    let help = if policy.is_database_image(c.image()) {
        "a database's liveness should check only its own server; leave peers and primaries to readiness"
    } else {
        "check only this process in liveness (a local endpoint or command); move dependency checks to readiness"
    };
    let (consequence, in_short) = match severity {
        Severity::Error => (
            "so a slow or failing dependency restarts the container",
            "liveness checks a dependency; move that to readiness",
        ),
        _ => (
            "so whatever fails readiness (drain, a slow dependency) also restarts the container",
            "liveness checks readiness; check only the process",
        ),
    };
    out.push(Dependency {
        severity,
        pointer: c.at(&[live, "exec", "command"]),
        message: format!("liveness runs {reached}, {consequence}"),
        short: in_short.to_owned(),
        help,
        note: format!("which runs {reached}"),
    });
    out
}

fn host_dependency(c: ContainerView<'_>, handler: &str, host: &str) -> Dependency {
    Dependency {
        severity: Severity::Error,
        pointer: c.at(&[ProbeKind::Liveness.field(), handler, "host"]),
        message: format!(
            "liveness {handler} goes to host {host:?} instead of this pod, so that host's failures restart the container"
        ),
        short: format!("liveness {handler} probes another host; remove `host`"),
        help: "remove `host` so the kubelet probes the pod itself; check other services from readiness if at all",
        note: format!("which goes to host {host:?}"),
    }
}
