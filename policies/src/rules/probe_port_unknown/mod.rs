//! `probe-port-unknown`: a probe or lifecycle hook names a port the container
//! does not declare.
//!
//! Tests: `policies/src/rules/probe_port_unknown/fixtures/`,
//! `policies/src/rules/probe_port_unknown/snapshots/rule_fixtures__probe-port-unknown.snap`; in CEL:
//! `policies/src/rules/probe_port_unknown/cel.rs`, evaluated on the fixtures
//! offline by `tests/tests/cel_fixtures.rs` and on the API server by
//! `tests/tests/cluster_vap/`.

pub(crate) mod cel;

use k8s_openapi::api::core::v1::{HTTPGetAction, TCPSocketAction};

use crate::finding::{Finding, Severity};
use crate::model::{ContainerView, ProbeKind, Workload, is_valid_port_name, unresolved_ports};
use crate::rules::{Checks, Ctx, FixAvailability, Harm, HarmShown, MapExport, Related, Rule, VapExport};
use crate::simulate::Verdict;

pub(crate) static RULE: Rule = Rule {
    name: "probe-port-unknown",
    severity: Severity::Error,
    summary: "a probe or lifecycle hook names a port the container does not declare",
    doc: DOC,
    fix: FixAvailability::NoFix(
        "lifeguard cannot tell which port was meant; declare the name under `ports` or use the number",
    ),
    check,
    vap: VapExport::Yes(Checks(crate::rules::probe_port_unknown::cel::checks)),
    map: MapExport::NoFix,
    related: Related::Nothing,
    harm: HarmShown::In(&[
        Harm { scenario: "boot", verdicts: &[Verdict::OutOfService] },
        Harm { scenario: "wedge", verdicts: &[Verdict::WedgeUndetected] },
    ]),
};

const DOC: &str = r#"## What it does
Flags an `httpGet` or `tcpSocket` port given by name, in a startup, liveness
or readiness probe or in a `postStart`/`preStop` hook, when the container's
`ports` declare no port of that name.

## Why is this bad?
The kubelet resolves a port name against the container's own `ports`. An
unknown name cannot be resolved, so the kubelet cannot send the check: every
attempt errors (an `Unhealthy` event, "probe errored") and the probe worker
discards an errored result, so the probe keeps its first value for good. A
readiness probe keeps the pod out of its Services forever; a startup probe
never lets the container count as started, so liveness and readiness never
run and the pod is never ready either; a liveness probe never fails, so
nothing restarts a wedged process. A hook fails, and a failing `postStart`
kills the container. The API server accepts the spec, so this only shows at
run time, often after a port was renamed or a chart value left empty.
`lifeguard simulate` shows what follows for each probe.

## Not a finding
- A numeric port that is not declared (`port: 8080` with no `ports`): the
  kubelet probes the number directly. Declaring ports is good practice, but a
  missing declaration breaks nothing.
- A quoted number (`port: "8080"`): the API server rejects it in a probe
  or a hook; that is `probe-invalid`'s finding.
- A name that is not a valid port name at all (`HTTP`, `web_port`): the API
  server rejects it; `probe-invalid` reports it.

## Example
```yaml
ports:
  - {name: http, containerPort: 8080}
livenessProbe:
  httpGet: {path: /livez, port: metrics}   # no port named metrics
```

## Use instead
```yaml
ports:
  - {name: http, containerPort: 8080}
  - {name: metrics, containerPort: 9090}
livenessProbe:
  httpGet: {path: /livez, port: metrics}
```

## Fix
No automatic fix: lifeguard cannot tell which port was meant. Declare the
name under `ports`, or use the port number.
"#;

fn check(w: &Workload, _ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    w.for_each_container(|c| {
        for kind in [ProbeKind::Startup, ProbeKind::Liveness, ProbeKind::Readiness] {
            if let Some(p) = kind.of(c.container) {
                let what = format!("{} probe", kind.word());
                ports(out, c, &what, &[kind.field()], p.http_get.as_ref(), p.tcp_socket.as_ref());
            }
        }
        let lifecycle = c.container.lifecycle.as_ref();
        for (hook, handler) in [
            ("postStart", lifecycle.and_then(|l| l.post_start.as_ref())),
            ("preStop", lifecycle.and_then(|l| l.pre_stop.as_ref())),
        ] {
            if let Some(h) = handler {
                let what = format!("{hook} hook");
                ports(out, c, &what, &["lifecycle", hook], h.http_get.as_ref(), h.tcp_socket.as_ref());
            }
        }
    });
}

