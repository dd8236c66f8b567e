//! A workload scenario's outcome (`rollout`, `drain`) as text lines: the
//! verdict, how the controller goes about it, what each new and deleted pod
//! does, and its steps with the capacity after each (its JSON object is
//! [`super::json`]'s).

use policies::simulate::controllers::{Capacity, ControllerRun, PodPart};
use policies::simulate::{NotSimulated, WorkloadOutcome, seconds};

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
