//! Where the export reaches and where it stops: every kind is fixed where
//! its pod spec is; what `--explain` says it leaves as it came (what only
//! the linter reads) is stored unfixed although `lifeguard fix` fixes it;
//! and a pod of 20 containers, each with every carried fix to make, is
//! fixed in full within the API server's CEL cost budget.

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

use lifeguard_e2e::cluster::ControlPlane;
use policies::Policy;
use serde_json::{Value, json};

use crate::TURN;
use crate::expected::{carried_rules, fixed_by_lifeguard, fixed_rules, mutated, touched};
use crate::install::{dry_run_json, install_map, remove_map};
use crate::support::{self, namespace};

fn pod(name: &str, annotations: Value, containers: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "annotations": annotations},
        "spec": {"containers": containers}})
}

#[test]
fn what_only_the_linter_reads_is_left_as_it_came() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    remove_map(plane);
    support::remove(plane);
    let ns = "map-boundaries";
    namespace(plane, ns);
    install_map(plane, "default", ns);
    let policy = Policy::default();
    let liveness = json!({"httpGet": {"path": "/livez", "port": 8000}, "initialDelaySeconds": 120});
    let cases = [
        // A slow-boot image run by a command of its own, no port or GPU: a
        // server or a toolbox's sleep? The startup budget depends on it.
        (
            "startup-probe-missing",
            pod(
                "unsure",
                json!({}),
                json!([{"name": "vllm", "image": "vllm/vllm-openai:v0.6.3",
                "command": ["python3", "-m", "vllm.entrypoints.openai.api_server"], "livenessProbe": liveness}]),
            ),
        ),
        // A cold start of 19 digits: the linter reads it exactly, CEL's int
        // does not (a period long enough for the fix to fit an int32).
        (
            "startup-budget-too-short",
            pod(
                "long-cold-start",
                json!({"lifeguard.dev/cold-start-seconds": "1000000000000000000"}),
                json!([{"name": "app", "image": "example/app:1",
                    "startupProbe": {"httpGet": {"path": "/livez", "port": 8000}, "periodSeconds": 2_000_000_000}}]),
            ),
        ),
        // A pod with a preStop script beyond printable ASCII: its grace
        // period depends on every container's needs.
        (
            "prestop-sleep-only",
            pod(
                "script",
                json!({}),
                json!([{"name": "app", "image": "example/app:1",
                "lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", "sleep 40"]}}}},
                {"name": "side", "image": "example/app:1",
                "lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", "sleep 5; echo d\u{e9}j\u{e0} vu"]}}}}]),
            ),
        ),
    ];
    for (rule, object) in cases {
        assert!(fixed_rules(&object, &policy, None).contains(rule), "{rule}: lifeguard fix fixes it: {object}");
        assert!(!carried_rules(&object, &policy).iter().any(|r| r == rule), "{rule}: documented as left out");
        let stored = dry_run_json(plane, ns, &object).unwrap_or_else(|e| panic!("{rule}: refused: {e}"));
        assert!(!mutated(&stored).contains(rule), "{rule}: {stored:#}");
        eprintln!("{rule}: left as it came ({})", object["metadata"]["name"]);
    }
    remove_map(plane);
}

#[test]
fn a_pod_of_20_containers_is_fixed_in_full_within_the_cost_budget() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    remove_map(plane);
    support::remove(plane);
    let (ns, plain) = ("map-cost", "map-cost-plain");
    namespace(plane, ns);
    namespace(plane, plain);
    install_map(plane, "default", ns);
    // Each container: liveness standing in for a startup probe (a delay of
    // 120 s), a readiness window of 1000 s, and a preStop sleep of 28 s that
    // the default grace period cuts short.
    let containers: Vec<Value> = (0..20)
        .map(|i| {
            json!({"name": format!("c{i}"), "image": "example/app:1",
                "livenessProbe": {"httpGet": {"path": "/livez", "port": 8080 + i}, "initialDelaySeconds": 120},
                "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080 + i}, "failureThreshold": 100},
                "lifecycle": {"preStop": {"exec": {"command": ["/bin/sh", "-c", "sleep 28"]}}}})
        })
        .collect();
    let object = pod("twenty", json!({}), json!(containers));
    let policy = Policy::default();
    let rules = carried_rules(&object, &policy);
    let stored = dry_run_json(plane, ns, &object).unwrap_or_else(|e| panic!("refused: {e}"));
    assert_eq!(mutated(&stored), fixed_rules(&object, &policy, Some(&rules)));
    let want = dry_run_json(plane, plain, &fixed_by_lifeguard(&object, "default", &rules)).expect("the fixed file");
    assert_eq!(touched(&stored), touched(&want));
    eprintln!("20 containers: {:?} fixed", mutated(&stored));
    remove_map(plane);
}

#[test]
fn every_kind_is_fixed_where_its_pod_spec_is() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    remove_map(plane);
    support::remove(plane);
    let (ns, plain) = ("map-kinds", "map-kinds-plain");
    namespace(plane, ns);
    namespace(plane, plain);
    install_map(plane, "default", ns);
    // An ApplyConfiguration (liveness), a JSON Patch (the startup probe, the
    // preStop rewrite) and the pod spec's grace period, on a sidecar too.
    let container = |name: &str| {
        json!({"name": name, "image": "example/app:1",
            "livenessProbe": {"exec": {"command": ["cat", "/tmp/healthy"]}, "initialDelaySeconds": 60,
                "failureThreshold": 1},
            "lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", "sleep 28"]}}}})
    };
    let mut sidecar = container("proxy");
    sidecar["restartPolicy"] = json!("Always");
    let spec = |restart: &str| json!({"restartPolicy": restart, "initContainers": [sidecar.clone()], "containers": [container("app")]});
    let labels = json!({"app": "kinds"});
    let template = |restart: &str| json!({"metadata": {"labels": labels}, "spec": spec(restart)});
    let selector = json!({"matchLabels": labels});
    let objects = [
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pod"}, "spec": spec("Always")}),
        json!({"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "template"}, "template": template("Always")}),
        json!({"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc"},
            "spec": {"selector": labels, "template": template("Always")}}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "deployment"},
            "spec": {"selector": selector, "template": template("Always")}}),
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "statefulset"},
            "spec": {"selector": selector, "serviceName": "kinds", "template": template("Always")}}),
        json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "daemonset"},
            "spec": {"selector": selector, "template": template("Always")}}),
        json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "replicaset"},
            "spec": {"selector": selector, "template": template("Always")}}),
        json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "job"},
            "spec": {"template": {"spec": spec("Never")}}}),
        json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cronjob"},
            "spec": {"schedule": "0 * * * *", "jobTemplate": {"spec": {"template": {"spec": spec("OnFailure")}}}}}),
    ];
    let policy = Policy::default();
    for object in objects {
        let kind = object["kind"].as_str().unwrap_or_default().to_owned();
        let rules = carried_rules(&object, &policy);
        let want_rules = fixed_rules(&object, &policy, Some(&rules));
        assert!(want_rules.len() >= 3, "{kind}: {want_rules:?}");
        let stored = dry_run_json(plane, ns, &object).unwrap_or_else(|e| panic!("{kind}: refused: {e}"));
        assert_eq!(mutated(&stored), want_rules, "{kind}");
        let want = dry_run_json(plane, plain, &fixed_by_lifeguard(&object, "default", &rules))
            .unwrap_or_else(|e| panic!("{kind}: the fixed file is refused: {e}"));
        assert_eq!(touched(&stored), touched(&want), "{kind}");
        eprintln!("{kind}: {want_rules:?}");
    }
    remove_map(plane);
}
