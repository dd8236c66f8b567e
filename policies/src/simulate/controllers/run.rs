//! What a controller's run records: its steps, the workload's capacity over
//! time, and how it ended.

use super::replicas::{Capacity, Replica, capacity_series};

/// Something a controller, the eviction API or a pod did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum StepKind {
    /// A node's drain began.
    DrainStart,
    /// The eviction API refused an eviction (a budget allows none now).
    EvictionRefused,
    /// An eviction was allowed: the pod is deleted.
    Evicted,
    /// The controller deleted a pod (scaled an old ReplicaSet down, or
    /// took a StatefulSet's pod out to replace it).
    Deleted,
    /// The controller created a pod.
    Created,
    /// A pod's last container ended: its name and node are free.
    Gone,
    /// A pod became Ready.
    Ready,
    /// A pod was Ready for `minReadySeconds`: available.
    Available,
    /// A node's drain ended (its pods are gone).
    Drained,
    /// A Deployment's `Progressing` condition turned False:
    /// `ProgressDeadlineExceeded`.
    ProgressDeadlineExceeded,
    /// The rollout is complete.
    Complete,
}

impl StepKind {
    /// The stable name, the `event` field of a workload entry's `steps`.
    pub fn name(self) -> &'static str {
        match self {
            StepKind::DrainStart => "drain-start",
            StepKind::EvictionRefused => "eviction-refused",
            StepKind::Evicted => "evicted",
            StepKind::Deleted => "deleted",
            StepKind::Created => "created",
            StepKind::Gone => "gone",
            StepKind::Ready => "ready",
            StepKind::Available => "available",
            StepKind::Drained => "drained",
            StepKind::ProgressDeadlineExceeded => "progress-deadline-exceeded",
            StepKind::Complete => "complete",
        }
    }
}

/// One step of a controller's run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// ms from the run's start.
    pub at_ms: i64,
    /// What happened.
    pub kind: StepKind,
    /// The pod it concerns (`old-1`, `new-2`, `web-0`), if one.
    pub pod: Option<String>,
    /// A detail for people; empty when the kind says it all.
    pub detail: String,
}

impl Step {
    pub(crate) fn new(at_ms: i64, kind: StepKind, pod: Option<&str>, detail: impl Into<String>) -> Step {
        Step { at_ms, kind, pod: pod.map(str::to_owned), detail: detail.into() }
    }
}

/// How a controller's run went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerRun {
    /// Its steps in time order.
    pub steps: Vec<Step>,
    /// The workload's counts, one entry each time one changes, from 0.
    pub capacity: Vec<Capacity>,
    /// When it completed (the rollout done, the last node drained); `None`: never.
    pub complete_ms: Option<i64>,
    /// When the run was looked at last: its completion, or when nothing
    /// more could happen.
    pub end_ms: i64,
    /// When a Deployment's progress deadline was exceeded, each time.
    pub deadline_exceeded_ms: Vec<i64>,
    /// Why it never completes, when it does not: in words.
    pub stuck: Option<String>,
}

impl ControllerRun {
    /// The run of `replicas` with the controller's own `steps`: adds each
    /// pod's Ready, available and gone steps and the capacity over time,
    /// up to `end_ms`.
    pub(crate) fn of(replicas: &[Replica], mut steps: Vec<Step>, end_ms: i64) -> ControllerRun {
        for r in replicas {
            let within = |t: &Option<i64>| t.filter(|t| (0..=end_ms).contains(t));
            if let Some(t) = within(&r.ready_ms).filter(|_| r.created_ms.is_some()) {
                steps.push(Step::new(t, StepKind::Ready, Some(&r.name), ""));
            }
            if let Some(t) = within(&r.available_ms).filter(|a| r.created_ms.is_some() && Some(*a) != r.ready_ms) {
                steps.push(Step::new(t, StepKind::Available, Some(&r.name), ""));
            }
            if let Some(t) = within(&r.gone_ms) {
                steps.push(Step::new(t, StepKind::Gone, Some(&r.name), ""));
            }
        }
        // Time order; at one moment, in the order of the kinds.
        steps.sort_by_key(|s| (s.at_ms, s.kind));
        ControllerRun {
            steps,
            capacity: capacity_series(replicas, end_ms),
            complete_ms: None,
            end_ms,
            deadline_exceeded_ms: Vec::new(),
            stuck: None,
        }
    }

    /// The fewest Ready pods and when that first happened.
    pub fn lowest_ready(&self) -> Option<Capacity> {
        self.capacity.iter().copied().min_by_key(|c| (c.ready, c.at_ms))
    }

    /// The fewest available pods and when that first happened.
    pub fn lowest_available(&self) -> Option<Capacity> {
        self.capacity.iter().copied().min_by_key(|c| (c.available, c.at_ms))
    }

    /// How long, in ms, fewer than `wanted` pods were available, up to the end.
    pub fn below_available_ms(&self, wanted: i64) -> i64 {
        self.time_where(|c| c.available < wanted)
    }

    /// How long, in ms, no pod was Ready, up to the end.
    pub fn none_ready_ms(&self) -> i64 {
        self.time_where(|c| c.ready == 0)
    }

    /// How long, in ms, the counts were as `holds` says, up to the end.
    fn time_where(&self, holds: impl Fn(&Capacity) -> bool) -> i64 {
        let mut total = 0;
        for (i, c) in self.capacity.iter().enumerate() {
            let until = self.capacity.get(i + 1).map_or(self.end_ms, |n| n.at_ms);
            if holds(c) {
                total += (until - c.at_ms).max(0);
            }
        }
        total
    }
}
