//! `startup-probe-missing`'s unit tests: the check and the fix on objects built in place
//! (the fixtures' cases are `fixtures/`, linted by `lint/tests/rule_fixtures.rs`).

use serde_json::{Value, json};

use super::{RULE, image_name};
use crate::finding::{Finding, Severity};
use crate::rules::startup_budget_too_short;
use crate::rules::testing::{check, names, one_container};

fn with_cold(mut obj: Value, cold: &str) -> Value {
    obj["spec"]["template"]["metadata"]["annotations"] = json!({"lifeguard.dev/cold-start-seconds": cold});
    obj
}

/// The single finding, whose message must contain `part`.
fn one(obj: &Value, part: &str) -> Finding {
    let mut f = check(&RULE, obj);
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(f[0].message.contains(part), "{part}: {}", f[0].message);
    f.remove(0)
}

/// Applies the fix and returns the fixed container.
fn apply(obj: &mut Value) -> Value {
    let fix = one(obj, "").fix.expect("fix");
    json_patch::patch(obj, &fix.operations).expect("patch applies");
    assert!(check(&RULE, obj).is_empty(), "fix leaves a finding");
    obj["spec"]["template"]["spec"]["containers"][0].clone()
}

#[test]
fn long_initial_delay_is_a_warning_and_fix_moves_it_to_startup() {
    let mut obj = one_container(json!({
        "ports": [{"name": "http", "containerPort": 8080}],
        "livenessProbe": {
            "httpGet": {"path": "/livez", "port": "http"},
            "initialDelaySeconds": 120, "timeoutSeconds": 3, "failureThreshold": 3
        }
    }));
    let f = one(&obj, "liveness initialDelaySeconds 120 (more than 30) stands in for a startup probe");
    assert!(f.message.contains("a boot still running at 140s is restarted"), "{}", f.message);
    assert!(f.message.contains("nothing for the first 120s of every start"), "{}", f.message);
    assert!(!f.message.contains("slow"), "a delay alone is not a slow boot: {}", f.message);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(f.pointer, "/spec/template/spec/containers/0/livenessProbe");
    let c = apply(&mut obj);
    // Liveness restarts at 120 + 2 x 10 = 140 s; 15 checks of 10 s restart at 140 s too.
    assert_eq!(
        c["startupProbe"],
        json!({
            "httpGet": {"path": "/livez", "port": "http"},
            "timeoutSeconds": 3, "periodSeconds": 10, "failureThreshold": 15
        })
    );
    // Left as written: beside the startup probe it only postpones liveness (see the doc).
    assert_eq!(c["livenessProbe"]["initialDelaySeconds"], json!(120));
    assert_eq!(c["livenessProbe"]["timeoutSeconds"], json!(3));
}

#[test]
fn gpu_is_an_error_and_gets_the_gpu_boot_budget() {
    let mut obj = one_container(json!({
        "resources": {"limits": {"nvidia.com/gpu": "1"}},
        "livenessProbe": {"tcpSocket": {"port": 8000}}
    }));
    let f = one(&obj, "requests nvidia.com/gpu");
    assert_eq!(f.severity, Severity::Error);
    let ops = f.fix.expect("fix").operations;
    assert_eq!(ops.len(), 1, "the startup probe alone");
    let c = apply(&mut obj);
    assert_eq!(c["startupProbe"]["tcpSocket"], json!({"port": 8000}));
    // 600 s + 10% = 660 s, and a period to spare: 67 checks, restarting at 660 s.
    assert_eq!(c["startupProbe"]["failureThreshold"], json!(67));
    assert!(c["startupProbe"].get("timeoutSeconds").is_none());
    assert!(c["livenessProbe"].get("initialDelaySeconds").is_none());
}

/// The policy's GPU requirement is a sentence whose subject is the
/// container; the short form names it as every other does.
#[test]
fn a_required_gpu_startup_probe_names_the_container_as_its_subject() {
    let obj = one_container(json!({"resources": {"limits": {"nvidia.com/gpu": "1"}}}));
    let settings = crate::settings::Settings { require_startup_probe_for_gpu: true, ..Default::default() };
    let policy = crate::policy::Policy::new(settings).expect("valid");
    let f = crate::rules::testing::check_with(&RULE, &obj, &policy, &crate::model::Batch::default());
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(
        f[0].located_message(),
        "container \"app\" requests nvidia.com/gpu but has no startup probe; the policy requires one for GPU containers (requireStartupProbeForGpu)"
    );
    assert_eq!(f[0].located_short(), "container \"app\": GPU but no startup probe, which the policy requires; add one");
}

