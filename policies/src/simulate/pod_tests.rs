//! A pod of several containers through [`simulate_object`]: the pod is in
//! the endpoints only when every container is ready (the slower decides),
//! native sidecars start in order before the regular containers, and the
//! readiness gates are the pod's.

use serde_json::{Value, json};

use crate::model::Batch;
use crate::policy::Policy;

use super::{Assumptions, ContainerOutcome, EventKind, PodOutcome, Scenario, Verdict, simulate_object};

fn ready(delay: i64) -> Value {
    json!({"httpGet": {"path": "/ready", "port": 8080}, "periodSeconds": 1, "initialDelaySeconds": delay})
}

/// A Deployment of `containers` (and `init`) with a Service.
pub(super) fn deployment(containers: Value, init: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"template": {"metadata": {"labels": {"app": "web"}}, "spec": {
            "containers": containers, "initContainers": init}}}})
}

pub(super) fn outcomes(object: &Value, scenario: &str) -> Vec<ContainerOutcome> {
    let services = [json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]}})];
    let batch = Batch::from_objects(&services);
    let scenarios = [Scenario::parse(scenario).expect("a scenario")];
    let a = Assumptions::default();
    simulate_object(object, &batch, &Policy::default(), &scenarios, &a).expect("reads").expect("a pod").outcomes
}

pub(super) fn of<'a>(all: &'a [ContainerOutcome], name: &str) -> &'a ContainerOutcome {
    all.iter().find(|o| o.container == name).expect("the container's outcome")
}

pub(super) fn pod_of(o: &ContainerOutcome) -> &PodOutcome {
    o.pod.as_ref().expect("a pod of several containers has the pod's outcome")
}

pub(super) fn times(events: &[super::Event], kind: EventKind) -> Vec<i64> {
    events.iter().filter(|e| e.kind == kind).map(|e| e.at_ms).collect()
}

#[test]
fn the_slower_container_decides_when_the_pod_is_ready() {
    let two = deployment(
        json!([{"name": "app", "readinessProbe": ready(0)}, {"name": "slow", "readinessProbe": ready(8)}]),
        json!([]),
    );
    let all = outcomes(&two, "boot");
    let (app, slow) = (of(&all, "app"), of(&all, "slow"));
    // Each container is ready on its own grid; the pod only with the slower.
    assert_eq!(times(&app.events, EventKind::ContainerReady), vec![1_000]);
    assert_eq!(times(&slow.events, EventKind::ContainerReady), vec![8_000]);
    assert!(times(&app.events, EventKind::Ready).is_empty(), "a container's own events say nothing of the endpoints");
    let pod = pod_of(app);
    assert_eq!(pod, pod_of(slow));
    assert_eq!(times(&pod.events, EventKind::Ready), vec![8_000]);
    assert_eq!(pod.out.len(), 1);
    assert_eq!(pod.out[0].held_by, ["slow"]);
    assert_eq!(pod.started_ms, vec![Some(0), Some(0)]);
    assert_eq!(app.verdict, Verdict::Ok);
    assert_eq!(
        app.message,
        "boots in 0 s without a restart; the pod is out of endpoints for 8 s (held out by container \"slow\")"
    );
}

#[test]
fn a_native_sidecar_holds_the_app_until_its_startup_probe_succeeds() {
    let startup = json!({"httpGet": {"path": "/ready", "port": 15021}, "periodSeconds": 1, "initialDelaySeconds": 5,
        "failureThreshold": 30});
    let mesh = deployment(
        json!([{"name": "app", "readinessProbe": ready(0)}]),
        json!([{"name": "proxy", "restartPolicy": "Always", "startupProbe": startup}]),
    );
    let all = outcomes(&mesh, "boot");
    let (app, proxy) = (of(&all, "app"), of(&all, "proxy"));
    assert_eq!(times(&proxy.events, EventKind::StartupSucceeded), vec![5_000]);
    // The app starts with the sync the startup result brings, and is
    // first probed once the kubelet has seen it.
    assert_eq!(times(&app.events, EventKind::Started), vec![5_000]);
    assert_eq!(times(&app.events, EventKind::ContainerReady), vec![6_000]);
    let pod = pod_of(app);
    assert_eq!(pod.containers, ["proxy", "app"]);
    assert_eq!(pod.started_ms, vec![Some(0), Some(5_000)]);
    assert_eq!(times(&pod.events, EventKind::Ready), vec![6_000]);
    assert_eq!(pod.out[0].held_by, ["app"]);

    // Without a startup probe, the next starts once the kubelet has seen
    // the sidecar running.
    let plain = deployment(
        json!([{"name": "app", "readinessProbe": ready(0)}]),
        json!([{"name": "proxy", "restartPolicy": "Always"}]),
    );
    let all = outcomes(&plain, "boot");
    assert_eq!(pod_of(of(&all, "app")).started_ms, vec![Some(0), Some(1_000)]);
}

