//! The pod: all of its containers together. The kubelet reports a pod
//! Ready, and so in the Service's endpoints, only when every container,
//! regular and native sidecar, is ready and every readiness gate is True
//! (status/generate.go, `GenerateContainersReadyCondition` and
//! `GeneratePodReadyCondition`); a container without a readiness probe
//! counts ready once started (prober/prober_manager.go, `UpdatePodStatus`,
//! for regular and restartable init containers alike).
//!
//! When the pod starts, its init containers start one at a time: a native
//! sidecar (`restartPolicy: Always`) lets the next start once it has
//! started, its postStart hook returned and its startup probe, if any,
//! succeeded; the regular containers start once the last init container
//! has (kuberuntime/kuberuntime_container.go,
//! `computeInitContainerActions`), one after another, each once the
//! postStart hook of the one before returned (kuberuntime_manager.go,
//! `SyncPod`). So a sidecar's slow startup holds every container after it,
//! and a container that never starts holds them for good.
//!
//! Which scenarios the containers share: the pod's start (`boot`), a
//! dependency stall (the dependency is outside the pod: it hits every
//! container that checks it, each at its own probes' offset, and the pod is
//! out while any is, the worst of each) and the deletion (the pod leaves
//! the endpoints when it is deleted). A pause, a wedge, a crash or a
//! failing postStart hook is one container's: the others are taken as
//! ready, so the pod is out while that container is.

use super::assumptions::Assumptions;
use super::gates::{GateDelay, ReadinessGates};
use super::hooks::seen_after_start;
use super::pod::ContainerModel;
use super::pod_outcome::{PodOutcome, PodSpan};
use super::pod_stop::{stop_sidecars_in_turn, stops};
use super::reading::{Figures, PodReading, Refused};
use super::scenario::{Scenario, ScenarioKind};
use super::sweep::{ContainerOutcome, run_scenario, run_scenario_from};
use super::timeline::{Event, EventKind, Span};
use super::verdict::{Verdict, judge};
use crate::model::ProbeKind;

const MS: i64 = 1000;

/// One scenario on every container of a pod: each container's outcome,
/// carrying the pod's when the pod has more than one container.
pub(crate) fn run_pod(models: &[ContainerModel], scenario: &Scenario, a: &Assumptions) -> Vec<ContainerOutcome> {
    if models.len() < 2 {
        return models.iter().map(|m| run_scenario(m, scenario, a)).collect();
    }
    // The gates are the pod's: its containers run without them.
    let bare: Vec<ContainerModel> =
        models.iter().map(|m| ContainerModel { readiness_gates: ReadinessGates::default(), ..m.clone() }).collect();
    let gates = &models[0].readiness_gates;
    let sidecars = (0..bare.len()).filter(|&i| bare[i].sidecar);
    let order: Vec<usize> = sidecars.chain((0..bare.len()).filter(|&i| !bare[i].sidecar)).collect();
    let boot = matches!(scenario.kind, ScenarioKind::Boot(_));
    // A deleted pod with a native sidecar stops its sidecars in turn,
    // after the regular containers: they run once those have.
    let in_turn = scenario.kind == ScenarioKind::Delete && bare.iter().any(|m| m.sidecar);
    let mut outcomes: Vec<Option<(ContainerOutcome, bool)>> = vec![None; bare.len()];
    let mut started_ms = vec![None; bare.len()];
    // When the next init container (or the regular containers) may start,
    // and the sidecar that never lets them.
    let mut next = Some(0);
    let mut holder = String::new();
    for &i in order.iter().filter(|&&i| !(in_turn && bare[i].sidecar)) {
        let m = &bare[i];
        let Some(start) = (if boot { next } else { Some(0) }) else {
            outcomes[i] = Some((never_started(m, scenario, a, &holder), false));
            continue;
        };
        started_ms[i] = Some(start);
        let outcome = run_scenario_from(m, scenario, a, start);
        if boot {
            // The regular containers start one after another in one sync,
            // each once the one before has started and its postStart hook
            // returned (kuberuntime_manager.go, `SyncPod`, step 9).
            next = if m.sidecar { started_at(m, &outcome, start) } else { hook_returned(m, start) };
            if next.is_none() {
                let kind = if m.sidecar { "init container" } else { "container" };
                holder = format!("{kind} \"{}\"", m.name);
            }
        }
        outcomes[i] = Some((outcome, true));
    }
    if in_turn {
        stop_sidecars_in_turn(&bare, &order, scenario, a, &mut outcomes);
        started_ms = vec![Some(0); bare.len()];
    }
    let mut outcomes: Vec<(ContainerOutcome, bool)> = outcomes.into_iter().flatten().collect();
    let shared = matches!(scenario.kind, ScenarioKind::Boot(_) | ScenarioKind::Stall(_) | ScenarioKind::Delete);
    let horizon = outcomes.iter().map(|(o, _)| o.horizon_ms).max().unwrap_or(0);
    // The pod from the containers in `only`, the others taken as ready.
    let pod_of = |only: &[usize], outcomes: &[(ContainerOutcome, bool)]| {
        let spans: Vec<Vec<Span>> = outcomes
            .iter()
            .enumerate()
            .map(|(i, (o, _))| {
                // A span still open at its own run's end is open at the pod's.
                let open_at_end = |(a, b): Span| (a, if b >= o.horizon_ms { horizon } else { b });
                let own = only.contains(&i).then_some(&o.not_ready).into_iter().flatten();
                own.copied().map(open_at_end).collect()
            })
            .collect();
        let mut pod = pod_outcome(&bare, &order, &spans, horizon, &started_ms, scenario.kind, gates);
        if scenario.kind == ScenarioKind::Delete {
            pod.stops = stops(&bare, order.as_slice(), outcomes);
        }
        pod
    };
    let pods: Vec<PodOutcome> = if shared {
        vec![pod_of(&order, &outcomes)]
    } else {
        (0..outcomes.len()).map(|i| pod_of(&[i], &outcomes)).collect()
    };
    for (i, (o, ran)) in outcomes.iter_mut().enumerate() {
        let pod = if shared { &pods[0] } else { &pods[i] };
        // A container's readiness is its own; the pod's events say when
        // the pod is in the endpoints.
        for e in &mut o.events {
            e.kind = match e.kind {
                EventKind::Ready => EventKind::ContainerReady,
                EventKind::Unready => EventKind::ContainerUnready,
                kind => kind,
            };
        }
        if *ran && shared && scenario.kind != ScenarioKind::Delete {
            rejudge(o, pod, scenario.kind, gates);
        }
        o.pod = Some(pod.clone());
    }
    outcomes.into_iter().map(|(o, _)| o).collect()
}

