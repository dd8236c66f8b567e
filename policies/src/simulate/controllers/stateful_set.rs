//! The StatefulSet controller's rolling update
//! (`pkg/controller/statefulset/stateful_set_control.go`), over the pod
//! model's replica times.
//!
//! Each sync walks the ordinals in order: a pod that is gone is created
//! again from the new revision; with `podManagementPolicy: OrderedReady`
//! (the default) the walk stops at the first pod that is not Ready and
//! available, and the update waits for every pod to be so. The update then
//! deletes the highest ordinals at or above `partition` still on the old
//! revision, as many as keep the unavailable pods within `maxUnavailable`
//! (1 unless the `MaxUnavailableStatefulSet` gate reads more). A deleted
//! pod holds its name until its last container ends: its replacement is
//! created only then.

use super::replicas::{Replica, ReplicaTimes, next_change};
use super::run::{ControllerRun, Step, StepKind};

/// A StatefulSet's rolling update as its controller runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    pub replicas: i64,
    /// The pods it may take out at once, as the cluster reads it.
    pub unavailable: i64,
    pub partition: i64,
    /// `podManagementPolicy: Parallel`.
    pub parallel: bool,
    pub min_ready_ms: i64,
}

/// The rollout of `plan` over `name`'s pods (`name-0`, `name-1`, ...).
pub(crate) fn roll(plan: Plan, name: &str, times: ReplicaTimes) -> ControllerRun {
    let r = plan.replicas;
    let mut pods: Vec<Replica> = (0..r).map(|i| Replica::serving(format!("{name}-{i}"))).collect();
    let mut at_ordinal: Vec<usize> = (0..pods.len()).collect();
    let mut updated = vec![false; at_ordinal.len()];
    let mut steps = Vec::new();
    let mut t = 0;
    let mut complete = None;
    let partition = plan.partition.clamp(0, r) as usize;
    for _ in 0..(8 * r + 64) {
        loop {
            let mut changed = false;
            let mut healthy = true;
            for i in 0..at_ordinal.len() {
                let pod = &pods[at_ordinal[i]];
                if !pod.present(t) {
                    let replacement = Replica::created(format!("{name}-{i}"), t, times, plan.min_ready_ms);
                    steps.push(Step::new(t, StepKind::Created, Some(&replacement.name), "from the new revision"));
                    pods.push(replacement);
                    at_ordinal[i] = pods.len() - 1;
                    updated[i] = true;
                    changed = true;
                    healthy = false;
                } else if !pod.available(t) {
                    healthy = false;
                }
                if !healthy && !plan.parallel {
                    break;
                }
            }
            if healthy || plan.parallel {
                let unavailable_now = at_ordinal.iter().filter(|&&p| !pods[p].available(t)).count() as i64;
                let mut may = plan.unavailable.max(1) - unavailable_now;
                for i in (partition..at_ordinal.len()).rev() {
                    if may <= 0 {
                        break;
                    }
                    let pod = &mut pods[at_ordinal[i]];
                    if !updated[i] && pod.deleted_ms.is_none() {
                        pod.delete(t, times);
                        steps.push(Step::new(t, StepKind::Deleted, Some(&pod.name), "on the old revision"));
                        may -= 1;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        let done =
            (partition..at_ordinal.len()).all(|i| updated[i]) && at_ordinal.iter().all(|&p| pods[p].available(t));
        if done {
            steps.push(Step::new(t, StepKind::Complete, None, ""));
            complete = Some(t);
            break;
        }
        let Some(next) = next_change(&pods, t) else { break };
        t = next;
    }
    let end = complete.unwrap_or(t);
    let mut run = ControllerRun::of(&pods, steps, end);
    run.complete_ms = complete;
    if complete.is_none() {
        let waiting: Vec<&str> = at_ordinal
            .iter()
            .map(|&p| &pods[p])
            .filter(|p| p.new && p.ready_ms.is_none())
            .map(|p| p.name.as_str())
            .collect();
        run.stuck = Some(format!(
            "{} never Ready; the controller waits on it and updates no other pod",
            waiting.first().copied().unwrap_or("a new pod")
        ));
    }
    run
}
