//! What the kubelet did to a case's pod on the node: the case run, read
//! from the workload's own log of probes and signals and from the pod's
//! status as watched.

use std::time::Duration;

use serde_json::{Value, json};

use crate::cluster::dependency::Dependency;
use crate::cluster::node::Node;
use crate::cluster::pods::{self, PodWatch, now_ms};
use crate::cluster::process::poll_for;

use super::case::{Act, Case};
use super::stop::{self, Stop};
use super::{lifecycle, pod, since, traffic};

/// What the kubelet did to one case's pod, in seconds from the case's 0.
#[derive(Debug, Default)]
pub struct Observed {
    /// SIGTERMs the workload received (kills and deletion).
    pub sigterms: Vec<f64>,
    /// Container starts after the first.
    pub restarts: Vec<f64>,
    /// Readiness changes: (time, ready).
    pub readiness: Vec<(f64, bool)>,
    /// The workload's own exit, if it logged one after SIGTERM.
    pub exited: Option<f64>,
    /// When the workload was last heard of, if it did not exit by itself
    /// (SIGKILL comes within the drain's 200 ms tick after).
    pub killed: Option<f64>,
    /// What the lifecycle's cases read beyond the others.
    pub lifecycle: lifecycle::Seen,
    /// When each container of a pod case first started.
    pub starts: Vec<(String, f64)>,
    /// A deleted pod case's other containers' SIGTERM and exit.
    pub stops: Vec<Stop>,
    /// The requests through a case's Service that failed (start, end),
    /// where it sends any (`Others.traffic_to`).
    pub failed: Option<Vec<(f64, f64)>>,
    /// Kills and restarts before the scenario's time 0 (a disruption or a
    /// deletion of a pod that was serving): outside the scenario, so what
    /// follows is no test of the model.
    pub outside: Vec<String>,
    /// The workload's log over the window ([`timeline`]).
    pub timeline: Vec<String>,
}

/// The case's workload's kept log, a line per event, for a failure.
pub fn workload_log(node: &Node, case: &Case) -> String {
    pods::kept_log(node, case.name).iter().map(|e| e.line.to_string()).collect::<Vec<_>>().join("\n")
}

/// When the case's workload first logged `event`, waiting at most `limit`;
/// otherwise panics naming the case, with the pod's conditions and
/// containers' states (a pod the scheduler cannot place says why there).
pub fn first_logged(node: &Node, ns: &str, case: &Case, event: &str, limit: Duration) -> u64 {
    let logged =
        poll_for(limit, || pods::kept_log(node, case.name).iter().find(|e| e.event == event).map(|e| e.t_ms).ok_or(()));
    logged.unwrap_or_else(|()| {
        let run = node.plane.kubectl.run(&["get", "pod", case.name, "-n", ns, "-o", "json"]);
        let status = if run.code == 0 {
            let pod = run.json();
            json!({"nodeName": pod["spec"]["nodeName"], "status": pod["status"]}).to_string()
        } else {
            run.stderr
        };
        panic!(
            "case {}: no {event} logged within {limit:?}; the pod: {status}\nthe workload's log:\n{}\n{}",
            case.name,
            workload_log(node, case),
            pods::kubelet_account(node, ns, case.name, 40)
        )
    })
}

