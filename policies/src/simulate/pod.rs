//! The container as the simulation sees it: its probes with what they
//! check, its restart policy, its hooks, the pod's readiness gates, and
//! what it needs between SIGTERM and exit.

use crate::model::{
    ANNOTATION_COLD_START, ContainerView, ProbeKind, ProbeTiming, SleepSeconds, Workload, is_model_server,
    shared_liveness_readiness, shutdown_needs, takes_traffic_without_services,
};
use crate::policy::Policy;

use super::assumptions::Assumptions;
use super::checks::{Check, ProbeChecks, infer, unresolved};
use super::gates::{GateDelay, ReadinessGates};
use super::hooks::{HookLength, PostStart, poststart_of, prestop_of};
use super::stop_signal::StopSignal;
use crate::model::{ANNOTATION_POSTSTART, ANNOTATION_PRESTOP, ANNOTATION_PROBE_CHECKS, ANNOTATION_READINESS_GATES};

/// One probe of a container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeModel {
    /// Which probe.
    pub kind: ProbeKind,
    /// Its timing, Kubernetes defaults filled in.
    pub timing: ProbeTiming,
    /// What its answer depends on.
    pub check: Check,
    /// `terminationGracePeriodSeconds` of the probe itself, if set.
    pub grace: Option<i64>,
}

/// A container ready to simulate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerModel {
    /// Container name.
    pub name: String,
    /// Pointer to the container.
    pub pointer: String,
    /// Startup, liveness and readiness probes, those set.
    pub probes: Vec<ProbeModel>,
    /// Whether a killed container starts again (`restartPolicy` Always or OnFailure).
    pub restarts: bool,
    /// The pod's `terminationGracePeriodSeconds` (30 when unset).
    pub grace: i64,
    /// How long the preStop hook runs; `None` when there is none.
    pub prestop: Option<SleepSeconds>,
    /// Where that length comes from.
    pub prestop_length: HookLength,
    /// The postStart hook, if it has one.
    pub poststart: Option<PostStart>,
    /// The pod's readiness gates and when they become True.
    pub readiness_gates: ReadinessGates,
    /// The signal the runtime sends to stop it.
    pub stop_signal: StopSignal,
    /// Declared drain, seconds (0 when undeclared).
    pub drain: i64,
    /// Declared shutdown budget, seconds (0 when undeclared).
    pub shutdown: i64,
    /// How long a deleted app takes to stop after SIGTERM when it declares
    /// neither drain nor shutdown: the policy's `prestopMinRemainingSeconds`,
    /// the least lint's rules leave it (`None` when something is declared).
    pub assumed_stop: Option<i64>,
    /// How long the app takes to boot when nothing else is said: the
    /// declared cold start, the policy's GPU boot for a model server, else 0.
    pub cold_start: i64,
    /// Replicas of the workload (`spec.replicas`, 1 when unset).
    pub replicas: i64,
    /// The probes whose port the kubelet cannot resolve, each with its
    /// handler's port (`tcpSocket port "postgres"`): their check is
    /// [`Check::Unresolved`].
    pub unresolved: Vec<(ProbeKind, String)>,
    /// `Service/name` of each Service of the input that selects the pod,
    /// once each, by namespace and name; empty when none does (or the input
    /// has none).
    pub services: Vec<String>,
    /// Whether requests reach the container: a Service of the input sends
    /// them ([`crate::model::receivers`]), or the input has no Service at
    /// all and the container declares a port Prometheus does not scrape
    /// (the assumption `readiness-probe-missing` makes).
    pub receives_traffic: bool,
}

/// What the input says of the traffic a pod receives.
#[derive(Debug, Clone, Copy)]
pub struct Traffic<'a> {
    /// `Service/name` of each Service of the input that selects the pod.
    pub services: &'a [String],
    /// Pointers of the containers those Services send requests to
    /// ([`crate::model::receivers`]).
    pub receivers: &'a [String],
    /// Whether the input has any Service at all.
    pub input_has_services: bool,
}

impl ContainerModel {
    /// For tests: one container `app` with these probes and the kubelet's
    /// defaults otherwise (grace 30, restarts, nothing declared, 1 replica).
    #[cfg(test)]
    pub(crate) fn with_probes(probes: Vec<ProbeModel>) -> ContainerModel {
        ContainerModel {
            name: "app".into(),
            pointer: "/spec/containers/0".into(),
            probes,
            restarts: true,
            grace: 30,
            prestop: None,
            prestop_length: HookLength::Read,
            poststart: None,
            readiness_gates: ReadinessGates::default(),
            stop_signal: StopSignal::Default,
            drain: 0,
            shutdown: 0,
            assumed_stop: None,
            cold_start: 0,
            replicas: 1,
            unresolved: Vec::new(),
            services: Vec::new(),
            receives_traffic: false,
        }
    }

    /// The probe of a kind, if set.
    pub fn probe(&self, kind: ProbeKind) -> Option<&ProbeModel> {
        self.probes.iter().find(|p| p.kind == kind)
    }

    /// The port of a probe of this kind that the kubelet cannot resolve
    /// (`tcpSocket port "postgres"`), if it has one.
    pub fn unresolved(&self, kind: ProbeKind) -> Option<&str> {
        self.unresolved.iter().find(|(k, _)| *k == kind).map(|(_, port)| port.as_str())
    }
}

/// A `lifeguard.dev/` annotation of the simulation that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("annotation {annotation}: {detail}")]
pub struct AnnotationError {
    /// Pointer to the annotation in the object.
    pub pointer: String,
    /// The annotation.
    pub annotation: &'static str,
    /// What is wrong.
    pub detail: String,
}

