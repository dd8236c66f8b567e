use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{ALERT_NAME, PART_LIMIT_BYTES, WorkloadAlert, prometheus_rules, workload_alert};
use crate::model::Workload;
use crate::{Batch, Policy, Settings, plan_fixes};

fn policy() -> Policy {
    Policy::new(Settings::default()).expect("the default policy")
}

fn deployment(namespace: Option<&str>, containers: Value) -> Value {
    let mut metadata = json!({"name": "web"});
    if let Some(ns) = namespace {
        metadata["namespace"] = json!(ns);
    }
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata,
        "spec": {"template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": containers}}},
    })
}

fn alert_of(object: &Value, policy: &Policy, namespace: Option<&str>) -> Result<WorkloadAlert, super::NotAlerted> {
    let w = Workload::from_object(object).expect("readable").expect("a workload");
    workload_alert(&w, policy, namespace)
}

fn gpu_server() -> Value {
    json!({
        "name": "vllm", "image": "vllm/vllm-openai:v0.6.0",
        "resources": {"limits": {"nvidia.com/gpu": "1"}},
        "livenessProbe": {"httpGet": {"path": "/health", "port": 8000}, "periodSeconds": 10},
    })
}

#[test]
fn a_model_server_without_a_startup_probe_waits_its_assumed_boot_and_margin() {
    let a = alert_of(&deployment(Some("ml"), json!([gpu_server()])), &policy(), None).expect("an alert");
    // gpuBootSeconds 600 + coldStartMarginPercent 10.
    assert_eq!(a.startup.seconds, 660);
    assert_eq!(a.for_seconds, 660);
    assert_eq!(a.rule["for"], "11m");
    assert_eq!(a.rule["labels"]["lifeguard_objective"], "startup");
    assert_eq!(a.rule["labels"]["lifeguard_workload"], "Deployment/ml/web");
    assert_eq!(a.rule["alert"], ALERT_NAME);
    let description = a.rule["annotations"]["description"].as_str().unwrap_or_default();
    assert!(
        description.contains("boot 600s (gpuBootSeconds for a model server, requests nvidia.com/gpu) + 10%"),
        "{description}"
    );
}

#[test]
fn the_fixed_model_server_alerts_within_one_startup_period_of_the_manifest_as_written() {
    // One story: the startup probe `fix` adds is sized to the same boot plus
    // margin, with at most one period of the kubelet's grid to spare.
    let object = deployment(Some("ml"), json!([gpu_server()]));
    let policy = policy();
    let before = alert_of(&object, &policy, None).expect("an alert");
    let plan = plan_fixes(&object, &Batch::from_objects([&object]), &policy, None).expect("fixable").expect("a plan");
    let fixed = plan.fixed.expect("the fixed object");
    let after = alert_of(&fixed, &policy, None).expect("an alert");
    let period = policy.settings.startup_period_seconds;
    assert!(after.for_seconds >= before.for_seconds, "{} < {}", after.for_seconds, before.for_seconds);
    assert!(
        after.for_seconds <= before.for_seconds + period,
        "{} > {} + {period}",
        after.for_seconds,
        before.for_seconds
    );
}

#[test]
fn a_startup_probe_longer_than_the_boot_decides() {
    let mut server = gpu_server();
    server["startupProbe"] =
        json!({"httpGet": {"path": "/health", "port": 8000}, "periodSeconds": 10, "failureThreshold": 90});
    let a = alert_of(&deployment(Some("ml"), json!([server])), &policy(), None).expect("an alert");
    assert_eq!(a.for_seconds, 900);
    assert!(a.startup.parts[0].because.starts_with("startup probe allows 900s"), "{:?}", a.startup);
}

#[test]
fn a_quick_app_is_held_to_the_recovery_objective() {
    let app = json!({"name": "app", "image": "shop:1", "readinessProbe": {"httpGet": {"path": "/readyz", "port": 80}, "initialDelaySeconds": 5}});
    let a = alert_of(&deployment(Some("shop"), json!([app])), &policy(), None).expect("an alert");
    assert_eq!(a.startup.seconds, 5);
    assert_eq!(a.for_seconds, 300);
    assert_eq!(a.rule["labels"]["lifeguard_objective"], "recovery");
}

