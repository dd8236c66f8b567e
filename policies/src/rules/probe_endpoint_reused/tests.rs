//! `probe-endpoint-reused`'s unit tests: the check and the fix on objects built in place
//! (the fixtures' cases are `fixtures/`, linted by `lint/tests/rule_fixtures.rs`).

use serde_json::json;

use super::RULE;
use crate::finding::Severity;
use crate::model::Batch;
use crate::policy::Policy;
use crate::rules::testing::{check, check_with, one_container};

fn declared(mut obj: serde_json::Value, checks: &str) -> serde_json::Value {
    obj["spec"]["template"]["metadata"]["annotations"] = json!({"lifeguard.dev/probe-checks": checks});
    obj
}

#[test]
fn same_http_handler_declared_to_reach_a_dependency_is_an_error() {
    let obj = one_container(json!({
        "ports": [{"name": "http", "containerPort": 8080}],
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}},
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}}
    }));
    // Nothing says what /healthz checks: a warning that says how to tell.
    let f = check(&RULE, &obj);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Warning);
    assert_eq!(f[0].pointer, "/spec/template/spec/containers/0/livenessProbe");
    assert!(f[0].message.contains("httpGet :8080/healthz"), "{}", f[0].message);
    assert!(f[0].message.contains("whether it checks a dependency is unknown"), "{}", f[0].message);
    assert!(f[0].message.contains("lifeguard.dev/probe-checks"), "{}", f[0].message);
    // Declared to reach one: the error, naming the declaration.
    let f = check(&RULE, &declared(obj.clone(), "readiness=dependency"));
    assert_eq!(f[0].severity, Severity::Error);
    assert!(f[0].message.ends_with("(declared in lifeguard.dev/probe-checks)"), "{}", f[0].message);
    // Declared local: the anti-pattern stays, as info.
    let f = check(&RULE, &declared(obj, "app/liveness=local"));
    assert_eq!(f[0].severity, Severity::Info);
    assert!(f[0].message.contains("which is local (declared local in lifeguard.dev/probe-checks)"), "{}", f[0].message);
}

#[test]
fn known_local_handlers_are_info() {
    let shared = |image: &str, path: &str| {
        let p = json!({"httpGet": {"path": path, "port": 8080}});
        one_container(json!({"image": image, "livenessProbe": p, "readinessProbe": p}))
    };
    for (image, path, why) in [
        ("vllm/vllm-openai:v0.6.3", "/health", "a model server's health endpoint reports its own engine"),
        ("example/app:1", "/livez", "/livez reports the process itself (the policy's localHealthPaths)"),
        ("example/app:1", "/actuator/health/liveness", "localHealthPaths"),
        ("quay.io/prometheus/node-exporter:v1.8.2", "/", "node-exporter's health handler reports itself"),
        ("otel/opentelemetry-collector-contrib:0.110.0", "/", "the policy's localHealthImages"),
    ] {
        let f = check(&RULE, &shared(image, path));
        assert_eq!(f[0].severity, Severity::Info, "{image}");
        assert!(f[0].message.contains(why), "{why}: {}", f[0].message);
    }
    // Spring Boot's aggregate /actuator/health reaches the dependencies.
    assert_eq!(check(&RULE, &shared("example/app:1", "/actuator/health"))[0].severity, Severity::Error);
}

#[test]
fn empty_path_equals_root() {
    let obj = one_container(json!({
        "livenessProbe": {"httpGet": {"path": "", "port": 80}},
        "readinessProbe": {"httpGet": {"path": "/", "port": 80}}
    }));
    assert_eq!(check(&RULE, &obj).len(), 1);
}

#[test]
fn tolerant_liveness_is_a_warning() {
    let obj = one_container(json!({
        "livenessProbe": {"httpGet": {"path": "/health", "port": 8080}, "periodSeconds": 10, "failureThreshold": 6},
        "readinessProbe": {"httpGet": {"path": "/health", "port": 8080}, "periodSeconds": 5, "failureThreshold": 3}
    }));
    let f = check(&RULE, &obj);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Warning);
    assert!(f[0].message.contains("tolerates 60s of failures vs readiness 15s"), "{}", f[0].message);
}

#[test]
fn same_exec_and_grpc_are_findings() {
    for probe in [json!({"exec": {"command": ["pg_isready"]}}), json!({"grpc": {"port": 9000}})] {
        let obj = one_container(json!({"livenessProbe": probe, "readinessProbe": probe}));
        let f = check(&RULE, &obj);
        assert_eq!(f.len(), 1, "{probe}");
        assert_eq!(f[0].severity, Severity::Warning, "{probe}: unknown reach");
    }
}

fn policy(text: &str) -> Policy {
    let head = "apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\n";
    Policy::load(&format!("{head}{text}"), "test.yaml").expect("test policy loads")
}

