//! The matrix's pod cases: a pod of more than one container, where the pod
//! is Ready only when every container is (the slower one decides), and a
//! native sidecar whose startup probe holds the app container's start. What
//! they read beyond the other cases: each container's own log (kept beside
//! the pod's, `POD-CONTAINER.jsonl`) for its first start, and what simulate
//! says of the pod (its `pod` object).

use lifeguard_e2e::cluster::node::Node;
use lifeguard_e2e::cluster::pods::{self, workload_container};
use lifeguard_e2e::cluster::process::free_port;
use serde_json::{Value, json};

use super::{Act, Case, container, probe, since};

/// The pod's other container in the slower-decides case: ready only
/// after its readiness probe's 8 s initial delay (then every second).
const SLOW: &str = "slow";
/// The native sidecar in the start-order case.
const PROXY: &str = "proxy";

/// The pod cases of the matrix.
pub(super) fn cases() -> Vec<Case> {
    let ready = || ("readinessProbe", probe("/readyz", 1, 1));
    vec![
        Case {
            annotations: json!({}),
            name: "pod-slower-decides",
            what: "two containers: the app ready at 1 s, the other's readiness from 8 s; the pod Ready with the slower",
            scenario: "boot",
            container: container(&[], &[ready()]),
            grace: Some(5),
            act: Act::Boot,
            observe: 15,
        },
        Case {
            annotations: json!({}),
            name: "sidecar-start-order",
            what: "a native sidecar whose startup probe succeeds at 5 s (initialDelaySeconds 5) before the app starts",
            scenario: "boot",
            container: container(&[], &[ready()]),
            grace: Some(5),
            act: Act::Boot,
            observe: 15,
        },
    ]
}

/// A second workload container named `name`, on a port of its own (the
/// pod has the node's network).
fn other(name: &str, probes: &[(&str, Value)]) -> Value {
    let port = free_port();
    let mut c = workload_container(name, port, &[]);
    for (kind, p) in probes {
        c[*kind] = p.clone();
    }
    c
}

/// The pod spec's containers a pod case adds beside the case's own.
pub(super) fn pod_spec(case: &Case, spec: &mut Value) {
    match case.name {
        "pod-slower-decides" => {
            let mut slow_ready = probe("/readyz", 1, 1);
            slow_ready["initialDelaySeconds"] = json!(8);
            let slow = other(SLOW, &[("readinessProbe", slow_ready)]);
            if let Some(containers) = spec["containers"].as_array_mut() {
                containers.push(slow);
            }
        }
        "sidecar-start-order" => {
            let mut startup = probe("/livez", 1, 20);
            startup["initialDelaySeconds"] = json!(5);
            let mut proxy = other(PROXY, &[("startupProbe", startup)]);
            proxy["restartPolicy"] = json!("Always");
            spec["initContainers"] = json!([proxy]);
        }
        _ => {}
    }
}

/// The names of the containers a pod case adds.
pub(super) fn others(case: &Case) -> &'static [&'static str] {
    match case.name {
        "pod-slower-decides" => &[SLOW],
        "sidecar-start-order" => &[PROXY],
        _ => &[],
    }
}

/// When each of the case's other containers first logged its start, ms
/// since the epoch.
pub(super) fn other_starts(node: &Node, case: &Case) -> Vec<(String, u64)> {
    others(case)
        .iter()
        .filter_map(|name| {
            let log = pods::kept_pod_log(node, case.name, &format!("{}-{name}", case.name));
            Some(((*name).to_owned(), log.iter().find(|e| e.event == "start")?.t_ms))
        })
        .collect()
}

/// What simulate said of the pod: when each container first started.
pub(super) fn predicted_starts(result: &Value) -> Vec<(String, f64)> {
    let pod = &result["pod"];
    let names = pod["containers"].as_array().into_iter().flatten();
    let started = pod["started"].as_array().into_iter().flatten();
    names.zip(started).filter_map(|(n, t)| Some((n.as_str()?.to_owned(), t.as_f64()?))).collect()
}

/// Where each container's first start disagrees with simulate's beyond
/// `tolerance` seconds: `observed` from the pod's 0 (the first start of any).
pub(super) fn disagreements(predicted: &[(String, f64)], observed: &[(String, f64)], tolerance: f64) -> Vec<String> {
    let mut out = Vec::new();
    for (name, t) in predicted {
        match observed.iter().find(|(n, _)| n == name) {
            Some((_, o)) if (o - t).abs() > tolerance => {
                out.push(format!("container {name} started at {o:.1} s, simulate {t} s"));
            }
            Some(_) => {}
            None => out.push(format!("container {name} never started, simulate {t} s")),
        }
    }
    out
}

/// Each container's first start from `t0`.
pub(super) fn starts_since(t0: u64, main: Option<u64>, others: &[(String, u64)]) -> Vec<(String, f64)> {
    main.map(|t| ("server".to_owned(), since(t0, t)))
        .into_iter()
        .chain(others.iter().map(|(n, t)| (n.clone(), since(t0, *t))))
        .collect()
}

/// The table's readiness cell of a pod case: when each container first
/// started, then `readiness`.
pub(super) fn starts_shown(starts: &[(String, f64)], readiness: String) -> String {
    if starts.is_empty() {
        return readiness;
    }
    let shown: Vec<String> = starts.iter().map(|(n, t)| format!("{n} started {t:.1}")).collect();
    format!("{}, {readiness}", shown.join(", "))
}