#[test]
fn model_server_image_is_named() {
    let obj = one_container(json!({
        "image": "vllm/vllm-openai:v0.6.0",
        "livenessProbe": {"httpGet": {"path": "/health", "port": 8000}}
    }));
    // Liveness restarts at 20 s the 600 s boot simulate assumes for it.
    let f = one(&obj, "image vllm/vllm-openai looks like a model server");
    assert_eq!(f.severity, Severity::Error);
    assert!(f.message.contains("liveness restarts it at 20s, before the 600s boot ends"), "{}", f.message);
    // A liveness delay that waits the boot out: only a stand-in, a warning.
    let waits = one_container(json!({
        "image": "vllm/vllm-openai:v0.6.0",
        "livenessProbe": {"httpGet": {"path": "/health", "port": 8000}, "initialDelaySeconds": 600}
    }));
    assert_eq!(one(&waits, "looks like a model server").severity, Severity::Warning);
}

#[test]
fn worked_example_declared_cold_start_gives_49() {
    let live = json!({"grpc": {"port": 9000, "service": "live"}, "initialDelaySeconds": 10});
    let mut obj = with_cold(one_container(json!({"livenessProbe": live})), "430");
    one(&obj, "declared cold start 430s");
    let c = apply(&mut obj);
    assert_eq!(
        c["startupProbe"],
        json!({"grpc": {"port": 9000, "service": "live"}, "periodSeconds": 10, "failureThreshold": 49})
    );
    assert_eq!(c["livenessProbe"]["initialDelaySeconds"], json!(10));
    let after = check(&startup_budget_too_short::RULE, &obj);
    assert!(names(&after).is_empty(), "{:?}", names(&after));
}

#[test]
fn a_declared_cold_start_sizes_the_budget_not_the_gpu_default() {
    let gpu = |cold: &str| {
        with_cold(
            one_container(json!({
                "resources": {"requests": {"amd.com/gpu": 1}},
                "livenessProbe": {"exec": {"command": ["/bin/check"]}}
            })),
            cold,
        )
    };
    // 120 s + 10% = 132 s: 15 checks (restart at 140 s), although gpuBootSeconds is 600 s.
    assert_eq!(apply(&mut gpu("2m"))["startupProbe"]["failureThreshold"], json!(15));
    // 900 s + 10% = 990 s is above it: 100 checks.
    assert_eq!(apply(&mut gpu("900"))["startupProbe"]["failureThreshold"], json!(100));
}

#[test]
fn short_cold_start_covered_by_liveness_is_not_evidence() {
    let obj = one_container(json!({"livenessProbe": {"httpGet": {"path": "/livez", "port": 8080}}}));
    assert!(check(&RULE, &with_cold(obj.clone(), "20")).is_empty());
    // 28 s + 10% = 31 s > 30 s of default liveness: the boot can be killed.
    one(&with_cold(obj, "28"), "declared cold start 28s");
}

#[test]
fn no_valid_handler_means_no_fix() {
    for live in [
        json!({"httpGet": {"path": "/", "port": 80}, "tcpSocket": {"port": 80}, "initialDelaySeconds": 60}),
        json!({"initialDelaySeconds": 60}),
    ] {
        let obj = one_container(json!({"livenessProbe": live}));
        assert!(one(&obj, "initialDelaySeconds 60").fix.is_none());
    }
}

#[test]
fn not_findings() {
    for fields in [
        // No liveness probe at all.
        json!({
            "image": "nvcr.io/nvidia/tritonserver:24.05-py3",
            "resources": {"limits": {"nvidia.com/gpu": 1}},
            "readinessProbe": {"httpGet": {"path": "/v2/health/ready", "port": 8000}}
        }),
        // Startup probe present.
        json!({
            "resources": {"limits": {"nvidia.com/gpu": 1}},
            "startupProbe": {"httpGet": {"path": "/livez", "port": 8080}, "failureThreshold": 60},
            "livenessProbe": {"httpGet": {"path": "/livez", "port": 8080}, "initialDelaySeconds": 120}
        }),
        // Fast boot.
        json!({
            "image": "nginx:1.27",
            "resources": {"limits": {"nvidia.com/gpu": 0, "cpu": "1"}},
            "livenessProbe": {"httpGet": {"path": "/", "port": 80}, "initialDelaySeconds": 10}
        }),
    ] {
        assert!(check(&RULE, &one_container(fields.clone())).is_empty(), "{fields}");
    }
}

