//! `probe-endpoint-reused`: liveness and readiness check the same handler.

use crate::finding::{Finding, Severity};
use crate::model::{ProbeKind, ProbeTiming, Workload, handler_of};
use crate::rules::{Ctx, FixAvailability, Rule};

pub(crate) static RULE: Rule = Rule {
    name: "probe-endpoint-reused",
    severity: Severity::Error,
    summary: "liveness and readiness use the same handler, so they fail together",
    doc: DOC,
    fix: FixAvailability::NoFix(
        "a separate liveness endpoint must exist in the application; lifeguard cannot invent one",
    ),
    check,
};

const DOC: &str = r#"## What it does
Flags a container whose liveness and readiness probes use the same handler:
the same `httpGet` scheme, host, port and path; the same `tcpSocket` port; the
same `exec` command; or the same `grpc` port and service. Ports given by name
are resolved against the container's `ports`, so `port: http` and
`port: 8080` are the same port when `http` is 8080.

It also flags (warning) a container whose startup, liveness and readiness
probes are copies of one another, thresholds included.

## Why is this bad?
Readiness and liveness have different jobs. Readiness decides Service
membership and may fail while a dependency is slow or the pod is draining;
liveness restarts the container and must only fail when the process is
wedged. One handler for both means a readiness condition (a slow database,
a full queue, draining on shutdown) also restarts the container, and every
replica fails together: a restart storm that adds load to what was already
slow.

