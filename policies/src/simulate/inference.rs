//! What a probe checks, as far as its handler tells: the inference the
//! stall reads when nothing is stated ([`super::checks`] holds what is).

use k8s_openapi::api::core::v1::Container;

use crate::model::{
    ContainerView, Handler, ProbeKind, dependencies, handler_of, process_existence, shared_liveness_readiness,
    unresolved_ports,
};
use crate::policy::Policy;

use super::checks::ProbeCheck;
use super::reach::{Reach, inferred_reach};

/// A probe whose port the kubelet cannot resolve, as `probe-port-unknown`
/// reads it ([`unresolved_ports`]): `tcpSocket port "postgres"`. It holds
/// whatever anyone states the handler checks.
pub fn unresolved(c: &Container, kind: ProbeKind) -> Option<String> {
    let probe = kind.of(c)?;
    let (field, name) = unresolved_ports(c, probe.http_get.as_ref(), probe.tcp_socket.as_ref()).next()?;
    Some(format!("{field} port {name:?}"))
}

/// What a container's probe checks, as far as the manifest tells:
/// - a `tcpSocket` to its own port proves the port only; an `exec` that
///   only looks for a process proves the process exists;
/// - anything `liveness-checks-dependency` would report on it (a client
///   aimed at another host, an aggregate path such as `/actuator/health`, a
///   readiness path) checks a dependency;
/// - a liveness handler shared with readiness checks a dependency where
///   [`inferred_reach`] finds the evidence; one that is local (a model
///   server's own health endpoint, a path named for liveness, a known
///   image) or of unknown reach is not stalled, and the output says what
///   to declare (`lifeguard.dev/probe-checks`) when it does reach one;
/// - anything else is local.
pub fn infer(c: ContainerView<'_>, kind: ProbeKind, policy: &Policy) -> Option<ProbeCheck> {
    let probe = kind.of(c.container)?;
    let handler = handler_of(c.container, probe);
    match &handler {
        Some(Handler::Tcp { host, .. }) if host.is_empty() || is_local_host(host) => return Some(ProbeCheck::PortOnly),
        Some(Handler::Exec { command }) if process_existence(command).is_some() => {
            return Some(ProbeCheck::ProcessOnly);
        }
        _ => {}
    }
    // The dependency reading is liveness-checks-dependency's, applied to
    // this probe as if it were the liveness probe, so both agree.
    let mut as_liveness: Container = c.container.clone();
    as_liveness.liveness_probe = Some(probe.clone());
    let view = ContainerView { container: &as_liveness, pointer: c.pointer, sidecar: c.sidecar };
    if !dependencies(view, policy).is_empty() {
        return Some(ProbeCheck::Dependency);
    }
    // A handler shared with readiness checks a dependency only where the
    // evidence says so (`probe-endpoint-reused` grades it by the same
    // reading): one of unknown reach is not stalled.
    if let Some(shared) =
        shared_liveness_readiness(c.container).filter(|s| kind != ProbeKind::Startup && handler.as_ref() == Some(s))
        && inferred_reach(c, &shared, policy).reach == Reach::Dependency
    {
        return Some(ProbeCheck::Dependency);
    }
    Some(ProbeCheck::Local)
}

fn is_local_host(host: &str) -> bool {
    matches!(host, "localhost" | "127.0.0.1" | "::1" | "0.0.0.0")
}
