//! `ignore-annotation-invalid`: a `lifeguard.dev/ignore` annotation that
//! gives no reason or names rules that do not exist.
//!
//! Tests: `policies/src/rules/ignore_annotation_invalid/fixtures/`,
//! `policies/src/rules/ignore_annotation_invalid/snapshots/rule_fixtures__ignore-annotation-invalid.snap`.

use crate::finding::{Finding, Severity};
use crate::model::Workload;
use crate::model::{ANNOTATION_IGNORE, ANNOTATION_IGNORE_REASON};
use crate::policy::ignore_list;
use crate::rules::{Ctx, FixAvailability, HarmShown, MapExport, Related, Rule, VapExport};

pub(crate) static RULE: Rule = Rule {
    name: "ignore-annotation-invalid",
    severity: Severity::Warning,
    summary: "a lifeguard.dev/ignore annotation without a reason, or naming unknown rules",
    doc: DOC,
    fix: FixAvailability::NoFix("only a person can say why a rule does not apply"),
    check,
    vap: VapExport::No("about lifeguard's own annotations: the export honours them, reporting them is the linter's"),
    map: MapExport::NoFix,
    related: Related::Nothing,
    harm: HarmShown::NotSimulated(
        "an annotation that cannot be read changes which findings are ignored, not what the kubelet does",
    ),
};

const DOC: &str = r#"## What it does
Checks the `lifeguard.dev/ignore` annotation (on the object or its pod
template), which suppresses the named rules for this workload:
- without a non-empty `lifeguard.dev/ignore-reason`, the suppression is
  **not applied** and this rule reports it;
- a name that is neither a built-in rule nor a custom rule of the policy is
  reported (a typo silences nothing).

Suppressed findings are still counted in the summary.

## Why is this bad?
A suppression without a reason hides a restart storm or dropped requests
from the next reviewer, who cannot tell a deliberate exception from a
shortcut. A misspelled rule name looks like a suppression and does nothing.

## Example
```yaml
metadata:
  annotations:
    lifeguard.dev/ignore: "readiness-probe-missing"
```

## Use instead
```yaml
metadata:
  annotations:
    lifeguard.dev/ignore: "readiness-probe-missing"
    lifeguard.dev/ignore-reason: "batch worker: no Service routes to it (JIRA-1234)"
```

## Fix
No automatic fix: only a person can say why a rule does not apply.
"#;

fn check(w: &Workload, ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(value) = w.annotations.get(ANNOTATION_IGNORE) else {
        return;
    };
    let pointer = w.annotation_pointer(ANNOTATION_IGNORE);
    let names: Vec<&str> = ignore_list(value).collect();
    let has_reason = w.annotations.get(ANNOTATION_IGNORE_REASON).is_some_and(|r| !r.trim().is_empty());
    if !has_reason {
        out.push(RULE.finding(
            RULE.severity,
            pointer.clone(),
            None,
            format!(
                "{ANNOTATION_IGNORE}: {value:?} gives no {ANNOTATION_IGNORE_REASON}, so the suppression is not applied"
            ),
            format!("{ANNOTATION_IGNORE} is not applied: add {ANNOTATION_IGNORE_REASON}"),
            format!("add {ANNOTATION_IGNORE_REASON} saying why the rules do not apply to this workload"),
        ));
    }
    if names.is_empty() {
        out.push(RULE.finding(
            RULE.severity,
            pointer.clone(),
            None,
            format!("{ANNOTATION_IGNORE} names no rule"),
            format!("{ANNOTATION_IGNORE} names no rule; list rules or remove it"),
            "list rule names separated by commas, or remove the annotation",
        ));
    }
    for name in names.iter().filter(|n| !ctx.policy.knows_rule(n)) {
        out.push(RULE.finding(
            RULE.severity,
            pointer.clone(),
            None,
            format!("{ANNOTATION_IGNORE} names unknown rule {name:?}, which suppresses nothing"),
            format!("{ANNOTATION_IGNORE} names unknown rule {name:?}; `lifeguard rules` lists them"),
            "`lifeguard rules` lists the rules; custom rules are the policy's customRules",
        ));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::RULE;
    use crate::rules::testing::{check, one_container};

    fn annotated(annotations: Value) -> Value {
        let mut obj = one_container(json!({}));
        obj["spec"]["template"]["metadata"]["annotations"] = annotations;
        obj
    }

    #[test]
    fn reason_missing_is_reported_at_the_annotation() {
        let f = check(&RULE, &annotated(json!({"lifeguard.dev/ignore": "exec-probe"})));
        assert_eq!(f.len(), 1);
        assert!(f[0].message.contains("not applied"), "{}", f[0].message);
        assert_eq!(f[0].pointer, "/spec/template/metadata/annotations/lifeguard.dev~1ignore");
    }

    #[test]
    fn blank_reason_counts_as_missing() {
        let f = check(
            &RULE,
            &annotated(json!({"lifeguard.dev/ignore": "exec-probe", "lifeguard.dev/ignore-reason": "  "})),
        );
        assert_eq!(f.len(), 1);
    }

    #[test]
    fn unknown_names_are_reported() {
        let f = check(
            &RULE,
            &annotated(json!({"lifeguard.dev/ignore": "exec-probe, exec-prob", "lifeguard.dev/ignore-reason": "x"})),
        );
        assert_eq!(f.len(), 1);
        assert!(f[0].message.contains("\"exec-prob\""), "{}", f[0].message);
    }

    #[test]
    fn valid_annotation_on_the_object_is_fine() {
        let mut obj = one_container(json!({}));
        obj["metadata"]["annotations"] =
            json!({"lifeguard.dev/ignore": "exec-probe", "lifeguard.dev/ignore-reason": "legacy image"});
        assert!(check(&RULE, &obj).is_empty());
    }
}
