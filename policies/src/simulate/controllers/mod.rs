//! The workload as its controller runs it: `rollout` (the Deployment or
//! StatefulSet controller replaces every pod with one of a new template)
//! and `drain` (the nodes that hold the pods are drained one after
//! another against the input's PodDisruptionBudgets).
//!
//! Each pod is the pod model's: a new pod is Ready when the `boot`
//! scenario's worst phase offset has it in the endpoints, and a deleted pod
//! is gone when the `delete` scenario's last container ends, so a rollout
//! rests on the same assumptions as those two scenarios, and says what
//! each new pod's boot and each old pod's deletion do to requests. The
//! controllers' steps are in [`deployment`], [`stateful_set`] and [`drain`].
//!
//! Over 400 lines: what both workload scenarios share on the way from the pod's
//! runs to a verdict: the outcome types, `run_workload` and the replicas it
//! reads, the controller each update strategy picks, and the verdicts of a
//! rollout and a drain (about 115 lines); the controllers' steps and the tests
//! already have files of their own.

mod daemon_set;
mod deployment;
mod drain;
mod replicas;
mod run;
mod stateful_set;
#[cfg(test)]
mod tests;

pub use drain::EVICTION_RETRY_MS;
pub use replicas::{Capacity, ReplicaTimes};
pub use run::{ControllerRun, Step, StepKind};

use serde_json::Value;

use super::assumptions::DEFAULT_NODES;
use super::scenario::{Scenario, ScenarioKind};
use super::sweep::ContainerOutcome;
use super::timeline::EventKind;
use super::verdict::{Verdict, plural, seconds};
use crate::assumption::{About, Assumption, Source};
use crate::model::{Batch, Rollout, Update, Workload, startup_window};
use crate::policy::Policy;

/// A workload in a workload scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadOutcome {
    /// The scenario as given (`rollout`, `drain`).
    pub scenario: String,
    /// The consequence.
    pub verdict: Verdict,
    /// The verdict's line.
    pub message: String,
    /// How the controller replaces or the drain evicts the pods, in words
    /// (`RollingUpdate, maxSurge 1, maxUnavailable 0`).
    pub how: String,
    /// The replicas it runs over.
    pub replicas: i64,
    /// What each new pod's boot does.
    pub new_pod: PodPart,
    /// What each deleted pod's stop does.
    pub old_pod: PodPart,
    /// The controller's run.
    pub run: ControllerRun,
    /// What the verdict rests on beyond the spec, with sources.
    pub assumptions: Vec<Assumption>,
}

/// What the pod model says of one replica in the run: its scenario's
/// verdict (the worst of its containers) and its time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodPart {
    /// `boot` or `delete`.
    pub scenario: &'static str,
    /// The worst verdict of the pod's containers in it.
    pub verdict: Verdict,
    /// That verdict's line, with its container.
    pub message: String,
    /// From creation to Ready (`boot`; `None`: never) or from deletion to
    /// gone (`delete`), ms.
    pub after_ms: Option<i64>,
}

/// Why a workload scenario does not run on an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotSimulated {
    /// The scenario as given.
    pub scenario: String,
    /// Why, in words.
    pub why: String,
}

/// The most replicas a run takes: a bigger workload is not simulated, and says so.
pub const MAX_REPLICAS: i64 = 1000;

/// The pod model's runs a workload scenario reads: each container's
/// outcome in `boot` and in `delete`; and the nodes a DaemonSet runs on,
/// as stated.
pub(crate) struct PodRuns {
    pub boot: Vec<ContainerOutcome>,
    pub delete: Vec<ContainerOutcome>,
    pub nodes: Option<i64>,
}