/// Judges a container's outcome again with the pod's readiness: its line
/// speaks of the pod's endpoints and of what held the pod out.
fn rejudge(o: &mut ContainerOutcome, pod: &PodOutcome, kind: ScenarioKind, gates: &ReadinessGates) {
    let mut reading = o.reading.clone();
    reading.pod = Some(pod_reading(pod, &o.container));
    let joined = pod.events.iter().find(|e| e.kind == EventKind::Ready).map(|e| e.at_ms);
    if joined.is_none() && gates.never() {
        let word = if gates.conditions.len() == 1 { "gate is" } else { "gates are" };
        reading.never_serves =
            Some(format!("the pod's readiness {word} never True, as stated ({})", gates.conditions.join(", ")));
    }
    // In the endpoints before the app answers: the pod's entry is what counts.
    if let Some(refused) = reading.refused.filter(|_| matches!(kind, ScenarioKind::Boot(_))) {
        let answers = refused.from_ms + refused.for_ms;
        reading.refused = joined.filter(|&at| at < answers).map(|at| Refused { from_ms: at, for_ms: answers - at });
    }
    let (verdict, message) = judge(kind, &reading);
    o.verdict = verdict;
    o.message = message;
    o.reading = reading;
}

/// When an init container that started at `start` lets the next one start:
/// once its startup probe succeeded (the result syncs the pod at once), or,
/// without one, once the kubelet has seen it running after its postStart
/// hook ([`seen_after_start`]); `None` when it never does in the run.
fn started_at(m: &ContainerModel, o: &ContainerOutcome, start: i64) -> Option<i64> {
    if m.probe(ProbeKind::Startup).is_some() {
        return o.events.iter().find(|e| e.kind == EventKind::StartupSucceeded).map(|e| e.at_ms);
    }
    let first_kill = o.events.iter().find(|e| e.kind == EventKind::Kill).map(|e| e.at_ms);
    let seen = start + seen_after_start(m.poststart.as_ref())?;
    first_kill.is_none_or(|kill| kill >= seen).then_some(seen)
}

/// When a regular container started at `start` lets the next one start:
/// once its postStart hook returned; `None` for a hook that never does.
fn hook_returned(m: &ContainerModel, start: i64) -> Option<i64> {
    match m.poststart {
        None => Some(start),
        Some(hook) => hook.ms().map(|ms| start + ms),
    }
}

/// The outcome of a container the kubelet never starts: the container
/// before it (`init container "proxy"`) never started.
fn never_started(m: &ContainerModel, scenario: &Scenario, a: &Assumptions, before: &str) -> ContainerOutcome {
    let mut o = run_scenario(m, scenario, a);
    o.verdict = Verdict::OutOfService;
    o.message = format!(
        "never starts: the kubelet starts it only once {before} has started, and that never happens in the \
         timeline"
    );
    o.worst = Figures { unready_ms: o.horizon_ms, ..Figures::default() };
    o.best = o.worst;
    o.events = Vec::new();
    o.not_ready = vec![(0, o.horizon_ms)];
    o
}

