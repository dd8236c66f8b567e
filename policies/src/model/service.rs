//! Services in the same input, read only to know which pods get traffic.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ContainerPort;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::Value;

use super::knowledge::Knowledge;
use super::listener::undeclared_port_listeners;
use super::workload::{ContainerView, Workload};
use crate::assumption::{About, Assumption, Source};

/// A Service's namespace, name, selector and the pod ports it sends to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceView {
    /// `metadata.namespace`, if set.
    pub namespace: Option<String>,
    /// `metadata.name`, if set.
    pub name: Option<String>,
    /// `spec.selector` (empty for selector-less Services).
    pub selector: BTreeMap<String, String>,
    /// The pod port of each `spec.ports` entry. Empty when no port is listed.
    pub target_ports: Vec<TargetPort>,
    /// `clusterIP: None`: clients resolve the pods' addresses and connect to
    /// them directly; no proxy sits in between.
    pub headless: bool,
}

/// Whether an object of the context in `a` concerns an object in `b`: the
/// same namespace, or either unset, since manifests applied together with
/// `-n` land in one namespace (Services, PodDisruptionBudgets and
/// HorizontalPodAutoscalers alike).
pub(crate) fn same_namespace(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}

impl ServiceView {
    /// Reads a Service object; `None` for any other kind.
    pub fn from_object(object: &Value) -> Option<ServiceView> {
        if object.get("kind").and_then(Value::as_str) != Some("Service") {
            return None;
        }
        let meta = object.get("metadata");
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
        let selector = object
            .pointer("/spec/selector")
            .and_then(Value::as_object)
            .map(|m| m.iter().filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned()))).collect())
            .unwrap_or_default();
        let target_ports = object
            .pointer("/spec/ports")
            .and_then(Value::as_array)
            .map(|ports| ports.iter().filter_map(target_port).collect())
            .unwrap_or_default();
        Some(ServiceView {
            namespace: text(meta.and_then(|m| m.get("namespace"))),
            name: text(meta.and_then(|m| m.get("name"))),
            selector,
            target_ports,
            headless: object.pointer("/spec/clusterIP").and_then(Value::as_str) == Some("None"),
        })
    }

    /// Whether this Service sends traffic to pods with these labels in this
    /// namespace. An unset namespace matches any: manifests applied together
    /// with `-n` land in one namespace. A Service without selector selects nothing.
    pub fn selects(&self, namespace: Option<&str>, labels: &BTreeMap<String, String>) -> bool {
        same_namespace(self.namespace.as_deref(), namespace)
            && !self.selector.is_empty()
            && self.selector.iter().all(|(k, v)| labels.get(k) == Some(v))
    }

    /// The order a [`crate::Batch`] keeps Services in: namespace, name,
    /// then the rest, so that equal names read in another order still sort
    /// the same.
    pub fn order_key(&self) -> (Option<&str>, Option<&str>, String) {
        let rest = format!("{:?} {:?} {}", self.selector, self.target_ports, self.headless);
        (self.namespace.as_deref(), self.name.as_deref(), rest)
    }

    /// `Service/name` for messages.
    pub fn display_name(&self) -> String {
        format!("Service/{}", self.name.as_deref().unwrap_or("<unnamed>"))
    }
}

/// Where one Service port sends in the pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetPort {
    /// Its `targetPort`, else its `port` (a numeric string is a number).
    pub port: IntOrString,
    /// Its `protocol` (`TCP` when unset, as the API server defaults it): a
    /// named target port only matches a container port of the same protocol.
    pub protocol: String,
}

/// A Service port's pod port: `targetPort`, defaulting to `port`.
fn target_port(port: &Value) -> Option<TargetPort> {
    let number = |v: &Value| v.as_i64().and_then(|n| i32::try_from(n).ok()).map(IntOrString::Int);
    let target = match port.get("targetPort") {
        Some(Value::String(s)) => Some(match s.trim().parse::<i32>() {
            Ok(n) => IntOrString::Int(n),
            Err(_) => IntOrString::String(s.clone()),
        }),
        Some(v) if !v.is_null() => number(v),
        _ => port.get("port").and_then(number),
    }?;
    Some(TargetPort { port: target, protocol: protocol(port.get("protocol").and_then(Value::as_str)).to_owned() })
}

