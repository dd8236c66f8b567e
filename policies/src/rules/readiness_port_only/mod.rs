//! `readiness-port-only`: readiness only checks that a port accepts connections.
//!
//! Tests: `policies/src/rules/readiness_port_only/fixtures/`,
//! `policies/src/rules/readiness_port_only/snapshots/rule_fixtures__readiness-port-only.snap`; in CEL:
//! `policies/src/rules/readiness_port_only/cel.rs`, evaluated on the fixtures
//! offline by `tests/tests/cel_fixtures.rs` and on the API server by
//! `tests/tests/cluster_vap/`.

pub(crate) mod cel;

use crate::finding::{Finding, Naming, Severity};
use crate::model::{ProbeKind, Workload, handler_count, handler_of};
use crate::rules::{Checks, Ctx, FixAvailability, Harm, HarmShown, MapExport, Related, Rule, VapExport};
use crate::simulate::Verdict;

pub(crate) static RULE: Rule = Rule {
    name: "readiness-port-only",
    severity: Severity::Warning,
    summary: "readiness is a bare tcpSocket check: an open port is not a usable app or model",
    doc: DOC,
    fix: FixAvailability::NoFix(
        "the application must expose an endpoint that reports whether it can serve; lifeguard cannot invent one",
    ),
    check,
    vap: VapExport::Yes(Checks(crate::rules::readiness_port_only::cel::checks)),
    map: MapExport::NoFix,
    related: Related::Nothing,
    harm: HarmShown::In(&[
        Harm { scenario: "boot", verdicts: &[Verdict::ConnectionsRefused] },
        Harm { scenario: "wedge", verdicts: &[Verdict::WedgeUndetected] },
    ]),
};

const DOC: &str = r#"## What it does
Flags a serving container (any container of a long-running workload) whose
readiness probe is a bare `tcpSocket` check. The finding is an error when the
container requests a GPU, a warning otherwise.

## Why is this bad?
Readiness decides when a pod receives Service traffic. A TCP check passes as
soon as something listens on the port: a model server that has bound its HTTP
port while the weights are still downloading, compiling or moving to GPU
memory; a cache still loading its snapshot; an app whose listener is up but
whose handlers are not. The pod joins the Service and answers errors or
hangs until it is really ready, on every rollout and every restart.

## Not a finding
- `httpGet`, `grpc` or `exec` readiness: they can ask the application itself.
- A `tcpSocket` liveness or startup probe: those only need the process to
  be alive.
- Containers of Jobs, CronJobs and pods that run to completion: they are not
  behind a Service.

## Example
```yaml
image: vllm/vllm-openai:v0.6.0
readinessProbe:
  tcpSocket: {port: 8000}     # open long before the model is loaded
```

## Use instead
```yaml
readinessProbe:
  httpGet: {path: /health, port: 8000}   # answers 200 once the model is loaded
```

## Fix
No automatic fix: the application must expose an endpoint that reports
whether it can serve (model loaded, warm-up done), and lifeguard cannot
invent one.
"#;

fn check(w: &Workload, _ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    if !w.long_running {
        return;
    }
    w.for_each_container(|c| {
        let Some(ready) = ProbeKind::Readiness.of(c.container) else {
            return;
        };
        // Several handlers is an invalid probe, reported by probe-invalid.
        if ready.tcp_socket.is_none() || handler_count(ready) != 1 {
            return;
        }
        let Some(handler) = handler_of(c.container, ready) else {
            return;
        };
        let gpu = c.gpu_resource();
        let (severity, what, thing) = match gpu {
            Some(_) => (Severity::Error, "a loaded model", "model"),
            None => (Severity::Warning, "a usable app", "app"),
        };
        // The GPU request, which makes it an error, is named with the container.
        let naming = gpu.map_or(Naming::Prefix, |g| Naming::Noted(format!("requests {g}")));
        out.push(
            RULE.finding(
                severity,
                c.at(&[ProbeKind::Readiness.field(), "tcpSocket"]),
                Some(c.name()),
                format!("readiness is only {}; an open port is not {what}", handler.describe()),
                format!("readiness is only {}; check the {thing} with httpGet", handler.describe()),
                "use an httpGet or grpc readiness check that passes only once the app can serve",
            )
            .named(naming),
        );
    });
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::RULE;
    use crate::finding::Severity;
    use crate::rules::testing::{check, one_container};

    #[test]
    fn tcp_readiness_is_a_warning() {
        let obj = one_container(json!({
            "ports": [{"name": "redis", "containerPort": 6379}],
            "readinessProbe": {"tcpSocket": {"port": "redis"}, "periodSeconds": 5}
        }));
        let f = check(&RULE, &obj);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Warning);
        assert_eq!(f[0].pointer, "/spec/template/spec/containers/0/readinessProbe/tcpSocket");
        assert!(f[0].message.contains("tcpSocket :6379"), "{}", f[0].message);
        assert!(f[0].fix.is_none());
    }

    #[test]
    fn gpu_container_is_an_error() {
        let obj = one_container(json!({
            "image": "vllm/vllm-openai:v0.6.0",
            "resources": {"limits": {"nvidia.com/gpu": "1"}},
            "readinessProbe": {"tcpSocket": {"port": 8000}}
        }));
        let f = check(&RULE, &obj);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Error);
        assert_eq!(f[0].naming, crate::finding::Naming::Noted("requests nvidia.com/gpu".into()));
        assert!(f[0].message.contains("loaded model"), "{}", f[0].message);
    }

    #[test]
    fn sidecar_is_checked() {
        let mut obj = one_container(json!({}));
        obj["spec"]["template"]["spec"]["initContainers"] = json!([{
            "name": "proxy", "image": "envoy", "restartPolicy": "Always",
            "readinessProbe": {"tcpSocket": {"port": 15000}}
        }]);
        let f = check(&RULE, &obj);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].pointer, "/spec/template/spec/initContainers/0/readinessProbe/tcpSocket");
    }

    #[test]
    fn not_findings() {
        for probe in [
            json!({"httpGet": {"path": "/readyz", "port": 8080}}),
            json!({"grpc": {"port": 9000}}),
            json!({"exec": {"command": ["redis-cli", "ping"]}}),
        ] {
            let obj = one_container(json!({"readinessProbe": probe}));
            assert!(check(&RULE, &obj).is_empty(), "{probe}");
        }
        // tcpSocket on liveness and startup only.
        let obj = one_container(json!({
            "startupProbe": {"tcpSocket": {"port": 8080}},
            "livenessProbe": {"tcpSocket": {"port": 8080}},
            "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8080}}
        }));
        assert!(check(&RULE, &obj).is_empty());
    }

    #[test]
    fn job_is_not_a_serving_workload() {
        let mut obj = one_container(json!({
            "ports": [{"containerPort": 8080}],
            "readinessProbe": {"tcpSocket": {"port": 8080}}
        }));
        obj["kind"] = json!("Job");
        obj["apiVersion"] = json!("batch/v1");
        obj["spec"]["template"]["spec"]["restartPolicy"] = json!("Never");
        assert!(check(&RULE, &obj).is_empty());
    }
}
