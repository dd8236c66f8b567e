//! `lifeguard simulate`: what the kubelet does to a pod in a slow boot, a
//! dependency stall, a GC pause, a wedge and a deletion.
//!
//! A pure function from an object, scenarios and assumptions to
//! timelines and verdicts ([`simulate_object`]); front ends only read input
//! and render. The model and every assumption are stated in [`MODEL`].

mod checks;
mod cycles;
mod endpoints;
mod gates;
mod hooks;
mod kubelet;
#[cfg(test)]
mod kubelet_tests;
#[cfg(test)]
mod lifecycle_tests;
mod model_doc;
#[cfg(test)]
mod object_tests;
mod pod;
mod scenario;
mod stop_signal;
mod sweep;
mod termination;
mod timeline;
mod verdict;

pub use checks::{Check, ProbeChecks, ProbeChecksError, infer};
pub use cycles::{Repeat, repeats};
pub use gates::{GateDelay, GateDelayError, ReadinessGates};
pub use hooks::{HookLength, PostStart};
pub use kubelet::{BACKOFF_INITIAL_MS, BACKOFF_MAX_MS, Run, STARTED_SEEN_MS, World, simulate, simulate_figures};
pub use model_doc::MODEL;
pub use pod::{AnnotationError, ContainerModel, ProbeModel, containers};
pub use scenario::{STANDARD, Scenario, ScenarioError, ScenarioKind};
pub use stop_signal::{FEATURE_GATES, FeatureGateError, FeatureGates, StopSignal};
pub use sweep::{ContainerOutcome, phase_offsets, run_scenario};
pub use termination::{MIN_SIGTERM_TO_SIGKILL_MS, delete, stop_times};
pub use timeline::{Event, EventKind, Span};
pub use verdict::{Figures, VERDICTS, Verdict, plural, seconds};

use serde_json::Value;

use crate::error::ModelError;
use crate::model::Batch;
use crate::model::Workload;
use crate::policy::Policy;

/// What the simulation assumes beyond the manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assumptions {
    /// How long endpoint removal takes to reach every proxy after deletion (default 2).
    pub endpoint_propagation_seconds: i64,
    /// The longest request the app admits (default 0).
    pub request_seconds: i64,
    /// What probes check, as stated on the command line (wins over the annotation).
    pub probe_checks: ProbeChecks,
    /// How long a preStop hook runs whose length the spec does not show (an
    /// `exec` of a script, an `httpGet`), as stated on the command line
    /// (wins over the `lifeguard.dev/prestop-seconds` annotation).
    pub prestop_seconds: Option<i64>,
    /// How long a postStart hook runs whose length the spec does not show,
    /// as stated on the command line (wins over the
    /// `lifeguard.dev/poststart-seconds` annotation).
    pub poststart_seconds: Option<i64>,
    /// When the pod's readiness gates become True, as stated on the command
    /// line (wins over the `lifeguard.dev/readiness-gates-seconds` annotation).
    pub readiness_gates: Option<GateDelay>,
    /// The cluster's feature gates the model reads (`ContainerStopSignals`).
    pub feature_gates: FeatureGates,
    /// The kubelet's CrashLoopBackOff ceiling
    /// (`crashLoopBackOff.maxContainerRestartPeriod`; default 300).
    pub max_backoff_seconds: i64,
    /// The deletion's own grace period (`kubectl delete --grace-period`),
    /// which wins over the pod's `terminationGracePeriodSeconds` (`delete`).
    pub delete_grace_seconds: Option<i64>,
}

impl Default for Assumptions {
    fn default() -> Assumptions {
        Assumptions {
            endpoint_propagation_seconds: 2,
            request_seconds: 0,
            probe_checks: ProbeChecks::default(),
            prestop_seconds: None,
            poststart_seconds: None,
            readiness_gates: None,
            feature_gates: FeatureGates::default(),
            max_backoff_seconds: BACKOFF_MAX_MS / 1000,
            delete_grace_seconds: None,
        }
    }
}

/// The simulation of one pod-bearing object.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectSimulation {
    /// `kind` (empty when unset).
    pub kind: String,
    /// `metadata.namespace`
    pub namespace: Option<String>,
    /// `metadata.name`
    pub name: Option<String>,
    /// One outcome per container and scenario, containers first.
    pub outcomes: Vec<ContainerOutcome>,
}

/// Simulates every probed container of an object in every scenario, with
/// the Services of its input (`batch`, as `lint` reads them) to name those
/// that lose their endpoints. `Ok(None)` for an object without a pod spec;
/// `Err` names the pointer of what cannot be read (the pod spec, the
/// `lifeguard.dev/probe-checks` annotation).
pub fn simulate_object(
    object: &Value,
    batch: &Batch,
    policy: &Policy,
    scenarios: &[Scenario],
    assumptions: &Assumptions,
) -> Result<Option<ObjectSimulation>, ModelError> {
    let Some(w) = Workload::from_object(object)? else {
        return Ok(None);
    };
    let replicas = object.pointer("/spec/replicas").and_then(Value::as_i64).unwrap_or(1).max(1);
    let mut services: Vec<String> = Vec::new();
    for s in batch.services.iter().filter(|s| s.selects(w.namespace.as_deref(), &w.labels)) {
        let name = s.display_name();
        if !services.contains(&name) {
            services.push(name);
        }
    }
    let models = containers(&w, policy, assumptions, replicas, &services)
        .map_err(|e| ModelError { pointer: e.pointer.clone(), message: e.to_string() })?;
    let outcomes = models.iter().flat_map(|m| scenarios.iter().map(move |s| run_scenario(m, s, assumptions))).collect();
    Ok(Some(ObjectSimulation { kind: w.kind, namespace: w.namespace, name: w.name, outcomes }))
}