/// A port's protocol as the API server defaults it.
fn protocol(raw: Option<&str>) -> &str {
    raw.filter(|p| !p.is_empty()).unwrap_or("TCP")
}

/// The containers a Service port reaches through a port they declare, as
/// indices into `containers` (the pod's containers in
/// [`Workload::containers`] order: regular containers, then sidecars), with
/// the port each declares.
///
/// A named target port resolves as the EndpointSlice controller resolves it
/// (`FindPort`, k8s.io/endpointslice): the first regular container that
/// declares a port of that name and the Service port's protocol, else the
/// first sidecar that does; one container at most, so a sidecar that
/// reuses the name never takes what a regular container declares. A number
/// is the pod's port whoever declares it: every container that does.
pub fn declared_targets<'c>(containers: &[ContainerView<'c>], target: &TargetPort) -> Vec<(usize, &'c ContainerPort)> {
    let declaring = containers.iter().enumerate().filter_map(|(i, c)| {
        let port = declared(c).find(|p| match &target.port {
            IntOrString::Int(n) => p.container_port == *n,
            IntOrString::String(name) => {
                p.name.as_deref() == Some(name.as_str()) && protocol(p.protocol.as_deref()) == target.protocol
            }
        });
        port.map(|p| (i, p))
    });
    match target.port {
        IntOrString::Int(_) => declaring.collect(),
        // `containers` lists regular containers first, as FindPort looks.
        IntOrString::String(_) => declaring.take(1).collect(),
    }
}

/// A regular container that Services send traffic to.
#[derive(Debug, Clone)]
pub struct Receiver<'w> {
    /// The container.
    pub view: ContainerView<'w>,
    /// `Service/name` of each Service that reaches it, once each, in input order.
    pub services: Vec<String>,
    /// The ports they reach (`8080/http`, `8080`), once each.
    pub ports: Vec<String>,
}

/// The regular containers, in pod order, that the Services selecting the
/// pod send traffic to through a proxy (headless Services are left out):
/// each declares a Service's target port ([`declared_targets`]: a name
/// goes to one container, as the EndpointSlice controller sends it), or
/// listens on a number no container declares ([`undeclared_port_listeners`],
/// as `readiness-probe-missing` attributes it). A sidecar that takes the
/// port (it alone declares the name, or declares or names the number) is
/// left out.
pub fn receivers<'w>(w: &'w Workload, services: &[ServiceView], policy: &dyn Knowledge) -> Vec<Receiver<'w>> {
    let views: Vec<ContainerView<'w>> = w.containers().collect();
    let mut out: Vec<Receiver<'w>> =
        views.iter().map(|&view| Receiver { view, services: Vec::new(), ports: Vec::new() }).collect();
    let selecting = services.iter().filter(|s| !s.headless && s.selects(w.namespace.as_deref(), &w.labels));
    for s in selecting {
        for target in &s.target_ports {
            let declaring = declared_targets(&views, target);
            for &(i, p) in &declaring {
                note(&mut out[i], s, port_label(p));
            }
            // A named port no container declares gets no endpoints: no traffic.
            if let (true, IntOrString::Int(n)) = (declaring.is_empty(), &target.port) {
                for i in undeclared_port_listeners(&views, *n, policy) {
                    note(&mut out[i], s, n.to_string());
                }
            }
        }
    }
    out.retain(|r| !r.view.sidecar && !r.services.is_empty());
    out
}

fn declared<'c>(c: &ContainerView<'c>) -> impl Iterator<Item = &'c ContainerPort> {
    c.container.ports.iter().flatten()
}

fn note(r: &mut Receiver<'_>, s: &ServiceView, port: String) {
    let service = s.display_name();
    if !r.services.contains(&service) {
        r.services.push(service);
    }
    if !r.ports.contains(&port) {
        r.ports.push(port);
    }
}

