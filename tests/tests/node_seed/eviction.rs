//! `pdb-blocks-eviction` on the real disruption controller and eviction
//! API (what `kubectl drain` sends): a one-replica Deployment under
//! `minAvailable: 1` has its eviction refused (429, the budget), a
//! Deployment two budgets select has it refused outright (500), as the
//! rule says of both; a sound budget (two replicas, `maxUnavailable: 1`)
//! lets one pod go, refuses the second while the first's replacement boots,
//! and lets it go once the replacement is Ready: the drain completes, one
//! boot per pod, as 004's farm takes one worker out at a time.

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

use std::time::{Duration, Instant};

use lifeguard_e2e::cluster::node::Node;
use lifeguard_e2e::cluster::pods::{self, with_own_address, workload_container, workload_pod_spec};
use lifeguard_e2e::cluster::process::wait_for;
use lifeguard_e2e::cluster::webhook::lifeguard_with_input;
use lifeguard_e2e::support::deployment::Deployment;
use serde_json::{Value, json};

use crate::{agree, declared, simulated};

/// The replacement's boot: long enough that a second eviction sent at once
/// meets the budget with one pod still booting.
const BOOT_SECONDS: u64 = 6;

/// A Deployment `name` of `replicas` pods of the workload (each with an
/// address of its own) booting for [`BOOT_SECONDS`], Ready on `/readyz`.
fn deployment(name: &str, replicas: u64) -> Value {
    let mut container = workload_container("server", 8080, &[("BOOT_SECONDS", BOOT_SECONDS.to_string())]);
    container["readinessProbe"] = json!({"httpGet": {"path": "/readyz", "port": "http"}, "periodSeconds": 1});
    container["startupProbe"] =
        json!({"httpGet": {"path": "/livez", "port": "http"}, "periodSeconds": 1, "failureThreshold": 30});
    let spec = with_own_address(workload_pod_spec(container));
    declared(Deployment::new(name).labelled().replicas(replicas).pod_spec(spec).build(), BOOT_SECONDS)
}

/// A PodDisruptionBudget `name` selecting the pods of Deployment `app`.
fn budget(name: &str, app: &str, spec: Value) -> Value {
    let mut spec = spec;
    spec["selector"] = json!({"matchLabels": {"app": app}});
    json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name}, "spec": spec})
}

/// An eviction of `pod`, as `kubectl drain` sends it: the exit code and
/// what kubectl printed.
fn evict(node: &Node, ns: &str, pod: &str) -> (i32, String) {
    let body = json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod, "namespace": ns}});
    let path = format!("/api/v1/namespaces/{ns}/pods/{pod}/eviction");
    let run = node.plane.kubectl.run_with_input(&["create", "--raw", &path, "-f", "-"], Some(&body.to_string()));
    (run.code, format!("{}{}", run.stdout, run.stderr))
}

/// The budget's `disruptionsAllowed` once the controller has observed it.
fn allowed(node: &Node, ns: &str, name: &str) -> Option<u64> {
    let stored = node.plane.kubectl.get(ns, "poddisruptionbudget", name)?;
    let observed = stored["status"]["observedGeneration"] == stored["metadata"]["generation"];
    observed.then(|| stored["status"]["disruptionsAllowed"].as_u64()).flatten()
}

