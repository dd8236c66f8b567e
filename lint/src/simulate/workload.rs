//! A workload scenario's outcome (`rollout`, `drain`) as text lines and as
//! a JSON object: the verdict, how the controller goes about it, what each
//! new and deleted pod does, and its steps with the capacity after each.

use policies::simulate::controllers::{Capacity, ControllerRun, PodPart};
use policies::simulate::{NotSimulated, WorkloadOutcome, seconds};
use serde_json::{Map, Value, json};

/// At most this many moments of a run in the text timeline; the JSON has them all.
const MAX_TEXT_MOMENTS: usize = 40;

/// The verdict line, what it rests on, and the timeline by moment.
pub fn lines(o: &WorkloadOutcome) -> Vec<String> {
    let mut out = vec![format!("{} [{}] {}", o.scenario, o.verdict.name(), o.message)];
    out.push(format!("  how: {}", o.how));
    out.push(format!("  each new pod: {}", part_line(&o.new_pod)));
    out.push(format!("  each deleted pod: {}", part_line(&o.old_pod)));
    if !o.assumptions.is_empty() {
        out.push(format!("  assumes: {}", policies::assumption::joined_brief(&o.assumptions)));
    }
    let moments = moments(&o.run);
    let shown = moments.len().min(MAX_TEXT_MOMENTS);
    for (at, steps) in &moments[..shown] {
        let c = capacity_at(&o.run, *at);
        let counts = format!("ready {}/{}, available {}, pods {}", c.ready, o.replicas, c.available, c.pods);
        out.push(format!("  {:>8}s  {}  [{counts}]", seconds(*at), steps.join(", ")));
    }
    if moments.len() > shown {
        out.push(format!("  ... {} more moments (--format json has every step)", moments.len() - shown));
    }
    out
}

/// The line of a workload scenario that does not run on an object.
pub fn not_simulated_line(n: &NotSimulated) -> String {
    format!("{}: not simulated: {}", n.scenario, n.why)
}

fn part_line(p: &PodPart) -> String {
    let when = match (p.scenario, p.after_ms) {
        ("boot", Some(ms)) => format!("Ready {} s after it is created", seconds(ms)),
        ("boot", None) => "never Ready".to_owned(),
        (_, ms) => format!("gone {} s after its deletion", seconds(ms.unwrap_or(0))),
    };
    format!("{} [{}] {when}; {}", p.scenario, p.verdict.name(), p.message)
}

/// The steps grouped by the moment they happen, each as `new-1 ready`.
fn moments(run: &ControllerRun) -> Vec<(i64, Vec<String>)> {
    let mut out: Vec<(i64, Vec<String>)> = Vec::new();
    for s in &run.steps {
        let mut text = match &s.pod {
            Some(pod) => format!("{pod} {}", s.kind.name()),
            None => s.kind.name().to_owned(),
        };
        if !s.detail.is_empty() {
            text.push_str(&format!(" ({})", s.detail));
        }
        match out.last_mut() {
            Some((at, steps)) if *at == s.at_ms => steps.push(text),
            _ => out.push((s.at_ms, vec![text])),
        }
    }
    out
}

/// The counts in force at `t`.
fn capacity_at(run: &ControllerRun, t: i64) -> Capacity {
    let before = run.capacity.iter().rev().find(|c| c.at_ms <= t);
    before.or(run.capacity.first()).copied().unwrap_or(Capacity { at_ms: t, ready: 0, available: 0, pods: 0 })
}

fn ms(t: Option<i64>) -> Value {
    t.map_or(Value::Null, |ms| if ms % 1000 == 0 { json!(ms / 1000) } else { json!(ms as f64 / 1000.0) })
}

fn part_object(p: &PodPart) -> Value {
    let after = if p.scenario == "boot" { "ready_after" } else { "gone_after" };
    json!({"scenario": p.scenario, "verdict": p.verdict.name(), "message": p.message, after: ms(p.after_ms)})
}

/// The outcome's fields under their stable names (docs/simulate.md).
pub fn object(o: &WorkloadOutcome) -> Map<String, Value> {
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