/// Runs a workload scenario (`rollout`, `drain`) on the workload `w` of
/// `object`, from its pod's runs.
pub(crate) fn run_workload(
    scenario: &Scenario,
    object: &Value,
    w: &Workload,
    batch: &Batch,
    policy: &Policy,
    pods: &PodRuns,
) -> Result<WorkloadOutcome, NotSimulated> {
    let (boot, delete) = (pods.boot.as_slice(), pods.delete.as_slice());
    let drain = scenario.kind == ScenarioKind::Drain;
    let scenario = scenario.label.as_str();
    let not = |why: String| NotSimulated { scenario: scenario.to_owned(), why };
    if !w.long_running {
        return Err(not(format!("a {} runs to completion; no controller keeps its pods serving", kind_of(w))));
    }
    let daemon = w.kind == "DaemonSet";
    if daemon && drain {
        return Err(not(
            "`kubectl drain` leaves a DaemonSet's pods (--ignore-daemonsets): they go with their node".to_owned()
        ));
    }
    let (replicas, replicas_assumption) = if daemon { nodes(pods.nodes) } else { replicas(object, w, batch) };
    if replicas > MAX_REPLICAS {
        return Err(not(format!("{replicas} replicas, more than the {MAX_REPLICAS} a run takes")));
    }
    let new_pod = part("boot", boot, ready_after(boot));
    let old_pod = part("delete", delete, Some(gone_after(delete)));
    let times = ReplicaTimes { ready_after_ms: new_pod.after_ms, gone_after_ms: old_pod.after_ms.unwrap_or(0) };
    let (how, run) = if drain {
        let budgets: Vec<drain::Budget> = batch
            .budgets_of(w)
            .map(|b| drain::Budget {
                label: b.label(),
                desired_healthy: b.desired_healthy(Some(replicas)).unwrap_or(0).min(i64::MAX / 2),
            })
            .collect();
        let how = match budgets.as_slice() {
            [] => "no PodDisruptionBudget selects the pods: every eviction is allowed".to_owned(),
            [one] => format!("{} wants {} of {replicas} healthy", one.label, one.desired_healthy),
            more => format!("{} PodDisruptionBudgets select the pods", more.len()),
        };
        (format!("one node at a time, one pod on each; {how}"), drain::drain(replicas, &budgets, times))
    } else if daemon {
        daemon_set::rollout(object, replicas, times).map_err(not)?
    } else {
        rollout(object, w, policy, replicas, times).map_err(not)?
    };
    let mut assumptions = vec![replicas_assumption];
    for o in boot.iter().chain(delete) {
        for a in &o.assumptions {
            if !assumptions.contains(a) {
                assumptions.push(a.clone());
            }
        }
    }
    let mut outcome = WorkloadOutcome {
        scenario: scenario.to_owned(),
        verdict: Verdict::Ok,
        message: String::new(),
        how,
        replicas,
        new_pod,
        old_pod,
        run,
        assumptions,
    };
    (outcome.verdict, outcome.message) = if drain { judge_drain(&outcome) } else { judge_rollout(&outcome, w, policy) };
    Ok(outcome)
}

fn kind_of(w: &Workload) -> &str {
    if w.kind.is_empty() { "object" } else { &w.kind }
}

/// The replicas: `spec.replicas` as written, else the floor of the
/// autoscaler of the input that scales it, else 1 (the API server's default).
fn replicas(object: &Value, w: &Workload, batch: &Batch) -> (i64, Assumption) {
    if let Some(n) = object.pointer("/spec/replicas").and_then(Value::as_i64) {
        return (n.max(0), Assumption::new(About::Replicas, n.to_string(), Source::Spec, "spec.replicas"));
    }
    if let Some(a) = batch.autoscaler_of(w) {
        let name = a.name.as_deref().unwrap_or("(unnamed)");
        let from = format!("minReplicas of HorizontalPodAutoscaler/{name}");
        return (
            a.min_replicas.max(1),
            Assumption::new(About::Replicas, a.min_replicas.to_string(), Source::Spec, from),
        );
    }
    (1, Assumption::new(About::Replicas, "1", Source::Default, "spec.replicas unset: the API server's default"))
}

/// A DaemonSet's pods: one a node, as many as stated, else [`DEFAULT_NODES`].
fn nodes(stated: Option<i64>) -> (i64, Assumption) {
    match stated {
        Some(n) => (n.max(0), Assumption::new(About::Replicas, n.to_string(), Source::CommandLine, "--nodes")),
        None => (
            DEFAULT_NODES,
            Assumption::new(
                About::Replicas,
                DEFAULT_NODES.to_string(),
                Source::Default,
                "a DaemonSet runs a pod on each node; the manifest does not say how many",
            ),
        ),
    }
}

/// The worst verdict of the pod's containers in one scenario, with its line.
fn part(scenario: &'static str, outcomes: &[ContainerOutcome], after_ms: Option<i64>) -> PodPart {
    let worst = outcomes.iter().max_by_key(|o| (o.verdict.severity(), std::cmp::Reverse(o.pointer.len())));
    PodPart {
        scenario,
        verdict: worst.map_or(Verdict::Ok, |o| o.verdict),
        message: worst.map_or_else(String::new, |o| format!("container {:?}: {}", o.container, o.message)),
        after_ms,
    }
}

/// When the pod is first in the endpoints in its boot: the pod's own
/// events for a pod of several containers, else its container's.
fn ready_after(boot: &[ContainerOutcome]) -> Option<i64> {
    let first = boot.first()?;
    let events = first.pod.as_ref().map_or(&first.events, |p| &p.events);
    events.iter().find(|e| e.kind == EventKind::Ready).map(|e| e.at_ms)
}

