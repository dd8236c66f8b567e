//! `readiness-port-only` in CEL, exactly: a long-running pod's container
//! whose readiness probe is a `tcpSocket`; an error on a container that
//! requests a GPU, a warning otherwise.

use crate::cel::check::CelCheck;
use crate::cel::containers::GPU;
use crate::cel::shutdown::LONG_RUNNING;
use crate::finding::Severity;
use crate::policy::Policy;
use crate::rules::Rule;

pub(crate) fn checks(rule: &Rule, policy: &Policy) -> Vec<CelCheck> {
    // The API server refuses a built-in kind's probe with several handlers,
    // not a custom kind's template: as the linter, such a probe is
    // probe-invalid's, not this rule's.
    let others = ["httpGet", "exec", "grpc"].map(|h| format!(" && !has(c.readinessProbe.{h})")).concat();
    let port_only = format!("{LONG_RUNNING} && has(c.readinessProbe) && has(c.readinessProbe.tcpSocket){others}");
    let check = |severity: Severity, bad: String| CelCheck {
        rule: rule.name,
        severity,
        per_container: true,
        bad,
        describe: format!(
            "'container \"' + c.name + '\": readiness is only tcpSocket port ' + string(c.readinessProbe.tcpSocket.port) + \
             '; an open port is not ' + ({GPU} ? 'a loaded model' : 'a usable app')"
        ),
        tail: ": use an httpGet or grpc readiness check that passes only once the app can serve".to_owned(),
    };
    match policy.severity_override(rule.name) {
        Some(severity) => vec![check(severity, port_only)],
        None => vec![
            check(Severity::Error, format!("{port_only} && {GPU}")),
            check(Severity::Warning, format!("{port_only} && !{GPU}")),
        ],
    }
}
