//! `readiness-probe-missing`'s unit tests: the check and the fix on objects built in place
//! (the fixtures' cases are `fixtures/`, linted by `lint/tests/rule_fixtures.rs`).

use serde_json::{Value, json};

use super::RULE;
use crate::finding::{Finding, Severity};
use crate::model::Batch;
use crate::policy::Policy;
use crate::rules::testing::{check, check_with, deployment, one_container};

fn service(namespace: &str, selector: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "x", "namespace": namespace},
        "spec": {"selector": selector, "ports": [{"port": 80, "targetPort": 8080}]}
    })
}

fn web_service(ports: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "x", "namespace": "prod"},
        "spec": {"selector": {"app": "web"}, "ports": ports}
    })
}

fn with_services(obj: &Value, services: &[Value]) -> Vec<Finding> {
    check_with(&RULE, obj, &Policy::default(), &Batch::from_objects(services.iter()))
}

fn ported() -> Value {
    one_container(json!({"ports": [{"name": "http", "containerPort": 8080}]}))
}

fn who(f: &[Finding]) -> Vec<&str> {
    f.iter().filter_map(|f| f.container.as_deref()).collect()
}

/// deploy-sourcegraph's cAdvisor: no Service, its one port the scrape port.
#[test]
fn without_services_a_scraped_port_is_no_sign_of_traffic() {
    let mut exporter = one_container(json!({"ports": [{"name": "http", "containerPort": 48080}]}));
    exporter["spec"]["template"]["metadata"]["annotations"] = json!({"prometheus.io/port": "48080"});
    assert!(check(&RULE, &exporter).is_empty());
    let named = one_container(json!({"ports": [{"name": "http-metrics", "containerPort": 9100}]}));
    assert!(check(&RULE, &named).is_empty());
    // Another port beside the scraped one is still a sign of traffic.
    let mut both = one_container(json!({"ports": [{"name": "http", "containerPort": 8080},
        {"name": "metrics", "containerPort": 9090}]}));
    both["spec"]["template"]["metadata"]["annotations"] = json!({"prometheus.io/port": "9090"});
    assert_eq!(check(&RULE, &both).len(), 1);
    // The annotation naming another port leaves this one a sign.
    exporter["spec"]["template"]["metadata"]["annotations"] = json!({"prometheus.io/port": "9100"});
    assert_eq!(check(&RULE, &exporter).len(), 1);
}

#[test]
fn selecting_service_names_the_service_and_the_port() {
    let f = with_services(&ported(), &[service("prod", json!({"app": "web"}))]);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Warning);
    assert_eq!(f[0].pointer, "/spec/template/spec/containers/0");
    assert_eq!(
        f[0].message,
        "Service/x sends traffic to port 8080/http, but no container of the pod has a readiness probe"
    );
    assert!(f[0].fix.is_none());
}

#[test]
fn two_selecting_services_are_both_named() {
    let mut other = service("prod", json!({"app": "web"}));
    other["metadata"]["name"] = json!("y");
    let f = with_services(&ported(), &[other, service("prod", json!({"app": "web"}))]);
    assert_eq!(f.len(), 1);
    assert!(f[0].message.contains("Service/x, Service/y send traffic"), "{}", f[0].message);
}

#[test]
fn repeated_services_are_named_once_and_long_lists_are_cut() {
    let named = |n: &str| {
        let mut s = service("prod", json!({"app": "web"}));
        s["metadata"]["name"] = json!(n);
        s
    };
    let f = with_services(&ported(), &[named("x"), named("x"), named("x")]);
    assert!(f[0].message.contains("Service/x sends traffic"), "{}", f[0].message);
    let f = with_services(&ported(), &[named("e"), named("b"), named("c"), named("d"), named("a")]);
    assert!(f[0].message.contains("Service/a, Service/b, Service/c and 2 more send traffic"), "{}", f[0].message);
}

