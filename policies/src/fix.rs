//! Merging the fixes of several rules on one object into one JSON Patch.
//!
//! Fixes are applied rule by rule in registry order. When two rules touch
//! the same field in one round, the first keeps it and the object is linted
//! again, so the second rule sees the first one's result. Rounds repeat until
//! nothing fixable remains (bounded), which makes the merged patch
//! conflict-free and the whole process idempotent.
//!
//! Which findings get a fix at all is decided here too: an info-tier
//! finding's fix is opt-in ([`hold_back_info_fixes`]).

use json_patch::PatchOperation;
use serde_json::Value;

use crate::engine::{Batch, lint_object};
use crate::error::ModelError;
use crate::finding::{Finding, Severity};
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

/// Moves the fix of every info-tier finding (after the policy's severity
/// overrides) to [`Finding::opt_in_fix`] unless the policy sets
/// `fixInfoFindings`: an info finding describes a spec that works, and a
/// fix should not rewrite what works (`sh -c "sleep 10"` into the native
/// sleep) unless asked to. Run by [`lint_object`], so `lifeguard lint`,
/// `lifeguard fix` and the webhook's `/mutate` and deny messages agree on
/// which findings have a fix.
pub(crate) fn hold_back_info_fixes(findings: &mut [Finding], policy: &Policy) {
    if policy.settings.fix_info_findings {
        return;
    }
    for f in findings.iter_mut().filter(|f| f.severity == Severity::Info) {
        if let Some(fix) = f.fix.take() {
            f.opt_in_fix = Some(fix);
        }
    }
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
    // A finding fixable in the object as given keeps its fix in later rounds
    // even when another rule's fix has made it info by then: the tier is the
    // user's spec's, not an artefact of the order fixes merge in.
    let fixable_first: Vec<(&str, Option<&str>, &str)> =
        first.findings.iter().filter(|f| f.fix.is_some()).map(finding_key).collect();
    let mut findings = first.findings.clone();
    for _ in 0..MAX_ROUNDS {
        let mut touched: Vec<String> = Vec::new();
        let mut progressed = false;
        let round: Vec<Finding> = findings
            .iter()
            .cloned()
            .map(|mut f| {
                if f.fix.is_none() && fixable_first.contains(&finding_key(&f)) {
                    f.fix = f.opt_in_fix.take();
                }
                f
            })
            .collect();
        for finding in round.iter().filter(|f| allowed(f)) {
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

fn finding_key(f: &Finding) -> (&str, Option<&str>, &str) {
    (&f.rule, f.container.as_deref(), &f.pointer)
}

fn is_prefix(prefix: &str, path: &str) -> bool {
    path == prefix || (path.starts_with(prefix) && path.as_bytes().get(prefix.len()) == Some(&b'/'))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{is_prefix, plan_fixes};
    use crate::engine::{Batch, lint_object};
    use crate::finding::Severity;
    use crate::policy::Policy;
    use crate::settings::Settings;

    /// A Deployment whose one container's preStop is a short `sh -c` sleep:
    /// an info finding of `prestop-sleep-only` with a native-sleep rewrite.
    fn short_exec_sleep() -> serde_json::Value {
        json!({"kind": "Deployment", "metadata": {"name": "web"}, "spec": {"template": {"spec": {"containers": [{
            "name": "web", "image": "example/web:1",
            "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}},
            "lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", "sleep 10"]}}}}]}}}})
    }

    #[test]
    fn info_findings_have_an_opt_in_fix_by_default() {
        let obj = short_exec_sleep();
        let policy = Policy::default();
        let found = lint_object(&obj, &Batch::default(), &policy).expect("reads").expect("a pod").findings;
        let sleep = found.iter().find(|f| f.rule == "prestop-sleep-only").expect("a sleep finding");
        assert_eq!(sleep.severity, Severity::Info);
        assert!(sleep.fix.is_none());
        let held = sleep.opt_in_fix.as_ref().expect("an opt-in fix");
        assert!(held.description.contains("native `sleep: {seconds: 10}`"), "{}", held.description);
        let plan = plan_fixes(&obj, &Batch::default(), &policy, None).expect("reads").expect("a pod");
        assert!(plan.operations.is_empty() && plan.fixed.is_none(), "{:?}", plan.operations);
    }

    #[test]
    fn fix_info_findings_turns_them_on() {
        let obj = short_exec_sleep();
        let policy = Policy::new(Settings { fix_info_findings: true, ..Settings::default() }).expect("valid");
        let plan = plan_fixes(&obj, &Batch::default(), &policy, None).expect("reads").expect("a pod");
        let fixed = plan.fixed.expect("fixed");
        let pre_stop = &fixed["spec"]["template"]["spec"]["containers"][0]["lifecycle"]["preStop"];
        assert_eq!(pre_stop, &json!({"sleep": {"seconds": 10}}));
        assert_eq!(plan.applied.len(), 1);
        let again = plan_fixes(&fixed, &Batch::default(), &policy, None).expect("reads").expect("a pod");
        assert!(again.operations.is_empty());
    }

    #[test]
    fn only_gpu_serving_fixes_info_findings() {
        for (pack, on) in [("default", false), ("strict", false), ("gpu-serving", true)] {
            let policy = Policy::pack(pack).expect("a built-in pack");
            assert_eq!(policy.settings.fix_info_findings, on, "{pack}");
        }
    }

    #[test]
    fn a_severity_override_decides_the_tier() {
        // Raised to a warning by the policy, the same finding is fixed by default.
        let obj = short_exec_sleep();
        let policy = Policy::load(
            "apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\nrules:\n  prestop-sleep-only: {severity: warning}\n",
            "p.yaml",
        )
        .expect("valid");
        let plan = plan_fixes(&obj, &Batch::default(), &policy, None).expect("reads").expect("a pod");
        assert_eq!(plan.applied.iter().map(|a| a.rule.as_str()).collect::<Vec<_>>(), ["prestop-sleep-only"]);
    }

    #[test]
    fn prefix_is_by_token() {
        assert!(is_prefix("/a/b", "/a/b/c"));
        assert!(is_prefix("/a/b", "/a/b"));
        assert!(!is_prefix("/a/b", "/a/bc"));
    }
}
