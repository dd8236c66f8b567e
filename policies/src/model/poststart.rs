//! A container's postStart hook as the manifest shows it: how long it runs
//! when that can be read, and whether the kubelet can ever run it to
//! success.

use k8s_openapi::api::core::v1::{Container, LifecycleHandler};

use super::host::{Locality, host_locality};
use super::prestop::{SleepSeconds, handlers, hook_sleep};
use super::probe::unresolved_ports;

/// Why the kubelet fails a postStart hook whatever the app does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PostStartFailure {
    /// A `tcpSocket` hook: the kubelet's handler runner has no case for it
    /// and fails it at once (lifecycle/handlers.go, `Run`: "invalid
    /// handler"), though the API server accepts it.
    Unsupported,
    /// An `httpGet` to the container itself (no `host`, or a loopback one):
    /// sent as soon as the container starts, so it is refused while the app
    /// boots and does not listen yet.
    RefusedWhileBooting,
    /// An `httpGet` whose port is a name the container does not declare
    /// ([`unresolved_ports`], as `probe-port-unknown` reads it): the kubelet
    /// cannot build the request and fails the hook at once.
    UnresolvedPort,
}

fn poststart(c: &Container) -> Option<&LifecycleHandler> {
    c.lifecycle.as_ref()?.post_start.as_ref()
}

/// How long a container's postStart hook runs, when it is a readable sleep
/// (the native `sleep` action, or an `exec` of `sleep N` as a preStop
/// sleep is read); `None` without a hook or when its length does not show.
pub fn poststart_sleep(c: &Container) -> Option<SleepSeconds> {
    hook_sleep(poststart(c)?).map(|s| s.seconds)
}

/// The handler a container's postStart hook runs (`exec`, `httpGet`,
/// `sleep` or `tcpSocket`, the first when it sets several), if it has one.
pub fn poststart_handler(c: &Container) -> Option<&'static str> {
    handlers(poststart(c)?).next()
}

/// Whether the kubelet fails the container's postStart hook whatever the
/// app does, or whenever the app still boots.
pub fn poststart_failure(c: &Container) -> Option<PostStartFailure> {
    let hook = poststart(c)?;
    match poststart_handler(c)? {
        "tcpSocket" => Some(PostStartFailure::Unsupported),
        "httpGet" if unresolved_ports(c, hook.http_get.as_ref(), None).next().is_some() => {
            Some(PostStartFailure::UnresolvedPort)
        }
        "httpGet" => {
            let host = hook.http_get.as_ref().and_then(|h| h.host.as_deref()).unwrap_or("");
            (host_locality(host, c, &[]) == Locality::Local).then_some(PostStartFailure::RefusedWhileBooting)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Container;
    use serde_json::json;

    use super::{PostStartFailure, poststart_failure, poststart_handler, poststart_sleep};
    use crate::model::SleepSeconds;

    fn with(hook: serde_json::Value) -> Container {
        serde_json::from_value(json!({"name": "app", "lifecycle": {"postStart": hook}})).expect("a container")
    }

    #[test]
    fn reads_a_sleep_and_names_the_handler() {
        assert_eq!(poststart_sleep(&with(json!({"sleep": {"seconds": 7}}))), Some(SleepSeconds::Finite(7)));
        let exec = with(json!({"exec": {"command": ["sh", "-c", "sleep 5 && /register"]}}));
        assert_eq!(poststart_sleep(&exec), Some(SleepSeconds::Finite(5)));
        assert_eq!(poststart_handler(&exec), Some("exec"));
        let script = with(json!({"exec": {"command": ["/bin/register.sh"]}}));
        assert_eq!(poststart_sleep(&script), None);
        assert_eq!(poststart_handler(&script), Some("exec"));
        let plain: Container = serde_json::from_value(json!({"name": "app"})).expect("a container");
        assert_eq!((poststart_sleep(&plain), poststart_handler(&plain)), (None, None));
    }

    #[test]
    fn tells_the_hooks_the_kubelet_fails() {
        let tcp = with(json!({"tcpSocket": {"port": 8080}}));
        assert_eq!(poststart_failure(&tcp), Some(PostStartFailure::Unsupported));
        for host in [None, Some("localhost"), Some("127.0.0.1")] {
            let mut get = json!({"httpGet": {"path": "/warm", "port": 8080}});
            if let Some(host) = host {
                get["httpGet"]["host"] = json!(host);
            }
            assert_eq!(poststart_failure(&with(get)), Some(PostStartFailure::RefusedWhileBooting), "{host:?}");
        }
        // A port name the container does not declare: the request cannot be built.
        let named = with(json!({"httpGet": {"path": "/warm", "port": "admin"}}));
        assert_eq!(poststart_failure(&named), Some(PostStartFailure::UnresolvedPort));
        let remote = with(json!({"httpGet": {"host": "registry.internal", "path": "/register", "port": 80}}));
        assert_eq!(poststart_failure(&remote), None);
        assert_eq!(poststart_failure(&with(json!({"exec": {"command": ["true"]}}))), None);
    }
}