#[test]
fn a_budget_that_allows_no_eviction_stops_a_drain_and_a_sound_one_lets_it_through_one_boot_at_a_time() {
    let Some(node) = Node::shared() else { return };
    let kubectl = &node.plane.kubectl;
    let ns = "seed-eviction";
    kubectl.namespace(ns, &[]);
    kubectl.default_service_account(ns);
    let objects = [
        deployment("single", 1),
        budget("single", "single", json!({"minAvailable": 1})),
        deployment("doubled", 2),
        budget("doubled-a", "doubled", json!({"maxUnavailable": 1})),
        budget("doubled-b", "doubled", json!({"maxUnavailable": 1})),
        deployment("spare", 2),
        budget("spare", "spare", json!({"maxUnavailable": 1})),
    ];
    let stream: Vec<String> = objects.iter().map(Value::to_string).collect();
    let stream = stream.join("\n---\n");

    // What the rule says of the three.
    let out = lifeguard_with_input(&["lint", "--format", "json", "--fail-on", "never", "-"], &stream);
    let found: Value = serde_json::from_slice(&out.stdout).expect("lint's JSON");
    let said: Vec<(String, String)> = found
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["rule"] == "pdb-blocks-eviction")
        .map(|f| {
            (f["name"].as_str().unwrap_or_default().to_owned(), f["message"].as_str().unwrap_or_default().to_owned())
        })
        .collect();
    eprintln!("pdb-blocks-eviction: {said:?}");
    assert_eq!(said.len(), 2, "{found:#}");
    assert!(said.iter().any(|(o, m)| o == "single" && m.contains("minAvailable: 1")), "{said:?}");
    assert!(said.iter().any(|(o, m)| o == "doubled" && m.starts_with("2 budgets")), "{said:?}");

    kubectl.run_with_input(&["create", "-n", ns, "-f", "-"], Some(&stream)).ok();
    wait_for("every replica available and each budget observed", Duration::from_secs(120), || {
        let available =
            |name: &str| kubectl.get(ns, "deployment", name).and_then(|d| d["status"]["availableReplicas"].as_u64());
        let ready = [("single", 1), ("doubled", 2), ("spare", 2)].iter().all(|(n, r)| available(n) == Some(*r));
        let budgets = [("single", 0), ("spare", 1)].iter().all(|(n, a)| allowed(node, ns, n) == Some(*a));
        if ready && budgets { Ok(()) } else { Err("not yet".to_owned()) }
    });

    // The one replica under minAvailable 1: refused by the budget.
    let single = pods::pod_names(node, ns, "single");
    let (code, said) = evict(node, ns, &single[0]);
    eprintln!("evict single: {code} {said}");
    assert_ne!(code, 0, "{said}");
    assert!(said.contains("Cannot evict pod as it would violate the pod's disruption budget"), "{said}");

    // Two budgets: refused whatever they allow.
    let doubled = pods::pod_names(node, ns, "doubled");
    let (code, said) = evict(node, ns, &doubled[0]);
    eprintln!("evict doubled: {code} {said}");
    assert_ne!(code, 0, "{said}");
    assert!(said.contains("more than one PodDisruptionBudget"), "{said}");

    // The sound budget: one goes, the second waits for its replacement.
    let spare = pods::pod_names(node, ns, "spare");
    assert_eq!(spare.len(), 2, "{spare:?}");
    let (code, said) = evict(node, ns, &spare[0]);
    assert_eq!(code, 0, "the first eviction is allowed: {said}");
    let first = Instant::now();
    let (code, said) = evict(node, ns, &spare[1]);
    assert_ne!(code, 0, "the second is refused while the first's replacement boots: {said}");
    let mut refused = 1;
    let second = loop {
        std::thread::sleep(Duration::from_millis(500));
        let (code, _) = evict(node, ns, &spare[1]);
        if code == 0 {
            break first.elapsed();
        }
        refused += 1;
        assert!(first.elapsed() < Duration::from_secs(90), "the second eviction is never allowed");
    };
    eprintln!("spare: the second eviction allowed {:.1} s after the first ({refused} refused)", second.as_secs_f64());
    // Not before a replacement has booted.
    assert!(second >= Duration::from_secs(BOOT_SECONDS), "allowed after {second:?}");

    // `simulate --scenario drain` of the same objects: the two blocked for
    // good, and the sound budget's next eviction allowed once the first
    // replacement is Ready, within the readiness period (1 s) and
    // `STEP_ALLOWANCE_S` of when the node allowed it.
    let said = simulated(&["--scenario", "drain"], &stream);
    let verdict = |name: &str| said.iter().find(|e| e["name"] == name).map(|e| e["verdict"].clone());
    assert_eq!(verdict("single"), Some(json!("eviction-blocked")), "{said:?}");
    assert_eq!(verdict("doubled"), Some(json!("eviction-blocked")), "{said:?}");
    let drain = said.iter().find(|e| e["name"] == "spare").expect("spare's drain");
    let ready = drain["steps"].as_array().into_iter().flatten().find(|s| s["event"] == "ready" && s["pod"] == "new-1");
    let ready_at = ready.and_then(|s| s["t"].as_f64()).expect("the first replacement Ready");
    let allowed_at = second.as_secs_f64();
    eprintln!(
        "spare: second eviction allowed {allowed_at:.1} s after the first; simulated: the budget allows it at {ready_at} s"
    );
    assert!(agree(allowed_at, ready_at, 1, 1.0), "allowed at {allowed_at} s, simulated {ready_at} s");
    wait_for("both replicas of spare available again", Duration::from_secs(60), || {
        let stored = kubectl.get(ns, "deployment", "spare").unwrap_or(Value::Null);
        if stored["status"]["availableReplicas"] == 2 { Ok(()) } else { Err(stored["status"].to_string()) }
    });
    kubectl.run(&["delete", "namespace", ns, "--wait=false"]).ok();
}