/// When the deleted pod's last container ended.
fn gone_after(delete: &[ContainerOutcome]) -> i64 {
    if let Some(pod) = delete.first().and_then(|o| o.pod.as_ref()).filter(|p| !p.stops.is_empty()) {
        return pod.stops.iter().map(|s| s.end_ms).max().unwrap_or(0);
    }
    let ends = |o: &ContainerOutcome| {
        o.events.iter().filter(|e| matches!(e.kind, EventKind::Exited | EventKind::Sigkill)).map(|e| e.at_ms).max()
    };
    delete.iter().filter_map(ends).max().unwrap_or(0)
}

/// A Deployment's or StatefulSet's rollout.
fn rollout(
    object: &Value,
    w: &Workload,
    policy: &Policy,
    replicas: i64,
    times: ReplicaTimes,
) -> Result<(String, ControllerRun), String> {
    let kind = kind_of(w);
    let Some(settings) = &w.rollout else {
        return Err(format!("a {kind}'s rollout is not simulated (a Deployment's or a StatefulSet's is)"));
    };
    let min_ready_ms = settings.min_ready_seconds.saturating_mul(1000);
    // The rollout model reads the fenceposts for the replicas as written;
    // another count (an autoscaler's floor, the default 1) resolves them again.
    let update = if settings.replicas == Some(replicas) {
        settings.update.clone()
    } else {
        Rollout::of(&with_replicas(object, replicas), &w.kind).and_then(|r| r.update)
    };
    match (kind, update) {
        (_, None) => {
            Err(format!("the {kind}'s update strategy does not roll (OnDelete, or a value the API server refuses)"))
        }
        ("Deployment", Some(Update::Recreate)) => {
            let plan = deployment::Plan {
                replicas,
                strategy: deployment::Strategy::Recreate,
                min_ready_ms,
                deadline_ms: settings.progress_deadline_seconds.map(|d| d.saturating_mul(1000)),
            };
            Ok((
                "Recreate: every old pod deleted, the new ones created once all are gone".to_owned(),
                deployment::roll(plan, times),
            ))
        }
        ("Deployment", Some(Update::Rolling { surge, unavailable, .. })) => {
            let plan = deployment::Plan {
                replicas,
                strategy: deployment::Strategy::Rolling { surge, unavailable },
                min_ready_ms,
                deadline_ms: settings.progress_deadline_seconds.map(|d| d.saturating_mul(1000)),
            };
            let how = format!("RollingUpdate: maxSurge {surge}, maxUnavailable {unavailable} of {replicas}");
            Ok((how, deployment::roll(plan, times)))
        }
        (_, Some(Update::Rolling { unavailable, gated, .. })) => {
            // Without the gate, the controller takes one pod at a time.
            let unavailable = if gated && policy.settings.kubernetes_minor() < (1, 37) { 1 } else { unavailable };
            let plan = stateful_set::Plan {
                replicas,
                unavailable,
                partition: settings.partition,
                parallel: settings.parallel,
                min_ready_ms,
            };
            let order = if settings.parallel { "Parallel" } else { "OrderedReady" };
            let mut how =
                format!("RollingUpdate: {order}, {} at a time, highest ordinal first", plural(unavailable, "pod"));
            if settings.partition > 0 {
                how.push_str(&format!(", ordinals from {} (partition)", settings.partition));
            }
            let name = w.name.as_deref().unwrap_or("pod");
            Ok((how, stateful_set::roll(plan, name, times)))
        }
        (_, Some(Update::Recreate)) => Err(format!("a {kind} has no Recreate strategy")),
    }
}

/// `object` with `spec.replicas` set to `replicas`.
fn with_replicas(object: &Value, replicas: i64) -> Value {
    let mut copy = object.clone();
    if let Some(spec) = copy.get_mut("spec").and_then(Value::as_object_mut) {
        spec.insert("replicas".to_owned(), Value::from(replicas));
    }
    copy
}

/// `12 s`, or `never`.
fn when(ms: Option<i64>) -> String {
    ms.map_or_else(|| "never".to_owned(), |t| format!("{} s", seconds(t)))
}

/// The rollout's verdict: the controller's own (stuck, out of service, a
/// deadline, capacity), else what each new pod's boot or old pod's
/// deletion does to requests, whichever is worse.
fn judge_rollout(o: &WorkloadOutcome, w: &Workload, policy: &Policy) -> (Verdict, String) {
    let run = &o.run;
    let r = o.replicas;
    let lowest = run.lowest_available().map_or(0, |c| c.available);
    let summary = format!(
        "the rollout of {} completes in {}; at least {lowest} of {r} available",
        plural(r, "replica"),
        when(run.complete_ms)
    );
    let own = if let Some(stuck) = &run.stuck {
        let boot = &o.new_pod;
        Some((
            Verdict::RolloutStuck,
            format!("the rollout never completes: {stuck} (boot: {}, {})", boot.verdict.name(), boot.message),
        ))
    } else if run.lowest_ready().is_some_and(|c| c.ready == 0) && r > 0 {
        let out = run.none_ready_ms();
        Some((Verdict::OutOfService, format!("no pod is Ready for {} s during the rollout; {summary}", seconds(out))))
    } else if let Some(exceeded) = deadline(o, w, policy) {
        Some((Verdict::ProgressDeadlineExceeded, format!("{exceeded}; {summary}")))
    } else {
        capacity_short(o, policy).map(|short| (Verdict::CapacityShort, format!("{short}; {summary}")))
    };
    worse_of_pods(own, o, summary)
}

