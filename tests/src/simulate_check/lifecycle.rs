//! The lifecycle's part of a case: a postStart hook (how long it holds the
//! probes, what its failure does), a readiness gate (never set, or set by
//! the test as a load balancer's controller would), and
//! `lifecycle.stopSignal` (which signal a deletion sends), with what they
//! need read beyond the rest: the hook's own log lines, the pod's
//! conditions and stored spec, the signal's name.

use std::time::Duration;

use serde_json::{Value, json};

use crate::cluster::node::Node;
use crate::cluster::pods::Event;
use crate::cluster::process::wait_for;

use super::case::{Act, Case};
use super::since;

/// The readiness gate's condition type in the gate cases.
const GATE: &str = "lifeguard.dev/test-gate";

/// The workload's exec postStart hook: SECONDS, then EXIT_CODE.
pub fn poststart(seconds: u64, code: i32) -> Value {
    json!({"postStart": {"exec": {"command": ["/lifeguard-test-workload", "poststart", seconds.to_string(), code.to_string()]}}})
}

/// The pod spec's lifecycle additions a case needs beyond its container.
pub fn pod_spec(case: &Case, spec: &mut Value) {
    if case.name.starts_with("gate-") {
        spec["readinessGates"] = json!([{"conditionType": GATE}]);
    }
    if case.container["lifecycle"].get("stopSignal").is_some() {
        // Where the gate is on, the API server requires the pod's OS with a stop signal.
        spec["os"] = json!({"name": "linux"});
    }
}

/// What a lifecycle case showed beyond the other cases' readings.
#[derive(Debug, Default)]
pub struct Seen {
    /// When the first postStart hook ended, and the first probe came.
    hook_ended: Option<f64>,
    first_probe: Option<f64>,
    /// When readiness first passed (the container ready).
    containers_ready: Option<f64>,
    /// The pod's `Ready` condition's reason and `ContainersReady` at the
    /// window's end (a gate case).
    ready_reason: Option<String>,
    containers_ready_at_end: Option<bool>,
    /// The signals the workload received, by name.
    signals: Vec<String>,
    /// Whether the API server kept `lifecycle.stopSignal` (a case that sets it).
    stop_signal_kept: Option<bool>,
}

impl Seen {
    /// The containers-ready time as the table shows it.
    pub fn containers_ready(&self) -> Option<f64> {
        self.containers_ready
    }

    /// The first signal's name.
    pub fn signal(&self) -> Option<&str> {
        self.signals.first().map(String::as_str)
    }
}

/// What `lifeguard simulate` said of a lifecycle case beyond the others.
#[derive(Debug, Default)]
pub struct Said {
    /// When the container is ready while the pod waits for its gates.
    pub containers_ready: Vec<f64>,
    /// The signal the deletion sends (`None`: SIGTERM).
    pub signal: Option<String>,
}

impl Said {
    /// Reads it from a `simulate --format json` entry.
    pub fn of(result: &Value) -> Said {
        let events = || result["events"].as_array().into_iter().flatten();
        Said {
            containers_ready: events()
                .filter(|e| e["event"] == "container-ready")
                .filter_map(|e| e["t"].as_f64())
                .collect(),
            signal: events().find(|e| e["event"] == "sigterm").and_then(|e| e["signal"].as_str()).map(str::to_owned),
        }
    }
}

/// Sets the gate's condition True on the pod, as a load balancer's
/// controller does once its target is healthy.
fn set_gate(node: &Node, ns: &str, pod: &str) {
    let patch = json!({"status": {"conditions": [{"type": GATE, "status": "True"}]}});
    node.plane
        .kubectl
        .run(&["patch", "pod", pod, "-n", ns, "--subresource=status", "--type=strategic", "-p", &patch.to_string()])
        .ok();
}

/// Sets the gate `seconds` after the container is first ready (its first
/// readiness success in the workload's `log`).
pub fn set_gate_after_ready(node: &Node, ns: &str, case: &Case, seconds: u64, log: impl Fn() -> Vec<Event>) {
    let path = readiness_path(case);
    wait_for("the container ready", Duration::from_secs(60), || {
        first_success(&log(), &path).ok_or_else(|| "not ready yet".to_owned())
    });
    std::thread::sleep(Duration::from_secs(seconds));
    set_gate(node, ns, case.name);
}

fn readiness_path(case: &Case) -> String {
    case.container["readinessProbe"]["httpGet"]["path"].as_str().unwrap_or("/readyz").to_owned()
}

fn is_probe(e: &Event) -> bool {
    e.event == "request" && e.line["user_agent"].as_str().is_some_and(|a| a.starts_with("kube-probe"))
}

/// When a probe of `path` first passed.
fn first_success(events: &[Event], path: &str) -> Option<u64> {
    events.iter().find(|e| is_probe(e) && e.line["path"] == path && e.line["status"] == 200).map(|e| e.t_ms)
}

