//! The matrix's pod cases: a pod of more than one container, where the pod
//! is Ready only when every container is (the slower one decides), a
//! native sidecar whose startup probe holds the app container's start, and
//! a deleted pod whose native sidecars stop only after the app has exited,
//! in reverse order. What they read beyond the other cases: each
//! container's own log (kept beside the pod's, `POD-CONTAINER.jsonl`) for
//! its first start, its SIGTERM and its exit, and what simulate says of the
//! pod (its `pod` object: `started`, `stops`).

use lifeguard_e2e::cluster::node::Node;
use lifeguard_e2e::cluster::pods::{self, workload_container};
use lifeguard_e2e::cluster::process::{free_port, wait_for};
use lifeguard_e2e::cluster::traffic::Traffic;
use serde_json::{Value, json};

use super::{Act, Case, container, probe, since};

/// The pod's other container in the slower-decides case: ready only
/// after its readiness probe's 8 s initial delay (then every second).
const SLOW: &str = "slow";
/// The native sidecar in the start-order case, the first of two in the
/// stop-order case.
const PROXY: &str = "proxy";
/// The second native sidecar in the stop-order case: stopped before `PROXY`.
const LOGS: &str = "logs";
/// The regular-container proxy of the proxy case, named as Linkerd's
/// injector names its own (it stops accepting at SIGTERM, as this one does).
const MESH: &str = "linkerd-proxy";
/// Clients of the proxy case's Service, each with one request in flight.
const CLIENTS: usize = 4;

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
        Case {
            // Every container's stop is its drain: nothing more is assumed.
            annotations: json!({"lifeguard.dev/shutdown-budget-seconds": "0"}),
            name: "sidecar-stop-order",
            what: "deletion: the app's 2 s sleep preStop and 4 s drain, native sidecars proxy then logs (3 s drain each), grace 30",
            scenario: "delete",
            container: {
                let mut c = container(&[("DRAIN_SECONDS", "4".to_owned())], &[ready()]);
                c["lifecycle"] = json!({"preStop": {"sleep": {"seconds": 2}}});
                c
            },
            grace: Some(30),
            act: Act::Delete(None),
            observe: 16,
        },
        Case {
            annotations: json!({"lifeguard.dev/shutdown-budget-seconds": "0"}),
            name: "proxy-exits-before-drain",
            what: "deletion under traffic through a Service to a regular-container proxy that exits at SIGTERM, while the app (6 s requests) sleeps 2 s in preStop and drains 8 s; grace 30",
            scenario: "delete",
            container: {
                let env = [("DRAIN_SECONDS", "8".to_owned()), ("REQUEST_SECONDS", "6".to_owned())];
                let mut c = container(&env, &[ready()]);
                c["lifecycle"] = json!({"preStop": {"sleep": {"seconds": 2}}});
                c
            },
            grace: Some(30),
            act: Act::Delete(None),
            observe: 14,
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
        "sidecar-stop-order" => {
            let sidecar = |name: &str| {
                let mut c = other(name, &[]);
                c["restartPolicy"] = json!("Always");
                if let Some(env) = c["env"].as_array_mut() {
                    env.push(json!({"name": "DRAIN_SECONDS", "value": "3"}));
                }
                c
            };
            spec["initContainers"] = json!([sidecar(PROXY), sidecar(LOGS)]);
        }
        "proxy-exits-before-drain" => {
            let app = spec["containers"][0]["ports"][0]["containerPort"].as_u64().unwrap_or(0);
            let mut mesh = other(MESH, &[]);
            if let Some(env) = mesh["env"].as_array_mut() {
                env.push(json!({"name": "PROXY_TO", "value": format!("127.0.0.1:{app}")}));
            }
            if let Some(containers) = spec["containers"].as_array_mut() {
                containers.push(mesh);
            }
            // A Service's endpoint is the pod's IP, which a pod on the
            // host's network is not given here: an address of its own.
            spec["hostNetwork"] = json!(false);
        }
        _ => {}
    }
}