#[test]
fn a_sidecar_that_never_starts_keeps_the_app_from_starting() {
    // The startup probe's port is not declared: it never succeeds.
    let stuck = deployment(
        json!([{"name": "app", "readinessProbe": ready(0)}]),
        json!([{"name": "proxy", "restartPolicy": "Always", "startupProbe": {"tcpSocket": {"port": "admin"}}}]),
    );
    let all = outcomes(&stuck, "boot");
    let app = of(&all, "app");
    assert_eq!(app.verdict, Verdict::OutOfService);
    assert!(app.message.contains("only once init container \"proxy\" has started"), "{}", app.message);
    assert!(app.events.is_empty());
    let pod = pod_of(app);
    assert_eq!(pod.started_ms, vec![Some(0), None]);
    assert!(pod.out.iter().all(|s| s.open) && times(&pod.events, EventKind::Ready).is_empty());
    assert_eq!(of(&all, "proxy").verdict, Verdict::OutOfService);
}

#[test]
fn one_container_keeps_its_own_outcome_and_no_pod() {
    let one = deployment(json!([{"name": "app", "readinessProbe": ready(0)}]), json!([]));
    let all = outcomes(&one, "boot");
    assert_eq!(all.len(), 1);
    assert!(all[0].pod.is_none());
    assert_eq!(times(&all[0].events, EventKind::Ready), vec![1_000]);
    assert_eq!(all[0].message, "boots in 0 s without a restart; out of endpoints for 1 s");
}

#[test]
fn the_readiness_gates_count_from_when_every_container_is_ready() {
    let mut gated = deployment(
        json!([{"name": "app", "readinessProbe": ready(0)}, {"name": "slow", "readinessProbe": ready(8)}]),
        json!([]),
    );
    gated["spec"]["template"]["spec"]["readinessGates"] = json!([{"conditionType": "lb/ready"}]);
    gated["spec"]["template"]["metadata"]["annotations"] = json!({"lifeguard.dev/readiness-gates-seconds": "5"});
    let all = outcomes(&gated, "boot");
    let pod = pod_of(&all[0]);
    assert_eq!(times(&pod.events, EventKind::Ready), vec![13_000]);
    assert_eq!(pod.out[0].because.as_deref(), Some("readiness gate lb/ready"));
    assert!(pod.out[0].held_by.is_empty());
    // Stated never: the pod never serves, whatever its containers do.
    gated["spec"]["template"]["metadata"]["annotations"] = json!({"lifeguard.dev/readiness-gates-seconds": "never"});
    let all = outcomes(&gated, "boot");
    assert!(all.iter().all(|o| o.verdict == Verdict::OutOfService), "{:?}", all.iter().map(|o| &o.message));
}

#[test]
fn a_stall_takes_the_pod_out_while_any_container_that_checks_it_is_out() {
    let dependency = json!({"httpGet": {"path": "/actuator/health", "port": 8080}, "periodSeconds": 1,
        "failureThreshold": 1});
    // The app's readiness proves only its port: it passes through the stall.
    let port = json!({"tcpSocket": {"port": 8080}, "periodSeconds": 1});
    let two = deployment(
        json!([{"name": "app", "readinessProbe": port}, {"name": "db-proxy", "readinessProbe": dependency}]),
        json!([]),
    );
    let all = outcomes(&two, "stall:10s");
    let app = of(&all, "app");
    // The app stays ready, but the pod goes out with the proxy, and the
    // app's line says so.
    assert_eq!(app.worst.unready_ms, 0);
    assert_eq!(app.verdict, Verdict::Ok);
    let pod = pod_of(app);
    assert!(pod.unready_ms >= 9_000, "{pod:?}");
    assert!(pod.out.iter().all(|s| s.held_by == ["db-proxy"]), "{pod:?}");
    assert!(app.message.contains("the pod is out of endpoints for up to") && app.message.contains("\"db-proxy\""));
}

#[test]
fn without_a_readiness_probe_anywhere_the_pod_joins_at_once_and_a_booting_app_refuses() {
    // What readiness-probe-missing reports of a GPU server beside a sidecar:
    // nothing holds the pod out while the server boots.
    let mut video = deployment(
        json!([{"name": "server", "ports": [{"containerPort": 8080}],
                "resources": {"limits": {"nvidia.com/gpu": 1}}},
               {"name": "runtime"}]),
        json!([]),
    );
    video["spec"]["template"]["metadata"]["annotations"] = json!({"lifeguard.dev/cold-start-seconds": "60"});
    let all = outcomes(&video, "boot");
    let server = of(&all, "server");
    assert_eq!(times(&pod_of(server).events, EventKind::Ready), vec![0]);
    assert_eq!(server.verdict, Verdict::ConnectionsRefused, "{}", server.message);
    assert!(server.message.contains("in the endpoints from 0 s, 60 s before the app answers"), "{}", server.message);
}

#[test]
fn a_regular_containers_poststart_hook_holds_the_next_ones_start() {
    // The kubelet starts regular containers one after another, each once
    // the hook of the one before returned.
    let hook = json!({"postStart": {"exec": {"command": ["sh", "-c", "sleep 4"]}}});
    let two = deployment(
        json!([{"name": "app", "lifecycle": hook, "readinessProbe": ready(0)}, {"name": "log", "readinessProbe": ready(0)}]),
        json!([]),
    );
    let all = outcomes(&two, "boot");
    assert_eq!(pod_of(&all[0]).started_ms, vec![Some(0), Some(4_000)]);
}
