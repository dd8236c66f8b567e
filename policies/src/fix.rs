//! Merging the fixes of several rules on one object into one JSON Patch.
//!
//! Fixes are applied rule by rule in registry order. When two rules touch
//! the same field in one round, the first keeps it and the object is linted
//! again, so the second rule sees the first one's result. Rounds repeat until
//! nothing fixable remains (bounded), which makes the merged patch
//! conflict-free and the whole process idempotent.
//!
//! Which findings get a fix at all is decided here too: an info-tier
//! finding's fix is opt-in (`Policy::hold_back_info_fixes`, which [`lint_object`] runs).
//!
//! Over 400 lines: the unit tests (about 170 lines) run whole objects through
//! rounds, overlapping fixes, rollbacks and opt-in tiers beside the merge they
//! pin down, which is itself under 270 lines.

use std::collections::HashSet;

use json_patch::PatchOperation;
use json_patch::jsonptr::Pointer;
use serde_json::Value;

use crate::engine::lint_object;
use crate::error::ModelError;
use crate::finding::{Applicability, Finding};
use crate::model::Batch;
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
    /// How many of the plan's operations, following the previous fix's,
    /// implement it: a caller that keeps only some operations (the
    /// webhook, on an UPDATE of an immutable pod template) can tell which
    /// fixes it still makes.
    pub operations: usize,
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
    // A finding fixable in the object as given keeps its fix in later rounds
    // even when another rule's fix has made it info by then: the tier is the
    // user's spec's, not an artefact of the order fixes merge in.
    let fixable_first: HashSet<(&str, Option<&str>, &str)> =
        first.findings.iter().filter(|f| f.automatic_fix().is_some()).map(finding_key).collect();
    let mut findings = first.findings.clone();
    for _ in 0..MAX_ROUNDS {
        let mut touched = Touched::default();
        let mut progressed = false;
        let round: Vec<Finding> = findings
            .iter()
            .cloned()
            .map(|mut f| {
                if fixable_first.contains(&finding_key(&f)) {
                    if let Some(fix) = &mut f.fix {
                        fix.applicability = Applicability::Automatic;
                    }
                }
                f
            })
            .collect();
        for finding in round.iter().filter(|f| allowed(f)) {
            let Some(fix) = finding.automatic_fix() else { continue };
            let overlaps = fix.operations.iter().any(|op| touched.overlaps(op.path().as_str()));
            if overlaps || fix.operations.is_empty() {
                continue;
            }
            // A fix that does not apply is a bug in its rule: the finding is
            // left standing. One already in the fixed state adds nothing
            // (keeps re-fixing a no-op).
            if apply(&mut current, &fix.operations) != Outcome::Changed {
                continue;
            }
            for op in &fix.operations {
                touched.insert(op.path().as_str());
            }
            plan.operations.extend(fix.operations.iter().cloned());
            plan.applied.push(AppliedFix {
                rule: finding.rule.clone(),
                container: finding.container.clone(),
                description: fix.description.clone(),
                pointer: finding.pointer.clone(),
                operations: fix.operations.len(),
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

/// The paths one round's fixes have written, to refuse a later fix of the
/// round that writes at, above or below one of them. A list searched per
/// operation made a round quadratic in the object's fixes.
#[derive(Default)]
struct Touched {
    /// The paths written.
    paths: HashSet<String>,
    /// Every proper prefix (token-wise) of a path written.
    above: HashSet<String>,
}

impl Touched {
    fn insert(&mut self, path: &str) {
        for (at, _) in path.match_indices('/') {
            self.above.insert(path[..at].to_owned());
        }
        self.paths.insert(path.to_owned());
    }

    /// Whether `path` is a written path, or lies above or below one
    /// ([`is_prefix`] either way).
    fn overlaps(&self, path: &str) -> bool {
        if self.paths.contains(path) || self.above.contains(path) {
            return true;
        }
        path.match_indices('/').any(|(at, _)| self.paths.contains(&path[..at]))
    }
}

/// What applying one fix's operations to the object did.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// The object is another one now.
    Changed,
    /// The object is as it was (the fix is already in place).
    Unchanged,
    /// An operation did not apply; the object is as it was.
    Failed,
}

/// Applies `operations` to `current` in place; on [`Outcome::Unchanged`]
/// or [`Outcome::Failed`] the object is left exactly as it was, member
/// order included.
///
/// Copying the whole object to try each fix on the copy, and comparing
/// the copy with the object, cost the object's size per fix: planning an
/// object's fixes grew with the square of their number. What the rules
/// emit (`add` or `replace` of an object member) changes nothing outside
/// the members at their paths, so it is enough to keep those members and
/// compare them; anything else takes the copy.
fn apply(current: &mut Value, operations: &[PatchOperation]) -> Outcome {
    let Some(roots) = member_roots(current, operations) else {
        return apply_on_copy(current, operations);
    };
    let kept: Vec<Option<Value>> = roots.iter().map(|r| current.pointer(r.as_str()).cloned()).collect();
    if json_patch::patch(current, operations).is_err() {
        restore(current, &roots, kept);
        return Outcome::Failed;
    }
    if roots.iter().zip(&kept).all(|(r, k)| current.pointer(r.as_str()) == k.as_ref()) {
        // Equal is not identical: an `add` of an equal mapping can reorder
        // its keys, and the object must stay as the user wrote it.
        restore(current, &roots, kept);
        return Outcome::Unchanged;
    }
    Outcome::Changed
}

/// The old way, for operations [`member_roots`] does not vouch for.
fn apply_on_copy(current: &mut Value, operations: &[PatchOperation]) -> Outcome {
    let mut candidate = current.clone();
    if json_patch::patch(&mut candidate, operations).is_err() {
        return Outcome::Failed;
    }
    if candidate == *current {
        return Outcome::Unchanged;
    }
    *current = candidate;
    Outcome::Changed
}

/// The outermost paths of `operations` when every operation is an `add`
/// or `replace` and each outermost path is a member of an existing object:
/// then the operations change nothing but those members (an operation
/// below one only changes what lies inside it). `None` otherwise (a
/// sequence item, the root, another kind of operation).
fn member_roots<'o>(current: &Value, operations: &'o [PatchOperation]) -> Option<Vec<&'o Pointer>> {
    let mut roots: Vec<&Pointer> = Vec::new();
    for op in operations {
        if !matches!(op, PatchOperation::Add(_) | PatchOperation::Replace(_)) {
            return None;
        }
        let path = op.path();
        let covered = operations.iter().any(|other| {
            let o = other.path().as_str();
            o != path.as_str() && is_prefix(o, path.as_str())
        });
        if !covered && !roots.iter().any(|r| r.as_str() == path.as_str()) {
            roots.push(path);
        }
    }
    let member_of_object =
        |r: &&Pointer| r.parent().and_then(|p| current.pointer(p.as_str())).is_some_and(Value::is_object);
    roots.iter().all(member_of_object).then_some(roots)
}

/// Puts the kept members back where they were, in place, and takes out
/// the ones that were not there.
fn restore(current: &mut Value, roots: &[&Pointer], kept: Vec<Option<Value>>) {
    for (root, kept) in roots.iter().zip(kept) {
        let Some((parent, last)) = root.split_back() else { continue };
        let Some(Value::Object(members)) = current.pointer_mut(parent.as_str()) else { continue };
        let key = last.decoded();
        match (kept, members.get_mut(key.as_ref())) {
            (Some(value), Some(slot)) => *slot = value,
            (Some(value), None) => {
                members.insert(key.into_owned(), value);
            }
            (None, _) => {
                // Shifting, not swapping: the other members keep their places.
                members.shift_remove(key.as_ref());
            }
        }
    }
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

    use super::{Outcome, Touched, apply, apply_on_copy, is_prefix, plan_fixes};
    use crate::engine::lint_object;
    use crate::finding::{Applicability, Severity};
    use crate::model::Batch;
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
        assert!(sleep.automatic_fix().is_none());
        let held = sleep.fix.as_ref().expect("an opt-in fix");
        assert_eq!(held.applicability, Applicability::OptIn);
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

    #[test]
    fn touched_agrees_with_prefixes_either_way() {
        let written = ["/spec/a", "/spec/b/c", "/x~1y/0", "/z"];
        let mut touched = Touched::default();
        for w in written {
            touched.insert(w);
        }
        for probe in [
            "",
            "/spec",
            "/spec/a",
            "/spec/a/deep",
            "/spec/ab",
            "/spec/b",
            "/spec/b/c/d",
            "/spec/b/cd",
            "/x~1y",
            "/x",
            "/x~1y/0/k",
            "/z",
            "/zz",
            "/other",
        ] {
            let listed = written.iter().any(|t| is_prefix(t, probe) || is_prefix(probe, t));
            assert_eq!(touched.overlaps(probe), listed, "{probe}");
        }
    }

    fn ops(patch: serde_json::Value) -> Vec<json_patch::PatchOperation> {
        serde_json::from_value::<json_patch::Patch>(patch).expect("a patch").0
    }

    /// In place or on a copy, a fix has the same outcome and leaves the
    /// same object, member order included (compared as text).
    #[test]
    fn in_place_application_matches_the_copy() {
        let object = json!({"a": {"x": 1, "y": {"p": 1, "q": 2}}, "list": [1, 2], "b": "s"});
        let cases = [
            json!([{"op": "add", "path": "/a/x", "value": 3}]),
            json!([{"op": "add", "path": "/a/x", "value": 1}]),
            // Equal but reordered: unchanged, and the order stays the user's.
            json!([{"op": "add", "path": "/a/y", "value": {"q": 2, "p": 1}}]),
            json!([{"op": "add", "path": "/a/z", "value": 1}, {"op": "add", "path": "/a/z/w", "value": 2}]),
            json!([{"op": "add", "path": "/a/new", "value": 1}, {"op": "add", "path": "/missing/k", "value": 2}]),
            json!([{"op": "add", "path": "/a/n1", "value": 1}, {"op": "add", "path": "/a/n2", "value": {}},
                {"op": "replace", "path": "/a/absent", "value": 0}]),
            json!([{"op": "add", "path": "/a/y", "value": {"p": 1}}, {"op": "add", "path": "/a/y/q", "value": 2}]),
            json!([{"op": "add", "path": "/list/1", "value": 9}]),
            json!([{"op": "replace", "path": "/list/0", "value": 1}]),
            json!([{"op": "add", "path": "", "value": {"b": "s"}}]),
            json!([{"op": "remove", "path": "/b"}]),
            json!([{"op": "add", "path": "/b", "value": "s"}, {"op": "add", "path": "/b", "value": "t"}]),
        ];
        for case in cases {
            let operations = ops(case.clone());
            let (mut in_place, mut copy) = (object.clone(), object.clone());
            let outcome = apply(&mut in_place, &operations);
            assert_eq!(outcome, apply_on_copy(&mut copy, &operations), "{case}");
            assert_eq!(in_place.to_string(), copy.to_string(), "{case}");
            if outcome != Outcome::Changed {
                assert_eq!(in_place.to_string(), object.to_string(), "{case}");
            }
        }
    }

    /// The planned operations for many containers are the ones planned for
    /// one, container by container, in container order.
    #[test]
    fn many_containers_plan_as_one_each_in_order() {
        let container = |i: usize| {
            json!({"name": format!("c{i}"), "image": "example/app:1",
                "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}},
                "livenessProbe": {"httpGet": {"path": "/livez", "port": 8080}, "periodSeconds": 5, "failureThreshold": 1}})
        };
        let deployment = |n: usize| {
            json!({"kind": "Deployment", "metadata": {"name": "many"},
                "spec": {"template": {"spec": {"containers": (0..n).map(container).collect::<Vec<_>>()}}}})
        };
        let policy = Policy::default();
        let one = plan_fixes(&deployment(1), &Batch::default(), &policy, None).expect("reads").expect("a pod");
        let n = 50;
        let many = plan_fixes(&deployment(n), &Batch::default(), &policy, None).expect("reads").expect("a pod");
        assert_eq!(many.applied.len(), n * one.applied.len());
        assert_eq!(many.operations.len(), n * one.operations.len());
        for (i, chunk) in many.operations.chunks(one.operations.len()).enumerate() {
            for (op, first) in chunk.iter().zip(&one.operations) {
                let want = first.path().as_str().replace("/containers/0/", &format!("/containers/{i}/"));
                assert_eq!(op.path().as_str(), want);
            }
        }
        let fixed = many.fixed.expect("fixed");
        let again = plan_fixes(&fixed, &Batch::default(), &policy, None).expect("reads").expect("a pod");
        assert!(again.operations.is_empty(), "{:?}", again.operations);
    }
}
