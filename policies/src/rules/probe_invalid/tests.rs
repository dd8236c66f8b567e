//! `probe-invalid`'s unit tests: the check and the fix on objects built in place
//! (the fixtures' cases are `fixtures/`, linted by `lint/tests/rule_fixtures.rs`).

use serde_json::{Value, json};

use super::{INIT_PROBE_REFUSED, RULE};
use crate::finding::{Finding, Severity};
use crate::rules::testing::{check, one_container};

const C: &str = "/spec/template/spec/containers/0";

fn run(field: &str, probe: Value) -> Vec<Finding> {
    check(&RULE, &one_container(json!({ field: probe })))
}

fn one(field: &str, probe: Value) -> Finding {
    let mut f = run(field, probe.clone());
    assert_eq!(f.len(), 1, "{probe}: {f:?}");
    f.remove(0)
}

#[test]
fn success_threshold_must_be_one_on_liveness_and_startup() {
    for field in ["livenessProbe", "startupProbe"] {
        let f = one(field, json!({"tcpSocket": {"port": 80}, "successThreshold": 2}));
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(f.pointer, format!("{C}/{field}/successThreshold"));
        assert!(f.message.contains("requires 1"), "{}", f.message);
    }
    assert!(run("readinessProbe", json!({"tcpSocket": {"port": 80}, "successThreshold": 2})).is_empty());
}

#[test]
fn handlers_must_be_exactly_one() {
    let f = one("livenessProbe", json!({"periodSeconds": 5}));
    assert_eq!(f.pointer, format!("{C}/livenessProbe"));
    assert!(f.message.contains("no handler"), "{}", f.message);
    let f = one("readinessProbe", json!({"httpGet": {"path": "/", "port": 80}, "exec": {"command": ["true"]}}));
    assert!(f.message.contains("2 handlers (httpGet, exec)"), "{}", f.message);
}

#[test]
fn negative_values_are_errors_and_zeros_warnings() {
    let f = one("readinessProbe", json!({"tcpSocket": {"port": 80}, "failureThreshold": -1}));
    assert_eq!((f.severity, f.pointer.as_str()), (Severity::Error, &*format!("{C}/readinessProbe/failureThreshold")));
    let f = one("readinessProbe", json!({"tcpSocket": {"port": 80}, "initialDelaySeconds": -5}));
    assert_eq!(f.pointer, format!("{C}/readinessProbe/initialDelaySeconds"));
    let f = one("livenessProbe", json!({"tcpSocket": {"port": 80}, "periodSeconds": 0}));
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.message.contains("default 10"), "{}", f.message);
    // A zero successThreshold becomes 1, which liveness accepts: only the zero is noted.
    let f = one("livenessProbe", json!({"tcpSocket": {"port": 80}, "successThreshold": 0}));
    assert_eq!(f.severity, Severity::Warning);
}

#[test]
fn probe_grace_period() {
    let f = one("readinessProbe", json!({"tcpSocket": {"port": 80}, "terminationGracePeriodSeconds": 10}));
    assert_eq!(f.pointer, format!("{C}/readinessProbe/terminationGracePeriodSeconds"));
    let f = one("livenessProbe", json!({"tcpSocket": {"port": 80}, "terminationGracePeriodSeconds": 0}));
    assert!(f.message.contains("at least 1"), "{}", f.message);
    assert!(run("livenessProbe", json!({"tcpSocket": {"port": 80}, "terminationGracePeriodSeconds": 5})).is_empty());
}

