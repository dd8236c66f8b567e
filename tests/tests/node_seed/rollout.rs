//! `progress-deadline-too-short` on the real Deployment controller: a
//! Deployment whose pod boots for [`BOOT_SECONDS`], within what its startup
//! probe allows, under a progress deadline shorter than that window, is
//! marked `Progressing=False`, reason `ProgressDeadlineExceeded`, while its
//! pod is still booting (the controller then sees the pod Ready and calls
//! the rollout complete after all: the alarm was false). The same
//! Deployment after `lifeguard fix` rolls out with no such condition.
//!
//! `rollout-capacity-too-low` on the same controller: three replicas of a
//! slow boot rolled with `maxUnavailable: 1` and no surge keep two
//! available while each new pod boots, as the rule says; with a surge of
//! one and none unavailable, three throughout.
//!
//! `simulate --scenario rollout` beside each: the same fewest available,
//! the deadline, and each rollout's length (a surge's with
//! `minReadySeconds`, two StatefulSets') within a probe period and
//! [`crate::STEP_ALLOWANCE_S`] per replica step.

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

use std::time::{Duration, Instant};

use lifeguard_e2e::cluster::node::Node;
use lifeguard_e2e::cluster::pods::{now_ms, with_own_address, workload_container, workload_pod_spec};
use lifeguard_e2e::cluster::process::free_port;
use lifeguard_e2e::support::deployment::Deployment;
use serde_json::{Value, json};

use crate::{agree, declared, lifeguard_on, simulated};

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
    let object = Deployment::new(name).labelled().replicas(1).pod_spec(workload_pod_spec(container)).build();
    let mut object = declared(object, BOOT_SECONDS);
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

    // `simulate --scenario rollout` of the same Deployment, created whole:
    // the deadline exceeded and the pod available when the node saw them,
    // within the readiness period (2 s) and what a step leaves out (`STEP_ALLOWANCE_S`).
    let said = simulated(&["--scenario", "rollout"], &short.to_string());
    let rollout = said.first().expect("the rollout's entry");
    assert_eq!(rollout["verdict"], "progress-deadline-exceeded", "{rollout}");
    let exceeded_at = rollout["progress_deadline_exceeded_at"][0].as_f64().unwrap_or(-1.0);
    let complete_at = rollout["complete_at"].as_f64().unwrap_or(-1.0);
    let (exceeded, available) = (exceeded as f64 / 1000.0, available as f64 / 1000.0);
    eprintln!(
        "rollout with a 10 s deadline: exceeded at {exceeded:.1} s (simulated {exceeded_at}), available at \
         {available:.1} s (simulated {complete_at})"
    );
    assert!(agree(exceeded, exceeded_at, 1, 2.0), "exceeded at {exceeded} s, simulated {exceeded_at} s");
    assert!(agree(available, complete_at, 1, 2.0), "available at {available} s, simulated {complete_at} s");
    let said = simulated(&["--scenario", "rollout"], &fixed.to_string());
    assert_eq!(said[0]["progress_deadline_exceeded_at"], json!([]), "{}", said[0]);
    kubectl.run(&["delete", "namespace", ns, "--wait=false"]).ok();
}

/// The rolled Deployments' boot: long enough that each step's dip is seen
/// by a poll every half second.
const ROLL_BOOT_SECONDS: u64 = 8;

/// Three replicas of a server booting for [`ROLL_BOOT_SECONDS`], each with
/// an address of its own (they share a port), a startup probe that allows
/// 40 s (a slow boot to the policy), rolled with these fenceposts.
fn rolled(name: &str, max_unavailable: u64, max_surge: u64) -> Value {
    let mut container = workload_container("server", 8080, &[("BOOT_SECONDS", ROLL_BOOT_SECONDS.to_string())]);
    container["startupProbe"] =
        json!({"httpGet": {"path": "/livez", "port": "http"}, "periodSeconds": 1, "failureThreshold": 40});
    container["readinessProbe"] = json!({"httpGet": {"path": "/readyz", "port": "http"}, "periodSeconds": 1});
    let spec = with_own_address(workload_pod_spec(container));
    let object = Deployment::new(name).labelled().replicas(3).pod_spec(spec).build();
    let mut object = declared(object, ROLL_BOOT_SECONDS);
    object["spec"]["strategy"] =
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": max_unavailable, "maxSurge": max_surge}});
    object
}