/// The containers of a workload as the simulation sees them, with the
/// `services` that select the pod. A probe whose port the kubelet cannot
/// resolve checks nothing ([`Check::Unresolved`]), whatever is stated;
/// otherwise what it checks comes from `stated` (the `--probe-checks`
/// flag) first, then the pod template's annotation, then what the handler
/// shows ([`infer`]).
pub fn containers(
    w: &Workload,
    policy: &Policy,
    assumptions: &Assumptions,
    replicas: i64,
    traffic: Traffic<'_>,
) -> Result<Vec<ContainerModel>, AnnotationError> {
    let stated = &assumptions.probe_checks;
    let error = |annotation: &'static str, detail: String| AnnotationError {
        pointer: w.annotation_pointer(annotation),
        annotation,
        detail,
    };
    let seconds = |annotation: &'static str| {
        w.annotation_seconds(annotation)
            .transpose()
            .map_err(|raw| error(annotation, format!("{raw:?}: expected whole seconds (a duration like 30s)")))
    };
    let annotated = match w.annotations.get(ANNOTATION_PROBE_CHECKS) {
        Some(raw) => ProbeChecks::parse(raw).map_err(|e| error(ANNOTATION_PROBE_CHECKS, e.to_string()))?,
        None => ProbeChecks::default(),
    };
    // The flags win over the annotations; an annotation that cannot be read
    // is an error all the same, as for probe-checks.
    let stated_prestop = assumptions.prestop_seconds.or(seconds(ANNOTATION_PRESTOP)?);
    let stated_poststart = assumptions.poststart_seconds.or(seconds(ANNOTATION_POSTSTART)?);
    let annotated_gates = w
        .annotations
        .get(ANNOTATION_READINESS_GATES)
        .map(|raw| GateDelay::parse(raw))
        .transpose()
        .map_err(|e| error(ANNOTATION_READINESS_GATES, e.to_string()))?;
    let readiness_gates = ReadinessGates {
        conditions: w.spec.readiness_gates.iter().flatten().map(|g| g.condition_type.clone()).collect(),
        stated: assumptions.readiness_gates.or(annotated_gates),
    };
    let needs = shutdown_needs(w, policy);
    let cold_annotation = w.annotation_seconds(ANNOTATION_COLD_START).and_then(Result::ok);
    let mut out = Vec::new();
    w.for_each_container(|c: ContainerView<'_>| {
        let name = c.name().to_owned();
        let kinds = [ProbeKind::Startup, ProbeKind::Liveness, ProbeKind::Readiness];
        let unresolved: Vec<(ProbeKind, String)> =
            kinds.into_iter().filter_map(|kind| Some((kind, unresolved(c.container, kind)?))).collect();
        let probes = kinds
            .into_iter()
            .filter_map(|kind| {
                let probe = kind.of(c.container)?;
                let check = if unresolved.iter().any(|(k, _)| *k == kind) {
                    Check::Unresolved
                } else {
                    // One handler shared by liveness and readiness checks
                    // one thing: what is stated of either holds for both.
                    let said = |k: ProbeKind| stated.get(&name, k).or_else(|| annotated.get(&name, k));
                    let shared = shared_liveness_readiness(c.container).is_some();
                    let other = match kind {
                        ProbeKind::Liveness if shared => Some(ProbeKind::Readiness),
                        ProbeKind::Readiness if shared => Some(ProbeKind::Liveness),
                        _ => None,
                    };
                    said(kind).or_else(|| other.and_then(said)).or_else(|| infer(c, kind, policy))?
                };
                Some(ProbeModel {
                    kind,
                    timing: ProbeTiming::of(probe),
                    check,
                    grace: probe.termination_grace_period_seconds,
                })
            })
            .collect();
        let need = needs.iter().find(|n| n.pointer == c.pointer);
        // A sidecar's cold start is not the application's.
        let cold_start = match cold_annotation {
            Some(s) if !c.sidecar => s,
            _ if !c.sidecar && is_model_server(&c, policy) => policy.settings.gpu_boot_seconds,
            _ => 0,
        };
        // With nothing declared of its stop, a deleted app is taken to need
        // the least lint's rules leave it after SIGTERM
        // (`prestopMinRemainingSeconds`), so a preStop sleep that leaves less
        // is the SIGKILL here that it is an error there.
        let floor = policy.settings.prestop_min_remaining_seconds;
        let undeclared = need.is_none_or(|n| n.drain.is_none() && n.shutdown.is_none());
        let assumed_stop = (undeclared && floor > 0).then_some(floor);
        let (prestop, prestop_length) = prestop_of(c.container, need.and_then(|n| n.prestop), stated_prestop);
        let restart_policy = if c.sidecar { Some("Always") } else { w.spec.restart_policy.as_deref() };
        out.push(ContainerModel {
            pointer: c.pointer.to_owned(),
            probes,
            restarts: restart_policy != Some("Never"),
            grace: w.grace_period(),
            prestop,
            prestop_length,
            poststart: poststart_of(c.container, stated_poststart),
            readiness_gates: readiness_gates.clone(),
            stop_signal: StopSignal::of(c.container, assumptions.feature_gates),
            drain: need.map_or(0, |n| n.drain_seconds()),
            shutdown: need.map_or(0, |n| n.shutdown_seconds()),
            assumed_stop,
            cold_start,
            replicas,
            unresolved,
            services: traffic.services.to_vec(),
            receives_traffic: traffic.receivers.iter().any(|p| p == c.pointer)
                || (!traffic.input_has_services && takes_traffic_without_services(w, &c)),
            name,
        });
    });
    Ok(out)
}