When liveness is clearly more tolerant than readiness (its
`failureThreshold x periodSeconds` is at least three times readiness's), the
shared endpoint still couples the two, but a short blip only unreadies the pod:
the finding is a warning.

## Not a finding
- Startup and liveness sharing a handler: that is the documented pattern (the
  startup probe guards boot with the liveness check and a longer budget).
- The same path on two different ports (`:8080/healthz` and `:9090/healthz`).

## Example
```yaml
livenessProbe:
  httpGet: {path: /healthz, port: http}
readinessProbe:
  httpGet: {path: /healthz, port: 8080}   # same port: `http` is 8080
```

## Use instead
```yaml
livenessProbe:
  httpGet: {path: /livez, port: http}     # local: is the process wedged?
readinessProbe:
  httpGet: {path: /readyz, port: http}    # may check dependencies, fails on drain
```

## Fix
No automatic fix: a separate liveness endpoint must exist in the application,
and lifeguard cannot invent one (a made-up endpoint would restart-loop the pod).
"#;

fn check(w: &Workload, _ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    w.for_each_container(|c| {
        let container = c.container;
        let probe = |k: ProbeKind| k.of(container).and_then(|p| handler_of(container, p).map(|h| (p, h)));
        let (Some((live, live_h)), Some((ready, ready_h))) = (probe(ProbeKind::Liveness), probe(ProbeKind::Readiness))
        else {
            return;
        };
        if live_h != ready_h {
            return;
        }
        let (lt, rt) = (ProbeTiming::of(live), ProbeTiming::of(ready));
        let all_copies = probe(ProbeKind::Startup).is_some_and(|(s, sh)| sh == live_h && s == live) && live == ready;
        let tolerant = lt.failure_window() >= rt.failure_window().saturating_mul(3);
        let pointer = c.at(&[ProbeKind::Liveness.field()]);
        let (severity, message, help) = if all_copies {
            (
                Severity::Warning,
                format!(
                    "container {:?}: startup, liveness and readiness probes are copies of one another ({})",
                    c.name(),
                    live_h.describe()
                ),
                "give each probe its job: startup with a boot budget, liveness a cheap local check, readiness the serving state",
            )
        } else if tolerant {
            (
                Severity::Warning,
                format!(
                    "container {:?}: liveness and readiness use the same handler ({}); liveness tolerates {}s of failures vs readiness {}s",
                    c.name(),
                    live_h.describe(),
                    lt.failure_window(),
                    rt.failure_window()
                ),
                "point liveness at a local endpoint that does not fail on drain or slow dependencies",
            )
        } else {
            (
                Severity::Error,
                format!(
                    "container {:?}: liveness and readiness use the same handler ({}), so a readiness failure also restarts the container",
                    c.name(),
                    live_h.describe()
                ),
                "point liveness at a cheap local endpoint (e.g. /livez) and keep dependency checks in readiness",
            )
        };
        out.push(RULE.finding(severity, pointer, Some(c.name()), message, help));
    });
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::RULE;
    use crate::finding::Severity;
    use crate::rules::testing::{check, one_container};

    #[test]
    fn same_http_handler_is_an_error() {
        let obj = one_container(json!({
            "ports": [{"name": "http", "containerPort": 8080}],
            "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}},
            "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}}
        }));
        let f = check(&RULE, &obj);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Error);
        assert_eq!(f[0].pointer, "/spec/template/spec/containers/0/livenessProbe");
        assert!(f[0].message.contains("httpGet :8080/healthz"), "{}", f[0].message);
    }

    #[test]
    fn empty_path_equals_root() {
        let obj = one_container(json!({
            "livenessProbe": {"httpGet": {"path": "", "port": 80}},
            "readinessProbe": {"httpGet": {"path": "/", "port": 80}}
        }));
        assert_eq!(check(&RULE, &obj).len(), 1);
    }

    #[test]
    fn tolerant_liveness_is_a_warning() {
        let obj = one_container(json!({
            "livenessProbe": {"tcpSocket": {"port": 5432}, "periodSeconds": 10, "failureThreshold": 6},
            "readinessProbe": {"tcpSocket": {"port": 5432}, "periodSeconds": 5, "failureThreshold": 3}
        }));
        let f = check(&RULE, &obj);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Warning);
    }

    #[test]
    fn same_exec_and_grpc_are_findings() {
        for probe in [json!({"exec": {"command": ["pg_isready"]}}), json!({"grpc": {"port": 9000}})] {
            let obj = one_container(json!({"livenessProbe": probe, "readinessProbe": probe}));
            assert_eq!(check(&RULE, &obj).len(), 1, "{probe}");
        }
    }

    #[test]
    fn three_copies_are_a_warning_naming_all_three() {
        let p = json!({"httpGet": {"path": "/health", "port": 8080}, "periodSeconds": 5});
        let obj = one_container(json!({"startupProbe": p, "livenessProbe": p, "readinessProbe": p}));
        let f = check(&RULE, &obj);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Warning);
        assert!(f[0].message.contains("copies"), "{}", f[0].message);
    }

    #[test]
    fn startup_sharing_liveness_is_fine() {
        let obj = one_container(json!({
            "startupProbe": {"httpGet": {"path": "/livez", "port": 8080}, "failureThreshold": 30},
            "livenessProbe": {"httpGet": {"path": "/livez", "port": 8080}},
            "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8080}}
        }));
        assert!(check(&RULE, &obj).is_empty());
    }

    #[test]
    fn same_path_on_other_port_is_fine() {
        let obj = one_container(json!({
            "livenessProbe": {"httpGet": {"path": "/healthz", "port": 9090}},
            "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}}
        }));
        assert!(check(&RULE, &obj).is_empty());
    }

    #[test]
    fn grpc_services_differ_is_fine() {
        let obj = one_container(json!({
            "livenessProbe": {"grpc": {"port": 9000, "service": "liveness"}},
            "readinessProbe": {"grpc": {"port": 9000, "service": "readiness"}}
        }));
        assert!(check(&RULE, &obj).is_empty());
    }

    #[test]
    fn sidecar_init_containers_are_checked_plain_init_ones_not() {
        let probe = json!({"httpGet": {"path": "/h", "port": 15000}});
        let mut obj = one_container(json!({}));
        obj["spec"]["template"]["spec"]["initContainers"] = json!([
            {"name": "init", "image": "busybox", "livenessProbe": probe, "readinessProbe": probe},
            {"name": "proxy", "image": "envoy", "restartPolicy": "Always", "livenessProbe": probe, "readinessProbe": probe}
        ]);
        let f = check(&RULE, &obj);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].container.as_deref(), Some("proxy"));
        assert_eq!(f[0].pointer, "/spec/template/spec/initContainers/1/livenessProbe");
    }
}