/// `(availableReplicas, updatedReplicas, observed)` of an object of `kind`
/// (a Deployment, a StatefulSet), where `observed` says its status is of
/// its current generation; `updatedReplicas` counts only once no old pod is
/// left (`replicas` is as many: a surge's old pod still available would
/// make three updated and three available before the rollout is done).
fn replicas_of(node: &Node, ns: &str, kind: &str, name: &str) -> (u64, u64, bool) {
    let stored = node.plane.kubectl.get(ns, kind, name).unwrap_or(Value::Null);
    let count = |k: &str| stored["status"][k].as_u64().unwrap_or(0);
    let observed = stored["status"]["observedGeneration"] == stored["metadata"]["generation"];
    let updated = if count("replicas") == count("updatedReplicas") { count("updatedReplicas") } else { 0 };
    (count("availableReplicas"), updated, observed)
}

#[test]
fn a_rollout_keeps_replicas_minus_max_unavailable_available_as_the_capacity_rule_says() {
    let Some(node) = Node::shared() else { return };
    let kubectl = &node.plane.kubectl;
    let ns = "seed-capacity";
    kubectl.namespace(ns, &[]);
    kubectl.default_service_account(ns);
    let names = ["one-out", "surge"];
    // The surge's pods count available 3 s after Ready (minReadySeconds).
    let mut surge = rolled(names[1], 0, 1);
    surge["spec"]["minReadySeconds"] = json!(3);
    let objects = [rolled(names[0], 1, 0), surge];

    // What the rule says under a policy that wants three quarters kept.
    let said = capacity_findings(&objects, "minRolloutCapacityPercent: 75");
    assert_eq!(said[0].len(), 1, "{said:?}");
    assert!(said[0][0].contains("leaves 2 of 3 replicas available"), "{said:?}");
    assert!(said[1].is_empty(), "{said:?}");
    let (lowest, done) = roll(node, ns, "deployment", &objects);
    eprintln!("fewest available during the rollouts: one-out {}, surge {} (of 3)", lowest[0], lowest[1]);
    assert!(done.iter().all(Option::is_some), "both rollouts complete within 180 s: {done:?}");
    assert_eq!(lowest[0], 2, "maxUnavailable 1 of 3: two kept, as the rule said");
    assert_eq!(lowest[1], 3, "a surge of one and none unavailable: three kept");
    same_as_simulated(&objects, &[], &lowest, &done);
    kubectl.run(&["delete", "namespace", ns, "--wait=false"]).ok();
}

/// `simulate --scenario rollout` of each of `objects` (with `args`) against
/// what the node showed: the same fewest available, and the rollout's
/// length within a probe period (1 s) and `STEP_ALLOWANCE_S` per replica step
/// (each moment the controller deletes pods).
fn same_as_simulated(objects: &[Value; 2], args: &[&str], lowest: &[u64; 2], done: &[Option<f64>; 2]) {
    let mut all = vec!["--scenario", "rollout"];
    all.extend_from_slice(args);
    for (i, object) in objects.iter().enumerate() {
        let said = simulated(&all, &object.to_string());
        let rollout = said.first().expect("the rollout's entry");
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        let complete_at = rollout["complete_at"].as_f64().unwrap_or(-1.0);
        let observed = done[i].unwrap_or(-1.0);
        eprintln!(
            "{name}: rolled in {observed:.1} s (simulated {complete_at}), fewest available {} (simulated {})",
            lowest[i], rollout["lowest_available"]["available"]
        );
        assert_eq!(rollout["lowest_available"]["available"], lowest[i], "{name}: {rollout}");
        // A step: the moments the controller deletes pods.
        let mut deletions: Vec<String> = rollout["steps"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|s| s["event"] == "deleted")
            .map(|s| s["t"].to_string())
            .collect();
        deletions.dedup();
        let steps = u32::try_from(deletions.len()).unwrap_or(u32::MAX);
        assert!(
            agree(observed, complete_at, steps, 1.0),
            "{name}: rolled in {observed} s, simulated {complete_at} s, {steps} steps"
        );
    }
}

