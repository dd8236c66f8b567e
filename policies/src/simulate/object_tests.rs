//! Whole objects through [`simulate_object`]: what the manifest and its
//! input decide beyond one container's timeline (a probe port the kubelet
//! cannot resolve, the Services that lose their endpoints, the phase
//! sweep's figures under the verdict's line).

use serde_json::{Value, json};

use crate::model::Batch;
use crate::policy::Policy;

use super::{Assumptions, ContainerOutcome, ProbeChecks, Scenario, Verdict, seconds, simulate_object};

/// The design sources' Postgres: readiness names a port nobody declared.
fn postgres() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "shop"},
        "spec": {"serviceName": "db", "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{
            "name": "postgres", "image": "postgres:16", "ports": [{"containerPort": 5432}],
            "livenessProbe": {"exec": {"command": ["pg_isready", "-h", "localhost"]}, "periodSeconds": 10},
            "readinessProbe": {"tcpSocket": {"port": "postgres"}}}]}}}})
}

/// A shared handler with `failureThreshold: 1`, as `web-api.yaml` has it.
fn orders(replicas: i64) -> Value {
    let health =
        json!({"httpGet": {"path": "/actuator/health", "port": 8080}, "periodSeconds": 2, "failureThreshold": 1});
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "orders", "namespace": "shop"},
        "spec": {"replicas": replicas, "template": {"metadata": {"labels": {"app": "orders"}}, "spec": {"containers": [{
            "name": "orders", "image": "registry.example.com/shop/orders:2.4.1",
            "livenessProbe": health, "readinessProbe": health}]}}}})
}

fn service(name: &str, namespace: &str, app: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"app": app}, "ports": [{"port": 80, "targetPort": 8080}]}})
}

fn outcomes(object: &Value, services: &[Value], scenario: &str, a: &Assumptions) -> Vec<ContainerOutcome> {
    let batch = Batch::from_objects(services);
    let scenarios = [Scenario::parse(scenario).expect("a scenario")];
    let sim = simulate_object(object, &batch, &Policy::default(), &scenarios, a).expect("reads").expect("a pod");
    sim.outcomes
}

fn one(object: &Value, services: &[Value], scenario: &str) -> ContainerOutcome {
    let mut all = outcomes(object, services, scenario, &Assumptions::default());
    assert_eq!(all.len(), 1);
    all.remove(0)
}

#[test]
fn a_readiness_port_the_kubelet_cannot_resolve_keeps_the_pod_out_whatever_is_stated() {
    let o = one(&postgres(), &[], "boot");
    assert_eq!(o.verdict, Verdict::OutOfService);
    assert_eq!(
        o.message,
        "never ready: readiness's tcpSocket port \"postgres\" is not declared, so the kubelet cannot send the check \
         and discards each errored one"
    );
    assert!(o.events.iter().any(|e| e.kind == super::EventKind::ProbeErrored));
    // Saying what the handler checks does not make its port resolve.
    let stated =
        Assumptions { probe_checks: ProbeChecks::parse("readiness=local").expect("valid"), ..Assumptions::default() };
    let o = outcomes(&postgres(), &[], "stall:2m", &stated).remove(0);
    assert_eq!(o.verdict, Verdict::OutOfService, "{}", o.message);
    // Declared, the same name resolves and the pod boots.
    let mut declared = postgres();
    declared["spec"]["template"]["spec"]["containers"][0]["ports"][0]["name"] = json!("postgres");
    let o = one(&declared, &[], "boot");
    assert_eq!(o.verdict, Verdict::Ok, "{}", o.message);
}

#[test]
fn the_services_that_select_the_pod_are_named_and_no_other() {
    let line = |services: &[Value]| one(&orders(6), services, "stall:10s").message;
    let named = line(&[service("orders", "shop", "orders"), service("other", "shop", "web")]);
    assert!(named.contains("and Service/orders has zero endpoints for "), "{named}");
    // Another namespace's Service, or one that selects other pods, is not this pod's.
    for services in [vec![service("orders", "prod", "orders")], vec![service("web", "shop", "web")], vec![]] {
        let text = line(&services);
        assert!(!text.contains("zero endpoints") && !text.contains("Service/"), "{text}");
        assert!(text.ends_with("(no Service in the input selects the pod)"), "{text}");
    }
}

