//! Merging the fixes of several rules on one object into one JSON Patch.
//!
//! Fixes are applied rule by rule in registry order. When two rules touch
//! the same field in one round, the first keeps it and the object is linted
//! again, so the second rule sees the first one's result. Rounds repeat until
//! nothing fixable remains (bounded), which makes the merged patch
//! conflict-free and the whole process idempotent.

use json_patch::PatchOperation;
use serde_json::Value;

use crate::engine::{Batch, lint_object};
use crate::error::ModelError;
use crate::finding::Finding;
use crate::policy::Policy;

/// At most this many lint-and-fix rounds per object; each round fixes at
/// least one finding, and the rules' fixes never undo one another.
const MAX_ROUNDS: usize = 8;

/// One fix that went into the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct AppliedFix {
    /// The rule whose finding it fixes.
    pub rule: String,
    /// The container, if any.
    pub container: Option<String>,
    /// What it changes.
    pub description: String,
    /// JSON pointer of the finding.
    pub pointer: String,
}

/// The fixes for one object.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FixPlan {
    /// Operations to apply in order, relative to the object root.
    pub operations: Vec<PatchOperation>,
    /// The fixes the operations implement, in order.
    pub applied: Vec<AppliedFix>,
    /// Findings that remain after the fixes (with or without a fix of their own).
    pub remaining: Vec<Finding>,
    /// The object with every operation applied.
    pub fixed: Option<Value>,
}

/// Which rules may fix.
pub type RuleFilter<'a> = Option<&'a [String]>;

/// Plans the fixes for one object. `Ok(None)` for objects without a pod spec.
pub fn plan_fixes(
    object: &Value,
    batch: &Batch,
    policy: &Policy,
    only: RuleFilter<'_>,
) -> Result<Option<FixPlan>, ModelError> {
    let allowed = |f: &Finding| only.is_none_or(|rules| rules.contains(&f.rule));
    let Some(first) = lint_object(object, batch, policy)? else {
        return Ok(None);
    };
    let mut plan = FixPlan::default();
    let mut current = object.clone();
    let mut findings = first.findings;
    for _ in 0..MAX_ROUNDS {
        let mut touched: Vec<String> = Vec::new();
        let mut progressed = false;
        for finding in findings.iter().filter(|f| allowed(f)) {
            let Some(fix) = &finding.fix else { continue };
            let paths: Vec<String> = fix.operations.iter().map(|op| op.path().to_string()).collect();
            let overlaps = paths.iter().any(|p| touched.iter().any(|t| is_prefix(t, p) || is_prefix(p, t)));
            if overlaps || fix.operations.is_empty() {
                continue;
            }
            let mut candidate = current.clone();
            if json_patch::patch(&mut candidate, &fix.operations).is_err() {
                // A fix that does not apply is a bug in its rule; leave the finding standing.
                continue;
            }
            if candidate == current {
                // Already in the fixed state: nothing to add (keeps re-fixing a no-op).
                continue;
            }
            current = candidate;
            touched.extend(paths);
            plan.operations.extend(fix.operations.iter().cloned());
            plan.applied.push(AppliedFix {
                rule: finding.rule.clone(),
                container: finding.container.clone(),
                description: fix.description.clone(),
                pointer: finding.pointer.clone(),
            });
            progressed = true;
        }
        findings = match lint_object(&current, batch, policy)? {
            Some(report) => report.findings,
            None => Vec::new(),
        };
        if !progressed {
            break;
        }
    }
    plan.remaining = findings;
    if !plan.operations.is_empty() {
        plan.fixed = Some(current);
    }
    Ok(Some(plan))
}

fn is_prefix(prefix: &str, path: &str) -> bool {
    path == prefix || (path.starts_with(prefix) && path.as_bytes().get(prefix.len()) == Some(&b'/'))
}

#[cfg(test)]
mod tests {
    use super::is_prefix;

    #[test]
    fn prefix_is_by_token() {
        assert!(is_prefix("/a/b", "/a/b/c"));
        assert!(is_prefix("/a/b", "/a/b"));
        assert!(!is_prefix("/a/b", "/a/bc"));
    }
}
