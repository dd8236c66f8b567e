//! `lifeguard simulate`: what the kubelet does to a pod in a slow boot, a
//! dependency stall, a GC pause, a wedge and a deletion.
//!
//! A pure function from an object, scenarios and assumptions to
//! timelines and verdicts ([`simulate_object`]); front ends only read input
//! and render. The model and every assumption are stated in [`MODEL`].

mod assumptions;
mod checks;
pub mod controllers;
mod cycles;
mod endpoints;
mod gates;
mod hooks;
mod inference;
mod kubelet;
#[cfg(test)]
mod kubelet_tests;
#[cfg(test)]
mod lifecycle_tests;
mod model_doc;
mod never;
#[cfg(test)]
mod object_tests;
mod pod;
mod pod_outcome;
mod pod_run;
mod pod_stop;
#[cfg(test)]
mod pod_stop_tests;
#[cfg(test)]
mod pod_tests;
pub(crate) mod reach;
mod reading;
mod scenario;
mod stop_signal;
mod sweep;
mod termination;
mod timeline;
mod verdict;

pub use assumptions::{Assumptions, DEFAULT_NODES};
pub use checks::{ProbeCheck, ProbeChecks, ProbeChecksError};
pub use controllers::{NotSimulated, WorkloadOutcome};
pub use cycles::{Repeat, repeats};
pub use gates::{GateDelay, GateDelayError, ReadinessGates};
pub use hooks::{HookLength, PostStart};
pub use inference::infer;
pub use kubelet::{BACKOFF_INITIAL_MS, BACKOFF_MAX_MS, Run, STARTED_SEEN_MS, World, simulate, simulate_figures};
pub use model_doc::MODEL;
pub use pod::{AnnotationError, ContainerModel, ProbeModel, Traffic, containers};
pub use pod_outcome::{PodOutcome, PodSpan, PodStop};
pub use reach::{Reach, ReachEvidence, inferred_reach, shared_reach};
pub use scenario::{STANDARD, Scenario, ScenarioError, ScenarioKind};
pub use stop_signal::{FEATURE_GATES, FeatureGateError, FeatureGates, StopSignal};
pub use sweep::{ContainerOutcome, phase_offsets, run_scenario};
pub use termination::{MIN_SIGTERM_TO_SIGKILL_MS, delete, stop_times};
pub use timeline::{Event, EventKind, Span};
pub use verdict::{Figures, VERDICTS, Verdict, plural, seconds};

use serde_json::Value;

use crate::error::ModelError;
use crate::model::Batch;
use crate::model::{Workload, receivers};
use crate::policy::Policy;

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
    /// One outcome per pod template and workload scenario (`rollout`,
    /// `drain`), in the order given.
    pub workload: Vec<WorkloadOutcome>,
    /// The workload scenarios that do not run on this object, and why.
    pub not_simulated: Vec<NotSimulated>,
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
    let workloads = Workload::all_declared(object, policy.declared_pod_kinds())?;
    let Some(first) = workloads.first() else {
        return Ok(None);
    };
    let mut sim = ObjectSimulation {
        kind: first.kind.clone(),
        namespace: first.namespace.clone(),
        name: first.name.clone(),
        outcomes: Vec::new(),
        workload: Vec::new(),
        not_simulated: Vec::new(),
    };
    for w in &workloads {
        simulate_workload(&mut sim, object, w, batch, policy, scenarios, assumptions)?;
    }
    Ok(Some(sim))
}

/// The replicas of the pods one template makes: its group's own count (a
/// Ray worker group's `replicas`) where it has one, else the object's.
fn replicas_of(object: &Value, w: &Workload) -> i64 {
    let group = w.template_pointer.rsplit_once('/').map(|(parent, _)| format!("{parent}/replicas"));
    group
        .and_then(|p| object.pointer(&p).and_then(Value::as_i64))
        .or_else(|| object.pointer("/spec/replicas").and_then(Value::as_i64))
        .unwrap_or(1)
        .max(1)
}

/// Every container of one pod template in every pod scenario, and the
/// template's workload in every workload scenario, into `sim`.
fn simulate_workload(
    sim: &mut ObjectSimulation,
    object: &Value,
    w: &Workload,
    batch: &Batch,
    policy: &Policy,
    scenarios: &[Scenario],
    assumptions: &Assumptions,
) -> Result<(), ModelError> {
    let replicas = replicas_of(object, w);
    let mut services: Vec<String> = Vec::new();
    for s in batch.services.iter().filter(|s| s.selects(w.namespace.as_deref(), &w.labels)) {
        let name = s.display_name();
        if !services.contains(&name) {
            services.push(name);
        }
    }
    let receivers: Vec<String> =
        receivers(w, &batch.services, policy).iter().map(|r| r.view.pointer.to_owned()).collect();
    let traffic = Traffic { services: &services, receivers: &receivers, input_has_services: batch.has_services };
    let models = containers(w, policy, assumptions, replicas, traffic)
        .map_err(|e| ModelError { pointer: e.pointer.clone(), message: e.to_string() })?;
    // The pod runs each scenario with all its containers; the outcomes stay
    // by container, then scenario.
    let pod_scenarios: Vec<&Scenario> = scenarios.iter().filter(|s| !s.kind.is_workload()).collect();
    let by_scenario: Vec<Vec<ContainerOutcome>> =
        pod_scenarios.iter().map(|s| pod_run::run_pod(&models, s, assumptions)).collect();
    for i in 0..models.len() {
        sim.outcomes.extend(by_scenario.iter().filter_map(|outcomes| outcomes.get(i).cloned()));
    }
    let workload_scenarios: Vec<&Scenario> = scenarios.iter().filter(|s| s.kind.is_workload()).collect();
    if workload_scenarios.is_empty() {
        return Ok(());
    }
    // A workload's pods are the pod model's: each new one boots as `boot`
    // does, each deleted one stops as `delete` does (the runs of those
    // scenarios when they were asked for too).
    let run = |kind: ScenarioKind, label: &str| match pod_scenarios.iter().position(|s| s.kind == kind) {
        Some(i) => by_scenario[i].clone(),
        None => pod_run::run_pod(&models, &Scenario { kind, label: label.to_owned() }, assumptions),
    };
    let pods = controllers::PodRuns {
        boot: run(ScenarioKind::Boot(None), "boot"),
        delete: run(ScenarioKind::Delete, "delete"),
        nodes: assumptions.nodes,
    };
    for s in workload_scenarios {
        match controllers::run_workload(s, object, w, batch, policy, &pods) {
            Ok(outcome) => sim.workload.push(outcome),
            Err(not) => sim.not_simulated.push(not),
        }
    }
    Ok(())
}
