//! Seed 002: one shared health handler in a dependency stall, on the
//! kubelet.

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

use std::time::Duration;

use lifeguard_e2e::cluster::dependency::Dependency;
use lifeguard_e2e::cluster::node::Node;
use lifeguard_e2e::cluster::pods::{PodWatch, Seen, bare_pod, workload_container, workload_pod_spec};
use lifeguard_e2e::cluster::process::free_port;
use serde_json::{Value, json};

/// The seed's shared handler (one `/healthz` that checks the database, for
/// startup, liveness and readiness, every second, one failure acting) and the
/// same service with the probes split as lifeguard's help says (local
/// startup and liveness, readiness on the dependency with 3 failures), three
/// replicas each, in one 2-second stall of their shared dependency.
fn stall_replica(name: &str, dependency: &Dependency, shared: bool) -> Value {
    let env = [("DEPENDENCY", dependency.addr.to_string())];
    let mut container = workload_container("api", free_port(), &env);
    let probe = |path: &str, failures: u64| json!({"httpGet": {"path": path, "port": "http"}, "periodSeconds": 1, "failureThreshold": failures});
    if shared {
        container["startupProbe"] = probe("/healthz", 1);
        container["livenessProbe"] = probe("/healthz", 1);
        container["readinessProbe"] = probe("/healthz", 1);
    } else {
        container["startupProbe"] = probe("/livez", 30);
        container["livenessProbe"] = probe("/livez", 3);
        container["readinessProbe"] = probe("/readyz", 3);
    }
    let mut pod = bare_pod(name, workload_pod_spec(container));
    // The replicas of one workload: `app` names the workload, not the pod.
    pod["metadata"]["labels"]["app"] = json!(if shared { "shared" } else { "split" });
    pod
}

#[test]
fn a_two_second_stall_restarts_every_replica_of_the_shared_handler_and_none_of_the_split_probes() {
    let Some(node) = Node::shared() else { return };
    let kubectl = &node.plane.kubectl;
    let ns = "seed-stall";
    kubectl.namespace(ns, &[]);
    let dependency = Dependency::start();
    let watch = PodWatch::start(node, ns);
    let names: Vec<(String, bool)> =
        (0..3).flat_map(|i| [(format!("shared-{i}"), true), (format!("split-{i}"), false)]).collect();
    for (name, shared) in &names {
        let pod = stall_replica(name, &dependency, *shared);
        kubectl.run_with_input(&["create", "-n", ns, "-f", "-"], Some(&pod.to_string())).ok();
    }
    for (name, _) in &names {
        let seen = watch.until(name, Duration::from_secs(60), |seen| seen.iter().any(|(_, s)| s.ready));
        assert!(seen.iter().any(|(_, s)| s.ready), "{name} Ready before the stall: {seen:?}");
    }
    // Some periods of steady state, then the stall, then time to recover.
    std::thread::sleep(Duration::from_secs(3));
    let restarts = |name: &str| {
        let pod = kubectl.get(ns, "pod", name).expect("the pod");
        Seen::of(&pod).restarts
    };
    // The stall's restarts are those after it began: the kubelet may probe
    // a new container before it listens (docs/simulate.md, Limits), and the
    // shared handler's one-failure startup probe then restarts it at once,
    // before any stall.
    let before: Vec<u64> = names.iter().map(|(name, _)| restarts(name)).collect();
    dependency.stall_for(Duration::from_secs(2));
    std::thread::sleep(Duration::from_secs(15));

    let mut summary = Vec::new();
    for ((name, shared), before) in names.iter().zip(&before) {
        let count = restarts(name).saturating_sub(*before);
        summary.push(format!("{name}: restarted {count} times in the stall ({before} before)"));
        if *shared {
            assert!(count >= 1, "{name}: the shared handler restarts in a 2 s stall:\n{}", summary.join("\n"));
        } else {
            assert_eq!(count, 0, "{name}: split probes ride out a 2 s stall:\n{}", summary.join("\n"));
        }
    }
    eprintln!("{}", summary.join("\n"));
    for (name, _) in &names {
        // A replica restarted before the stall too may be in its first
        // back-off (10 s) when the stall's kill comes.
        let seen = watch.until(name, Duration::from_secs(30), |seen| seen.last().is_some_and(|(_, s)| s.ready));
        assert!(seen.last().is_some_and(|(_, s)| s.ready), "{name} Ready again after the stall: {seen:?}");
    }
}