#[test]
fn model_server_controllers_are_not_model_servers() {
    let live = json!({"httpGet": {"path": "/healthz", "port": 8081}});
    for image in
        ["kserve/kserve-controller:v0.15.0", "kserve/models-web-app:v0.14.0", "seldonio/seldon-core-operator:1.18"]
    {
        let obj = one_container(json!({"image": image, "livenessProbe": live}));
        assert!(check(&RULE, &obj).is_empty(), "{image}");
    }
    let obj = one_container(json!({"image": "kserve/huggingfaceserver:v0.15.0", "livenessProbe": live}));
    one(&obj, "kserve/huggingfaceserver looks like a model server");
}

#[test]
fn the_tutorial_delay_of_30s_is_not_a_finding() {
    let live = json!({"httpGet": {"path": "/livez", "port": 8080}, "initialDelaySeconds": 30});
    assert!(check(&RULE, &one_container(json!({"livenessProbe": live}))).is_empty());
}

#[test]
fn the_fix_never_restarts_a_boot_earlier_than_liveness_did() {
    // Liveness 30 + 3 x 3 restarts at 36 s. 4 checks of 10 s would cover
    // the nominal 39 s (and the declared 30 s + 10%) but restart at 30 s,
    // looping a boot of 31-36 s that used to pass; 5 restart at 40 s.
    let live = json!({"tcpSocket": {"port": 8080}, "initialDelaySeconds": 30, "periodSeconds": 3});
    let mut obj = with_cold(one_container(json!({"livenessProbe": live})), "30");
    assert_eq!(apply(&mut obj)["startupProbe"]["failureThreshold"], json!(5));
    // A liveness period longer than the startup period: 0 + 3 x 60 restarts
    // at 120 s, and so do 13 checks of 10 s.
    let mut obj = one_container(json!({
        "resources": {"limits": {"nvidia.com/gpu": 1}},
        "livenessProbe": {"tcpSocket": {"port": 8080}, "periodSeconds": 60}
    }));
    let live = with_cold(obj.clone(), "60");
    assert_eq!(apply(&mut live.clone())["startupProbe"]["failureThreshold"], json!(13));
    assert_eq!(apply(&mut obj)["startupProbe"]["failureThreshold"], json!(67));
}

#[test]
fn liveness_thresholds_stretched_into_a_boot_budget_move_into_the_startup_probe() {
    let mut obj = one_container(json!({"livenessProbe": {
        "httpGet": {"path": "/livez", "port": 8080}, "periodSeconds": 5, "failureThreshold": 240
    }}));
    one(&obj, "liveness failureThreshold 240 x periodSeconds 5 = 1200s (more than 600) stands in");
    let c = apply(&mut obj);
    // Liveness restarted at 239 x 5 = 1195 s: 121 checks of 10 s restart at 1200 s.
    assert_eq!(c["startupProbe"]["failureThreshold"], json!(121));
    assert_eq!(c["livenessProbe"]["failureThreshold"], json!(3));
    assert!(check(&crate::rules::probe_window_too_long::RULE, &obj).is_empty());
}

#[test]
fn an_organisation_or_a_sleeping_toolbox_is_not_a_model_server() {
    let live = json!({"httpGet": {"path": "/healthz", "port": 8080}});
    let router =
        one_container(json!({"image": "ghcr.io/vllm-project/semantic-router/extproc:v0.1", "livenessProbe": live}));
    assert!(check(&RULE, &router).is_empty());
    let toolbox = one_container(json!({
        "image": "vllm/vllm-openai:v0.6.3", "command": ["sleep", "infinity"], "livenessProbe": live
    }));
    assert!(check(&RULE, &toolbox).is_empty());
}

#[test]
fn image_names_drop_tag_and_digest() {
    assert_eq!(image_name("vllm/vllm-openai:v0.6.0"), "vllm/vllm-openai");
    assert_eq!(image_name("registry:5000/triton"), "registry:5000/triton");
    assert_eq!(image_name("a/b@sha256:abc"), "a/b");
}