/// `8080/http` or `8080`, for messages.
pub fn port_label(p: &ContainerPort) -> String {
    match &p.name {
        Some(n) if !n.is_empty() => format!("{}/{n}", p.container_port),
        _ => p.container_port.to_string(),
    }
}

/// `Service/a, Service/b sends`/`send` for messages: names once each, at
/// most three and a count (a message stays one line), with the verb that agrees.
pub fn services_send(names: &[String]) -> String {
    services_verb(names, "sends", "send")
}

/// [`services_send`]'s list of names with any verb: `Service/a has`,
/// `Service/a, Service/b have`.
pub fn services_verb(names: &[String], one: &str, many: &str) -> String {
    let verb = if names.len() == 1 { one } else { many };
    match names.len() {
        0..=3 => format!("{} {verb}", names.join(", ")),
        n => format!("{} and {} more {verb}", names[..3].join(", "), n - 3),
    }
}

/// Whether, with no Service in the input at all, a container is taken to
/// receive traffic: it declares a port Prometheus does not scrape. A
/// scraped port is the one the pod template's `prometheus.io/port`
/// annotation names, or one named `metrics` or `*-metrics`; Prometheus
/// finds it by pod (its `pod` role lists every container port, ready or
/// not), so it is no sign of Service traffic. `readiness-probe-missing`
/// and `simulate` read it alike.
pub fn takes_traffic_without_services(w: &Workload, c: &ContainerView<'_>) -> bool {
    c.container.ports.iter().flatten().any(|p| !scraped(w, p))
}

/// Whether requests reach a container, as the assumption a finding or a
/// verdict rests on: the Services of the input that select the pod, or,
/// with no Service in the input at all, the fallback of
/// [`takes_traffic_without_services`].
pub fn traffic_assumption(services: &[String], receives: bool, input_has_services: bool) -> Assumption {
    let value = if receives { "receives" } else { "none" };
    let (source, from) = match (input_has_services, receives) {
        (true, true) => (Source::Spec, format!("{} selects the pod", services.join(", "))),
        (true, false) => (Source::Spec, "no Service of the input sends requests to it".to_owned()),
        (false, true) => {
            (Source::Default, "no Service in the input; it declares a port Prometheus does not scrape".to_owned())
        }
        (false, false) => (Source::Default, "no Service in the input, and no port but scraped ones".to_owned()),
    };
    Assumption::new(About::Traffic, value, source, from)
}

/// The pod template annotation Prometheus' own example configuration keys
/// its scrape port on (`__meta_kubernetes_pod_annotation_prometheus_io_port`).
const PROMETHEUS_PORT: &str = "prometheus.io/port";

