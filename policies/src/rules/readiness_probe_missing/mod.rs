//! `readiness-probe-missing`: traffic can reach a container that has no
//! readiness probe.
//!
//! Tests: `policies/src/rules/readiness_probe_missing/fixtures/`,
//! `policies/src/rules/readiness_probe_missing/snapshots/rule_fixtures__readiness-probe-missing.snap`.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::finding::{Finding, Naming, Severity};
use crate::model::{
    ContainerView, ServiceView, Workload, declared_targets, is_model_server, port_label, services_send,
    takes_traffic_without_services, traffic_assumption, undeclared_port_listeners,
};
use crate::rules::{Ctx, FixAvailability, Harm, HarmShown, MapExport, Related, Rule, VapExport};
use crate::simulate::Verdict;

pub(crate) static RULE: Rule = Rule {
    name: "readiness-probe-missing",
    severity: Severity::Warning,
    summary: "a container that receives traffic has no readiness probe",
    doc: DOC,
    fix: FixAvailability::NoFix("the readiness endpoint must exist in the application; lifeguard cannot invent one"),
    check,
    vap: VapExport::NEEDS_SERVICES,
    map: MapExport::NoFix,
    related: Related::SendingServices,
    harm: HarmShown::In(&[Harm { scenario: "boot", verdicts: &[Verdict::ConnectionsRefused] }]),
};

const DOC: &str = r#"## What it does
Flags a long-running pod that receives traffic while no container of the
pod has a readiness probe. Which Services count is fixed per file (see
*Which Services count*), and the pod is never reported when any of its
containers has a readiness probe: the pod is ready only when all its
containers are, so one probe gates it.

- When a Service selects the pod (same namespace, the selector matches the
  pod template's labels), each container that declares a port the Service
  targets is reported, naming the Service and the ports: by number, each
  container that declares it; by name, the one container the EndpointSlice
  controller sends it to (its `FindPort`): the first regular container
  that declares a port of that name with the Service port's protocol (TCP
  when unset), else the first sidecar that does, so a sidecar that reuses
  the name takes nothing a regular container declares. A port no container
  declares (a number: a named `targetPort` that
  no container declares gets no endpoints) is attributed to the containers
  whose command line names it as the port they listen on (`--port 8000`,
  `--port=8000`, `--bind 0.0.0.0:8000`), else to the model-server
  containers (a GPU request or a `slowBootImages` image), else to every
  container that declares no ports, else to the first container; the
  message lists every such port. `prestop-bridge-missing` attributes such a
  port the same way. A Service that lists no ports goes to the
  model-server containers, else to the containers that declare ports, else
  to the first container.
- When no Service at all counts for the file, each container that declares
  ports is reported, but for ports Prometheus scrapes: the one the pod
  template's `prometheus.io/port` annotation names, or one named `metrics`
  or `*-metrics`. Prometheus finds those by pod (its `pod` role lists every
  container port, ready or not), so they say nothing of Service traffic: a
  DaemonSet that only exports metrics (cAdvisor, node-exporter) is not
  reported.

Sidecar init containers (`restartPolicy: Always`) count like containers.
The finding is an error for a container that requests a GPU (as
`readiness-port-only` is), a warning otherwise.

## Which Services count
A manifest's Services are those in its own file (or stdin stream) and in
the other manifest files (`.yaml`, `.yml`, `.json`) of its own directory,
read for their Services even when they are not named on the command line,
so `lifeguard lint dir/`, `lifeguard lint dir/a.yaml` and a pre-commit
hook that passes only the staged files reach the same findings for a file.
Sibling files are only read for Services: a sibling that cannot be read or
parsed is passed over silently (and a file whose text cannot hold a
`Service` is not parsed at all). A chart's `templates/` are not manifests:
a file there has only its own Services. Stdin has only its own stream, and
the webhook, which sees one object, has none.

