//! What a pod of several containers does in one scenario, apart from any
//! one container's: when it is out of the Service's endpoints and why, and
//! in a deletion the order its containers stop in. `pod_run` makes it,
//! `pod_stop` the stops, `sweep` carries it with each container's outcome.

use super::timeline::Event;

/// The pod's readiness in one scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodOutcome {
    /// The pod's containers, in the order the kubelet starts them: native
    /// sidecars in the spec's order, then the regular containers.
    pub containers: Vec<String>,
    /// When each container first started, ms from the scenario's start, in
    /// the order of `containers`; `None` for one that never started (an
    /// init container before it never did).
    pub started_ms: Vec<Option<i64>>,
    /// The spans the pod is out of the Service's endpoints, each with what
    /// held it out.
    pub out: Vec<PodSpan>,
    /// Time out of the endpoints, ms (the worst case of each container).
    pub unready_ms: i64,
    /// The pod's `in-endpoints` and `out-of-endpoints` events, each naming
    /// what decided it.
    pub events: Vec<Event>,
    /// In a deletion, when each container got SIGTERM and exited or was
    /// killed, in the order they stop (by SIGTERM, then the start order);
    /// empty in any other scenario.
    pub stops: Vec<PodStop>,
}

/// A span the pod is out of the endpoints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodSpan {
    /// From, ms.
    pub from_ms: i64,
    /// To, ms; the end of the run when the pod is still out then.
    pub to_ms: i64,
    /// Whether the pod is still out when the run ends.
    pub open: bool,
    /// The containers not ready until its end: what held it out last.
    pub held_by: Vec<String>,
    /// What else held it out, when no container did: its readiness gates,
    /// or its deletion.
    pub because: Option<String>,
}

/// When the kubelet stopped one container of a deleted pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodStop {
    /// The container.
    pub container: String,
    /// SIGTERM (or the stop signal), ms from the deletion.
    pub sigterm_ms: i64,
    /// When it exited by itself or was killed, ms.
    pub end_ms: i64,
    /// Whether SIGKILL ended it.
    pub killed: bool,
}