/// The deadline's verdict line: exceeded in the run, or by a boot as long
/// as the pod's startup window allows (what `progress-deadline-too-short`
/// holds the deadline to: one story, whichever boot is assumed).
fn deadline(o: &WorkloadOutcome, w: &Workload, policy: &Policy) -> Option<String> {
    let deadline = w.rollout.as_ref()?.progress_deadline_seconds?;
    if let Some(first) = o.run.deadline_exceeded_ms.first() {
        let times = o.run.deadline_exceeded_ms.len() as i64;
        let all = if times > 1 { format!(", {} in all", plural(times, "time")) } else { String::new() };
        // A boot the kubelet restarts outlasts the startup window the
        // deadline is held to: its own finding's story, said here.
        let restarted = match o.new_pod.verdict {
            Verdict::Restarts => " (it restarts before it is Ready, past its startup window)",
            _ => "",
        };
        return Some(format!(
            "progress deadline ({deadline} s) exceeded at {} s while a new pod boots{restarted}{all}",
            seconds(*first)
        ));
    }
    let window = startup_window(w, policy);
    if window.seconds > deadline && !window.only_assumed() {
        return Some(format!(
            "a pod that boots for as long as its startup window allows ({} s) exceeds the progress deadline ({deadline} s), \
             though the assumed boot does not",
            window.seconds
        ));
    }
    None
}

/// Fewer available than the policy's `minRolloutCapacityPercent` for
/// longer than a quick boot (`slowBootInitialDelaySeconds`), in words.
fn capacity_short(o: &WorkloadOutcome, policy: &Policy) -> Option<String> {
    let wanted = policy.settings.min_rollout_capacity_percent;
    if wanted <= 0 || o.replicas < 1 {
        return None;
    }
    let need = (wanted * o.replicas + 99) / 100;
    let below = o.run.below_available_ms(need);
    let quick = policy.settings.slow_boot_initial_delay_seconds.saturating_mul(1000);
    let lowest = o.run.lowest_available()?.available;
    (lowest < need && below > quick).then(|| {
        format!(
            "{lowest} of {} available at the lowest, below minRolloutCapacityPercent {wanted}% ({need}), for {} s in all",
            o.replicas,
            seconds(below)
        )
    })
}

/// A drain's verdict.
fn judge_drain(o: &WorkloadOutcome) -> (Verdict, String) {
    let run = &o.run;
    let lowest = run.lowest_ready().map_or(0, |c| c.ready);
    let summary = format!(
        "the drain of {} completes in {}; at least {lowest} of {} Ready",
        plural(o.replicas, "node"),
        when(run.complete_ms),
        o.replicas
    );
    let own = if let Some(stuck) = &run.stuck {
        Some((Verdict::EvictionBlocked, format!("the drain never completes: {stuck}")))
    } else if lowest == 0 && o.replicas > 0 {
        let out = run.none_ready_ms();
        let why = if o.replicas == 1 {
            "the only pod is evicted before a replacement is Ready".to_owned()
        } else {
            "the drain moves on once a node's pod is gone, while the replacements before it still boot".to_owned()
        };
        Some((Verdict::OutOfService, format!("no pod is Ready for {} s: {why}; {summary}", seconds(out))))
    } else {
        None
    };
    worse_of_pods(own, o, summary)
}

/// The controller's verdict, unless a pod's own (each new pod's boot, each
/// deleted pod's stop) is worse; `ok` with the summary when neither says more.
fn worse_of_pods(own: Option<(Verdict, String)>, o: &WorkloadOutcome, summary: String) -> (Verdict, String) {
    let (mut verdict, mut message) = own.unwrap_or((Verdict::Ok, summary.clone()));
    for (pod, each) in [(&o.old_pod, "each deleted pod"), (&o.new_pod, "each new pod")] {
        if pod.verdict.severity() > verdict.severity() {
            (verdict, message) = (pod.verdict, format!("{each} ({}): {}; {summary}", pod.scenario, pod.message));
        }
    }
    (verdict, message)
}