fn ports(
    out: &mut Vec<Finding>,
    c: ContainerView<'_>,
    what: &str,
    at: &[&str],
    http: Option<&HTTPGetAction>,
    tcp: Option<&TCPSocketAction>,
) {
    // A name that is not a valid port name is probe-invalid's finding.
    for (handler, name) in unresolved_ports(c.container, http, tcp).filter(|(_, name)| is_valid_port_name(name)) {
        let pointer = c.at(&[at, &[handler, "port"]].concat());
        out.push(RULE.finding(
            RULE.severity,
            pointer,
            Some(c.name()),
            format!(
                "{what} {handler} port {name:?} is not declared ({}), so the kubelet cannot resolve it",
                declared(c)
            ),
            format!("{what} {handler} port {name:?} is not in ports"),
            "declare the port under `ports` with this name, or use the port number",
        ));
    }
}

fn declared(c: ContainerView<'_>) -> String {
    let names: Vec<String> =
        c.container.ports.iter().flatten().filter_map(|p| p.name.as_deref().map(|n| format!("{n:?}"))).collect();
    if names.is_empty() {
        "the container declares no named ports".to_owned()
    } else {
        format!("declared: {}", names.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::RULE;
    use crate::finding::Severity;
    use crate::rules::testing::{check, one_container};

    const C: &str = "/spec/template/spec/containers/0";

    #[test]
    fn unknown_name_is_an_error_listing_declared_names() {
        let obj = one_container(json!({
            "ports": [{"name": "http", "containerPort": 8080}, {"name": "grpc", "containerPort": 9000}, {"containerPort": 9100}],
            "livenessProbe": {"httpGet": {"path": "/livez", "port": "metrics"}}
        }));
        let f = check(&RULE, &obj);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Error);
        assert_eq!(f[0].pointer, format!("{C}/livenessProbe/httpGet/port"));
        assert!(f[0].message.contains("\"metrics\""), "{}", f[0].message);
        assert!(f[0].message.contains("declared: \"http\", \"grpc\""), "{}", f[0].message);
    }

    #[test]
    fn every_probe_and_hook_is_checked() {
        let obj = one_container(json!({
            "startupProbe": {"tcpSocket": {"port": "db"}},
            "readinessProbe": {"httpGet": {"path": "/", "port": "web"}},
            "lifecycle": {
                "postStart": {"httpGet": {"path": "/warm", "port": "admin"}},
                "preStop": {"tcpSocket": {"port": "drain"}}
            }
        }));
        let pointers: Vec<String> = check(&RULE, &obj).into_iter().map(|f| f.pointer).collect();
        assert_eq!(
            pointers,
            [
                format!("{C}/startupProbe/tcpSocket/port"),
                format!("{C}/readinessProbe/httpGet/port"),
                format!("{C}/lifecycle/postStart/httpGet/port"),
                format!("{C}/lifecycle/preStop/tcpSocket/port"),
            ]
        );
        let f = check(&RULE, &obj);
        assert!(f[0].message.contains("no named ports"), "{}", f[0].message);
        assert!(f[3].message.contains("preStop hook"), "{}", f[3].message);
    }

    #[test]
    fn numbers_declared_names_and_invalid_names_are_not_findings() {
        let obj = one_container(json!({
            "ports": [{"name": "http", "containerPort": 8080}],
            "startupProbe": {"httpGet": {"path": "/", "port": 9999}},
            "livenessProbe": {"httpGet": {"path": "/", "port": "8080"}},
            "readinessProbe": {"httpGet": {"path": "/", "port": "http"}},
            "lifecycle": {"preStop": {"httpGet": {"path": "/", "port": "HTTP"}}}
        }));
        assert!(check(&RULE, &obj).is_empty());
    }
}