#[test]
fn shared_tcp_is_left_to_readiness_port_only() {
    let tcp = json!({"tcpSocket": {"port": 6379}});
    let obj = one_container(json!({"livenessProbe": tcp, "readinessProbe": tcp}));
    assert!(check(&RULE, &obj).is_empty());
    // Whether or not readiness-port-only runs: no rule's findings depend on another.
    let off = policy("rules:\n  readiness-port-only: {enabled: false}\n");
    assert!(check_with(&RULE, &obj, &off, &Batch::default()).is_empty());
    // Three tcpSocket copies are the same case.
    let obj = one_container(json!({"startupProbe": tcp, "livenessProbe": tcp, "readinessProbe": tcp}));
    assert!(check(&RULE, &obj).is_empty());
}

#[test]
fn shared_tcp_in_a_job_is_info() {
    let tcp = json!({"tcpSocket": {"port": 8080}});
    let mut obj = one_container(json!({"livenessProbe": tcp, "readinessProbe": tcp}));
    obj["kind"] = json!("Job");
    obj["apiVersion"] = json!("batch/v1");
    obj["spec"]["template"]["spec"]["restartPolicy"] = json!("Never");
    let f = check(&RULE, &obj);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Info);
}

#[test]
fn shared_grpc_help_names_health_services() {
    let grpc = json!({"grpc": {"port": 9000}});
    let f = check(&RULE, &one_container(json!({"livenessProbe": grpc, "readinessProbe": grpc})));
    assert!(f[0].help.contains("`service: liveness`"), "{}", f[0].help);
    assert!(!f[0].help.contains("/livez"), "{}", f[0].help);
    let wrapped = json!({"exec": {"command": ["/bin/grpc_health_probe", "-addr=:9000"]}});
    let f = check(&RULE, &one_container(json!({"livenessProbe": wrapped, "readinessProbe": wrapped})));
    assert_eq!(f[0].severity, Severity::Warning);
    assert!(f[0].help.contains("-service=liveness"), "{}", f[0].help);
}

#[test]
fn error_help_gives_the_tolerance_a_single_endpoint_needs() {
    // Defaults: liveness and readiness both 3 x 10s = 30s; 3x is 90s.
    let p = json!({"httpGet": {"path": "/health", "port": 8080}});
    let f = check(&RULE, &one_container(json!({"livenessProbe": p, "readinessProbe": p})));
    assert!(f[0].help.contains("/livez"), "{}", f[0].help);
    assert!(f[0].help.contains("failureThreshold: 9 (90s vs readiness's 30s)"), "{}", f[0].help);
    // A liveness period that does not divide the window rounds up.
    let obj = one_container(json!({
        "livenessProbe": {"httpGet": {"path": "/health", "port": 8080}, "periodSeconds": 20},
        "readinessProbe": {"httpGet": {"path": "/health", "port": 8080}, "periodSeconds": 5, "failureThreshold": 5}
    }));
    let f = check(&RULE, &obj);
    assert!(f[0].help.contains("failureThreshold: 4 (80s vs readiness's 25s)"), "{}", f[0].help);
}

#[test]
fn process_existence_checks_are_named_as_such() {
    let pid1 = json!({"exec": {"command": ["cat", "/proc/1/status"]}});
    let f = check(&RULE, &one_container(json!({"livenessProbe": pid1, "readinessProbe": pid1})));
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Warning);
    assert!(f[0].message.contains("only checks that PID 1 exists, so it cannot fail"), "{}", f[0].message);
    let named = json!({"exec": {"command": ["sh", "-c", "pgrep -x nginx > /dev/null"]}});
    let f = check(&RULE, &one_container(json!({"livenessProbe": named, "readinessProbe": named})));
    assert_eq!(f[0].severity, Severity::Warning);
    assert!(f[0].message.contains("a process matching \"nginx\" exists"), "{}", f[0].message);
    // A command that also asks the app is not only a process check.
    let more = json!({"exec": {"command": ["sh", "-c", "pgrep nginx && curl -f localhost/ok"]}});
    let f = check(&RULE, &one_container(json!({"livenessProbe": more, "readinessProbe": more})));
    assert_eq!(f[0].severity, Severity::Warning);
    assert!(!f[0].message.contains("process matching"), "{}", f[0].message);
}

#[test]
fn shared_readiness_path_is_one_finding_at_the_reuse_tier() {
    let p = json!({"httpGet": {"path": "/ready", "port": 8080}});
    let f = check(&RULE, &one_container(json!({"livenessProbe": p, "readinessProbe": p})));
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Error);
    assert!(f[0].message.contains("(httpGet :8080/ready, a readiness path)"), "{}", f[0].message);
    let obj = one_container(json!({
        "livenessProbe": {"httpGet": {"path": "/ready", "port": 8080}, "failureThreshold": 9},
        "readinessProbe": p
    }));
    let f = check(&RULE, &obj);
    assert_eq!(f[0].severity, Severity::Warning);
}

