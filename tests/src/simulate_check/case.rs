//! A case: a pod of the test workload, what a user states of it, the
//! scenario `lifeguard simulate` runs, and what the test does to the pod
//! on the node ([`Act`]); and the pod built from it.

use serde_json::{Value, json};

use crate::cluster::dependency::Dependency;
use crate::cluster::node::Node;
use crate::cluster::pods::{self, bare_pod, workload_container, workload_pod_spec};
use crate::cluster::process::free_port;

use super::{lifecycle, pod};

/// What the test does to the pod, and so where its time 0 is.
#[derive(Clone, Copy, Debug)]
pub enum Act {
    /// Nothing: 0 is the first container's start (a boot).
    Boot,
    /// The pod's own disruption (pause, wedge) starts at the workload's
    /// logged event of that name.
    Own(&'static str),
    /// The dependency stalls for this many seconds once the pod is Ready.
    Stall(u64),
    /// The pod is deleted once Ready, with this grace period if given
    /// (`kubectl delete --grace-period`), else its own.
    Delete(Option<u64>),
    /// As `Boot`, and the test sets the pod's readiness gate True this many
    /// seconds after its container is first ready, as a load balancer's
    /// controller would.
    Gate(u64),
}

/// One case.
#[derive(Clone, Debug)]
pub struct Case {
    /// The pod's name, and so the name its kept log goes by. A case whose
    /// name starts with `gate-` has a readiness gate.
    pub name: &'static str,
    /// Pod annotations (what a user states for `simulate`). A deletion's
    /// case states the workload's shutdown (0 s: it exits at SIGTERM once
    /// its drain, if any, is done), which simulate otherwise takes as the
    /// policy's `prestopMinRemainingSeconds`.
    pub annotations: Value,
    /// What the case is, in a few words (the table's and a failure's).
    pub what: &'static str,
    /// The scenario `lifeguard simulate --scenario` runs.
    pub scenario: &'static str,
    /// The workload container the case is about, named `server`.
    pub container: Value,
    /// The pod's `terminationGracePeriodSeconds`, if set.
    pub grace: Option<u64>,
    pub act: Act,
    /// How long the kubelet is watched from time 0.
    pub observe: u64,
    /// The pod's other containers: regular ones after `container`, and
    /// native sidecars before it.
    pub others: Others,
}

/// The containers of a pod beside the case's own, each a workload
/// container on a port of its own ([`other`]).
#[derive(Clone, Debug, Default)]
pub struct Others {
    /// Regular containers, after the case's own.
    pub containers: Vec<Value>,
    /// Native sidecars (init containers with `restartPolicy: Always`), in
    /// the order the kubelet starts them.
    pub sidecars: Vec<Value>,
    /// The other container a Service sends to, with clients' requests in
    /// flight through it when the pod is deleted (a proxy in front of the
    /// case's own, whose `PROXY_TO` of [`TO_SERVER`] is the case's
    /// container's port). The pod then has an address of its own, as a
    /// Service's endpoint needs, rather than the node's network.
    pub traffic_to: Option<&'static str>,
}

/// A `PROXY_TO` value in another container's env that stands for the case's
/// own container (its port is chosen when the pod is made).
pub const TO_SERVER: &str = "server";

impl Others {
    /// No other container.
    pub fn none() -> Others {
        Others::default()
    }

    /// Every other container's name.
    pub fn names(&self) -> Vec<String> {
        self.sidecars.iter().chain(&self.containers).filter_map(|c| c["name"].as_str().map(str::to_owned)).collect()
    }
}

/// An httpGet probe of the workload's `path` on its `http` port.
pub fn probe(path: &str, period: u64, failures: u64) -> Value {
    json!({"httpGet": {"path": path, "port": "http"}, "periodSeconds": period, "failureThreshold": failures, "timeoutSeconds": 1})
}

/// `p` (a liveness probe) held back for the first second of each
/// container, so the kubelet's first check of it comes no earlier than the
/// model's (1 s: `STARTED_SEEN_MS`).
///
/// The kubelet may probe a new container before its process has bound the
/// port, before it has even reached `main`: the relist reports a container
/// running once the runtime has started it, and a probe worker whose tick
/// falls then sends a check that is refused (seen here: readiness refused
/// 110 ms before the workload logged its start, with 26 pods starting on two
/// cores). With `failureThreshold: 1` that one refusal kills the container
/// at its start (what `liveness-too-aggressive` reports), which a scenario
/// about a stall would take for its own and whose back-off it would carry:
/// the disagreement CI once saw. docs/simulate.md, Limits.
pub fn held_back(mut p: Value) -> Value {
    p["initialDelaySeconds"] = json!(1);
    p
}

/// The case's workload container, `server`, with `env` and `probes`.
pub fn container(env: &[(&str, String)], probes: &[(&str, Value)]) -> Value {
    let mut c = workload_container("server", 0, env);
    for (kind, p) in probes {
        c[*kind] = p.clone();
    }
    c
}

/// A workload container `name` beside the case's own, on a port of its
/// own (the pod has the node's network).
pub fn other(name: &str, probes: &[(&str, Value)]) -> Value {
    let port = free_port();
    let mut c = workload_container(name, port, &[]);
    for (kind, p) in probes {
        c[*kind] = p.clone();
    }
    c
}

/// An owned `&str`, for the env lists.
pub fn s(value: &str) -> String {
    value.to_owned()
}

/// The longest probe period of the case's container, at least 1 s: the
/// agreement's tolerance is one of it plus 2 s.
pub fn period_of(case: &Case) -> f64 {
    ["startupProbe", "livenessProbe", "readinessProbe"]
        .iter()
        .filter_map(|k| case.container[*k]["periodSeconds"].as_f64())
        .fold(1.0, f64::max)
}

/// The case's pod on `node`: its container on free ports, pointed at
/// `dependency`, with the grace period, the other containers, what the
/// lifecycle needs, and the kept log.
pub fn pod_for(node: &Node, case: &Case, dependency: &Dependency) -> Value {
    let mut container = case.container.clone();
    let port = free_port();
    container["ports"][0]["containerPort"] = json!(port);
    // gRPC probes name a port by number only: the case's own, then every
    // gRPC probe pointed at it.
    let grpc_port = free_port();
    for var in container["env"].as_array_mut().into_iter().flatten() {
        match var["name"].as_str() {
            Some("PORT") => var["value"] = json!(port.to_string()),
            Some("GRPC_PORT") => var["value"] = json!(grpc_port.to_string()),
            Some("DEPENDENCY") => var["value"] = json!(dependency.addr.to_string()),
            _ => {}
        }
    }
    for kind in ["startupProbe", "livenessProbe", "readinessProbe"] {
        if container[kind]["grpc"].is_object() {
            container[kind]["grpc"]["port"] = json!(grpc_port);
        }
    }
    let mut spec = workload_pod_spec(container);
    if let Some(grace) = case.grace {
        spec["terminationGracePeriodSeconds"] = json!(grace);
    }
    lifecycle::pod_spec(case, &mut spec);
    pod::pod_spec(case, &mut spec);
    pods::keep_log(&mut spec, node, case.name);
    let mut pod = bare_pod(case.name, spec);
    pod["metadata"]["annotations"] = case.annotations.clone();
    pod
}