## Why is this bad?
Without a readiness probe a container is ready as soon as it runs. The pod
joins the Service's endpoints before the application listens or has loaded
what it serves, so the first requests of every rollout and every restart
fail. Nothing takes it out of rotation while it is overloaded or wedged
either. Readiness is Service membership: "Not Ready means the Pod leaves
the Endpoints or EndpointSlice" (Probes & Pod Lifecycle). For a GPU
model server the gap is longest: it "can open its HTTP port while model
weights are still downloading, deserializing, compiling, moving to device
memory, or warming kernels" ("A running process is not necessarily a
serving replica").

## Not a finding
- Jobs, CronJobs and pods with `restartPolicy` Never or OnFailure.
- Services count for the file but none selects the pod (a worker that only
  calls out).
- Any container of the pod has a readiness probe, with or without a Service.
- A Ray head or worker group of a RayCluster, RayService or RayJob: KubeRay's
  operator adds a readiness probe to the Ray container of a group that
  declares none (`ENABLE_PROBES_INJECTION`, on by default since v1.1.0), so
  the pod the kubelet runs has one.
- No Service counts for the file and the container's only ports are those
  Prometheus scrapes (`prometheus.io/port`, a port named `metrics`).
- A container that declares ports no selecting Service targets (a metrics
  exporter beside the app) when the Service's ports land elsewhere.

## Example
```yaml
containers:
  - name: app
    ports: [{name: http, containerPort: 8080}]
    # no readinessProbe: ready as soon as the process starts
```

## Use instead
```yaml
containers:
  - name: app
    ports: [{name: http, containerPort: 8080}]
    readinessProbe:
      httpGet: {path: /readyz, port: http}
```

## Fix
No automatic fix: the readiness endpoint must exist in the application, and
lifeguard cannot invent one (a probe on a missing path keeps the pod out of
the Service for good).
"#;

const HELP: &str = "add a readinessProbe that fails until the app can serve and while it drains";

/// What one container receives from the selecting Services.
#[derive(Default)]
struct Reached {
    services: Vec<String>,
    /// Declared ports a Service targets (`8080/http`).
    declared: Vec<String>,
    /// Service ports no container declares, attributed here (`8000`).
    undeclared: Vec<String>,
}

impl Reached {
    fn note(&mut self, service: &ServiceView) {
        push_once(&mut self.services, service.display_name());
    }
}

fn push_once(list: &mut Vec<String>, item: String) {
    if !list.contains(&item) {
        list.push(item);
    }
}