/// The names of the containers a pod case adds.
pub(super) fn others(case: &Case) -> &'static [&'static str] {
    match case.name {
        "pod-slower-decides" => &[SLOW],
        "sidecar-start-order" => &[PROXY],
        "sidecar-stop-order" => &[PROXY, LOGS],
        "proxy-exits-before-drain" => &[MESH],
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

/// A container's stop: its name, SIGTERM and exit (`None`: none seen, or
/// none predicted: SIGKILL), seconds from the deletion.
pub(super) type Stop = (String, Option<f64>, Option<f64>);

/// When each of the case's other containers got its first SIGTERM and
/// exited, from its own log, after the deletion at `t0` (ms since the
/// epoch), in the order they got SIGTERM.
pub(super) fn other_stops(node: &Node, case: &Case, t0: u64) -> Vec<Stop> {
    let mut stops: Vec<Stop> = others(case)
        .iter()
        .map(|name| {
            let log = pods::kept_pod_log(node, case.name, &format!("{}-{name}", case.name));
            let at = |event: &str| log.iter().find(|e| e.event == event && e.t_ms >= t0).map(|e| since(t0, e.t_ms));
            ((*name).to_owned(), at("signal"), at("exit"))
        })
        .collect();
    stops.sort_by(|a, b| a.1.unwrap_or(f64::MAX).total_cmp(&b.1.unwrap_or(f64::MAX)));
    stops
}

/// What simulate said of the pod's stops (its `stops`), in its order.
pub(super) fn predicted_stops(result: &Value) -> Vec<Stop> {
    let stops = result["pod"]["stops"].as_array().into_iter().flatten();
    stops
        .filter_map(|s| Some((s["container"].as_str()?.to_owned(), s["sigterm"].as_f64(), s["exited"].as_f64())))
        .collect()
}

/// Where the other containers' stops disagree with simulate's beyond
/// `tolerance` seconds, and whether they got SIGTERM in simulate's order
/// (`observed` holds the others only: the main container is compared as
/// in every deletion case).
pub(super) fn stop_disagreements(predicted: &[Stop], observed: &[Stop], tolerance: f64) -> Vec<String> {
    let mut out = Vec::new();
    let near = |p: Option<f64>, o: Option<f64>| match (p, o) {
        (Some(p), Some(o)) => (p - o).abs() <= tolerance,
        (p, o) => p.is_none() && o.is_none(),
    };
    for (name, sigterm, exit) in observed {
        let Some((_, p_sigterm, p_exit)) = predicted.iter().find(|(n, _, _)| n == name) else {
            out.push(format!("container {name}: simulate says nothing of its stop"));
            continue;
        };
        if !near(*p_sigterm, *sigterm) {
            out.push(format!("container {name}: SIGTERM at {sigterm:?} s, simulate {p_sigterm:?} s"));
        }
        if !near(*p_exit, *exit) {
            out.push(format!("container {name}: exit at {exit:?} s, simulate {p_exit:?} s"));
        }
    }
    // The order the others got SIGTERM in, against simulate's.
    let mut seen: Vec<&Stop> = observed.iter().filter(|(_, t, _)| t.is_some()).collect();
    seen.sort_by(|a, b| a.1.unwrap_or(f64::MAX).total_cmp(&b.1.unwrap_or(f64::MAX)));
    let seen: Vec<&str> = seen.iter().map(|(n, _, _)| n.as_str()).collect();
    let said: Vec<&str> = predicted.iter().map(|(n, _, _)| n.as_str()).filter(|n| seen.contains(n)).collect();
    if seen != said {
        out.push(format!("stop order {seen:?}, simulate {said:?}"));
    }
    out
}

/// The table's deletion cell of a pod case: the main container's, then
/// each other's SIGTERM and exit.
pub(super) fn stops_shown(stops: &[Stop], deletion: String) -> String {
    let shown: Vec<String> = stops
        .iter()
        .map(|(n, sigterm, exit)| {
            let t = |v: &Option<f64>| v.map_or_else(|| "-".to_owned(), |t| format!("{t:.1}"));
            format!("{n} SIGTERM {}, exit {}", t(sigterm), t(exit))
        })
        .collect();
    if shown.is_empty() { deletion } else { format!("{deletion}; {}", shown.join("; ")) }
}

/// For the proxy case: a Service to the proxy's port and clients sending
/// through its ready endpoints, started once the pod is Ready and returned
/// once every client has a request in flight; `None` for any other case.
pub(super) fn traffic(node: &Node, ns: &str, case: &Case, pod: &Value) -> Option<Traffic> {
    if case.name != "proxy-exits-before-drain" {
        return None;
    }
    let containers = pod["spec"]["containers"].as_array().into_iter().flatten();
    let port = containers.filter(|c| c["name"] == MESH).find_map(|c| c["ports"][0]["containerPort"].as_u64())?;
    let service = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": case.name},
        "spec": {"selector": {"app": case.name}, "ports": [{"name": "http", "port": 80, "targetPort": port}]}});
    let created = node.plane.kubectl.run_with_input(&["apply", "-n", ns, "-f", "-"], Some(&service.to_string()));
    assert!(created.code == 0, "case {}: the Service: {}", case.name, created.stderr);
    let limit = std::time::Duration::from_secs(60);
    let traffic = Traffic::start(node, ns, case.name, "/", CLIENTS, limit);
    wait_for(&format!("{CLIENTS} requests in flight through {}", case.name), limit, || {
        let n = traffic.in_flight().len();
        if n == CLIENTS {
            return Ok(());
        }
        let sent = traffic.sent();
        let last = sent.last().map(|r| format!("{:?}", r.outcome));
        Err(format!("{n} in flight, endpoints {:?}, {} sent, the last {last:?}", traffic.endpoints(), sent.len()))
    });
    Some(traffic)
}

