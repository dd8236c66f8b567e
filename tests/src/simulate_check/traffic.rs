//! A deletion under traffic: a Service to one of the pod's other
//! containers (a proxy in front of the case's own, `Others.traffic_to`),
//! clients each with a request in flight through it when the pod is
//! deleted, and the requests that failed set beside simulate's stops: a
//! proxy that exits before the app has drained cuts what it carries.

use std::time::Duration;

use serde_json::{Value, json};

use crate::cluster::node::Node;
use crate::cluster::process::wait_for;
use crate::cluster::traffic::Traffic;

use super::case::Case;
use super::since;
use super::stop::Stop;

/// Clients of the Service, each with one request in flight.
const CLIENTS: usize = 4;

/// For a case with `traffic_to`: a Service to that container's port and
/// clients sending through its ready endpoints, started once the pod is
/// Ready and returned once every client has a request in flight; `None`
/// for any other case.
pub fn start(node: &Node, ns: &str, case: &Case, pod: &Value) -> Option<Traffic> {
    let to = case.others.traffic_to?;
    let containers = pod["spec"]["containers"].as_array().into_iter().flatten();
    let port = containers.filter(|c| c["name"] == to).find_map(|c| c["ports"][0]["containerPort"].as_u64())?;
    let service = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": case.name},
        "spec": {"selector": {"app": case.name}, "ports": [{"name": "http", "port": 80, "targetPort": port}]}});
    let created = node.plane.kubectl.run_with_input(&["apply", "-n", ns, "-f", "-"], Some(&service.to_string()));
    assert!(created.code == 0, "case {}: the Service: {}", case.name, created.stderr);
    let limit = Duration::from_secs(60);
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
pub fn failures(traffic: Traffic, t0: u64) -> Vec<(f64, f64)> {
    traffic.stop().iter().filter(|r| r.outcome.is_err()).map(|r| (since(t0, r.start_ms), since(t0, r.end_ms))).collect()
}

/// Where the requests that failed disagree with simulate's stops: they
/// fail only if the proxy `to` exits before the app (beyond `tolerance`),
/// and then when the proxy exits, before the app does.
pub fn disagreements(predicted: &[Stop], to: &str, failed: &[(f64, f64)], tolerance: f64) -> Vec<String> {
    let exit = |name: &str| predicted.iter().find(|(n, _, _)| n == name).and_then(|(_, _, e)| *e);
    let (Some(proxy), Some(app)) = (exit(to), exit("server")) else {
        return vec![format!("simulate gives no exit of {to} or server: {predicted:?}")];
    };
    let mut out = Vec::new();
    if proxy + tolerance < app && failed.is_empty() {
        out.push(format!("no request failed; simulate has {to} exit at {proxy} s, the app at {app} s"));
    }
    if proxy >= app && !failed.is_empty() {
        out.push(format!("{} requests failed; simulate has {to} outlast the app", failed.len()));
    }
    for (start, end) in failed {
        if *end < proxy - tolerance || *end > app + tolerance {
            out.push(format!("a request of {start:.1}..{end:.1} s failed outside simulate's {proxy}..{app} s"));
        }
    }
    out
}

/// The table's deletion cell's note of a case under traffic: how many
/// requests failed and when.
pub fn failures_shown(failed: Option<&[(f64, f64)]>, deletion: String) -> String {
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

#[cfg(test)]
mod tests {
    use super::disagreements;

    fn stops(proxy_exit: f64, app_exit: f64) -> Vec<super::Stop> {
        vec![("proxy".to_owned(), Some(0.0), Some(proxy_exit)), ("server".to_owned(), Some(0.0), Some(app_exit))]
    }

    #[test]
    fn failures_are_expected_only_between_the_proxys_exit_and_the_apps() {
        // The proxy exits at 0, the app at 10: requests must fail, by 10.
        assert!(disagreements(&stops(0.0, 10.0), "proxy", &[(-1.0, 0.2)], 3.0).is_empty());
        assert_eq!(disagreements(&stops(0.0, 10.0), "proxy", &[], 3.0).len(), 1);
        assert_eq!(disagreements(&stops(0.0, 10.0), "proxy", &[(-1.0, 14.0)], 3.0).len(), 1);
        // The proxy outlasts the app: no request may fail.
        assert!(disagreements(&stops(12.0, 10.0), "proxy", &[], 3.0).is_empty());
        assert!(!disagreements(&stops(12.0, 10.0), "proxy", &[(9.0, 9.5)], 3.0).is_empty());
    }
}