/// The messages of `rollout-capacity-too-low` for each of `objects`, under
/// a policy with these `parameters` lines.
fn capacity_findings(objects: &[Value], parameters: &str) -> Vec<Vec<String>> {
    let dir = std::env::temp_dir().join(format!("lifeguard-capacity-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let policy = dir.join("policy.yaml");
    let text = format!("apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\nparameters:\n  {parameters}\n");
    std::fs::write(&policy, text).expect("write the policy");
    let said = objects
        .iter()
        .map(|o| {
            let out = lifeguard_on(&["lint", "--format", "json", "--policy", &policy.to_string_lossy(), "-"], o);
            let found: Value = serde_json::from_slice(&out.stdout).expect("lint's JSON");
            found
                .as_array()
                .into_iter()
                .flatten()
                .filter(|f| f["rule"] == "rollout-capacity-too-low")
                .filter_map(|f| f["message"].as_str().map(str::to_owned))
                .collect()
        })
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    said
}

/// Creates the two `objects` of `kind` (three replicas each), waits for
/// all to be available, changes their template and polls every half second
/// until both have rolled (at most 180 s): the fewest available replicas
/// each had while rolling, and when each finished (seconds after the change).
fn roll(node: &Node, ns: &str, kind: &str, objects: &[Value; 2]) -> ([u64; 2], [Option<f64>; 2]) {
    let kubectl = &node.plane.kubectl;
    let names: Vec<&str> = objects.iter().map(|o| o["metadata"]["name"].as_str().unwrap_or_default()).collect();
    for object in objects {
        kubectl.run_with_input(&["create", "-n", ns, "-f", "-"], Some(&object.to_string())).ok();
    }
    lifeguard_e2e::cluster::process::wait_for("three available replicas of each", Duration::from_secs(120), || {
        let counts: Vec<u64> = names.iter().map(|n| replicas_of(node, ns, kind, n).0).collect();
        if counts.iter().all(|&c| c == 3) { Ok(()) } else { Err(format!("{counts:?}")) }
    });
    // A new template: the rollout.
    for name in &names {
        let patch = json!({"spec": {"template": {"metadata": {"annotations": {"rolled": "2"}}}}});
        kubectl.run(&["patch", kind, name, "-n", ns, "-p", &patch.to_string()]).ok();
    }
    let start = Instant::now();
    let mut lowest = [u64::MAX; 2];
    let mut done = [None; 2];
    while start.elapsed() < Duration::from_secs(180) && !done.iter().all(Option::is_some) {
        for (i, name) in names.iter().enumerate() {
            let (available, updated, observed) = replicas_of(node, ns, kind, name);
            if observed && done[i].is_none() {
                lowest[i] = lowest[i].min(available);
                if updated == 3 && available == 3 {
                    done[i] = Some(start.elapsed().as_secs_f64());
                }
            }
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    (lowest, done)
}

/// [`rolled`]'s pod as a StatefulSet of three, with `maxUnavailable` when
/// given (read by the controller under the `MaxUnavailableStatefulSet`
/// gate, on by default from 1.37, the node's version).
fn stateful(name: &str, max_unavailable: Option<u64>) -> Value {
    let deployment = rolled(name, 1, 0);
    let mut object = json!({
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": 3,
            "serviceName": name,
            "podManagementPolicy": "Parallel",
            "selector": deployment["spec"]["selector"],
            "template": deployment["spec"]["template"],
        },
    });
    if let Some(n) = max_unavailable {
        object["spec"]["updateStrategy"] = json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": n}});
    }
    object
}

#[test]
fn a_stateful_set_rolls_as_many_pods_at_once_as_the_capacity_rule_says() {
    let Some(node) = Node::shared() else { return };
    let kubectl = &node.plane.kubectl;
    let ns = "seed-stateful";
    kubectl.namespace(ns, &[]);
    kubectl.default_service_account(ns);
    let names = ["one-at-a-time", "two-at-a-time"];
    let objects = [stateful(names[0], None), stateful(names[1], Some(2))];

    // What the rule says under a policy that wants a half kept, on 1.37.
    let said = capacity_findings(&objects, "minRolloutCapacityPercent: 50\n  kubernetesVersion: \"1.37\"");
    assert!(said[0].is_empty(), "one of three out keeps two, above half: {said:?}");
    assert_eq!(said[1].len(), 1, "{said:?}");
    assert!(said[1][0].contains("leaves 1 of 3 replicas available"), "{said:?}");
    let start = Instant::now();
    let (lowest, done) = roll(node, ns, "statefulset", &objects);
    eprintln!(
        "fewest available during the StatefulSet rolls: one at a time {}, maxUnavailable 2 {} (of 3), in {:.0} s",
        lowest[0],
        lowest[1],
        start.elapsed().as_secs_f64()
    );
    assert!(done.iter().all(Option::is_some), "both rolls complete within 180 s: {done:?}");
    assert_eq!(lowest[0], 2, "one pod at a time: two kept");
    assert_eq!(lowest[1], 1, "maxUnavailable 2, read under the 1.37 gate: one kept, as the rule said");
    let policy = std::env::temp_dir().join(format!("lifeguard-k137-{}.yaml", std::process::id()));
    let text = "apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\nparameters:\n  kubernetesVersion: \"1.37\"\n";
    std::fs::write(&policy, text).expect("write the policy");
    let policy_arg = format!("--policy={}", policy.to_string_lossy());
    same_as_simulated(&objects, &[&policy_arg], &lowest, &done);
    let _ = std::fs::remove_file(&policy);
    kubectl.run(&["delete", "namespace", ns, "--wait=false"]).ok();
}
