//! The engine's entry points: lint one object, or a batch of objects that
//! were read together (so Services can inform the rules).

use serde_json::Value;

use crate::error::ModelError;
use crate::finding::Finding;
use crate::model::{Batch, Workload};
use crate::policy::{Policy, Suppressed};
use crate::rules::{Ctx, RULES};

/// The findings of one pod-bearing object.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectReport {
    /// `kind` (empty when unset).
    pub kind: String,
    /// `metadata.namespace`
    pub namespace: Option<String>,
    /// `metadata.name`
    pub name: Option<String>,
    /// Findings that count, in rule order then container order (custom
    /// rules after built-in ones), with the policy's severities.
    pub findings: Vec<Finding>,
    /// Findings an exemption or the ignore annotation suppressed: not
    /// judged, not fixed, but counted.
    pub suppressed: Vec<Suppressed>,
}

impl ObjectReport {
    /// Whether the policy denies the object: a finding that counts is at or
    /// above its `denySeverity` (the webhook's enforce mode, lint's exit 1).
    pub fn denied_by(&self, policy: &Policy) -> bool {
        self.findings.iter().any(|f| policy.denies(f.severity))
    }
}

/// Lints one object under a policy. `Ok(None)` when it carries no pod spec.
///
/// The policy is applied here and nowhere else, so every front end reaches
/// the same verdict: disabled rules do not run, custom rules run after the
/// built-in ones, severities are overridden, and exempted or ignored
/// findings move to [`ObjectReport::suppressed`].
///
/// A custom resource with several pod templates (a LeaderWorkerSet's leader
/// and workers, a RayCluster's head and worker groups) is judged template
/// by template, each as the pod it makes; its findings come in template
/// order, each pointing into the one object.
pub fn lint_object(object: &Value, batch: &Batch, policy: &Policy) -> Result<Option<ObjectReport>, ModelError> {
    let workloads = Workload::all_declared(object, policy.declared_pod_kinds())?;
    let Some(first) = workloads.first() else {
        return Ok(None);
    };
    let mut report = ObjectReport {
        kind: first.kind.clone(),
        namespace: first.namespace.clone(),
        name: first.name.clone(),
        findings: Vec::new(),
        suppressed: Vec::new(),
    };
    for (i, workload) in workloads.iter().enumerate() {
        // Each template is its own pod: its own shutdown needs, cached once.
        let ctx = Ctx::new(policy, batch);
        let mut findings = Vec::new();
        for rule in RULES.iter().filter(|r| policy.is_enabled(r.name)) {
            (rule.check)(workload, &ctx, &mut findings);
        }
        // An object-wide custom rule runs once, with the first template.
        policy.check_custom(object, workload, i == 0, &mut findings);
        let (findings, suppressed) = policy.judge(workload, findings);
        report.findings.extend(findings);
        report.suppressed.extend(suppressed);
    }
    policy.hold_back_info_fixes(&mut report.findings);
    Ok(Some(report))
}
