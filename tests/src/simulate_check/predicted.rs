//! What `lifeguard simulate --format json` says of a case's pod.

use std::path::Path;

use serde_json::Value;

use crate::cluster::webhook::workspace_binary;

use super::case::{Act, Case};
use super::stop::{self, Stop};
use super::{lifecycle, pod};

/// What `lifeguard simulate` said of the case.
#[derive(Debug, Default)]
pub struct Predicted {
    pub restarts_best: usize,
    /// Event times by event name (the worst offset's timeline).
    pub events: Vec<(f64, String)>,
    /// The CrashLoopBackOff delay each start waited, by its time.
    pub backoffs: Vec<(f64, f64)>,
    pub best_restart_at: Option<f64>,
    /// How long the best phase offset is out of the endpoints.
    pub best_unready: Option<f64>,
    pub worst_restart_at: Option<f64>,
    pub verdict: String,
    /// What it said of the lifecycle beyond the others.
    pub lifecycle: lifecycle::Said,
    /// When it starts each container of a pod of several (its `pod`).
    pub starts: Vec<(String, f64)>,
    /// In a deletion, when it stops each container of the pod (its
    /// `pod.stops`), in its order.
    pub stops: Vec<Stop>,
    /// Its timeline (the worst offset's, and the pod's), a line per event,
    /// for a disagreement's report.
    pub timeline: Vec<String>,
}

pub fn simulate(case: &Case, pod: &Value, dir: &Path) -> Predicted {
    let file = dir.join(format!("{}.yaml", case.name));
    std::fs::write(&file, pod.to_string()).expect("write the case's pod");
    let binary = workspace_binary("lifeguard", "lifeguard").expect("the lifeguard binary");
    let out = std::process::Command::new(binary)
        .args(["simulate", "--format", "json", "--scenario", case.scenario])
        .args(match case.act {
            Act::Delete(Some(grace)) => vec![format!("--delete-grace-seconds={grace}")],
            _ => Vec::new(),
        })
        .arg(&file)
        .output()
        .expect("run lifeguard simulate");
    let text = String::from_utf8_lossy(&out.stdout);
    let results: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{}: simulate said {e}: {text}{}", case.name, String::from_utf8_lossy(&out.stderr)));
    // The case's own container: in a pod of several, simulate has an
    // entry for each.
    let entries = results.as_array().map(Vec::as_slice).unwrap_or_default();
    let result = entries.iter().find(|r| r["container"] == "server").unwrap_or(&results[0]);
    let count = |which: &str| result[which]["restarts"].as_u64().unwrap_or(0) as usize;
    let at = |which: &str| result[which]["restart_at"].as_f64();
    // A pod of several containers: its own events say when it is in the
    // endpoints, and a container's first start (after the pod's 0, behind
    // a sidecar) is no restart.
    // A deleted pod's endpoint is terminating at once (its `out` from 0, as
    // a one-container deletion's endpoint removal); its Ready condition,
    // which the cases read, follows the probes: not compared.
    let deleted = matches!(case.act, Act::Delete(_));
    let pod_events = result["pod"]["events"].as_array().into_iter().flatten().filter(|_| !deleted);
    let mut events: Vec<(f64, String)> = result["events"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(pod_events)
        .filter_map(|e| Some((e["t"].as_f64()?, e["event"].as_str()?.to_owned())))
        .collect();
    if result["pod"].is_object() {
        if let Some(first) = events.iter().position(|(_, e)| e == "started") {
            events.remove(first);
        }
    }
    Predicted {
        restarts_best: count("best"),
        events,
        backoffs: backoffs(&result["events"]),
        best_restart_at: at("best"),
        best_unready: result["best"]["unready_seconds"].as_f64(),
        worst_restart_at: at("worst"),
        verdict: result["verdict"].as_str().unwrap_or_default().to_owned(),
        lifecycle: lifecycle::Said::of(result),
        // A deletion starts nothing: its pod's starts are not compared.
        starts: if deleted { Vec::new() } else { pod::predicted_starts(result) },
        stops: stop::predicted_stops(result),
        timeline: timeline(result),
    }
}

/// (start time, delay) for each start that followed a back-off: a back-off
/// event's delay ends at the next `started`.
pub fn backoffs(events: &Value) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut waiting = None;
    for e in events.as_array().into_iter().flatten() {
        match e["event"].as_str() {
            Some("back-off") => {
                waiting = e["detail"]
                    .as_str()
                    .and_then(|d| d.strip_prefix("CrashLoopBackOff "))
                    .and_then(|d| d.strip_suffix('s'))
                    .and_then(|d| d.parse::<f64>().ok());
            }
            Some("started") => {
                if let (Some(delay), Some(t)) = (waiting.take(), e["t"].as_f64()) {
                    out.push((t, delay));
                }
            }
            _ => {}
        }
    }
    out
}

/// The entry's events and its pod's, in time order, one line each.
fn timeline(result: &Value) -> Vec<String> {
    let own = result["events"].as_array().into_iter().flatten().map(|e| (None, e));
    let pod = result["pod"]["events"].as_array().into_iter().flatten().map(|e| (Some("pod"), e));
    let mut lines: Vec<(f64, String)> = own
        .chain(pod)
        .filter_map(|(whose, e)| {
            let t = e["t"].as_f64()?;
            let who = whose.or(e["probe"].as_str()).unwrap_or("");
            let detail = e["detail"].as_str().map(|d| format!(" ({d})")).unwrap_or_default();
            Some((t, format!("{t:>7.1}s {who:<9} {}{detail}", e["event"].as_str()?)))
        })
        .collect();
    lines.sort_by(|a, b| a.0.total_cmp(&b.0));
    lines.into_iter().map(|(_, l)| l).collect()
}