#[test]
fn native_sidecars_start_first_one_at_a_time() {
    let proxy = |name: &str, failures: i64| {
        json!({"name": name, "image": "proxy:1", "restartPolicy": "Always",
               "startupProbe": {"tcpSocket": {"port": 15000}, "periodSeconds": 10, "failureThreshold": failures}})
    };
    let mut object = deployment(Some("ml"), json!([gpu_server()]));
    object["spec"]["template"]["spec"]["initContainers"] = json!([proxy("a", 3), proxy("b", 6)]);
    let a = alert_of(&object, &policy(), None).expect("an alert");
    assert_eq!(a.startup.seconds, 30 + 60 + 660);
    let names: Vec<&str> = a.startup.parts.iter().map(|p| p.container.as_str()).collect();
    assert_eq!(names, ["a", "b", "vllm"]);
}

#[test]
fn the_namespace_comes_from_the_object_then_the_caller_else_every_one_is_matched() {
    let object = deployment(None, json!([gpu_server()]));
    let given = alert_of(&object, &policy(), Some("prod")).expect("an alert");
    assert!(given.rule["expr"].as_str().unwrap_or_default().contains(r#"namespace="prod""#));
    assert_eq!(given.workload, "Deployment/prod/web");
    let own = alert_of(&deployment(Some("ml"), json!([gpu_server()])), &policy(), Some("prod")).expect("an alert");
    assert!(own.rule["expr"].as_str().unwrap_or_default().contains(r#"namespace="ml""#));
    let none = alert_of(&object, &policy(), None).expect("an alert");
    assert!(!none.rule["expr"].as_str().unwrap_or_default().contains("namespace="));
    assert!(none.rule["annotations"]["description"].as_str().unwrap_or_default().contains("in every namespace"));
}

#[test]
fn the_policy_names_severity_and_labels() {
    let labels: BTreeMap<String, String> = [("team".to_owned(), "ml".to_owned())].into();
    let settings = Settings {
        alert_severity: "critical".into(),
        alert_labels: labels,
        alert_recovery_seconds: 60,
        ..Settings::default()
    };
    let policy = Policy::new(settings).expect("valid");
    let app = json!({"name": "app", "image": "shop:1"});
    let a = alert_of(&deployment(Some("shop"), json!([app])), &policy, None).expect("an alert");
    assert_eq!(a.rule["labels"]["severity"], "critical");
    assert_eq!(a.rule["labels"]["team"], "ml");
    assert_eq!(a.rule["for"], "1m");
}

#[test]
fn what_is_not_alerted_says_why() {
    let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "migrate"},
                     "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "m", "image": "m:1"}]}}}});
    assert!(alert_of(&job, &policy(), None).expect_err("no alert").why.contains("runs to completion"));
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "once"},
                     "spec": {"restartPolicy": "Never", "containers": [{"name": "m", "image": "m:1"}]}});
    assert!(alert_of(&pod, &policy(), None).expect_err("no alert").why.contains("restartPolicy"));
    let rollout = json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "metadata": {"name": "r"},
                         "spec": {"template": {"spec": {"containers": [{"name": "m", "image": "m:1"}]}}}});
    assert!(
        alert_of(&rollout, &policy(), None)
            .expect_err("no alert")
            .why
            .contains("its operator creates and owns its pods")
    );
    let unnamed = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {},
                         "spec": {"template": {"spec": {"containers": [{"name": "m", "image": "m:1"}]}}}});
    assert!(alert_of(&unnamed, &policy(), None).expect_err("no alert").why.contains("metadata.name"));
}

