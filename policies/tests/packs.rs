//! The built-in packs, inheritance with single-value overrides, and the
//! effective policy written back as a file.

mod common;

use common::{policy, report, tags};
use policies::policy::PACKS;
use policies::yaml::to_yaml;
use policies::{Policy, Severity};
use serde_json::{Value, json};

#[test]
fn every_pack_loads_and_the_default_pack_is_the_default_policy() {
    for pack in PACKS {
        let p = Policy::pack(pack.name).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.name(), Some(pack.name));
    }
    let pack = Policy::pack("default").expect("default pack");
    let built_in = Policy::default();
    assert_eq!(pack.settings, built_in.settings);
    assert_eq!(pack.deny_severity, built_in.deny_severity);
    assert_eq!(pack.to_file().rules, built_in.to_file().rules);
    assert!(Policy::pack("nope").is_err());
}

#[test]
fn strict_extends_default_and_overrides_single_values() {
    let strict = Policy::pack("strict").expect("strict");
    assert_eq!(strict.deny_severity, Severity::Warning);
    assert_eq!(strict.settings.min_liveness_budget_seconds, 15);
    // Untouched values come from the default pack.
    assert_eq!(strict.settings.gpu_boot_seconds, Policy::default().settings.gpu_boot_seconds);
    assert_eq!(strict.severity_override("readiness-probe-missing"), Some(Severity::Error));
}

#[test]
fn a_file_extends_a_pack_and_overrides_single_values() {
    let p = policy(
        "extends: gpu-serving\nparameters:\n  gpuBootSeconds: 1200\nrules:\n  readiness-port-only: {enabled: false}\n",
    );
    let pack = Policy::pack("gpu-serving").expect("pack");
    assert_eq!(p.settings.gpu_boot_seconds, 1200);
    assert_eq!(p.settings.cold_start_margin_percent, pack.settings.cold_start_margin_percent);
    assert!(p.settings.require_startup_probe_for_gpu);
    assert_eq!(p.settings.model_server_drain_seconds, 120);
    assert!(!p.is_enabled("readiness-port-only"));
    // The pack's severity for the same rule survives the override of `enabled`.
    assert_eq!(p.severity_override("readiness-port-only"), Some(Severity::Error));
    assert_eq!(p.severity_override("startup-probe-missing"), Some(Severity::Error));
    assert_eq!(p.name(), None, "metadata is the file's own");
}

#[test]
fn a_file_without_extends_starts_from_default() {
    let p = policy("parameters:\n  gpuBootSeconds: 60\n");
    let defaults = Policy::default().settings;
    assert_eq!(p.settings.gpu_boot_seconds, 60);
    assert_eq!(p.settings.dependency_paths, defaults.dependency_paths);
    assert_eq!(p.deny_severity, Severity::Error);
}

#[test]
fn the_effective_policy_loads_back_to_the_same_policy() {
    let user = policy(
        "extends: strict\nmetadata: {name: web-fleet}\ndenySeverity: error\nparameters:\n  slowBootImages: ['^corp/ml-']\nrules:\n  exec-probe: {enabled: false}\nexemptions:\n- reason: mesh\n  containers: [istio-proxy]\n  selector: {matchExpressions: [{key: app, operator: Exists}]}\ncustomRules:\n- name: team-label\n  severity: info\n  message: 'no team: {value}'\n  scope: object\n  path: $.metadata.labels.team\n  when: absent\n",
    );
    let mut all: Vec<Policy> = PACKS.iter().map(|p| Policy::pack(p.name).expect("pack")).collect();
    all.push(user);
    for p in all {
        let file = serde_json::to_value(p.to_file()).expect("serializes");
        let again = Policy::load(&to_yaml(&file), "shown.yaml").unwrap_or_else(|e| panic!("{e}\n{}", to_yaml(&file)));
        assert_eq!(again.to_file(), p.to_file());
    }
}

fn gpu_server(containers: Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "llm", "namespace": "ml"},
        "spec": {"template": {"metadata": {"labels": {"app": "llm"}}, "spec": {"containers": containers}}}
    })
}

#[test]
fn gpu_serving_requires_a_startup_probe_and_a_drain_for_gpu_containers() {
    let obj = gpu_server(json!([{
        "name": "vllm", "image": "vllm/vllm-openai:v0.6.0",
        "resources": {"limits": {"nvidia.com/gpu": 1}},
        "readinessProbe": {"httpGet": {"path": "/health", "port": 8000}}
    }]));
    assert!(report(&obj, &Policy::default()).findings.is_empty());
    let r = report(&obj, &Policy::pack("gpu-serving").expect("pack"));
    assert_eq!(tags(&r.findings), ["startup-probe-missing@vllm", "grace-period-too-short@vllm"]);
    assert!(r.findings.iter().all(|f| f.severity == Severity::Error));
    assert!(r.findings[1].message.contains("drain 120s"), "{}", r.findings[1].message);
}

#[test]
fn gpu_serving_makes_port_only_readiness_an_error() {
    let obj = gpu_server(json!([{
        "name": "tgi", "image": "ghcr.io/huggingface/text-generation-inference:2.0",
        "ports": [{"containerPort": 80}],
        "startupProbe": {"httpGet": {"path": "/health", "port": 80}, "failureThreshold": 120, "periodSeconds": 10},
        "readinessProbe": {"tcpSocket": {"port": 80}}
    }]));
    let default = report(&obj, &Policy::default());
    let port_only =
        |r: &policies::ObjectReport| r.findings.iter().find(|f| f.rule == "readiness-port-only").map(|f| f.severity);
    assert_eq!(port_only(&default), Some(Severity::Warning));
    let gpu = report(&obj, &Policy::pack("gpu-serving").expect("pack"));
    assert_eq!(port_only(&gpu), Some(Severity::Error));
}

#[test]
fn gpu_serving_bridges_a_model_server_behind_a_service() {
    let obj = gpu_server(json!([{
        "name": "vllm", "image": "vllm/vllm-openai:v0.6.0",
        "ports": [{"name": "http", "containerPort": 8000}],
        "startupProbe": {"httpGet": {"path": "/health", "port": 8000}, "failureThreshold": 90, "periodSeconds": 10},
        "readinessProbe": {"httpGet": {"path": "/health", "port": 8000}}
    }]));
    let svc = json!({"kind": "Service", "metadata": {"name": "llm", "namespace": "ml"},
                     "spec": {"selector": {"app": "llm"}, "ports": [{"port": 80, "targetPort": "http"}]}});
    let batch = policies::Batch::from_objects([&svc]);
    let lint = |p: &Policy| policies::lint_object(&obj, &batch, p).expect("reads").expect("a pod").findings;
    assert!(lint(&Policy::default()).iter().all(|f| f.rule != "prestop-bridge-missing"));
    let gpu = Policy::pack("gpu-serving").expect("pack");
    let found = lint(&gpu);
    let bridge = found.iter().find(|f| f.rule == "prestop-bridge-missing").expect("a bridge finding");
    assert_eq!(bridge.severity, Severity::Info);
    // The bridge comes before the assumed 120 s drain: 5 + 120 + 5.
    let plan = policies::plan_fixes(&obj, &batch, &gpu, None).expect("reads").expect("a pod");
    let fixed = plan.fixed.expect("fixed");
    assert_eq!(fixed["spec"]["template"]["spec"]["terminationGracePeriodSeconds"], 130);
    assert_eq!(
        fixed["spec"]["template"]["spec"]["containers"][0]["lifecycle"],
        json!({"preStop": {"sleep": {"seconds": 5}}})
    );
}