/// Every time in seconds a line states (`13.5-15 s` gives 13.5 and 15).
fn figures_in(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in line.split(' ').filter(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit())) {
        out.extend(word.trim_end_matches([',', ')']).split('-').map(str::to_owned));
    }
    out
}

#[test]
fn the_verdicts_zero_endpoints_are_figures_the_outcome_shows() {
    // The old line read "zero endpoints for 13.5 s" under "15 s out of
    // endpoints" at both the best and the worst offset: a figure no detail showed.
    for (replicas, scenario) in [(6, "stall:10s"), (6, "stall:3s"), (1, "stall:10s"), (3, "stall:20s")] {
        let o = one(&orders(replicas), &[service("orders", "shop", "orders")], scenario);
        assert_eq!(o.verdict, Verdict::RestartStorm, "{}", o.message);
        let zero = o.message.split("zero endpoints ").nth(1).expect(&o.message);
        let mut shown = vec![seconds(o.best.unready_ms), seconds(o.worst.unready_ms)];
        shown.extend(o.unready_at_once_ms.map(seconds));
        for figure in figures_in(zero) {
            assert!(
                shown.contains(&figure),
                "{scenario}, {replicas} replicas: {figure} s in {:?} is not in {shown:?}",
                o.message
            );
        }
        // Several replicas share at least the span every offset is out, and the line says so.
        assert_eq!(o.unready_at_once_ms.is_some(), replicas > 1, "{scenario}");
    }
}

#[test]
fn the_first_restarts_read_in_order() {
    let o = one(&orders(6), &[], "stall:10s");
    let at = o.message.split("(at ").nth(1).and_then(|r| r.split(" s)").next()).expect(&o.message);
    let (lo, hi) = at.split_once('-').expect(at);
    assert!(lo.parse::<f64>().ok() < hi.parse::<f64>().ok(), "{}", o.message);
}

/// A Deployment whose preStop hook is `hook`, its length stated as 20 s,
/// its grace period 30 s, its one port named `http`.
fn with_prestop(hook: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api", "namespace": "shop"},
        "spec": {"template": {"metadata": {"labels": {"app": "api"}, "annotations": {"lifeguard.dev/prestop-seconds": "20"}},
        "spec": {"terminationGracePeriodSeconds": 30, "containers": [{
            "name": "api", "image": "registry.example.com/shop/api:1.0",
            "ports": [{"name": "http", "containerPort": 8080}],
            "lifecycle": {"preStop": hook}}]}}}})
}

#[test]
fn a_prestop_hook_the_kubelet_cannot_run_fails_at_once_whatever_is_stated() {
    let sigterm = |o: &ContainerOutcome| {
        o.events.iter().find(|e| e.kind == super::EventKind::Sigterm).map(|e| e.at_ms).expect("a SIGTERM")
    };
    let prestop = |o: &ContainerOutcome| {
        o.events.iter().find(|e| e.kind == super::EventKind::PreStop).map(|e| e.detail.clone()).expect("a preStop")
    };
    for (hook, why) in [
        (json!({"httpGet": {"path": "/drain", "port": "admin"}}), "httpGet to a port the container does not declare"),
        (json!({"tcpSocket": {"port": 8080}}), "tcpSocket, which the kubelet cannot run"),
    ] {
        let o = one(&with_prestop(hook.clone()), &[], "delete");
        assert_eq!(sigterm(&o), 0, "SIGTERM at once: {hook}");
        assert_eq!(prestop(&o), format!("{why}: it fails at once"));
    }
    // The same hook to a declared port runs as long as stated.
    let o = one(&with_prestop(json!({"httpGet": {"path": "/drain", "port": "http"}})), &[], "delete");
    assert_eq!(sigterm(&o), 20_000);
    assert_eq!(prestop(&o), "httpGet, 20s as stated");
}
