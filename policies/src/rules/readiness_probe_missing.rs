//! `readiness-probe-missing`: traffic can reach a container that has no
//! readiness probe.

use crate::finding::{Finding, Severity};
use crate::model::{ContainerView, Workload, port_label, services_send};
use crate::rules::{Ctx, FixAvailability, Rule};

pub(crate) static RULE: Rule = Rule {
    name: "readiness-probe-missing",
    severity: Severity::Warning,
    summary: "a container that receives traffic has no readiness probe",
    doc: DOC,
    fix: FixAvailability::NoFix("the readiness endpoint must exist in the application; lifeguard cannot invent one"),
    check,
};

const DOC: &str = r#"## What it does
Flags a long-running pod that receives traffic without a readiness probe:

- when the input holds a Service that selects the pod (same namespace, the
  selector matches the pod template's labels) and no container of the pod
  has a readiness probe, each container that declares ports (or the first
  container, if none does) is reported, naming the Service;
- when the input holds no Service at all, each container that declares
  ports and has no readiness probe is reported.

Sidecar init containers (`restartPolicy: Always`) count like containers.

## Why is this bad?
Without a readiness probe a container is ready as soon as it runs. The pod
joins the Service's endpoints before the application listens or has loaded
what it serves, so the first requests of every rollout and every restart
fail. Nothing takes it out of rotation while it is overloaded or wedged
either.

## Not a finding
- Jobs, CronJobs and pods with `restartPolicy` Never or OnFailure.
- The input holds Services but none selects the pod (a worker that only
  calls out).
- With a selecting Service, any container of the pod has a readiness probe:
  the pod is ready only when all its containers are.

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

/// What the rule needs of one container.
struct Target {
    pointer: String,
    name: String,
    ports: String,
    ready: bool,
}

fn check(w: &Workload, ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    if !w.long_running {
        return;
    }
    let mut containers = Vec::new();
    w.for_each_container(|c| {
        containers.push(Target {
            pointer: c.pointer.to_owned(),
            name: c.name().to_owned(),
            ports: ports(&c),
            ready: c.container.readiness_probe.is_some(),
        });
    });
    let help = "add a readinessProbe that fails until the app can serve and while it drains";
    if !ctx.batch.has_services {
        for t in containers.iter().filter(|t| !t.ports.is_empty() && !t.ready) {
            let (name, ports) = (&t.name, &t.ports);
            out.push(RULE.finding(
                Severity::Warning,
                t.pointer.clone(),
                Some(name),
                format!(
                    "container {name:?}: declares ports {ports} but has no readiness probe, so it takes traffic as soon as it starts"
                ),
                help,
            ));
        }
        return;
    }
    let services: Vec<String> = ctx
        .batch
        .services
        .iter()
        .filter(|s| s.selects(w.namespace.as_deref(), &w.labels))
        .map(|s| s.display_name())
        .collect();
    // The pod is ready only when every container is: one readiness probe gates it.
    if services.is_empty() || containers.iter().any(|t| t.ready) {
        return;
    }
    // Several files of one input may define the same Service: name each once,
    // and keep the message one line.
    let mut services = services;
    services.sort();
    services.dedup();
    let services = services_send(&services);
    let ported: Vec<&Target> = containers.iter().filter(|t| !t.ports.is_empty()).collect();
    let targets = if ported.is_empty() { containers.iter().take(1).collect() } else { ported };
    for t in targets {
        let name = &t.name;
        let via = if t.ports.is_empty() { String::new() } else { format!(" on ports {}", t.ports) };
        out.push(RULE.finding(
            Severity::Warning,
            t.pointer.clone(),
            Some(name),
            format!("container {name:?}: {services} traffic to the pod{via}, but no container has a readiness probe"),
            help,
        ));
    }
}

/// `8080/http, 9090` for messages.
fn ports(c: &ContainerView<'_>) -> String {
    c.container.ports.iter().flatten().map(port_label).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::RULE;
    use crate::engine::Batch;
    use crate::finding::{Finding, Severity};
    use crate::policy::Policy;
    use crate::rules::testing::{check, check_with, deployment, one_container};

    fn service(namespace: &str, selector: Value) -> Value {
        json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "x", "namespace": namespace},
            "spec": {"selector": selector, "ports": [{"port": 80}]}
        })
    }

    fn with_services(obj: &Value, services: &[Value]) -> Vec<Finding> {
        check_with(&RULE, obj, &Policy::default(), &Batch::from_objects(services.iter()))
    }

    fn ported() -> Value {
        one_container(json!({"ports": [{"name": "http", "containerPort": 8080}]}))
    }

    #[test]
    fn selecting_service_names_the_service() {
        let f = with_services(&ported(), &[service("prod", json!({"app": "web"}))]);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Warning);
        assert_eq!(f[0].pointer, "/spec/template/spec/containers/0");
        assert!(f[0].message.contains("Service/x"), "{}", f[0].message);
        assert!(f[0].message.contains("8080/http"), "{}", f[0].message);
        assert!(f[0].fix.is_none());
    }

    #[test]
    fn two_selecting_services_are_both_named() {
        let mut other = service("prod", json!({"app": "web"}));
        other["metadata"]["name"] = json!("y");
        let f = with_services(&ported(), &[service("prod", json!({"app": "web"})), other]);
        assert_eq!(f.len(), 1);
        assert!(f[0].message.contains("Service/x, Service/y send traffic"), "{}", f[0].message);
    }

    #[test]
    fn repeated_services_are_named_once_and_long_lists_are_cut() {
        let named = |n: &str| {
            let mut s = service("prod", json!({"app": "web"}));
            s["metadata"]["name"] = json!(n);
            s
        };
        let f = with_services(&ported(), &[named("x"), named("x"), named("x")]);
        assert!(f[0].message.contains("Service/x sends traffic"), "{}", f[0].message);
        let f = with_services(&ported(), &[named("a"), named("b"), named("c"), named("d"), named("e")]);
        assert!(f[0].message.contains("Service/a, Service/b, Service/c and 2 more send traffic"), "{}", f[0].message);
    }

    #[test]
    fn selecting_service_without_ports_reports_the_first_container() {
        let obj = deployment(json!([{"name": "a"}, {"name": "b"}]));
        let f = with_services(&obj, &[service("prod", json!({"app": "web"}))]);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].container.as_deref(), Some("a"));
    }

    #[test]
    fn selecting_service_reports_each_ported_container_and_sidecars() {
        let mut obj = deployment(json!([
            {"name": "a"},
            {"name": "b", "ports": [{"containerPort": 9000}]}
        ]));
        obj["spec"]["template"]["spec"]["initContainers"] = json!([
            {"name": "proxy", "restartPolicy": "Always", "ports": [{"containerPort": 15001}]},
            {"name": "init", "ports": [{"containerPort": 1}]}
        ]);
        let f = with_services(&obj, &[service("prod", json!({"app": "web"}))]);
        let who: Vec<_> = f.iter().filter_map(|f| f.container.as_deref()).collect();
        assert_eq!(who, ["b", "proxy"]);
        assert_eq!(f[1].pointer, "/spec/template/spec/initContainers/0");
    }

    #[test]
    fn no_service_reports_each_ported_container_without_readiness() {
        let obj = deployment(json!([
            {"name": "a", "ports": [{"containerPort": 8080}],
             "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8080}}},
            {"name": "metrics", "ports": [{"containerPort": 9100}]},
            {"name": "worker"}
        ]));
        let f = check(&RULE, &obj);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].container.as_deref(), Some("metrics"));
        assert_eq!(f[0].pointer, "/spec/template/spec/containers/1");
    }

    #[test]
    fn not_findings() {
        let svc = service("prod", json!({"app": "web"}));
        // Services present, none selecting; or one in another namespace.
        assert!(with_services(&ported(), &[service("prod", json!({"app": "api"}))]).is_empty());
        assert!(with_services(&ported(), &[service("dev", json!({"app": "web"}))]).is_empty());
        // One container has readiness and a Service selects the pod.
        let obj = deployment(json!([
            {"name": "a", "ports": [{"containerPort": 8080}],
             "readinessProbe": {"tcpSocket": {"port": 8080}}},
            {"name": "metrics", "ports": [{"containerPort": 9100}]}
        ]));
        assert!(with_services(&obj, std::slice::from_ref(&svc)).is_empty());
        // A container with ports and readiness.
        let ready = one_container(json!({
            "ports": [{"containerPort": 8080}],
            "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8080}}
        }));
        assert!(check(&RULE, &ready).is_empty());
        // Without Services, a container without ports.
        assert!(check(&RULE, &one_container(json!({}))).is_empty());
        // Jobs and run-once pods.
        let mut job = ported();
        job["kind"] = json!("Job");
        job["apiVersion"] = json!("batch/v1");
        assert!(with_services(&job, std::slice::from_ref(&svc)).is_empty());
        assert!(check(&RULE, &job).is_empty());
        let pod = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "prod", "labels": {"app": "web"}},
            "spec": {"restartPolicy": "Never",
                     "containers": [{"name": "app", "ports": [{"containerPort": 80}]}]}
        });
        assert!(with_services(&pod, std::slice::from_ref(&svc)).is_empty());
        assert!(check(&RULE, &pod).is_empty());
    }
}
