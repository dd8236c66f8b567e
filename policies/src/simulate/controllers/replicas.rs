//! The pods a controller creates, deletes and counts: each replica's times
//! as the pod model gives them, and the counts the controllers read of a
//! set of replicas at a moment.

/// What the pod model says of one replica of the template: how long after
/// its creation it is Ready, and how long after its deletion it is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplicaTimes {
    /// From creation to Ready (in the Service's endpoints), ms, as the
    /// `boot` scenario's worst phase offset has it; `None`: never (a boot
    /// loop, a readiness gate that never passes).
    pub ready_after_ms: Option<i64>,
    /// From deletion to the last container's exit or SIGKILL, ms, as the
    /// `delete` scenario has it: until then the pod holds its name (a
    /// StatefulSet's next pod waits) and its node.
    pub gone_after_ms: i64,
}

/// One pod of a workload in a controller's run, times in ms from the run's start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Replica {
    /// Its name in the timeline: `old-1`, `new-2`, or a StatefulSet's `web-0`.
    pub name: String,
    /// Whether it runs the new template.
    pub new: bool,
    /// When it was created; `None` for one serving before the run.
    pub created_ms: Option<i64>,
    /// When it became Ready; `None`: not (yet) known to.
    pub ready_ms: Option<i64>,
    /// `minReadySeconds` after Ready: counted available.
    pub available_ms: Option<i64>,
    /// When it was deleted (scaled down or evicted).
    pub deleted_ms: Option<i64>,
    /// When its last container ended.
    pub gone_ms: Option<i64>,
}

impl Replica {
    /// A replica that has served since before the run.
    pub fn serving(name: String) -> Replica {
        let before = Some(i64::MIN / 4);
        Replica {
            name,
            new: false,
            created_ms: None,
            ready_ms: before,
            available_ms: before,
            deleted_ms: None,
            gone_ms: None,
        }
    }

    /// A replica of the new template created at `at`.
    pub fn created(name: String, at: i64, times: ReplicaTimes, min_ready_ms: i64) -> Replica {
        let ready_ms = times.ready_after_ms.map(|r| at + r);
        let available_ms = ready_ms.map(|r| r + min_ready_ms);
        Replica { name, new: true, created_ms: Some(at), ready_ms, available_ms, deleted_ms: None, gone_ms: None }
    }

    /// Deletes it at `at`.
    pub fn delete(&mut self, at: i64, times: ReplicaTimes) {
        self.deleted_ms = Some(at);
        self.gone_ms = Some(at + times.gone_after_ms);
    }

    /// Not deleted at `t`: a controller's own count (a ReplicaSet's status
    /// leaves terminating pods out).
    pub fn active(&self, t: i64) -> bool {
        self.created_ms.is_none_or(|c| c <= t) && self.deleted_ms.is_none_or(|d| d > t)
    }

    /// Active and Ready at `t`: in the Service's endpoints, and healthy to
    /// the disruption controller (`countHealthyPods`: Ready, not deleted).
    pub fn ready(&self, t: i64) -> bool {
        self.active(t) && self.ready_ms.is_some_and(|r| r <= t)
    }

    /// Active and available at `t`.
    pub fn available(&self, t: i64) -> bool {
        self.active(t) && self.available_ms.is_some_and(|a| a <= t)
    }

    /// Still holding its name and node at `t` (deleted or not).
    pub fn present(&self, t: i64) -> bool {
        self.gone_ms.is_none_or(|g| g > t)
    }

    /// Its times after `t` that change a count: Ready, available, gone.
    pub fn next_after(&self, t: i64) -> impl Iterator<Item = i64> + '_ {
        [self.ready_ms, self.available_ms, self.gone_ms].into_iter().flatten().filter(move |x| *x > t)
    }
}

/// The counts of a set of replicas at a moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capacity {
    /// ms from the run's start.
    pub at_ms: i64,
    /// Pods Ready and not deleted: in the Service's endpoints.
    pub ready: i64,
    /// Of those, Ready for `minReadySeconds`.
    pub available: i64,
    /// Pods not deleted, Ready or not.
    pub pods: i64,
}

/// The counts of `replicas` at `t`.
pub(crate) fn capacity_at(replicas: &[Replica], t: i64) -> Capacity {
    let count = |f: &dyn Fn(&Replica) -> bool| replicas.iter().filter(|r| f(r)).count() as i64;
    Capacity {
        at_ms: t,
        ready: count(&|r| r.ready(t)),
        available: count(&|r| r.available(t)),
        pods: count(&|r| r.active(t)),
    }
}

/// The counts of `replicas` from 0 to `end`, one entry each time one changes.
pub(crate) fn capacity_series(replicas: &[Replica], end: i64) -> Vec<Capacity> {
    let mut times: Vec<i64> = replicas
        .iter()
        .flat_map(|r| [r.created_ms, r.ready_ms, r.available_ms, r.deleted_ms, r.gone_ms])
        .flatten()
        .filter(|t| (0..=end).contains(t))
        .collect();
    times.push(0);
    times.sort_unstable();
    times.dedup();
    let mut out: Vec<Capacity> = Vec::new();
    for t in times {
        let c = capacity_at(replicas, t);
        if out.last().is_none_or(|l| (l.ready, l.available, l.pods) != (c.ready, c.available, c.pods)) {
            out.push(c);
        }
    }
    out
}

/// The next moment after `t` a count of `replicas` changes.
pub(crate) fn next_change(replicas: &[Replica], t: i64) -> Option<i64> {
    replicas.iter().flat_map(|r| r.next_after(t)).min()
}