fn scraped(w: &Workload, p: &ContainerPort) -> bool {
    let annotated = w.annotations.get(PROMETHEUS_PORT).is_some_and(|v| v.trim() == p.container_port.to_string());
    let named = p.name.as_deref().is_some_and(|n| n == "metrics" || n.ends_with("-metrics"));
    annotated || named
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{ServiceView, receivers};
    use crate::model::Workload;
    use crate::policy::Policy;

    fn pod(containers: Value, init: Value) -> Workload {
        let obj = json!({
            "kind": "Pod", "metadata": {"name": "p", "namespace": "prod", "labels": {"app": "web"}},
            "spec": {"containers": containers, "initContainers": init}
        });
        Workload::from_object(&obj).expect("reads").expect("a pod")
    }

    /// `container: ports` for each receiver of one Service with these ports.
    fn reached(w: &Workload, service: Value) -> Vec<String> {
        let mut obj = json!({"kind": "Service", "metadata": {"name": "web"}, "spec": {"selector": {"app": "web"}}});
        obj["spec"].as_object_mut().expect("spec").extend(service.as_object().expect("fields").clone());
        let s = ServiceView::from_object(&obj).expect("a Service");
        receivers(w, &[s], &Policy::default())
            .iter()
            .map(|r| format!("{}: {}", r.view.name(), r.ports.join(", ")))
            .collect()
    }

    #[test]
    fn target_ports_match_by_name_number_or_service_port() {
        let w = pod(
            json!([
                {"name": "app", "ports": [{"name": "http", "containerPort": 8080}]},
                {"name": "exporter", "ports": [{"name": "metrics", "containerPort": 9100}]}
            ]),
            json!([]),
        );
        assert_eq!(reached(&w, json!({"ports": [{"port": 80, "targetPort": "http"}]})), ["app: 8080/http"]);
        assert_eq!(reached(&w, json!({"ports": [{"port": 80, "targetPort": 9100}]})), ["exporter: 9100/metrics"]);
        assert_eq!(reached(&w, json!({"ports": [{"port": 8080}]})), ["app: 8080/http"]);
        assert_eq!(
            reached(&w, json!({"ports": [{"port": 80, "targetPort": "8080"}, {"port": 9100}]})),
            ["app: 8080/http", "exporter: 9100/metrics"]
        );
        // An undeclared number in a pod of two that both declare ports: the first.
        assert_eq!(reached(&w, json!({"ports": [{"port": 80, "targetPort": 3000}]})), ["app: 3000"]);
        // Headless, or no ports: no proxy, nothing known.
        assert!(reached(&w, json!({"clusterIP": "None", "ports": [{"port": 8080}]})).is_empty());
        assert!(reached(&w, json!({})).is_empty());
    }

    /// A name resolves as FindPort resolves it: regular containers first,
    /// then sidecars, the first port of that name and protocol; one container.
    #[test]
    fn a_named_target_port_reaches_the_one_container_the_endpoint_slice_controller_picks() {
        let sidecar =
            json!([{"name": "proxy", "restartPolicy": "Always", "ports": [{"name": "http", "containerPort": 15001}]}]);
        let app = json!({"name": "app", "ports": [{"name": "http", "containerPort": 8080}]});
        let by_name = json!({"ports": [{"port": 80, "targetPort": "http"}]});
        // A sidecar that reuses the name never takes it from a regular container.
        assert_eq!(reached(&pod(json!([app.clone()]), sidecar.clone()), by_name.clone()), ["app: 8080/http"]);
        // Alone with the name, the sidecar takes it (and is left out).
        assert!(reached(&pod(json!([{"name": "app"}]), sidecar), by_name.clone()).is_empty());
        // Two regular containers with the name: the first.
        let debug = json!({"name": "debug", "ports": [{"name": "http", "containerPort": 8081}]});
        assert_eq!(reached(&pod(json!([app, debug]), json!([])), by_name), ["app: 8080/http"]);
        // The protocol must match too; unset is TCP on both sides.
        let dns = pod(
            json!([
                {"name": "tcp", "ports": [{"name": "dns", "containerPort": 5353}]},
                {"name": "udp", "ports": [{"name": "dns", "containerPort": 5353, "protocol": "UDP"}]}
            ]),
            json!([]),
        );
        assert_eq!(
            reached(&dns, json!({"ports": [{"port": 53, "targetPort": "dns", "protocol": "UDP"}]})),
            ["udp: 5353/dns"]
        );
        assert_eq!(reached(&dns, json!({"ports": [{"port": 53, "targetPort": "dns"}]})), ["tcp: 5353/dns"]);
        assert!(reached(&dns, json!({"ports": [{"port": 53, "targetPort": "dns", "protocol": "SCTP"}]})).is_empty());
    }

    #[test]
    fn an_undeclared_number_reaches_the_only_container_unless_a_sidecar_declares_it() {
        let proxy = json!([{"name": "proxy", "restartPolicy": "Always", "ports": [{"containerPort": 15001}]}]);
        let w = pod(json!([{"name": "app"}]), proxy);
        assert_eq!(reached(&w, json!({"ports": [{"port": 80, "targetPort": 3000}]})), ["app: 3000"]);
        assert!(reached(&w, json!({"ports": [{"port": 15001}]})).is_empty());
    }
}