#[test]
fn shared_dependency_check_keeps_its_error() {
    let obj = one_container(json!({
        "livenessProbe": {"httpGet": {"path": "/actuator/health", "port": 8080}, "failureThreshold": 9},
        "readinessProbe": {"httpGet": {"path": "/actuator/health", "port": 8080}}
    }));
    let f = check(&RULE, &obj);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Error);
    assert!(f[0].message.contains("which aggregates dependencies"), "{}", f[0].message);
    assert!(f[0].message.contains("outage longer than 90s still restarts"), "{}", f[0].message);
    assert!(f[0].help.contains("/actuator/health/liveness"), "{}", f[0].help);
    let redis = json!({"exec": {"command": ["redis-cli", "-h", "redis-master", "ping"]}});
    let f = check(&RULE, &one_container(json!({"livenessProbe": redis, "readinessProbe": redis})));
    assert!(f[0].message.contains("which runs redis-cli against \"redis-master\""), "{}", f[0].message);
    // With liveness-checks-dependency off, the reuse tier alone decides.
    let off = policy("rules:\n  liveness-checks-dependency: {enabled: false}\n");
    let f = check_with(&RULE, &obj, &off, &Batch::default());
    assert_eq!(f[0].severity, Severity::Warning);
    assert!(!f[0].message.contains("aggregates"), "{}", f[0].message);
}

#[test]
fn three_copies_are_a_warning_naming_all_three() {
    let p = json!({"httpGet": {"path": "/health", "port": 8080}, "periodSeconds": 5});
    let obj = one_container(json!({"startupProbe": p, "livenessProbe": p, "readinessProbe": p}));
    let f = check(&RULE, &obj);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Warning);
    assert!(f[0].message.contains("copies"), "{}", f[0].message);
}

#[test]
fn startup_sharing_liveness_is_fine() {
    let obj = one_container(json!({
        "startupProbe": {"httpGet": {"path": "/livez", "port": 8080}, "failureThreshold": 30},
        "livenessProbe": {"httpGet": {"path": "/livez", "port": 8080}},
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8080}}
    }));
    assert!(check(&RULE, &obj).is_empty());
}

#[test]
fn same_path_on_other_port_is_fine() {
    let obj = one_container(json!({
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": 9090}},
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}}
    }));
    assert!(check(&RULE, &obj).is_empty());
}

#[test]
fn grpc_services_differ_is_fine() {
    let obj = one_container(json!({
        "livenessProbe": {"grpc": {"port": 9000, "service": "liveness"}},
        "readinessProbe": {"grpc": {"port": 9000, "service": "readiness"}}
    }));
    assert!(check(&RULE, &obj).is_empty());
}

#[test]
fn sidecar_init_containers_are_checked_plain_init_ones_not() {
    let probe = json!({"httpGet": {"path": "/h", "port": 15000}});
    let mut obj = one_container(json!({}));
    obj["spec"]["template"]["spec"]["initContainers"] = json!([
        {"name": "init", "image": "busybox", "livenessProbe": probe, "readinessProbe": probe},
        {"name": "proxy", "image": "envoy", "restartPolicy": "Always", "livenessProbe": probe, "readinessProbe": probe}
    ]);
    let f = check(&RULE, &obj);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].container.as_deref(), Some("proxy"));
    assert_eq!(f[0].pointer, "/spec/template/spec/initContainers/1/livenessProbe");
}

#[test]
fn tolerance_advice_stays_within_the_liveness_window_limit() {
    use super::separate_or_tolerate_help;
    use crate::model::ProbeTiming;
    let timing = |failure, period| ProbeTiming { initial_delay: 0, period, timeout: 1, success: 1, failure };
    // Readiness 3 x 10: liveness 9 x 10 = 90 s is 3x and within 600 s.
    let help = separate_or_tolerate_help(timing(3, 10), timing(3, 10), 600);
    assert!(help.contains("failureThreshold: 9 (90s vs readiness's 30s)"), "{help}");
    // Readiness 30 x 60 = 1800 s: 3x would be 5400 s, past the limit, so
    // readiness is told to fail fast first (180 s) and liveness gets 540 s.
    let help = separate_or_tolerate_help(timing(30, 60), timing(30, 60), 600);
    assert!(!help.contains("5400"), "{help}");
    assert!(help.contains("failureThreshold: 3, 180s") && help.contains("failureThreshold: 9 (540s)"), "{help}");
    // No limit: the plain 3x advice.
    let help = separate_or_tolerate_help(timing(30, 60), timing(30, 60), 0);
    assert!(help.contains("failureThreshold: 90 (5400s"), "{help}");
}
