//! The Deployment controller's rollout of a new pod template
//! (`pkg/controller/deployment/rolling.go` and `recreate.go`), over the
//! pod model's replica times.
//!
//! A rolling update: the new ReplicaSet grows while old and new together
//! stay within `replicas + maxSurge` (`NewRSNewReplicas`); the old ones
//! shrink while `replicas - maxUnavailable` pods stay available, counting
//! the new ReplicaSet's unavailable pods against it
//! (`reconcileOldReplicaSets`, `scaleDownOldReplicaSetsForRollingUpdate`).
//! Both count ReplicaSets' desired replicas, so a deleted pod still
//! terminating holds no place. `Recreate` deletes every old pod and creates
//! the new ones once all are gone (`oldPodsRunning`). Progress is a
//! ReplicaSet grown or shrunk, or one more pod Ready or available
//! (`util.DeploymentProgressing`); with none for `progressDeadlineSeconds`
//! the `Progressing` condition turns False (`ProgressDeadlineExceeded`).
//! The controller reacts at once to every change: its own latency, the
//! ReplicaSet controller's and the kubelet's status updates (a fraction of
//! a second each) are left out.

use super::replicas::{Replica, ReplicaTimes, capacity_at, next_change};
use super::run::{ControllerRun, Step, StepKind};

/// How a Deployment replaces its pods, as the controller resolves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// `RollingUpdate` with its fenceposts resolved (`ResolveFenceposts`).
    Rolling { surge: i64, unavailable: i64 },
    /// `Recreate`.
    Recreate,
}

/// A Deployment's rollout as its controller runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    pub replicas: i64,
    pub strategy: Strategy,
    pub min_ready_ms: i64,
    /// `progressDeadlineSeconds` in ms.
    pub deadline_ms: Option<i64>,
}

/// The rollout of `plan` from a Deployment whose `replicas` pods all serve.
pub(crate) fn roll(plan: Plan, times: ReplicaTimes) -> ControllerRun {
    let r = plan.replicas;
    let mut pods: Vec<Replica> = (1..=r).map(|i| Replica::serving(format!("old-{i}"))).collect();
    let mut steps = Vec::new();
    let (mut new_spec, mut old_spec) = (0, r);
    let (mut t, mut last_progress) = (0, 0);
    let mut exceeded_since: Option<i64> = None;
    let mut deadline_exceeded = Vec::new();
    let mut before = capacity_at(&pods, -1);
    let mut complete = None;
    // Each sync ends at a pod's change or the deadline: a bound with room.
    for _ in 0..(8 * r + 64) {
        let mut progressed = false;
        loop {
            let mut changed = false;
            match plan.strategy {
                Strategy::Rolling { surge, unavailable } => {
                    let current = new_spec + old_spec;
                    if current < r + surge && new_spec < r {
                        let up = (r + surge - current).min(r - new_spec);
                        for _ in 0..up {
                            new_spec += 1;
                            pods.push(Replica::created(format!("new-{new_spec}"), t, times, plan.min_ready_ms));
                            steps.push(Step::new(t, StepKind::Created, Some(&format!("new-{new_spec}")), ""));
                        }
                        changed = true;
                    }
                    let new_available = pods.iter().filter(|p| p.new && p.available(t)).count() as i64;
                    let min_available = r - unavailable;
                    let max_scaled_down = new_spec + old_spec - min_available - (new_spec - new_available);
                    let available = pods.iter().filter(|p| p.available(t)).count() as i64;
                    if old_spec > 0 && max_scaled_down > 0 && available > min_available {
                        let down = old_spec.min(available - min_available);
                        delete_old(&mut pods, &mut steps, down, t, times);
                        old_spec -= down;
                        changed = true;
                    }
                }
                Strategy::Recreate => {
                    if old_spec > 0 {
                        delete_old(&mut pods, &mut steps, old_spec, t, times);
                        old_spec = 0;
                        changed = true;
                    } else if new_spec < r && pods.iter().all(|p| p.new || !p.present(t)) {
                        while new_spec < r {
                            new_spec += 1;
                            pods.push(Replica::created(format!("new-{new_spec}"), t, times, plan.min_ready_ms));
                            steps.push(Step::new(t, StepKind::Created, Some(&format!("new-{new_spec}")), ""));
                        }
                        changed = true;
                    }
                }
            }
            progressed |= changed;
            if !changed {
                break;
            }
        }
        let now = capacity_at(&pods, t);
        if progressed || now.ready > before.ready || now.available > before.available {
            last_progress = t;
            exceeded_since = None;
        }
        before = now;
        let new_available = pods.iter().filter(|p| p.new && p.available(t)).count() as i64;
        if new_spec == r && old_spec == 0 && new_available == r {
            steps.push(Step::new(t, StepKind::Complete, None, ""));
            complete = Some(t);
            break;
        }
        let deadline_at = plan.deadline_ms.map(|d| last_progress + d).filter(|at| *at > t && exceeded_since.is_none());
        let change = next_change(&pods, t);
        let Some(next) = [change, deadline_at].into_iter().flatten().min() else { break };
        t = next;
        // Progress at the deadline's very moment is in time: the controller
        // calls it exceeded only once the deadline has passed.
        if Some(t) == deadline_at && change != Some(t) {
            exceeded_since = Some(t);
            deadline_exceeded.push(t);
            let d = plan.deadline_ms.unwrap_or(0) / 1000;
            steps.push(Step::new(t, StepKind::ProgressDeadlineExceeded, None, format!("no progress for {d} s")));
        }
    }
    let end = complete.unwrap_or(t);
    let mut run = ControllerRun::of(&pods, steps, end);
    run.complete_ms = complete;
    run.deadline_exceeded_ms = deadline_exceeded;
    if complete.is_none() {
        let waiting = pods.iter().filter(|p| p.new && p.active(end) && p.ready_ms.is_none()).count();
        run.stuck = Some(format!(
            "{waiting} new {} never Ready; the controller keeps {} old",
            if waiting == 1 { "pod is" } else { "pods are" },
            pods.iter().filter(|p| !p.new && p.active(end)).count()
        ));
    }
    run
}

/// Deletes `count` old pods not yet deleted at `t`.
fn delete_old(pods: &mut [Replica], steps: &mut Vec<Step>, count: i64, t: i64, times: ReplicaTimes) {
    let mut left = count;
    for p in pods.iter_mut().filter(|p| !p.new && p.deleted_ms.is_none()) {
        if left == 0 {
            break;
        }
        p.delete(t, times);
        steps.push(Step::new(t, StepKind::Deleted, Some(&p.name), ""));
        left -= 1;
    }
}
