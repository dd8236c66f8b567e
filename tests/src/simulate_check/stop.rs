//! A deleted pod's other containers' stops: each one's SIGTERM and exit,
//! read from its own log (kept beside the pod's, `POD-CONTAINER.jsonl`),
//! set beside what simulate says of the pod's stops (its `pod.stops`),
//! and the order they got SIGTERM in beside simulate's: the kubelet stops
//! the regular containers first, then the native sidecars in reverse
//! order, all within the one grace period.

use serde_json::Value;

use crate::cluster::node::Node;
use crate::cluster::pods;

use super::case::Case;
use super::since;

/// A container's stop: its name, SIGTERM and exit (`None`: none seen, or
/// none predicted: SIGKILL), seconds from the deletion.
pub type Stop = (String, Option<f64>, Option<f64>);

/// When each of the case's other containers got its first SIGTERM and
/// exited, from its own log, after the deletion at `t0` (ms since the
/// epoch), in the order they got SIGTERM.
pub fn other_stops(node: &Node, case: &Case, t0: u64) -> Vec<Stop> {
    let mut stops: Vec<Stop> = case
        .others
        .names()
        .into_iter()
        .map(|name| {
            let log = pods::kept_pod_log(node, case.name, &format!("{}-{name}", case.name));
            let at = |event: &str| log.iter().find(|e| e.event == event && e.t_ms >= t0).map(|e| since(t0, e.t_ms));
            let (sigterm, exit) = (at("signal"), at("exit"));
            (name, sigterm, exit)
        })
        .collect();
    stops.sort_by(|a, b| a.1.unwrap_or(f64::MAX).total_cmp(&b.1.unwrap_or(f64::MAX)));
    stops
}

/// What simulate said of the pod's stops (its `stops`), in its order.
pub fn predicted_stops(result: &Value) -> Vec<Stop> {
    let stops = result["pod"]["stops"].as_array().into_iter().flatten();
    stops
        .filter_map(|s| Some((s["container"].as_str()?.to_owned(), s["sigterm"].as_f64(), s["exited"].as_f64())))
        .collect()
}

/// Where the other containers' stops disagree with simulate's beyond
/// `tolerance` seconds, and whether they got SIGTERM in simulate's order
/// (`observed` holds the others only: the case's own container is
/// compared as in every deletion case). A pod of one container has no
/// others: nothing to compare.
pub fn disagreements(predicted: &[Stop], observed: &[Stop], tolerance: f64) -> Vec<String> {
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

/// The table's deletion cell of a pod case: the case's own container's,
/// then each other's SIGTERM and exit.
pub fn stops_shown(stops: &[Stop], deletion: String) -> String {
    let shown: Vec<String> = stops
        .iter()
        .map(|(n, sigterm, exit)| {
            let t = |v: &Option<f64>| v.map_or_else(|| "-".to_owned(), |t| format!("{t:.1}"));
            format!("{n} SIGTERM {}, exit {}", t(sigterm), t(exit))
        })
        .collect();
    if shown.is_empty() { deletion } else { format!("{deletion}; {}", shown.join("; ")) }
}

#[cfg(test)]
mod tests {
    use super::{Stop, disagreements};

    fn stop(name: &str, sigterm: Option<f64>, exit: Option<f64>) -> Stop {
        (name.to_owned(), sigterm, exit)
    }

    #[test]
    fn a_pod_of_one_container_has_no_stops_to_compare() {
        let predicted = vec![stop("server", Some(0.0), Some(4.0))];
        assert!(disagreements(&predicted, &[], 3.0).is_empty());
    }

    #[test]
    fn sidecars_stopped_out_of_simulates_order_disagree() {
        let predicted = vec![
            stop("server", Some(0.0), Some(6.0)),
            stop("logs", Some(6.0), Some(9.0)),
            stop("proxy", Some(9.0), Some(12.0)),
        ];
        let in_order = vec![stop("logs", Some(6.2), Some(9.3)), stop("proxy", Some(9.4), Some(12.5))];
        assert!(disagreements(&predicted, &in_order, 3.0).is_empty());
        let reversed = vec![stop("proxy", Some(6.2), Some(9.3)), stop("logs", Some(6.4), Some(9.5))];
        let wrong = disagreements(&predicted, &reversed, 3.0);
        assert!(wrong.iter().any(|w| w.starts_with("stop order")), "{wrong:?}");
    }

    #[test]
    fn a_kill_where_simulate_has_an_exit_disagrees() {
        let predicted = vec![stop("proxy", Some(0.0), Some(3.0))];
        let killed = vec![stop("proxy", Some(0.1), None)];
        assert_eq!(
            disagreements(&predicted, &killed, 3.0),
            vec!["container proxy: exit at None s, simulate Some(3.0) s"]
        );
    }
}
