//! The JSON rendering: one entry per object, container and scenario with
//! the stable fields `file`, `line`, `kind`, `namespace`, `name`,
//! `container`, `scenario`, `verdict`, `severity`, `restarts`,
//! `restart_at`, `unready_seconds`, `sigkill`, `best`, `worst`,
//! `unready_at_once_seconds`, `events` and `assumptions` (what the verdict
//! rests on beyond the spec: `about`, `value`, `source`, `from`, `declare`);
//! for a pod of several containers, `pod` too: the pod's readiness in the
//! same scenario (`containers`, `started`, `unready_seconds`, `out`,
//! `events`). A workload scenario's entry (`rollout`, `drain`) has the
//! object's place, `container` null and [`workload_object`]'s fields.

use policies::simulate::controllers::{Capacity, PodPart};
use policies::simulate::{ContainerOutcome, Event, Figures, PodOutcome, WorkloadOutcome};
use serde_json::{Map, Value, json};

use crate::simulate::read::{SimulateRun, Simulated};

/// Renders a whole run as a JSON array (pretty, with a final newline).
pub fn render(run: &SimulateRun) -> String {
    let items: Vec<Value> = run.simulated.iter().flat_map(entries).collect();
    let mut text = serde_json::to_string_pretty(&Value::Array(items)).unwrap_or_else(|_| "[]".to_owned());
    text.push('\n');
    text
}

/// Milliseconds as JSON seconds: a whole number when whole.
pub(crate) fn seconds(ms: i64) -> Value {
    let s = ms as f64 / 1000.0;
    if ms % 1000 == 0 { json!(ms / 1000) } else { json!(s) }
}

/// The figures of a run under their stable names (`lifeguard audit --simulate` shares them).
pub(crate) fn figures(f: &Figures) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("restarts".into(), json!(f.restarts));
    m.insert("restart_at".into(), f.restart_at_ms.map_or(Value::Null, seconds));
    m.insert("unready_seconds".into(), seconds(f.unready_ms));
    m.insert("sigkill".into(), json!(f.sigkill));
    m
}

fn event(e: &Event) -> Value {
    let mut v = json!({
        "t": seconds(e.at_ms),
        "probe": e.probe.map(|p| p.word()),
        "event": e.kind.name(),
        "detail": e.detail,
    });
    // Only a stop that sends `lifecycle.stopSignal` names its signal.
    if let Some(signal) = &e.signal {
        v["signal"] = json!(signal);
    }
    v
}

/// The figures, verdict and events of one outcome.
fn outcome(o: &ContainerOutcome) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("verdict".into(), json!(o.verdict.name()));
    m.insert("severity".into(), json!(o.verdict.severity().map(|s| s.as_str())));
    m.insert("message".into(), json!(o.message));
    m.extend(figures(&o.worst));
    m.insert("best".into(), Value::Object(figures(&o.best)));
    m.insert("worst".into(), Value::Object(figures(&o.worst)));
    m.insert("unready_at_once_seconds".into(), o.unready_at_once_ms.map_or(Value::Null, seconds));
    m.insert("events".into(), o.events.iter().map(event).collect());
    m.insert("assumptions".into(), json!(o.assumptions));
    // Only a pod of several containers has one: for one, the container's
    // readiness is the pod's, and its entry stays as it was.
    if let Some(pod) = &o.pod {
        m.insert("pod".into(), pod_object(pod));
    }
    m
}

/// The pod's readiness: its containers in the order the kubelet starts
/// them, when each first started (null: never), its spans out of the
/// endpoints with the containers that held each out last (`held_by`) or
/// what else did (`because`: its readiness gates, its deletion), and its
/// `in-endpoints` and `out-of-endpoints` events; in a deletion, `stops`:
/// each container's SIGTERM (the stop signal) and exit or SIGKILL, in the
/// order the kubelet stops them (native sidecars last, in reverse).
fn pod_object(pod: &PodOutcome) -> Value {
    let out: Vec<Value> = pod
        .out
        .iter()
        .map(|s| {
            json!({
                "from": seconds(s.from_ms),
                "to": if s.open { Value::Null } else { seconds(s.to_ms) },
                "held_by": s.held_by,
                "because": s.because,
            })
        })
        .collect();
    json!({
        "containers": pod.containers,
        "started": pod.started_ms.iter().map(|t| t.map_or(Value::Null, seconds)).collect::<Vec<_>>(),
        "unready_seconds": seconds(pod.unready_ms),
        "out": out,
        "events": pod.events.iter().map(event).collect::<Vec<_>>(),
        "stops": pod.stops.iter().map(|s| json!({
            "container": s.container,
            "sigterm": seconds(s.sigterm_ms),
            "exited": if s.killed { Value::Null } else { seconds(s.end_ms) },
            "sigkill": if s.killed { seconds(s.end_ms) } else { Value::Null },
        })).collect::<Vec<_>>(),
    })
}

