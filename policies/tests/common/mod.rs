//! Helpers shared by the policy tests.
#![allow(dead_code)]

use policies::{Batch, ObjectReport, Policy, lint_object};
use serde_json::{Value, json};

/// A policy file body after `apiVersion` and `kind`.
pub fn policy(body: &str) -> Policy {
    let text = format!("apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\n{body}");
    Policy::load(&text, "test.yaml").unwrap_or_else(|e| panic!("{e}"))
}

/// Lints one object.
pub fn report(object: &Value, policy: &Policy) -> ObjectReport {
    lint_object(object, &Batch::default(), policy).expect("object reads").expect("object has a pod spec")
}

/// `rule@container` for each finding, in order.
pub fn tags(findings: &[policies::Finding]) -> Vec<String> {
    findings.iter().map(|f| format!("{}@{}", f.rule, f.container.as_deref().unwrap_or("-"))).collect()
}

/// `rule@container` of the suppressed findings.
pub fn suppressed_tags(report: &ObjectReport) -> Vec<String> {
    tags(&report.suppressed.iter().map(|s| s.finding.clone()).collect::<Vec<_>>())
}

/// Deployment `prod/web` (pod labels app=web, tier=frontend) with two
/// containers, `app` and `istio-proxy`, whose liveness restarts after one
/// failure (`liveness-too-aggressive`, a warning with a fix).
pub fn web() -> Value {
    let aggressive = json!({"httpGet": {"path": "/livez", "port": 8080}, "failureThreshold": 1});
    let ready = json!({"httpGet": {"path": "/ready", "port": 8080}});
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "prod"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web", "tier": "frontend"}},
                "spec": {"containers": [
                    {"name": "app", "image": "example/web:1.2", "ports": [{"containerPort": 8080}],
                     "livenessProbe": aggressive.clone(), "readinessProbe": ready.clone()},
                    {"name": "istio-proxy", "image": "istio/proxyv2:1.22", "ports": [{"containerPort": 8080}],
                     "livenessProbe": aggressive, "readinessProbe": ready}
                ]}
            }
        }
    })
}
