//! A pod of more than one container: the case's other containers put in
//! its spec, each container's own log (kept beside the pod's,
//! `POD-CONTAINER.jsonl`) read for its first start, and what simulate says
//! of the pod (its `pod` object) set beside it. A deleted pod's stops are
//! [`super::stop`]'s.

use serde_json::{Value, json};

use crate::cluster::node::Node;
use crate::cluster::pods;

use super::case::{Case, TO_SERVER};
use super::since;

/// The pod spec's containers a case adds beside its own: regular ones
/// after it, native sidecars as init containers that always restart; a
/// `PROXY_TO` of [`TO_SERVER`] pointed at the case's container's port.
pub fn pod_spec(case: &Case, spec: &mut Value) {
    let server = spec["containers"][0]["ports"][0]["containerPort"].as_u64().unwrap_or(0);
    let resolved = |mut c: Value| {
        for var in c["env"].as_array_mut().into_iter().flatten() {
            if var["name"] == "PROXY_TO" && var["value"] == TO_SERVER {
                var["value"] = json!(format!("127.0.0.1:{server}"));
            }
        }
        c
    };
    if let Some(containers) = spec["containers"].as_array_mut() {
        containers.extend(case.others.containers.iter().cloned().map(resolved));
    }
    if !case.others.sidecars.is_empty() {
        let sidecars: Vec<Value> = case
            .others
            .sidecars
            .iter()
            .cloned()
            .map(resolved)
            .map(|mut c| {
                c["restartPolicy"] = json!("Always");
                c
            })
            .collect();
        spec["initContainers"] = json!(sidecars);
    }
    if case.others.traffic_to.is_some() {
        // A Service's endpoint is the pod's IP, which a pod on the node's
        // network is not given here: an address of its own.
        spec["hostNetwork"] = json!(false);
    }
}

/// When each of the case's other containers first logged its start, ms
/// since the epoch.
pub fn other_starts(node: &Node, case: &Case) -> Vec<(String, u64)> {
    case.others
        .names()
        .into_iter()
        .filter_map(|name| {
            let log = pods::kept_pod_log(node, case.name, &format!("{}-{name}", case.name));
            let start = log.iter().find(|e| e.event == "start")?.t_ms;
            Some((name, start))
        })
        .collect()
}

/// What simulate said of the pod: when each container first started.
pub fn predicted_starts(result: &Value) -> Vec<(String, f64)> {
    let pod = &result["pod"];
    let names = pod["containers"].as_array().into_iter().flatten();
    let started = pod["started"].as_array().into_iter().flatten();
    names.zip(started).filter_map(|(n, t)| Some((n.as_str()?.to_owned(), t.as_f64()?))).collect()
}

/// Where each container's first start disagrees with simulate's beyond
/// `tolerance` seconds: `observed` from the pod's 0 (the first start of any).
pub fn disagreements(predicted: &[(String, f64)], observed: &[(String, f64)], tolerance: f64) -> Vec<String> {
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
pub fn starts_since(t0: u64, main: Option<u64>, others: &[(String, u64)]) -> Vec<(String, f64)> {
    main.map(|t| ("server".to_owned(), since(t0, t)))
        .into_iter()
        .chain(others.iter().map(|(n, t)| (n.clone(), since(t0, *t))))
        .collect()
}

/// The table's readiness cell of a pod case: when each container first
/// started, then `readiness`.
pub fn starts_shown(starts: &[(String, f64)], readiness: String) -> String {
    if starts.is_empty() {
        return readiness;
    }
    let shown: Vec<String> = starts.iter().map(|(n, t)| format!("{n} started {t:.1}")).collect();
    format!("{}, {readiness}", shown.join(", "))
}