#[test]
fn only_the_containers_the_service_targets_are_reported() {
    let mut obj = deployment(json!([
        {"name": "app", "ports": [{"name": "http", "containerPort": 8080}]},
        {"name": "metrics", "ports": [{"containerPort": 9100}]}
    ]));
    obj["spec"]["template"]["spec"]["initContainers"] = json!([
        {"name": "proxy", "restartPolicy": "Always", "ports": [{"containerPort": 15001}]},
        {"name": "init", "ports": [{"containerPort": 1}]}
    ]);
    let f = with_services(&obj, &[web_service(json!([{"port": 80, "targetPort": "http"}]))]);
    assert_eq!(who(&f), ["app"]);
    let f = with_services(&obj, &[web_service(json!([{"port": 80, "targetPort": 15001}, {"port": 9100}]))]);
    assert_eq!(who(&f), ["metrics", "proxy"]);
    assert_eq!(f[1].pointer, "/spec/template/spec/initContainers/0");
    assert!(f[1].message.contains("to port 15001,"), "{}", f[1].message);
}

#[test]
fn an_undeclared_port_goes_to_the_gpu_container_and_is_an_error() {
    let obj = deployment(json!([
        {"name": "metrics", "ports": [{"containerPort": 9100}]},
        {"name": "vllm", "image": "vllm/vllm-openai:v0.6.0",
         "resources": {"limits": {"nvidia.com/gpu": "1"}}}
    ]));
    let f = with_services(&obj, &[web_service(json!([{"port": 80, "targetPort": 8000}, {"port": 8001}]))]);
    assert_eq!(who(&f), ["vllm"]);
    assert_eq!(f[0].severity, Severity::Error);
    assert_eq!(
        f[0].located_message(),
        "container \"vllm\" (requests nvidia.com/gpu): Service/x sends traffic to ports 8000, 8001, which no container declares, but no container of the pod has a readiness probe"
    );
}

#[test]
fn an_undeclared_port_goes_to_a_slow_boot_image_without_a_gpu() {
    let obj = deployment(json!([
        {"name": "sidecar"},
        {"name": "tgi", "image": "ghcr.io/huggingface/text-generation-inference:2.0"}
    ]));
    let f = with_services(&obj, &[web_service(json!([{"port": 80}]))]);
    assert_eq!(who(&f), ["tgi"]);
    assert_eq!(f[0].severity, Severity::Warning);
}

#[test]
fn an_undeclared_port_goes_to_every_container_without_ports_else_the_first() {
    let obj = deployment(json!([
        {"name": "metrics", "ports": [{"containerPort": 9100}]},
        {"name": "a"},
        {"name": "b"}
    ]));
    let f = with_services(&obj, &[web_service(json!([{"port": 80, "targetPort": 3000}]))]);
    assert_eq!(who(&f), ["a", "b"]);
    assert!(f[0].message.contains("to port 3000, which no container declares"), "{}", f[0].message);
    let obj = deployment(json!([
        {"name": "a", "ports": [{"containerPort": 8080}]},
        {"name": "b", "ports": [{"containerPort": 9100}]}
    ]));
    let f = with_services(&obj, &[web_service(json!([{"port": 80, "targetPort": 3000}, {"port": 8080}]))]);
    assert_eq!(who(&f), ["a"]);
    assert!(f[0].message.contains("to port 8080 and port 3000, which no container declares"), "{}", f[0].message);
}

#[test]
fn an_undeclared_port_goes_first_to_the_container_whose_command_line_names_it() {
    let obj = deployment(json!([
        {"name": "helper"},
        {"name": "server", "ports": [{"name": "metrics", "containerPort": 9090}],
         "args": ["--host", "0.0.0.0", "--port", "8000"]}
    ]));
    let f = with_services(&obj, &[web_service(json!([{"port": 80, "targetPort": 8000}]))]);
    assert_eq!(who(&f), ["server"]);
    assert!(f[0].message.contains("to port 8000, which no container declares"), "{}", f[0].message);
    // Before a GPU container too: the GPU one may serve another port.
    let obj = deployment(json!([
        {"name": "video", "resources": {"limits": {"nvidia.com/gpu": "4"}}},
        {"name": "api", "command": ["uvicorn", "app:app", "--port=8000"]}
    ]));
    let f = with_services(&obj, &[web_service(json!([{"port": 80, "targetPort": 8000}]))]);
    assert_eq!(who(&f), ["api"]);
}

