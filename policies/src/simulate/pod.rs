//! The container as the simulation sees it: its probes with what they
//! check, its restart policy, and what it needs between SIGTERM and exit.

use crate::model::{
    ANNOTATION_COLD_START, ContainerView, ProbeKind, ProbeTiming, SleepSeconds, Workload, shutdown_needs,
};
use crate::policy::Policy;

use super::checks::{ANNOTATION_PROBE_CHECKS, Check, ProbeChecks, infer};

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
    /// The preStop sleep; `None` when there is none (or it cannot be timed).
    pub prestop: Option<SleepSeconds>,
    /// Declared drain, seconds (0 when undeclared).
    pub drain: i64,
    /// Declared shutdown budget, seconds (0 when undeclared).
    pub shutdown: i64,
    /// How long the app takes to boot when nothing else is said: the
    /// declared cold start, the policy's GPU boot for a model server, else 0.
    pub cold_start: i64,
    /// Replicas of the workload (`spec.replicas`, 1 when unset).
    pub replicas: i64,
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
            drain: 0,
            shutdown: 0,
            cold_start: 0,
            replicas: 1,
        }
    }

    /// The probe of a kind, if set.
    pub fn probe(&self, kind: ProbeKind) -> Option<&ProbeModel> {
        self.probes.iter().find(|p| p.kind == kind)
    }
}

/// A `lifeguard.dev/probe-checks` annotation that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("annotation {ANNOTATION_PROBE_CHECKS}: {detail}")]
pub struct AnnotationError {
    /// Pointer to the annotation in the object.
    pub pointer: String,
    /// What is wrong.
    pub detail: super::checks::ProbeChecksError,
}

/// The containers of a workload as the simulation sees them. What a probe
/// checks comes from `stated` (the `--probe-checks` flag) first, then the
/// pod template's annotation, then what the handler shows ([`infer`]).
pub fn containers(
    w: &Workload,
    policy: &Policy,
    stated: &ProbeChecks,
    replicas: i64,
) -> Result<Vec<ContainerModel>, AnnotationError> {
    let annotated = match w.annotations.get(ANNOTATION_PROBE_CHECKS) {
        Some(raw) => ProbeChecks::parse(raw)
            .map_err(|detail| AnnotationError { pointer: w.annotation_pointer(ANNOTATION_PROBE_CHECKS), detail })?,
        None => ProbeChecks::default(),
    };
    let needs = shutdown_needs(w, policy);
    let cold_annotation = w.annotation_seconds(ANNOTATION_COLD_START).and_then(Result::ok);
    let mut out = Vec::new();
    w.for_each_container(|c: ContainerView<'_>| {
        let name = c.name().to_owned();
        let probes = [ProbeKind::Startup, ProbeKind::Liveness, ProbeKind::Readiness]
            .into_iter()
            .filter_map(|kind| {
                let probe = kind.of(c.container)?;
                let check = stated
                    .get(&name, kind)
                    .or_else(|| annotated.get(&name, kind))
                    .or_else(|| infer(c, kind, policy))?;
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
            _ if !c.sidecar && c.is_model_server(policy) => policy.settings.gpu_boot_seconds,
            _ => 0,
        };
        let restart_policy = if c.sidecar { Some("Always") } else { w.spec.restart_policy.as_deref() };
        out.push(ContainerModel {
            pointer: c.pointer.to_owned(),
            probes,
            restarts: restart_policy != Some("Never"),
            grace: w.grace_period(),
            prestop: need.and_then(|n| n.prestop).map(|p| p.seconds),
            drain: need.map_or(0, |n| n.drain_seconds()),
            shutdown: need.map_or(0, |n| n.shutdown_seconds()),
            cold_start,
            replicas,
            name,
        });
    });
    Ok(out)
}
