//! `startup-budget-too-short`'s unit tests: the check and the fix on objects built in place
//! (the fixtures' cases are `fixtures/`, linted by `lint/tests/rule_fixtures.rs`).

use serde_json::{Value, json};

use super::RULE;
use crate::finding::Severity;
use crate::model::{ceil_div, cold_start_required};
use crate::rules::testing::{check, one_container};

fn annotated(cold: &str, container: Value) -> Value {
    let mut obj = one_container(container);
    obj["spec"]["template"]["metadata"]["annotations"] = json!({"lifeguard.dev/cold-start-seconds": cold});
    obj
}

fn startup(period: i64, failure: i64) -> Value {
    json!({"startupProbe": {
        "httpGet": {"path": "/livez", "port": 8080},
        "periodSeconds": period,
        "failureThreshold": failure
    }})
}

#[test]
fn integer_margin_arithmetic() {
    assert_eq!(cold_start_required(430, 10), 473);
    assert_eq!(cold_start_required(100, 0), 100);
    assert_eq!(cold_start_required(1, 10), 2);
    assert_eq!(ceil_div(473, 10), 48);
    assert_eq!(ceil_div(480, 10), 48);
    assert_eq!(ceil_div(0, 10), 0);
}

#[test]
fn worked_example_430s_needs_49() {
    let mut obj = annotated("430", startup(10, 30));
    let f = check(&RULE, &obj);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Error);
    assert_eq!(f[0].container.as_deref(), Some("app"));
    assert_eq!(f[0].pointer, "/spec/template/spec/containers/0/startupProbe/failureThreshold");
    for part in ["300s", "failureThreshold 30", "periodSeconds 10", "430s", "473s"] {
        assert!(f[0].message.contains(part), "{part}: {}", f[0].message);
    }
    let fix = f[0].fix.clone().expect("fix");
    assert_eq!(fix.operations.len(), 1);
    json_patch::patch(&mut obj, &fix.operations).expect("patch applies");
    let probe = &obj["spec"]["template"]["spec"]["containers"][0]["startupProbe"];
    // 473 s with a period of the grid to spare: the 49th check, at 480 s.
    assert_eq!(probe["failureThreshold"], json!(49));
    assert_eq!(probe["periodSeconds"], json!(10));
    assert!(check(&RULE, &obj).is_empty());
}

#[test]
fn forty_seven_is_one_short_and_48_is_enough() {
    // 47 checks restart at 460 s: after the 430 s boot, so only the margin is short.
    let f = check(&RULE, &annotated("430", startup(10, 47)));
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Warning);
    // 43 restart at 420 s, before it: the boot loops.
    let f = check(&RULE, &annotated("430", startup(10, 43)));
    assert_eq!(f[0].severity, Severity::Error);
    assert!(f[0].message.contains("restarts it at 420s, before the boot ends"), "{}", f[0].message);
    assert!(check(&RULE, &annotated("430", startup(10, 48))).is_empty());
    assert!(check(&RULE, &annotated("7m10s", startup(10, 48))).is_empty());
}

#[test]
fn fix_accounts_for_initial_delay_and_defaults() {
    // Unset failureThreshold/periodSeconds default to 3 x 10; 60 s delay leaves 413 s.
    let mut obj = annotated("430", json!({"startupProbe": {"tcpSocket": {"port": 8080}, "initialDelaySeconds": 60}}));
    let f = check(&RULE, &obj);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].pointer, "/spec/template/spec/containers/0/startupProbe");
    json_patch::patch(&mut obj, &f[0].fix.clone().expect("fix").operations).expect("patch applies");
    let probe = &obj["spec"]["template"]["spec"]["containers"][0]["startupProbe"];
    assert_eq!(probe["failureThreshold"], json!(43));
    assert!(check(&RULE, &obj).is_empty());
}

#[test]
fn margin_comes_from_the_policy() {
    use crate::model::Batch;
    use crate::policy::Policy;
    use crate::rules::testing::check_with;
    use crate::settings::Settings;
    let policy = Policy::new(Settings { cold_start_margin_percent: 0, ..Settings::default() }).expect("valid policy");
    let obj = annotated("430", startup(10, 43));
    assert!(check_with(&RULE, &obj, &policy, &Batch::default()).is_empty());
    assert_eq!(check(&RULE, &obj).len(), 1);
}

#[test]
fn bad_annotation_is_reported_once_at_the_annotation() {
    let mut obj = annotated("slow", startup(10, 30));
    obj["spec"]["template"]["spec"]["containers"]
        .as_array_mut()
        .expect("containers array")
        .push(json!({"name": "b", "image": "b", "startupProbe": {"exec": {"command": ["true"]}}}));
    let f = check(&RULE, &obj);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Error);
    assert_eq!(f[0].container, None);
    assert_eq!(f[0].pointer, "/spec/template/metadata/annotations/lifeguard.dev~1cold-start-seconds");
    assert!(f[0].message.contains("\"slow\""), "{}", f[0].message);
    assert!(f[0].message.contains("not a number of seconds"));
    assert!(f[0].fix.is_none());
}

#[test]
fn not_findings() {
    // No annotation, not a model server.
    assert!(check(&RULE, &one_container(startup(10, 1))).is_empty());
    // No startup probe, only liveness: startup-probe-missing's job.
    let live = json!({"livenessProbe": {"httpGet": {"path": "/livez", "port": 8080}}});
    assert!(check(&RULE, &annotated("430", live)).is_empty());
    // Zero cold start.
    assert!(check(&RULE, &annotated("0", startup(1, 1))).is_empty());
}

#[test]
fn a_model_server_without_a_measured_cold_start_is_asked_for_one() {
    // A 150 s window on a GPU server that downloads its weights at boot.
    let server = |startup: Value| {
        let mut c = json!({"image": "vllm/vllm-openai:v0.6.3", "resources": {"limits": {"nvidia.com/gpu": 1}}});
        c["startupProbe"] = startup;
        one_container(c)
    };
    let obj = server(json!({"httpGet": {"path": "/health", "port": 8000}, "failureThreshold": 15}));
    let f = check(&RULE, &obj);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Warning);
    assert!(f[0].fix.is_none());
    for part in ["restarts it at 140s", "600s", "gpuBootSeconds", "no measured cold start"] {
        assert!(f[0].message.contains(part), "{part}: {}", f[0].message);
    }
    assert!(f[0].help.contains("lifeguard.dev/cold-start-seconds"), "{}", f[0].help);
    // Covering gpuBootSeconds, or declaring the measurement, ends it.
    // 60 checks restart at 590 s, before the 600 s boot; 61 at 600 s.
    assert_eq!(check(&RULE, &server(json!({"tcpSocket": {"port": 8000}, "failureThreshold": 60}))).len(), 1);
    assert!(check(&RULE, &server(json!({"tcpSocket": {"port": 8000}, "failureThreshold": 61}))).is_empty());
    let mut declared = obj.clone();
    declared["spec"]["template"]["metadata"]["annotations"] = json!({"lifeguard.dev/cold-start-seconds": "120"});
    assert!(check(&RULE, &declared).is_empty());
    // Not a model server: no guess.
    assert!(check(&RULE, &one_container(startup(10, 3))).is_empty());
}

#[test]
fn sidecar_startup_probe_is_not_held_to_the_app_cold_start() {
    let mut obj = annotated("430", startup(10, 48));
    obj["spec"]["template"]["spec"]["initContainers"] = json!([{
        "name": "proxy", "image": "envoy", "restartPolicy": "Always",
        "startupProbe": {"tcpSocket": {"port": 15000}}
    }]);
    assert!(check(&RULE, &obj).is_empty());
}
