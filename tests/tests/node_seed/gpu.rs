//! Seed 000: the naive model server and lifeguard's fix, on the kubelet.

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

use std::time::Duration;

use lifeguard_e2e::cluster::Installation;
use lifeguard_e2e::cluster::node::Node;
use lifeguard_e2e::cluster::pods::{PodWatch, Seen, now_ms, workload_container, workload_pod_spec};
use lifeguard_e2e::cluster::process::free_port;
use lifeguard_e2e::support::deployment::Deployment;
use serde_json::{Value, json};

use crate::{lifeguard_on, pod_of};

/// The model server's boot: the seed's 430 s scaled down to keep the test
/// in minutes, still longer than liveness's 30 s window.
const BOOT_SECONDS: u64 = 40;

/// The naive Deployment: the test workload booting for [`BOOT_SECONDS`]
/// (its port closed until then, as a server loading weights), liveness and
/// readiness on the same `/healthz`, the kubelet's default thresholds, and
/// the cold start declared as the seed says to.
fn naive(name: &str, port: u16) -> Value {
    let mut container = workload_container("server", port, &[("BOOT_SECONDS", BOOT_SECONDS.to_string())]);
    let probe = json!({"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 10});
    container["livenessProbe"] = probe.clone();
    container["readinessProbe"] = probe;
    Deployment::new(name)
        .labelled()
        .replicas(1)
        .template_annotations(json!({"lifeguard.dev/cold-start-seconds": BOOT_SECONDS.to_string()}))
        .pod_spec(workload_pod_spec(container))
        .build()
}

/// `lifeguard simulate --format json --scenario boot` on `object` (the
/// declared cold start): the verdict and the message.
fn simulate_boot(object: &Value) -> (String, String) {
    let out = lifeguard_on(&["simulate", "--format", "json", "--scenario", "boot", "-"], object);
    let results: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("simulate: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    let result = &results[0];
    (
        result["verdict"].as_str().unwrap_or_default().to_owned(),
        result["message"].as_str().unwrap_or_default().to_owned(),
    )
}

/// `lifeguard fix -` on `object`.
fn lifeguard_fix(object: &Value) -> Value {
    let out = lifeguard_on(&["fix", "-"], object);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Exit 1: a finding remains without an automatic fix (the shared
    // handler, probe-endpoint-reused); the startup probe was added.
    assert!(
        matches!(out.status.code(), Some(0 | 1)) && stderr.contains("1 fix applied"),
        "lifeguard fix: {stderr}{stdout}"
    );
    // Read back as kubectl reads what a user applies.
    let node = Node::shared().expect("the node");
    let mut fixed = node
        .plane
        .kubectl
        .run_with_input(&["create", "--dry-run=client", "-o", "json", "-f", "-"], Some(&stdout))
        .json();
    // The client fills in its context's namespace; the test creates it in its own.
    fixed["metadata"].as_object_mut().map(|m| m.remove("namespace"));
    fixed
}

#[test]
fn the_naive_model_server_boot_loops_and_lifeguards_fix_makes_it_ready_with_no_restart() {
    let Some(node) = Node::shared() else { return };
    let plane = node.plane;
    let Some(_webhook) = Installation::install(plane, &["certManager.enabled=false"]) else { return };
    let kubectl = &plane.kubectl;
    let ns = "seed-gpu";
    kubectl.namespace(ns, &[]);
    let mutate_ns = "seed-gpu-mutate";
    kubectl.namespace(mutate_ns, &["lifeguard.dev/mutate=true"]);
    let watch = PodWatch::start(node, ns);
    let mutate_watch = PodWatch::start(node, mutate_ns);

    let naive_object = naive("naive", free_port());
    let fixed_object = lifeguard_fix(&naive("fixed", free_port()));
    let startup = &fixed_object["spec"]["template"]["spec"]["containers"][0]["startupProbe"];
    assert_eq!(startup["httpGet"]["path"], "/healthz", "the fix reuses the liveness handler: {fixed_object:#}");
    // What lifeguard says before the kubelet shows it.
    let (verdict, message) = simulate_boot(&naive_object);
    assert_eq!(verdict, "boot-loop", "{message}");
    let (verdict, message) = simulate_boot(&fixed_object);
    assert_eq!(verdict, "ok", "{message}");
    let created = now_ms();
    kubectl.run_with_input(&["create", "-n", ns, "-f", "-"], Some(&naive_object.to_string())).ok();
    kubectl.run_with_input(&["create", "-n", ns, "-f", "-"], Some(&fixed_object.to_string())).ok();
    kubectl
        .run_with_input(&["create", "-n", mutate_ns, "-f", "-"], Some(&naive("mutated", free_port()).to_string()))
        .ok();
    let stored = kubectl.get(mutate_ns, "deployment", "mutated").expect("stored");
    assert_eq!(stored["metadata"]["annotations"]["lifeguard.dev/mutated"], "startup-probe-missing");

    let limit = Duration::from_secs(150);
    let naive_pod = pod_of(node, ns, "naive");
    let fixed_pod = pod_of(node, ns, "fixed");
    let mutated_pod = pod_of(node, mutate_ns, "mutated");
    let ready = |seen: &[(u64, Seen)]| seen.iter().any(|(_, s)| s.ready);
    let fixed_seen = watch.until(&fixed_pod, limit, ready);
    let mutated_seen = mutate_watch.until(&mutated_pod, limit, ready);
    let naive_seen = watch
        .until(&naive_pod, limit, |seen| seen.iter().any(|(_, s)| s.waiting.as_deref() == Some("CrashLoopBackOff")));
    let secs = |t: u64| t.saturating_sub(created) as f64 / 1000.0;
    let show = |seen: &[(u64, Seen)]| {
        seen.iter().map(|(t, s)| format!("{:6.1} s {s:?}", secs(*t))).collect::<Vec<_>>().join("\n")
    };
    eprintln!("naive:\n{}\nfixed:\n{}\nmutated:\n{}", show(&naive_seen), show(&fixed_seen), show(&mutated_seen));

    assert!(naive_seen.iter().all(|(_, s)| !s.ready), "the naive server is never Ready:\n{}", show(&naive_seen));
    let restarts = naive_seen.last().map(|(_, s)| s.restarts).unwrap_or(0);
    assert!(restarts >= 2, "restarted before it ever answered, again and again:\n{}", show(&naive_seen));
    assert!(
        naive_seen.iter().any(|(_, s)| s.waiting.as_deref() == Some("CrashLoopBackOff")),
        "the kubelet backs off:\n{}",
        show(&naive_seen)
    );
    for (what, seen) in [("fixed", &fixed_seen), ("mutated", &mutated_seen)] {
        let (ready_at, ready) = seen.iter().find(|(_, s)| s.ready).unwrap_or_else(|| panic!("{what} never Ready"));
        assert_eq!(ready.restarts, 0, "{what}: Ready with no restart:\n{}", show(seen));
        let ready_at = secs(*ready_at);
        assert!(ready_at >= BOOT_SECONDS as f64, "{what}: Ready once the workload answers, at {ready_at} s");
        eprintln!("{what}: Ready {ready_at:.1} s after creation, restartCount {}", ready.restarts);
    }
}