#[test]
fn ports_schemes_and_commands() {
    for (probe, at) in [
        (json!({"httpGet": {"path": "/", "port": 0}}), "httpGet/port"),
        (json!({"httpGet": {"path": "/", "port": 70000}}), "httpGet/port"),
        (json!({"httpGet": {"path": "/", "port": "8080"}}), "httpGet/port"),
        (json!({"tcpSocket": {"port": "Web_Port"}}), "tcpSocket/port"),
        (json!({"httpGet": {"path": "/", "port": 80, "scheme": "http"}}), "httpGet/scheme"),
        (json!({"grpc": {"port": 0}}), "grpc/port"),
        (json!({"exec": {"command": []}}), "exec"),
        (json!({"exec": {}}), "exec"),
        (json!({"exec": {"command": ["", "x"]}}), "exec/command/0"),
    ] {
        let f = one("livenessProbe", probe);
        assert_eq!(f.pointer, format!("{C}/livenessProbe/{at}"));
        assert_eq!(f.severity, Severity::Error);
    }
    let f = one("livenessProbe", json!({"httpGet": {"path": "/", "port": "8080"}}));
    assert!(f.message.contains("quoted number"), "{}", f.message);
}

#[test]
fn hooks_on_a_run_to_completion_init_container_are_refused_and_a_sidecars_are_not() {
    let pod = |restart: Option<&str>| {
        let mut init = json!({"name": "setup", "image": "busybox:1.36",
            "lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", "sleep 5"]}}}});
        if let Some(r) = restart {
            init["restartPolicy"] = json!(r);
        }
        json!({"kind": "Pod", "spec": {"initContainers": [init], "containers": [{"name": "app", "image": "a:1"}]}})
    };
    let f = check(&RULE, &pod(None));
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!((f[0].severity, f[0].pointer.as_str()), (Severity::Error, "/spec/initContainers/0/lifecycle"));
    assert!(f[0].message.ends_with(&format!("{INIT_PROBE_REFUSED:?}")), "{}", f[0].message);
    assert!(check(&RULE, &pod(Some("OnFailure"))).len() == 1);
    assert!(check(&RULE, &pod(Some("Always"))).is_empty());
}

#[test]
fn probes_on_run_to_completion_init_containers_are_refused_one_finding_each() {
    let mut obj = one_container(json!({}));
    obj["spec"]["template"]["spec"]["initContainers"] = json!([
        // Invalid inside too: only the field is refused, nothing in it is validated.
        {"name": "migrate", "livenessProbe": {"periodSeconds": -1, "successThreshold": 2},
         "readinessProbe": {"tcpSocket": {"port": 80}}},
        {"name": "proxy", "restartPolicy": "Always", "startupProbe": {"tcpSocket": {"port": 80}}},
        {"name": "fetch", "restartPolicy": "OnFailure", "startupProbe": {"exec": {"command": ["true"]}}},
        {"name": "plain"}
    ]);
    let f = check(&RULE, &obj);
    let got: Vec<(&str, &str)> = f.iter().map(|f| (f.pointer.as_str(), f.container.as_deref().unwrap_or(""))).collect();
    assert_eq!(
        got,
        [
            ("/spec/template/spec/initContainers/0/livenessProbe", "migrate"),
            ("/spec/template/spec/initContainers/0/readinessProbe", "migrate"),
            ("/spec/template/spec/initContainers/2/startupProbe", "fetch"),
        ]
    );
    assert!(f.iter().all(|f| f.severity == Severity::Error && f.fix.is_none()));
    assert_eq!(
        f[0].message,
        "livenessProbe is set on an init container without restartPolicy: Always, which runs to completion and is never probed; the API server refuses it: \"may not be set for init containers without restartPolicy=Always\""
    );
}

#[test]
fn valid_probes_are_fine() {
    let obj = one_container(json!({
        "ports": [{"name": "http", "containerPort": 8080}],
        "startupProbe": {"httpGet": {"path": "/livez", "port": "http", "scheme": "HTTPS"}, "failureThreshold": 30, "successThreshold": 1, "terminationGracePeriodSeconds": 60},
        "livenessProbe": {"grpc": {"port": 9000}, "initialDelaySeconds": 0, "timeoutSeconds": 5},
        "readinessProbe": {"exec": {"command": ["cat", "/tmp/ready"]}, "successThreshold": 3, "periodSeconds": 1}
    }));
    assert!(check(&RULE, &obj).is_empty());
    // An undeclared but well-formed name is probe-port-unknown's business.
    assert!(run("livenessProbe", json!({"tcpSocket": {"port": "metrics"}})).is_empty());
}