#[test]
fn a_named_port_no_container_declares_sends_nothing() {
    let f = with_services(&ported(), &[web_service(json!([{"port": 80, "targetPort": "grpc"}]))]);
    assert!(f.is_empty(), "{f:?}");
}

#[test]
fn a_service_without_ports_reaches_the_ported_containers_else_the_first() {
    let obj = deployment(json!([{"name": "a"}, {"name": "b", "ports": [{"containerPort": 9000}]}]));
    let f = with_services(&obj, &[web_service(json!([]))]);
    assert_eq!(who(&f), ["b"]);
    assert!(f[0].message.contains("Service/x sends traffic to the pod, but"), "{}", f[0].message);
    let obj = deployment(json!([{"name": "a"}, {"name": "b"}]));
    assert_eq!(who(&with_services(&obj, &[web_service(json!([]))])), ["a"]);
}

#[test]
fn no_service_reports_each_ported_container_of_a_pod_without_readiness() {
    let obj = deployment(json!([
        {"name": "a", "ports": [{"containerPort": 8080}]},
        {"name": "metrics", "ports": [{"containerPort": 9100}]},
        {"name": "worker"}
    ]));
    let f = check(&RULE, &obj);
    assert_eq!(who(&f), ["a", "metrics"]);
    assert_eq!(f[1].pointer, "/spec/template/spec/containers/1");
    let gpu = one_container(json!({"ports": [{"containerPort": 8000}],
                                   "resources": {"limits": {"nvidia.com/gpu": "1"}}}));
    assert_eq!(check(&RULE, &gpu)[0].severity, Severity::Error);
}

#[test]
fn a_container_with_readiness_gates_the_pod_in_every_mode() {
    // The metrics exporter beside a container that has readiness.
    let obj = deployment(json!([
        {"name": "a", "ports": [{"containerPort": 8080}],
         "readinessProbe": {"tcpSocket": {"port": 8080}}},
        {"name": "metrics", "ports": [{"containerPort": 9100}]}
    ]));
    assert!(check(&RULE, &obj).is_empty());
    assert!(with_services(&obj, &[web_service(json!([{"port": 9100}]))]).is_empty());
    assert!(with_services(&obj, &[service("prod", json!({"app": "other"}))]).is_empty());
}

#[test]
fn not_findings() {
    let svc = service("prod", json!({"app": "web"}));
    // Services present, none selecting; or one in another namespace.
    assert!(with_services(&ported(), &[service("prod", json!({"app": "api"}))]).is_empty());
    assert!(with_services(&ported(), &[service("dev", json!({"app": "web"}))]).is_empty());
    // A container with ports and readiness.
    let ready = one_container(json!({
        "ports": [{"containerPort": 8080}],
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8080}}
    }));
    assert!(check(&RULE, &ready).is_empty());
    // Without Services, a container without ports.
    assert!(check(&RULE, &one_container(json!({}))).is_empty());
    // Jobs and run-once pods.
    let mut job = ported();
    job["kind"] = json!("Job");
    job["apiVersion"] = json!("batch/v1");
    assert!(with_services(&job, std::slice::from_ref(&svc)).is_empty());
    assert!(check(&RULE, &job).is_empty());
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "prod", "labels": {"app": "web"}},
        "spec": {"restartPolicy": "Never",
                 "containers": [{"name": "app", "ports": [{"containerPort": 80}]}]}
    });
    assert!(with_services(&pod, std::slice::from_ref(&svc)).is_empty());
    assert!(check(&RULE, &pod).is_empty());
}