/// The pod's spans out of the endpoints, from its containers' spans not
/// ready (`not_ready`, by container) and its gates, up to `horizon`.
fn pod_outcome(
    models: &[ContainerModel],
    order: &[usize],
    not_ready: &[Vec<Span>],
    horizon: i64,
    started_ms: &[Option<i64>],
    kind: ScenarioKind,
    gates: &ReadinessGates,
) -> PodOutcome {
    let mut out: Vec<PodSpan> = Vec::new();
    if kind == ScenarioKind::Delete {
        // A deleted pod's endpoint is no longer ready (terminating) at once.
        out.push(PodSpan {
            from_ms: 0,
            to_ms: horizon,
            open: true,
            held_by: Vec::new(),
            because: Some("the deletion".into()),
        });
    } else {
        let mut spans = union(not_ready.iter().flatten().copied().collect());
        if matches!(kind, ScenarioKind::Boot(_)) {
            spans = gated(spans, gates, horizon);
        }
        for (from_ms, to_ms) in spans {
            let last = to_ms - 1;
            let held_by: Vec<String> = order
                .iter()
                .filter(|&&i| not_ready[i].iter().any(|&(a, b)| a <= last && last < b))
                .map(|&i| models[i].name.clone())
                .collect();
            let because = held_by.is_empty().then(|| {
                let word = if gates.conditions.len() == 1 { "readiness gate" } else { "readiness gates" };
                format!("{word} {}", gates.conditions.join(", "))
            });
            out.push(PodSpan { from_ms, to_ms, open: to_ms >= horizon, held_by, because });
        }
    }
    let mut events = Vec::new();
    // A pod that starts is out until its containers are ready: in at once
    // when none holds it (no readiness probe anywhere).
    if matches!(kind, ScenarioKind::Boot(_)) && out.first().is_none_or(|s| s.from_ms > 0) {
        events.push(Event::new(0, None, EventKind::Ready, String::new()));
    }
    for span in &out {
        events.push(Event::new(span.from_ms, None, EventKind::Unready, String::new()));
        if !span.open {
            events.push(Event::new(
                span.to_ms,
                None,
                EventKind::Ready,
                format!("held out until then by {}", span.held()),
            ));
        }
    }
    PodOutcome {
        containers: order.iter().map(|&i| models[i].name.clone()).collect(),
        started_ms: order.iter().map(|&i| started_ms[i]).collect(),
        unready_ms: out.iter().map(|s| s.to_ms - s.from_ms).sum(),
        out,
        events,
        stops: Vec::new(),
    }
}

/// The pod's readiness gates over the spans its containers leave it out:
/// True the stated time after the containers are first all ready (at once
/// when unstated), never when stated so.
fn gated(spans: Vec<Span>, gates: &ReadinessGates, horizon: i64) -> Vec<Span> {
    if gates.conditions.is_empty() {
        return spans;
    }
    let first_ready = match spans.first() {
        Some(&(0, to)) => to,
        _ => 0,
    };
    let open = match gates.stated {
        Some(GateDelay::Never) => horizon,
        Some(GateDelay::After(s)) => (first_ready + s.max(0) * MS).min(horizon),
        None => first_ready,
    };
    union(spans.into_iter().chain([(0, open)]).collect())
}

/// Spans merged into sorted disjoint ones.
fn union(mut spans: Vec<Span>) -> Vec<Span> {
    spans.retain(|(a, b)| b > a);
    spans.sort_unstable();
    let mut out: Vec<Span> = Vec::new();
    for (a, b) in spans {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

impl PodSpan {
    /// What held the pod out, for a line: `container "proxy"`,
    /// `containers "a", "b"`, `readiness gate lb/ready`, `the deletion`.
    pub fn held(&self) -> String {
        let names: Vec<String> = self.held_by.iter().map(|n| format!("\"{n}\"")).collect();
        match (names.len(), &self.because) {
            (0, Some(why)) => why.clone(),
            (0, None) => "nothing".to_owned(),
            (1, _) => format!("container {}", names.join(", ")),
            _ => format!("containers {}", names.join(", ")),
        }
    }
}

/// What a verdict's line about `container` says of the pod: how long it
/// is out, and what held it out last, each once.
fn pod_reading(pod: &PodOutcome, container: &str) -> PodReading {
    let mut by: Vec<String> = Vec::new();
    for span in &pod.out {
        let held = span.held();
        if !by.contains(&held) {
            by.push(held);
        }
    }
    let others_hold = pod.out.iter().any(|s| s.held_by.is_empty() || s.held_by.iter().any(|n| n != container));
    PodReading { out_ms: pod.unready_ms, held_by: by.join("; "), others_hold }
}
