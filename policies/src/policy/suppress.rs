//! Applying a policy to a workload's findings: severity overrides, then
//! exemptions and the `lifeguard.dev/ignore` annotation, which move findings
//! to a suppressed list (counted, with the reason) instead of dropping them.

use serde_json::Value;

use super::compiled::Policy;
use crate::finding::Finding;
use crate::model::Workload;
use crate::model::{ANNOTATION_IGNORE, ANNOTATION_IGNORE_REASON};

/// What suppressed a finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SuppressedBy {
    /// The policy's exemption at this index (0-based, in the effective policy).
    Exemption(usize),
    /// The object's `lifeguard.dev/ignore` annotation.
    Annotation,
}

impl std::fmt::Display for SuppressedBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SuppressedBy::Exemption(i) => write!(f, "policy exemptions[{i}]"),
            SuppressedBy::Annotation => write!(f, "annotation {ANNOTATION_IGNORE}"),
        }
    }
}

/// A finding that does not count, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Suppressed {
    /// The finding, with the policy's severity.
    pub finding: Finding,
    /// The reason given by the exemption or the annotation.
    pub reason: String,
    /// Where the suppression comes from.
    pub by: SuppressedBy,
}

/// The rule names of an ignore annotation value (`"a, b"` -> `["a", "b"]`).
pub fn ignore_list(value: &str) -> impl Iterator<Item = &str> {
    value.split(',').map(str::trim).filter(|s| !s.is_empty())
}

/// The rules a workload's annotations suppress and the reason; `None` when
/// there is no ignore annotation or no reason (then it does not apply, and
/// `ignore-annotation-invalid` says so).
fn annotation_ignores(w: &Workload) -> Option<(Vec<&str>, &str)> {
    let rules = w.annotations.get(ANNOTATION_IGNORE)?;
    let reason = w.annotations.get(ANNOTATION_IGNORE_REASON).map(|r| r.trim()).filter(|r| !r.is_empty())?;
    Some((ignore_list(rules).collect(), reason))
}

impl Policy {
    /// Runs the policy's enabled custom rules on one pod template of an
    /// object; the object-wide ones only with its `first` (they would
    /// report the object once per template).
    pub(crate) fn check_custom(&self, object: &Value, w: &Workload, first: bool, out: &mut Vec<Finding>) {
        for rule in self.custom.iter().filter(|r| self.is_enabled(&r.spec.name)) {
            if first || rule.spec.scope != super::file::Scope::Object {
                rule.check(object, w, out);
            }
        }
    }

    /// Applies severity overrides and suppressions to a workload's findings:
    /// returns the findings that count and the suppressed ones.
    pub(crate) fn judge(&self, w: &Workload, findings: Vec<Finding>) -> (Vec<Finding>, Vec<Suppressed>) {
        let ignores = annotation_ignores(w);
        let mut kept = Vec::with_capacity(findings.len());
        let mut suppressed = Vec::new();
        for mut f in findings {
            if let Some(severity) = self.severity_override(&f.rule) {
                f.severity = severity;
            }
            if let Some((i, e)) = self.exemptions.iter().enumerate().find(|(_, e)| e.covers(w, &f)) {
                suppressed.push(Suppressed {
                    reason: e.spec.reason.clone(),
                    by: SuppressedBy::Exemption(i),
                    finding: f,
                });
            } else if let Some((_, reason)) = ignores.as_ref().filter(|(rules, _)| rules.contains(&f.rule.as_str())) {
                suppressed.push(Suppressed { reason: (*reason).to_owned(), by: SuppressedBy::Annotation, finding: f });
            } else {
                kept.push(f);
            }
        }
        (kept, suppressed)
    }
}