fn entries(s: &Simulated) -> Vec<Value> {
    let sim = &s.simulation;
    let mut out = container_entries(s);
    let place = |scenario: &str| {
        let mut m = Map::new();
        m.insert("file".into(), json!(s.file));
        m.insert("line".into(), json!(s.line));
        m.insert("kind".into(), json!(sim.kind));
        m.insert("namespace".into(), json!(sim.namespace));
        m.insert("name".into(), json!(sim.name));
        m.insert("container".into(), Value::Null);
        m.insert("scenario".into(), json!(scenario));
        m
    };
    // A workload scenario's entry has no container: it is the workload's.
    for (i, o) in sim.workload.iter().enumerate() {
        let mut m = place(&o.scenario);
        m.extend(workload_object(o));
        if let Some(fixed) = &s.fixed {
            let mut f = fixed.simulation.workload.get(i).map(workload_object).unwrap_or_default();
            f.insert("fixes".into(), json!(fixed.fixes));
            m.insert("fixed".into(), Value::Object(f));
        }
        out.push(Value::Object(m));
    }
    for n in &sim.not_simulated {
        let mut m = place(&n.scenario);
        m.insert("verdict".into(), Value::Null);
        m.insert("severity".into(), Value::Null);
        m.insert("not_simulated".into(), json!(n.why));
        out.push(Value::Object(m));
    }
    out
}

fn container_entries(s: &Simulated) -> Vec<Value> {
    let sim = &s.simulation;
    sim.outcomes
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let mut m = Map::new();
            m.insert("file".into(), json!(s.file));
            m.insert("line".into(), json!(s.container_lines.get(i).copied().unwrap_or(s.line)));
            m.insert("kind".into(), json!(sim.kind));
            m.insert("namespace".into(), json!(sim.namespace));
            m.insert("name".into(), json!(sim.name));
            m.insert("container".into(), json!(o.container));
            m.insert("scenario".into(), json!(o.scenario));
            m.extend(outcome(o));
            if let Some(fixed) = &s.fixed {
                let mut f = fixed.simulation.outcomes.get(i).map(outcome).unwrap_or_default();
                f.insert("fixes".into(), json!(fixed.fixes));
                m.insert("fixed".into(), Value::Object(f));
            }
            Value::Object(m)
        })
        .collect()
}

fn ms(t: Option<i64>) -> Value {
    t.map_or(Value::Null, seconds)
}

fn part_object(p: &PodPart) -> Value {
    let after = if p.scenario == "boot" { "ready_after" } else { "gone_after" };
    json!({"scenario": p.scenario, "verdict": p.verdict.name(), "message": p.message, after: ms(p.after_ms)})
}

/// The outcome's fields under their stable names (docs/simulate.md).
pub fn workload_object(o: &WorkloadOutcome) -> Map<String, Value> {
    let run = &o.run;
    let lowest = |c: Option<Capacity>, field: &str| {
        c.map_or(
            Value::Null,
            |c| json!({"t": ms(Some(c.at_ms)), field: if field == "ready" { c.ready } else { c.available }}),
        )
    };
    let mut m = Map::new();
    m.insert("verdict".into(), json!(o.verdict.name()));
    m.insert("severity".into(), json!(o.verdict.severity().map(|s| s.as_str())));
    m.insert("message".into(), json!(o.message));
    m.insert("how".into(), json!(o.how));
    m.insert("replicas".into(), json!(o.replicas));
    m.insert("complete_at".into(), ms(run.complete_ms));
    m.insert("stuck".into(), json!(run.stuck));
    m.insert("lowest_ready".into(), lowest(run.lowest_ready(), "ready"));
    m.insert("lowest_available".into(), lowest(run.lowest_available(), "available"));
    m.insert("progress_deadline_exceeded_at".into(), run.deadline_exceeded_ms.iter().map(|t| ms(Some(*t))).collect());
    m.insert("new_pod".into(), part_object(&o.new_pod));
    m.insert("old_pod".into(), part_object(&o.old_pod));
    m.insert(
        "capacity".into(),
        run.capacity
            .iter()
            .map(|c| json!({"t": ms(Some(c.at_ms)), "ready": c.ready, "available": c.available, "pods": c.pods}))
            .collect(),
    );
    m.insert(
        "steps".into(),
        run.steps
            .iter()
            .map(|s| json!({"t": ms(Some(s.at_ms)), "event": s.kind.name(), "pod": s.pod, "detail": s.detail}))
            .collect(),
    );
    m.insert("assumptions".into(), json!(o.assumptions));
    m
}