/// Runs `case` on the node and reads what happened.
pub fn observe(node: &Node, ns: &str, case: &Case, pod: &Value, watch: &PodWatch, dependency: &Dependency) -> Observed {
    let kubectl = &node.plane.kubectl;
    let created = kubectl.run_with_input(&["create", "-n", ns, "-f", "-"], Some(&pod.to_string()));
    assert!(created.code == 0, "case {}: {}: {}", case.name, created.command, created.stderr);
    let log = || pods::kept_log(node, case.name);
    let ready_within = Duration::from_secs(60);
    let mut stop_signal_kept = None;
    let mut traffic = None;
    let t0 = match case.act {
        Act::Boot => first_logged(node, ns, case, "start", ready_within),
        Act::Gate(seconds) => {
            let t0 = first_logged(node, ns, case, "start", ready_within);
            lifecycle::set_gate_after_ready(node, ns, case, seconds, log);
            t0
        }
        Act::Own(event) => first_logged(node, ns, case, event, ready_within),
        Act::Stall(seconds) => {
            watch.until(case.name, ready_within, |seen| seen.iter().any(|(_, s)| s.ready));
            // Some periods of steady state first, so the probes run on their grid.
            std::thread::sleep(Duration::from_secs(3));
            let t0 = now_ms();
            dependency.stall_for(Duration::from_secs(seconds));
            t0
        }
        Act::Delete(grace) => {
            watch.until(case.name, ready_within, |seen| seen.iter().any(|(_, s)| s.ready));
            stop_signal_kept = lifecycle::stop_signal_kept(node, ns, case);
            traffic = traffic::start(node, ns, case, pod);
            std::thread::sleep(Duration::from_secs(2));
            let t0 = now_ms();
            let grace = grace.map(|g| format!("--grace-period={g}"));
            let mut args = vec!["delete", "pod", case.name, "-n", ns, "--wait=false"];
            args.extend(grace.as_deref());
            kubectl.run(&args).ok();
            t0
        }
    };
    let end = t0 + case.observe * 1000;
    std::thread::sleep(Duration::from_millis(end.saturating_sub(now_ms())));
    // A pod case's 0 is its first container's start (a sidecar's, before
    // the app's), watched as long from the app's; a deletion's stays the
    // deletion, and its others' stops are read instead.
    let deletion = matches!(case.act, Act::Delete(_));
    let others = if deletion { Vec::new() } else { pod::other_starts(node, case) };
    let main_start = matches!(case.act, Act::Boot).then_some(t0);
    let t0 = others.iter().map(|(_, t)| *t).chain([t0]).min().unwrap_or(t0);
    let events = log();
    let within = |t: u64| t >= t0 && t <= end;
    let readiness = watch
        .of(case.name)
        .iter()
        .filter(|(t, _)| within(*t))
        .scan(None, |last, (t, s)| {
            let change = (*last != Some(s.ready)).then(|| (since(t0, *t), s.ready));
            *last = Some(s.ready);
            Some(change)
        })
        .flatten()
        .collect();
    // A boot's 0 is the first start: nothing comes before it.
    let outside = match case.act {
        Act::Boot | Act::Gate(_) => Vec::new(),
        Act::Own(_) | Act::Stall(_) | Act::Delete(_) => events
            .iter()
            .filter(|e| e.t_ms < t0)
            .filter_map(|e| match e.event.as_str() {
                "signal" => Some(format!("SIGTERM at {:.3} s", since(t0, e.t_ms))),
                "start" if e.incarnation > 0 => Some(format!("started again at {:.3} s", since(t0, e.t_ms))),
                _ => None,
            })
            .collect(),
    };
    let exited = events.iter().find(|e| e.event == "exit" && within(e.t_ms)).map(|e| since(t0, e.t_ms));
    Observed {
        sigterms: events.iter().filter(|e| e.event == "signal" && within(e.t_ms)).map(|e| since(t0, e.t_ms)).collect(),
        restarts: events
            .iter()
            .filter(|e| e.event == "start" && e.incarnation > 0 && within(e.t_ms))
            .map(|e| since(t0, e.t_ms))
            .collect(),
        readiness,
        exited: exited.filter(|_| deletion),
        // No exit of its own: the last line it wrote (a heartbeat comes
        // every 200 ms from SIGTERM on) dates the SIGKILL.
        killed: events.last().map(|e| since(t0, e.t_ms)).filter(|_| deletion && exited.is_none()),
        lifecycle: lifecycle::seen(node, ns, case, &events, (t0, end), stop_signal_kept),
        outside,
        starts: if others.is_empty() { Vec::new() } else { pod::starts_since(t0, main_start, &others) },
        stops: if deletion { stop::other_stops(node, case, t0) } else { Vec::new() },
        failed: traffic.map(|t| traffic::failures(t, t0)),
        timeline: timeline(&events, t0, end),
    }
}

/// The workload's log from `t0` to `end` (ms), a line per event, for a
/// disagreement's report: probe requests that failed and every other
/// event but the heartbeats after SIGTERM.
fn timeline(events: &[pods::Event], t0: u64, end: u64) -> Vec<String> {
    events
        .iter()
        .filter(|e| e.t_ms + 2000 >= t0 && e.t_ms <= end && e.event != "alive")
        .filter(|e| e.event != "request" || (e.line["status"] != 200 && e.line["status"] != "SERVING"))
        .map(|e| {
            let what = match e.event.as_str() {
                "request" => format!(
                    "request {} {}",
                    e.line["path"].as_str().unwrap_or("?"),
                    e.line["status"].to_string().trim_matches('"')
                ),
                "signal" => format!("signal {}", e.line["name"].as_str().unwrap_or("?")),
                other => other.to_owned(),
            };
            format!("{:>7.1}s #{} {what}", since(t0, e.t_ms), e.incarnation)
        })
        .collect()
}
