//! A drain of the nodes that hold a workload's pods, one node after
//! another as a node upgrade does, against the PodDisruptionBudgets that
//! select the pods.
//!
//! `kubectl drain` evicts a node's pods and waits until they are gone;
//! an eviction a budget refuses (429) is tried again every 5 s
//! (`EvictErrorRetryDelay`, `pkg/cmd/drain/drain.go` of kubectl), for ever
//! unless `--timeout` is given. The eviction API allows one while the
//! budget's `disruptionsAllowed`, its healthy pods (Ready, not deleted:
//! `countHealthyPods`) less the healthy pods it wants, is above 0, and
//! refuses every eviction of a pod that more than one budget selects (500)
//! (`pkg/registry/core/pod/storage/eviction.go`). The workload's controller
//! creates a replacement at once, which boots elsewhere.

use super::replicas::{Replica, ReplicaTimes, capacity_at, next_change};
use super::run::{ControllerRun, Step, StepKind};
use crate::simulate::verdict::{plural, seconds};

/// `kubectl drain`'s wait between two refused evictions, ms.
pub const EVICTION_RETRY_MS: i64 = 5_000;

/// A budget as the eviction API weighs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    /// `PodDisruptionBudget/NAME`.
    pub label: String,
    /// The healthy pods it wants kept.
    pub desired_healthy: i64,
}

/// The drain of `replicas` nodes, one pod of the workload on each.
pub(crate) fn drain(replicas: i64, budgets: &[Budget], times: ReplicaTimes) -> ControllerRun {
    let mut pods: Vec<Replica> = (1..=replicas).map(|i| Replica::serving(format!("pod-{i}"))).collect();
    let mut steps = Vec::new();
    let mut t = 0;
    let mut stuck = None;
    for node in 0..pods.len() {
        let name = pods[node].name.clone();
        steps.push(Step::new(t, StepKind::DrainStart, Some(&name), format!("node {}", node + 1)));
        let (mut refused, mut first_refused) = (0_i64, t);
        loop {
            let healthy = capacity_at(&pods, t).ready;
            let why = match budgets {
                [] => None,
                [one] if healthy - one.desired_healthy > 0 => None,
                [one] => Some(format!(
                    "{} allows no disruption: {healthy} healthy, {} wanted",
                    one.label, one.desired_healthy
                )),
                _ => Some("the pod is selected by more than one PodDisruptionBudget (500)".to_owned()),
            };
            let Some(why) = why else { break };
            if refused == 0 {
                first_refused = t;
            }
            refused += 1;
            // Nothing that could change the count is to come: refused for ever.
            if budgets.len() > 1 || next_change(&pods, t).is_none() {
                steps.push(Step::new(
                    first_refused,
                    StepKind::EvictionRefused,
                    Some(&name),
                    format!("{why}; for ever"),
                ));
                stuck = Some(format!("the eviction of {name} is refused for ever: {why}"));
                break;
            }
            t += EVICTION_RETRY_MS;
        }
        if stuck.is_some() {
            break;
        }
        if refused > 0 {
            let detail = format!(
                "refused {}, every {} s, until {} s",
                plural(refused, "time"),
                EVICTION_RETRY_MS / 1000,
                seconds(t)
            );
            steps.push(Step::new(first_refused, StepKind::EvictionRefused, Some(&name), detail));
        }
        pods[node].delete(t, times);
        steps.push(Step::new(t, StepKind::Evicted, Some(&name), ""));
        let replacement = Replica::created(format!("new-{}", node + 1), t, times, 0);
        steps.push(Step::new(t, StepKind::Created, Some(&replacement.name), "the replacement, on another node"));
        pods.push(replacement);
        t = pods[node].gone_ms.unwrap_or(t);
        steps.push(Step::new(t, StepKind::Drained, Some(&name), format!("node {}", node + 1)));
    }
    // The capacity is looked at until the last replacement is Ready.
    let settled = pods.iter().filter_map(|p| p.ready_ms).max().unwrap_or(t).max(t);
    let end = if stuck.is_some() { t } else { settled };
    let mut run = ControllerRun::of(&pods, steps, end);
    if stuck.is_none() {
        run.complete_ms = Some(t);
    }
    run.stuck = stuck;
    run
}