fn check(w: &Workload, ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    // The pod is ready only when every container is: one readiness probe
    // gates it, the template's own or one its controller adds (KubeRay's).
    if !w.long_running || w.injected_probes.is_some() || w.containers().any(|c| c.container.readiness_probe.is_some()) {
        return;
    }
    let containers: Vec<ContainerView<'_>> = w.containers().collect();
    if !ctx.batch.has_services {
        for c in containers.iter().filter(|c| takes_traffic_without_services(w, c)) {
            let (name, ports) = (c.name(), ports(c));
            let (severity, naming) = severity(c);
            out.push(
                RULE.finding(
                    severity,
                    c.pointer.to_owned(),
                    Some(name),
                    format!(
                        "declares ports {ports} but no container of the pod has a readiness probe, so it takes traffic as soon as it starts"
                    ),
                    short(&naming, "no readiness probe, so it takes traffic at once; add one"),
                    HELP,
                )
                .named(naming)
                .assuming([traffic_assumption(&[], true, false)]),
            );
        }
        return;
    }
    let selecting: Vec<&ServiceView> =
        ctx.batch.services.iter().filter(|s| s.selects(w.namespace.as_deref(), &w.labels)).collect();
    if selecting.is_empty() {
        return;
    }
    let mut reached: Vec<Reached> = containers.iter().map(|_| Reached::default()).collect();
    for s in &selecting {
        if s.target_ports.is_empty() {
            for i in portless_service_targets(&containers, ctx) {
                reached[i].note(s);
            }
            continue;
        }
        for target in &s.target_ports {
            // The same containers `prestop-bridge-missing` bridges: a name
            // goes where the EndpointSlice controller sends it.
            let declaring = declared_targets(&containers, target);
            for &(i, p) in &declaring {
                reached[i].note(s);
                push_once(&mut reached[i].declared, port_label(p));
            }
            // A named port no container declares gets no endpoints: no traffic.
            if let (true, IntOrString::Int(n)) = (declaring.is_empty(), &target.port) {
                for i in undeclared_port_listeners(&containers, *n, ctx.policy) {
                    reached[i].note(s);
                    push_once(&mut reached[i].undeclared, n.to_string());
                }
            }
        }
    }
    for (c, r) in containers.iter().zip(reached) {
        if r.services.is_empty() {
            continue;
        }
        let name = c.name();
        let (severity, naming) = severity(c);
        let mut services = r.services;
        services.sort();
        let services = services_send(&services);
        let to = match (r.declared.is_empty(), r.undeclared.is_empty()) {
            (false, true) => port_list(&r.declared),
            (true, false) => format!("{}, which no container declares", port_list(&r.undeclared)),
            (false, false) => {
                format!("{} and {}, which no container declares", port_list(&r.declared), port_list(&r.undeclared))
            }
            (true, true) => "the pod".to_owned(),
        };
        out.push(
            RULE.finding(
                severity,
                c.pointer.to_owned(),
                Some(name),
                format!("{services} traffic to {to}, but no container of the pod has a readiness probe"),
                short(&naming, "takes Service traffic with no readiness probe; add one"),
                HELP,
            )
            .named(naming),
        );
    }
}

/// The short form: for a GPU container (its request noted), what it costs.
fn short(naming: &Naming, otherwise: &str) -> String {
    if matches!(naming, Naming::Noted(_)) { "traffic before the model loads: add a readiness probe" } else { otherwise }
        .to_owned()
}

/// Error for a GPU container (its port opens long before the model is
/// loaded), its request named with the container; warning otherwise.
fn severity(c: &ContainerView<'_>) -> (Severity, Naming) {
    match c.gpu_resource() {
        Some(gpu) => (Severity::Error, Naming::Noted(format!("requests {gpu}"))),
        None => (Severity::Warning, Naming::Prefix),
    }
}

/// Regular containers that serve a model: a GPU or a slow-boot image.
fn model_servers(containers: &[ContainerView<'_>], ctx: &Ctx<'_>) -> Vec<usize> {
    regular(containers).filter(|(_, c)| is_model_server(c, ctx.policy)).map(|(i, _)| i).collect()
}

fn regular<'a, 'w>(containers: &'a [ContainerView<'w>]) -> impl Iterator<Item = (usize, &'a ContainerView<'w>)> {
    containers.iter().enumerate().filter(|(_, c)| !c.sidecar)
}

/// Who a Service that lists no ports reaches: the model server, else the
/// containers that declare ports, else the first container.
fn portless_service_targets(containers: &[ContainerView<'_>], ctx: &Ctx<'_>) -> Vec<usize> {
    let models = model_servers(containers, ctx);
    if !models.is_empty() {
        return models;
    }
    let ported: Vec<usize> =
        containers.iter().enumerate().filter(|(_, c)| c.declares_ports()).map(|(i, _)| i).collect();
    if !ported.is_empty() {
        return ported;
    }
    regular(containers).map(|(i, _)| i).take(1).collect()
}

/// `port 8080` or `ports 8080/http, 9090`.
fn port_list(ports: &[String]) -> String {
    match ports {
        [one] => format!("port {one}"),
        many => format!("ports {}", many.join(", ")),
    }
}

/// `8080/http, 9090` for messages.
fn ports(c: &ContainerView<'_>) -> String {
    c.container.ports.iter().flatten().map(port_label).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests;
