//! `progress-deadline-too-short` on the real Deployment controller: a
//! Deployment whose pod boots for [`BOOT_SECONDS`], within what its startup
//! probe allows, under a progress deadline shorter than that window, is
//! marked `Progressing=False`, reason `ProgressDeadlineExceeded`, while its
//! pod is still booting (the controller then sees the pod Ready and calls
//! the rollout complete after all: the alarm was false). The same
//! Deployment after `lifeguard fix` rolls out with no such condition.

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

use std::time::{Duration, Instant};

use lifeguard_e2e::cluster::node::Node;
use lifeguard_e2e::cluster::pods::{now_ms, workload_container, workload_pod_spec};
use lifeguard_e2e::cluster::process::free_port;
use lifeguard_e2e::support::deployment::Deployment;
use serde_json::{Value, json};

use crate::lifeguard_on;

/// The boot: long enough to outlast the deadline below by several of the
/// controller's syncs, short enough to keep the test under a minute.
const BOOT_SECONDS: u64 = 24;
/// The progress deadline written in the manifest.
const DEADLINE_SECONDS: u64 = 10;

/// The Deployment: the workload booting for [`BOOT_SECONDS`], a startup
/// probe that allows 40 s, readiness on `/readyz`.
fn deployment(name: &str) -> Value {
    let mut container = workload_container("server", free_port(), &[("BOOT_SECONDS", BOOT_SECONDS.to_string())]);
    container["startupProbe"] =
        json!({"httpGet": {"path": "/livez", "port": "http"}, "periodSeconds": 2, "failureThreshold": 20});
    container["readinessProbe"] = json!({"httpGet": {"path": "/readyz", "port": "http"}, "periodSeconds": 2});
    let mut object = Deployment::new(name).labelled().replicas(1).pod_spec(workload_pod_spec(container)).build();
    object["spec"]["progressDeadlineSeconds"] = json!(DEADLINE_SECONDS);
    object
}

/// What the test reads of a Deployment over time.
#[derive(Debug, Default)]
struct Seen {
    /// `(ms since creation, reason)` of each new reason of its `Progressing` condition.
    reasons: Vec<(u64, String)>,
    /// When it first had an available replica (ms since creation).
    available: Option<u64>,
}

/// Polls the Deployments `names` every half second until each has an
/// available replica, for at most `limit`.
fn watch(node: &Node, ns: &str, names: &[&str], created: u64, limit: Duration) -> Vec<Seen> {
    let start = Instant::now();
    let mut seen: Vec<Seen> = names.iter().map(|_| Seen::default()).collect();
    while start.elapsed() < limit && seen.iter().any(|s| s.available.is_none()) {
        for (name, seen) in names.iter().zip(&mut seen) {
            let stored = node.plane.kubectl.get(ns, "deployment", name).unwrap_or(Value::Null);
            let at = now_ms().saturating_sub(created);
            let progressing = stored["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|c| c["type"] == "Progressing")
                .and_then(|c| c["reason"].as_str())
                .map(str::to_owned);
            if let Some(reason) = progressing.filter(|r| seen.reasons.last().is_none_or(|(_, last)| last != r)) {
                seen.reasons.push((at, reason));
            }
            if seen.available.is_none() && stored["status"]["availableReplicas"].as_u64().unwrap_or(0) >= 1 {
                seen.available = Some(at);
            }
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    seen
}

#[test]
fn a_deadline_shorter_than_the_startup_window_fails_a_rollout_that_boots_fine_and_the_fix_does_not() {
    let Some(node) = Node::shared() else { return };
    let kubectl = &node.plane.kubectl;
    let ns = "seed-rollout";
    kubectl.namespace(ns, &[]);
    kubectl.default_service_account(ns);

    let short = deployment("short");
    let lint = lifeguard_on(&["lint", "--format", "json", "-"], &short);
    let findings: Value = serde_json::from_slice(&lint.stdout).expect("lint's JSON");
    let found = findings.as_array().into_iter().flatten().find(|f| f["rule"] == "progress-deadline-too-short");
    let message = found.and_then(|f| f["message"].as_str()).unwrap_or_default().to_owned();
    assert!(
        message.contains("progressDeadlineSeconds 10 is shorter than the pod's startup window, 40s"),
        "{findings:#}"
    );

    // The same Deployment on a port of its own (both run on the node's network).
    let out = lifeguard_on(&["fix", "-"], &deployment("fixed"));
    let mut fixed: Value = node
        .plane
        .kubectl
        .run_with_input(
            &["create", "--dry-run=client", "-o", "json", "-f", "-"],
            Some(&String::from_utf8_lossy(&out.stdout)),
        )
        .json();
    assert_eq!(fixed["spec"]["progressDeadlineSeconds"], 600, "{}", String::from_utf8_lossy(&out.stderr));
    fixed["metadata"].as_object_mut().map(|m| m.remove("namespace"));

    let created = now_ms();
    kubectl.run_with_input(&["create", "-n", ns, "-f", "-"], Some(&short.to_string())).ok();
    kubectl.run_with_input(&["create", "-n", ns, "-f", "-"], Some(&fixed.to_string())).ok();
    let limit = Duration::from_secs(120);
    let [short_seen, fixed_seen]: [Seen; 2] =
        watch(node, ns, &["short", "fixed"], created, limit).try_into().expect("two Deployments watched");
    eprintln!("short: {short_seen:?}");
    eprintln!("fixed: {fixed_seen:?}");

    let exceeded = short_seen.reasons.iter().find(|(_, r)| r == "ProgressDeadlineExceeded").map(|(t, _)| *t);
    let available = short_seen.available.expect("the short-deadline Deployment's pod becomes available");
    let exceeded = exceeded.expect("the controller marks the short-deadline rollout ProgressDeadlineExceeded");
    assert!(
        exceeded < available,
        "exceeded at {exceeded} ms, while the pod still booted (available at {available} ms)"
    );
    assert!(exceeded >= DEADLINE_SECONDS * 1000, "not before the deadline: {exceeded} ms");
    let fixed_available = fixed_seen.available.expect("the fixed Deployment becomes available");
    // It boots as long: past the short deadline, with no alarm.
    assert!(fixed_available > DEADLINE_SECONDS * 1000, "available at {fixed_available} ms");
    assert!(
        fixed_seen.reasons.iter().all(|(_, r)| r != "ProgressDeadlineExceeded"),
        "the fixed rollout never exceeds its deadline: {:?}",
        fixed_seen.reasons
    );
    kubectl.run(&["delete", "namespace", ns, "--wait=false"]).ok();
}
