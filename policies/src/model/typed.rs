//! Typed reading of the parts of a pod spec the rules look at.
//!
//! Deserializing a whole `PodSpec` copies volumes, affinities, tolerations
//! and every env var of every container; the rules never read most of that,
//! and on large inputs it dominated lint time. These mirrors deserialize only
//! the fields rules use, into the real `k8s-openapi` types, and skip the rest
//! without allocating. Wrong types in the fields read are still errors.

use k8s_openapi::api::core::v1::{
    Container, ContainerPort, EnvVar, Lifecycle, PodReadinessGate, PodSpec, Probe, ResourceRequirements,
};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PodSpecFields {
    #[serde(default)]
    containers: Option<Vec<ContainerFields>>,
    #[serde(default)]
    init_containers: Option<Vec<ContainerFields>>,
    #[serde(default)]
    termination_grace_period_seconds: Option<i64>,
    #[serde(default)]
    restart_policy: Option<String>,
    #[serde(default)]
    readiness_gates: Option<Vec<PodReadinessGate>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ContainerFields {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    image: Option<String>,
    #[serde(default)]
    command: Option<Vec<String>>,
    #[serde(default)]
    args: Option<Vec<String>>,
    #[serde(default)]
    ports: Option<Vec<ContainerPort>>,
    #[serde(default)]
    env: Option<Vec<EnvVar>>,
    #[serde(default)]
    resources: Option<ResourceRequirements>,
    #[serde(default)]
    liveness_probe: Option<Probe>,
    #[serde(default)]
    readiness_probe: Option<Probe>,
    #[serde(default)]
    startup_probe: Option<Probe>,
    #[serde(default)]
    lifecycle: Option<Lifecycle>,
    #[serde(default)]
    restart_policy: Option<String>,
}

impl From<ContainerFields> for Container {
    fn from(c: ContainerFields) -> Container {
        Container {
            // A container without a name is invalid for the API server, but
            // lint what is there: rules show it as `<unnamed>`.
            name: c.name.unwrap_or_default(),
            image: c.image,
            command: c.command,
            args: c.args,
            ports: c.ports,
            env: c.env,
            resources: c.resources,
            liveness_probe: c.liveness_probe,
            readiness_probe: c.readiness_probe,
            startup_probe: c.startup_probe,
            lifecycle: c.lifecycle,
            restart_policy: c.restart_policy,
            ..Container::default()
        }
    }
}

impl From<PodSpecFields> for PodSpec {
    fn from(s: PodSpecFields) -> PodSpec {
        PodSpec {
            containers: s.containers.unwrap_or_default().into_iter().map(Container::from).collect(),
            init_containers: s.init_containers.map(|v| v.into_iter().map(Container::from).collect()),
            termination_grace_period_seconds: s.termination_grace_period_seconds,
            restart_policy: s.restart_policy,
            readiness_gates: s.readiness_gates,
            ..PodSpec::default()
        }
    }
}