/// The requests that failed, each's start and end in seconds from the
/// deletion at `t0`, once the loop is stopped.
pub(super) fn failures(traffic: Traffic, t0: u64) -> Vec<(f64, f64)> {
    traffic.stop().iter().filter(|r| r.outcome.is_err()).map(|r| (since(t0, r.start_ms), since(t0, r.end_ms))).collect()
}

/// Where the requests that failed disagree with simulate's stops: they
/// fail only if the proxy exits before the app (beyond `tolerance`), and
/// then when the proxy exits, before the app does.
pub(super) fn failure_disagreements(predicted: &[Stop], failed: Option<&[(f64, f64)]>, tolerance: f64) -> Vec<String> {
    let Some(failed) = failed else { return Vec::new() };
    let exit = |name: &str| predicted.iter().find(|(n, _, _)| n == name).and_then(|(_, _, e)| *e);
    let (Some(proxy), Some(app)) = (exit(MESH), exit("server")) else {
        return vec![format!("simulate gives no exit of {MESH} or server: {predicted:?}")];
    };
    let mut out = Vec::new();
    if proxy + tolerance < app && failed.is_empty() {
        out.push(format!("no request failed; simulate has {MESH} exit at {proxy} s, the app at {app} s"));
    }
    if proxy >= app && !failed.is_empty() {
        out.push(format!("{} requests failed; simulate has {MESH} outlast the app", failed.len()));
    }
    for (start, end) in failed {
        if *end < proxy - tolerance || *end > app + tolerance {
            out.push(format!("a request of {start:.1}..{end:.1} s failed outside simulate's {proxy}..{app} s"));
        }
    }
    out
}

/// The table's deletion cell's note of the proxy case: how many requests
/// failed and when.
pub(super) fn failures_shown(failed: Option<&[(f64, f64)]>, deletion: String) -> String {
    match failed {
        None => deletion,
        Some([]) => format!("{deletion}; no request failed"),
        Some(f) => {
            let last = f.iter().map(|(_, e)| *e).fold(f64::MIN, f64::max);
            let first = f.iter().map(|(_, e)| *e).fold(f64::MAX, f64::min);
            format!("{deletion}; {} requests failed, ended {first:.1}..{last:.1}", f.len())
        }
    }
}
