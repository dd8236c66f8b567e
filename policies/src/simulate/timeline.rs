//! A simulated timeline: what happened when, in milliseconds from the
//! scenario's start (container start for `boot`, the disruption or the
//! deletion for the others).

use crate::model::ProbeKind;

/// Something the kubelet, the app or the Service did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// The container started (again).
    Started,
    /// Its postStart hook runs: the kubelet probes the container only once it ends.
    PostStart,
    /// The app answers its checks from now on.
    AppHealthy,
    /// The scenario's disruption began (`stall`, `pause`, `wedge`).
    DisruptionStart,
    /// The disruption ended.
    DisruptionEnd,
    /// A probe failed at once (refused, error status).
    ProbeFailed,
    /// A probe got no answer within `timeoutSeconds`.
    ProbeTimedOut,
    /// The kubelet could not send a probe (its port does not resolve): the
    /// probe worker discards the result, so nothing is counted.
    ProbeErrored,
    /// The startup probe succeeded: liveness and readiness take over.
    StartupSucceeded,
    /// Readiness passed `successThreshold` times: in the Service's endpoints.
    Ready,
    /// The container is ready, but the pod's readiness gates are not True:
    /// still out of the Service's endpoints.
    ContainerReady,
    /// Readiness failed `failureThreshold` times (or the container stopped):
    /// out of the Service's endpoints.
    Unready,
    /// In a pod of several containers, this one is no longer ready: the
    /// pod's own events say whether that takes it out of the endpoints.
    ContainerUnready,
    /// Startup or liveness failed `failureThreshold` times, or the postStart
    /// hook failed: the kubelet kills the container.
    Kill,
    /// The kubelet waits before starting the container again (CrashLoopBackOff).
    BackOff,
    /// The container is not restarted (`restartPolicy: Never`).
    NotRestarted,
    /// The pod was deleted.
    Deleted,
    /// Endpoint removal reached the proxies: no new requests arrive.
    EndpointsRemoved,
    /// The preStop hook started.
    PreStop,
    /// The stop signal reached the process: SIGTERM, or `lifecycle.stopSignal`
    /// where the kubelet passes it on (the event's `signal`).
    Sigterm,
    /// The app's in-flight work and shutdown ended.
    WorkDone,
    /// The process exited.
    Exited,
    /// The grace period ended with the process still running.
    Sigkill,
}

impl EventKind {
    /// The stable name (`probe-failed`, `sigkill`, ...), the `event` field of the JSON output.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Started => "started",
            EventKind::PostStart => "poststart",
            EventKind::AppHealthy => "app-healthy",
            EventKind::DisruptionStart => "disruption-start",
            EventKind::DisruptionEnd => "disruption-end",
            EventKind::ProbeFailed => "probe-failed",
            EventKind::ProbeTimedOut => "probe-timed-out",
            EventKind::ProbeErrored => "probe-errored",
            EventKind::StartupSucceeded => "startup-succeeded",
            EventKind::Ready => "in-endpoints",
            EventKind::ContainerReady => "container-ready",
            EventKind::Unready => "out-of-endpoints",
            EventKind::ContainerUnready => "container-unready",
            EventKind::Kill => "restart",
            EventKind::BackOff => "back-off",
            EventKind::NotRestarted => "not-restarted",
            EventKind::Deleted => "deleted",
            EventKind::EndpointsRemoved => "endpoints-removed",
            EventKind::PreStop => "prestop",
            EventKind::Sigterm => "sigterm",
            EventKind::WorkDone => "work-done",
            EventKind::Exited => "exited",
            EventKind::Sigkill => "sigkill",
        }
    }
}

/// One event of a timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Milliseconds from the scenario's start.
    pub at_ms: i64,
    /// The probe it concerns, if any.
    pub probe: Option<ProbeKind>,
    /// What happened.
    pub kind: EventKind,
    /// A detail for people (`back-off 20s`, `stall ends`); empty when the kind says it all.
    pub detail: String,
    /// A probe failure after its `failureThreshold` was reached: the
    /// container is already unready and the failure changes nothing (the
    /// detail says so instead of counting on).
    pub past_threshold: bool,
    /// The wait a `back-off` starts, ms.
    pub delay_ms: Option<i64>,
    /// The signal a `sigterm` event sends when it is `lifecycle.stopSignal`
    /// (`None`: SIGTERM, or the image's STOPSIGNAL).
    pub signal: Option<String>,
}

impl Event {
    /// An event with only its time, probe, kind and detail.
    pub fn new(at_ms: i64, probe: Option<ProbeKind>, kind: EventKind, detail: String) -> Event {
        Event { at_ms, probe, kind, detail, past_threshold: false, delay_ms: None, signal: None }
    }
}

/// A half-open interval of milliseconds.
pub type Span = (i64, i64);

/// Total length of spans (assumed disjoint).
pub fn total(spans: &[Span]) -> i64 {
    spans.iter().map(|(a, b)| (b - a).max(0)).sum()
}

/// The intersection of two sorted lists of disjoint spans.
pub fn intersect(a: &[Span], b: &[Span]) -> Vec<Span> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        let (lo, hi) = (a[i].0.max(b[j].0), a[i].1.min(b[j].1));
        if lo < hi {
            out.push((lo, hi));
        }
        if a[i].1 < b[j].1 { i += 1 } else { j += 1 }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{intersect, total};

    #[test]
    fn spans_intersect() {
        let a = [(0, 10), (20, 30)];
        let b = [(5, 25)];
        assert_eq!(intersect(&a, &b), vec![(5, 10), (20, 25)]);
        assert_eq!(total(&intersect(&a, &b)), 10);
        assert!(intersect(&a, &[]).is_empty());
    }
}