/// Reads what a lifecycle case showed: from the workload's log between
/// `t0` and `end` (ms), and from the pod while it exists; `stop_signal_kept`
/// as [`stop_signal_kept`] read it.
pub fn seen(
    node: &Node,
    ns: &str,
    case: &Case,
    events: &[Event],
    (t0, end): (u64, u64),
    stop_signal_kept: Option<bool>,
) -> Seen {
    let within = |t: u64| t >= t0 && t <= end;
    let at = |t: u64| since(t0, t);
    let mut seen = Seen {
        hook_ended: events.iter().find(|e| e.event == "poststart-end" && within(e.t_ms)).map(|e| at(e.t_ms)),
        first_probe: events.iter().find(|e| is_probe(e) && within(e.t_ms)).map(|e| at(e.t_ms)),
        containers_ready: first_success(events, &readiness_path(case)).filter(|t| within(*t)).map(at),
        signals: events
            .iter()
            .filter(|e| e.event == "signal" && within(e.t_ms))
            .filter_map(|e| e.line["name"].as_str().map(str::to_owned))
            .collect(),
        stop_signal_kept,
        ..Seen::default()
    };
    if matches!(case.act, Act::Delete(_)) {
        return seen;
    }
    let pod = node.plane.kubectl.run(&["get", "pod", case.name, "-n", ns, "-o", "json"]).json();
    let condition =
        |kind: &str| pod["status"]["conditions"].as_array().into_iter().flatten().find(|c| c["type"] == kind).cloned();
    seen.ready_reason = condition("Ready").and_then(|c| c["reason"].as_str().map(str::to_owned));
    seen.containers_ready_at_end = condition("ContainersReady").map(|c| c["status"] == "True");
    seen
}

/// Whether the API server kept the container's `lifecycle.stopSignal`,
/// read once the pod is created (a case that sets one).
pub fn stop_signal_kept(node: &Node, ns: &str, case: &Case) -> Option<bool> {
    case.container["lifecycle"].get("stopSignal")?;
    let pod = node.plane.kubectl.run(&["get", "pod", case.name, "-n", ns, "-o", "json"]).json();
    Some(pod["spec"]["containers"][0]["lifecycle"].get("stopSignal").is_some())
}

/// Every way a lifecycle case disagrees with the simulation beyond
/// `tolerance` s; `in_endpoints` says whether simulate puts the pod in the
/// endpoints within the window, `readiness` is the pod's Ready as watched.
pub fn disagreements(
    case: &Case,
    (said, in_endpoints): (&Said, bool),
    (seen, readiness): (&Seen, &[(f64, bool)]),
    tolerance: f64,
) -> Vec<String> {
    let mut out = Vec::new();
    // A pod simulate keeps out (a failed hook, a gate never set) is never Ready.
    let lifecycle = case.container.get("lifecycle").is_some() || case.name.starts_with("gate-");
    if lifecycle && !in_endpoints && !matches!(case.act, Act::Delete(_)) {
        if let Some((t, _)) = readiness.iter().find(|(_, ready)| *ready) {
            out.push(format!("Ready at {t:.1} s, simulate never"));
        }
    }
    // The kubelet probes a container only once its postStart hook ended.
    if let (Some(ended), Some(probe)) = (seen.hook_ended, seen.first_probe) {
        if probe < ended {
            out.push(format!("probed at {probe:.1} s, before the postStart hook ended at {ended:.1} s"));
        }
    }
    // The container ready while the pod waits for its gate.
    // Seen by its first passed readiness check: a container without a
    // readiness probe shows nothing of it.
    let probed = case.container["readinessProbe"]["httpGet"].is_object();
    if let Some(&predicted) = said.containers_ready.first().filter(|_| probed) {
        match seen.containers_ready {
            Some(o) if (o - predicted).abs() > tolerance => {
                out.push(format!("container ready at {o:.1} s, simulate {predicted} s"));
            }
            None => out.push(format!("container never ready, simulate {predicted} s")),
            _ => {}
        }
    }
    // Gates that keep a ready container's pod out for good: the kubelet says
    // so in the pod's conditions.
    let held = !said.containers_ready.is_empty() && !in_endpoints;
    let said_so =
        seen.ready_reason.as_deref() == Some("ReadinessGatesNotReady") && seen.containers_ready_at_end == Some(true);
    if held && !said_so {
        out.push(format!(
            "at the end the pod's Ready reason is {:?} and ContainersReady {:?}, not ReadinessGatesNotReady with its \
             container ready",
            seen.ready_reason, seen.containers_ready_at_end
        ));
    }
    // A deletion sends the signal simulate names.
    if matches!(case.act, Act::Delete(_)) {
        let predicted = said.signal.as_deref().unwrap_or("SIGTERM");
        if seen.signal().is_some_and(|o| o != predicted) {
            out.push(format!("the workload got {:?}, simulate {predicted}", seen.signal()));
        }
        if seen.stop_signal_kept == Some(said.signal.is_none()) {
            out.push(format!(
                "the API server {} lifecycle.stopSignal, simulate says it is {}",
                if said.signal.is_none() { "kept" } else { "dropped" },
                if said.signal.is_none() { "dropped" } else { "sent" }
            ));
        }
    }
    out
}
