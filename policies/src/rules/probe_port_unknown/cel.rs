//! `probe-port-unknown` in CEL, exactly: an `httpGet` or `tcpSocket` port
//! given by a valid port name, in a startup, liveness or readiness probe or
//! a `postStart`/`preStop` hook, that the container's `ports` do not name.

use crate::cel::check::CelCheck;
use crate::policy::Policy;
use crate::rules::Rule;

/// The probes and hooks whose ports the kubelet resolves, as CEL paths from a container `c`.
const HANDLERS: [&str; 5] =
    ["c.startupProbe", "c.livenessProbe", "c.readinessProbe", "c.lifecycle.postStart", "c.lifecycle.preStop"];

/// A port that names no declared port: a string that is a valid port name
/// (IANA_SVC_NAME, as `is_valid_port_name`), absent from `c.ports`.
pub(crate) fn unknown(port: &str) -> String {
    format!(
        "type({port}) == string && size({port}) <= 15 && {port}.matches('^[a-z0-9]([a-z0-9-]*[a-z0-9])?$') && \
         {port}.matches('[a-z]') && !{port}.contains('--') && \
         !(has(c.ports) && c.ports.exists(p, has(p.name) && p.name == {port}))"
    )
}

/// The unknown port names of container `c`, as a CEL list.
pub(crate) fn unknown_names() -> String {
    let mut items = Vec::new();
    for handler in HANDLERS {
        for action in ["httpGet", "tcpSocket"] {
            let port = format!("{handler}.{action}.port");
            let present = crate::cel::fragments::present(&format!("{handler}.{action}"));
            items.push(format!("({present} && {}) ? string({port}) : ''", unknown(&port)));
        }
    }
    format!("[{}].filter(n, n != '')", items.join(", "))
}

pub(crate) fn checks(rule: &Rule, policy: &Policy) -> Vec<CelCheck> {
    let names = unknown_names();
    vec![CelCheck {
        rule: rule.name,
        severity: policy.severity_override(rule.name).unwrap_or(rule.severity),
        per_container: true,
        bad: format!("size({names}) > 0"),
        describe: format!(
            "'container \"' + c.name + '\": ' + (size({names}) == 1 ? 'port ' : 'ports ') + {names}.map(n, '\"' + n + \
             '\"').join(', ') + (size({names}) == 1 ? ' is' : ' are') + ' not declared (' + (has(c.ports) && \
             c.ports.exists(p, has(p.name)) ? 'declared: ' + c.ports.filter(p, has(p.name)).map(p, p.name).join(', ') \
             : 'the container declares no named ports') + ')'"
        ),
        tail: ", so the kubelet cannot resolve it".to_owned(),
    }]
}