#[test]
fn a_statefulset_and_a_bare_pod_are_found_by_owner_and_by_name() {
    let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "d"},
                     "spec": {"template": {"spec": {"containers": [{"name": "m", "image": "m:1"}]}}}});
    let expr = alert_of(&sts, &policy(), None).expect("an alert").rule["expr"].as_str().unwrap_or_default().to_owned();
    assert!(expr.contains(r#"kube_pod_owner{namespace="d", owner_kind="StatefulSet", owner_name="db"}"#), "{expr}");
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d"},
                     "spec": {"containers": [{"name": "m", "image": "m:1"}]}});
    let expr = alert_of(&pod, &policy(), None).expect("an alert").rule["expr"].as_str().unwrap_or_default().to_owned();
    assert!(expr.contains(r#"pod="p""#) && !expr.contains("kube_pod_owner"), "{expr}");
}

#[test]
fn many_workloads_are_split_into_parts_that_a_client_side_apply_keeps() {
    let alert = alert_of(&deployment(Some("ml"), json!([gpu_server()])), &policy(), None).expect("an alert");
    let alerts: Vec<WorkloadAlert> = (0..1000)
        .map(|i| {
            let mut a = alert.clone();
            a.rule["labels"]["lifeguard_workload"] = json!(format!("Deployment/ml/web-{i}"));
            a
        })
        .collect();
    let objects = prometheus_rules("lifeguard-alerts", &alerts);
    assert!(objects.len() > 1, "{} parts", objects.len());
    assert_eq!(objects[0]["metadata"]["name"], "lifeguard-alerts");
    assert_eq!(objects[1]["metadata"]["name"], "lifeguard-alerts-2");
    let mut kept = 0;
    for object in &objects {
        let rules = object["spec"]["groups"][0]["rules"].as_array().expect("rules");
        kept += rules.len();
        let bytes: usize = rules.iter().map(|r| r.to_string().len()).sum();
        assert!(bytes <= PART_LIMIT_BYTES, "{bytes}");
        assert_eq!(object["metadata"]["labels"]["lifeguard.dev/export"], "lifeguard-alerts");
    }
    assert_eq!(kept, 1000);
    assert!(prometheus_rules("x", &[]).is_empty());
}

fn lws(leader: bool) -> Value {
    let worker = json!({"spec": {"containers": [{"name": "worker", "image": "example/worker:1"}]}});
    let mut template = json!({"size": 2, "workerTemplate": worker});
    if leader {
        let slow = json!({
            "name": "leader", "image": "example/leader:1",
            "startupProbe": {"httpGet": {"path": "/health", "port": 8000}, "periodSeconds": 10, "failureThreshold": 60},
        });
        template["leaderTemplate"] = json!({"spec": {"containers": [slow]}});
    }
    json!({
        "apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
        "metadata": {"name": "vllm", "namespace": "ml"},
        "spec": {"replicas": 2, "leaderWorkerTemplate": template},
    })
}

#[test]
fn a_leader_worker_set_alerts_its_leaders_and_its_workers_by_their_stateful_sets() {
    let policy = policy();
    let workloads = Workload::all_declared(&lws(true), policy.declared_pod_kinds()).expect("readable");
    let alerts: Vec<WorkloadAlert> =
        super::object_alerts(&workloads, &policy, None).into_iter().map(|a| a.expect("an alert")).collect();
    assert_eq!(alerts.len(), 2);
    let expr = |a: &WorkloadAlert| a.rule["expr"].as_str().unwrap_or_default().to_owned();
    let leader = alerts.iter().find(|a| expr(a).contains(r#"owner_name="vllm"}"#)).expect("the leaders' alert");
    assert!(expr(leader).contains(r#"owner_kind="StatefulSet""#), "{}", expr(leader));
    // The leader's own window: its startup probe's 600 s.
    assert_eq!(leader.for_seconds, 600);
    let workers = alerts.iter().find(|a| expr(a).contains(r#"owner_name=~"vllm-[0-9]+""#)).expect("the workers'");
    assert_eq!(workers.for_seconds, policy.settings.alert_recovery_seconds);
    let summary = workers.rule["annotations"]["summary"].as_str().unwrap_or_default();
    assert!(summary.contains("LeaderWorkerSet/ml/vllm (its worker pods)"), "{summary}");
    // Without a leader template, the leaders run the worker template: one alert for both.
    let workloads = Workload::all_declared(&lws(false), policy.declared_pod_kinds()).expect("readable");
    let one = super::object_alerts(&workloads, &policy, None);
    assert_eq!(one.len(), 1);
    let only = one[0].as_ref().expect("an alert");
    assert!(expr(only).contains(r#"owner_name=~"vllm(-[0-9]+)?""#), "{}", expr(only));
}
