//! `lifeguard export vap`: the rules CEL can express, as a
//! ValidatingAdmissionPolicy (`admissionregistration.k8s.io/v1`) and its
//! binding, for the API server to enforce in process: no webhook to run.
//! A rule is carried exactly, or partly ([`Covered::Partly`]): then only
//! the part CEL reads as the linter does, so it never reports what the
//! linter would not.
//!
//! The policy's severities and parameters are compiled in as constants,
//! so the export is regenerated when the policy changes. What the objects
//! match mirrors what the webhook judges: every pod-bearing kind it
//! registers for, CREATE and UPDATE (an UPDATE only when it changes the pod
//! template), never a controller-owned object, an object being deleted or
//! `kube-system`; a rule listed in the object's `lifeguard.dev/ignore`
//! annotation with a reason is not checked.

mod cel;
pub mod coverage;
mod exemptions;
mod grace_period_too_short;
mod liveness_too_aggressive;
mod model;
mod prestop_sleep_only;
mod probe_endpoint_reused;
mod probe_invalid;
mod probe_port_unknown;
mod probe_window_too_long;
mod readiness_port_only;
mod regex;
mod shutdown;
mod startup_budget_too_short;
mod startup_probe_missing;

use serde_json::{Value, json};

use crate::finding::Severity;
use crate::policy::{AdmissionMode, Policy};

pub use coverage::{Covered, coverage};

/// One rule's CEL check.
#[derive(Debug, Clone)]
pub struct Validation {
    /// The rule.
    pub rule: &'static str,
    /// Its severity under the policy.
    pub severity: Severity,
    /// True when the object passes.
    pub expression: String,
    /// The message when it does not: names the rule, the containers and the values.
    pub message: String,
}

/// A covered rule's check, per container `c` of `variables.containers`,
/// or of the object as a whole. A rule whose findings come at several
/// severities has one check per severity, so each lands with its action.
#[derive(Debug, Clone)]
pub(crate) struct Check {
    rule: &'static str,
    severity: Severity,
    /// Whether the finding is a container's (`bad` over `c`) or the object's.
    per_container: bool,
    /// True when container `c` (or the object) has the finding.
    bad: String,
    /// A CEL string naming `c` and the values.
    describe: String,
    /// What the message ends with (the help, in a few words).
    tail: String,
}

impl Check {
    /// The validation, with the policy's exemptions of the rule (`exempt`,
    /// over `c`; for an object's finding, `exempt_object`).
    fn validation(self, exempt: &str, exempt_object: &str) -> Validation {
        let rule = cel::quoted(self.rule);
        if !self.per_container {
            let bad = format!("({}) && !({exempt_object})", self.bad);
            return Validation {
                rule: self.rule,
                severity: self.severity,
                expression: format!("{rule} in variables.ignored || !({bad})"),
                message: format!("{rule} + ': ' + {} + {}", self.describe, cel::quoted(&self.tail)),
            };
        }
        let bad = format!("({}) && !({exempt})", self.bad);
        Validation {
            rule: self.rule,
            severity: self.severity,
            expression: format!("{rule} in variables.ignored || !variables.containers.exists(c, {bad})"),
            message: format!(
                "{rule} + ': ' + variables.containers.filter(c, {bad}).map(c, {}).join('; ') + {}",
                self.describe,
                cel::quoted(&self.tail)
            ),
        }
    }
}

/// What to export.
#[derive(Debug, Clone)]
pub struct Options {
    /// `enforce`: `Deny` at or above `denySeverity`, `Warn` below (two
    /// policies, as a binding's actions apply to all its validations);
    /// `warn`: `Warn`; `audit`: `Audit`.
    pub mode: AdmissionMode,
    /// The objects' name (and the prefix of the two of `enforce`).
    pub name: String,
}

/// The export: its objects, and the covered rules it leaves out (disabled
/// by the policy, or under an exemption whose globs CEL cannot express).
#[derive(Debug, Clone, Default)]
pub struct Export {
    /// ValidatingAdmissionPolicies, each followed by its binding.
    pub objects: Vec<Value>,
    /// Each covered rule left out, and why.
    pub left_out: Vec<(&'static str, String)>,
    /// The rules in the objects.
    pub rules: Vec<&'static str>,
}

/// The policy's covered rules as admission policies.
pub fn export(policy: &Policy, options: &Options) -> Export {
    let mut out = Export::default();
    let mut validations = Vec::new();
    for (rule, covered) in coverage() {
        if let Covered::No(_) = covered {
            continue;
        }
        if !policy.is_enabled(rule) {
            out.left_out.push((rule, "disabled by the policy".to_owned()));
            continue;
        }
        // A check that ignored an exemption would report what the linter suppresses.
        let exempt = exemptions::exempt(policy, rule, Some("c.name"))
            .and_then(|c| Ok((c, exemptions::exempt(policy, rule, None)?)));
        let (exempt, exempt_object) = match exempt {
            Ok(exempt) => exempt,
            Err(why) => {
                out.left_out.push((rule, format!("{why} cannot be expressed in CEL exactly")));
                continue;
            }
        };
        let checks = match rule {
            "probe-port-unknown" => vec![probe_port_unknown::check(policy)],
            "liveness-too-aggressive" => vec![liveness_too_aggressive::check(policy)],
            "probe-window-too-long" => vec![probe_window_too_long::check(policy)],
            "probe-invalid" => vec![probe_invalid::check(policy)],
            "probe-endpoint-reused" => probe_endpoint_reused::checks(policy),
            "startup-budget-too-short" => startup_budget_too_short::checks(policy),
            "startup-probe-missing" => startup_probe_missing::checks(policy),
            "prestop-sleep-only" => prestop_sleep_only::checks(policy),
            "grace-period-too-short" => grace_period_too_short::checks(policy),
            "readiness-port-only" => readiness_port_only::checks(policy),
            _ => continue,
        };
        out.rules.push(rule);
        validations.extend(checks.into_iter().map(|check| check.validation(&exempt, &exempt_object)));
    }
    let groups: Vec<(String, &str, Vec<&Validation>)> = match options.mode {
        AdmissionMode::Enforce => {
            let (deny, warn): (Vec<&Validation>, Vec<&Validation>) =
                validations.iter().partition(|v| policy.denies(v.severity));
            vec![(format!("{}-deny", options.name), "Deny", deny), (format!("{}-warn", options.name), "Warn", warn)]
        }
        AdmissionMode::Warn => vec![(options.name.clone(), "Warn", validations.iter().collect())],
        AdmissionMode::Audit => vec![(options.name.clone(), "Audit", validations.iter().collect())],
    };
    for (name, action, group) in groups.into_iter().filter(|(_, _, g)| !g.is_empty()) {
        out.objects.push(admission_policy(&name, policy, &group));
        out.objects.push(binding(&name, action));
    }
    out
}

/// The kinds the webhook registers for (the chart's rules).
fn resource_rules() -> Value {
    let rule = |group: &str, resources: &[&str]| {
        json!({
            "apiGroups": [group],
            "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"],
            "resources": resources,
            "scope": "Namespaced",
        })
    };
    json!([
        rule("", &["pods", "replicationcontrollers", "podtemplates"]),
        rule("apps", &["deployments", "statefulsets", "daemonsets", "replicasets"]),
        rule("batch", &["jobs", "cronjobs"]),
    ])
}

fn labels() -> Value {
    json!({ "app.kubernetes.io/managed-by": "lifeguard" })
}

fn admission_policy(name: &str, policy: &Policy, validations: &[&Validation]) -> Value {
    let condition = |name: &str, expression: String| json!({ "name": name, "expression": expression });
    let variables: Vec<Value> = cel::variables(policy)
        .into_iter()
        .map(|(name, expression)| json!({ "name": name, "expression": expression }))
        .collect();
    // A rule with findings at several severities has a validation for each.
    let mut rules: Vec<&str> = validations.iter().map(|v| v.rule).collect();
    rules.dedup();
    let checks: Vec<Value> = validations
        .iter()
        .map(|v| json!({ "expression": v.expression, "messageExpression": v.message, "reason": "Invalid" }))
        .collect();
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {
            "name": name,
            "labels": labels(),
            "annotations": {
                "lifeguard.dev/policy": policy.origin,
                "lifeguard.dev/rules": rules.join(","),
            },
        },
        "spec": {
            // A CEL error (a cost limit, say) admits the object: the API
            // server's hot path never fails because of lifeguard.
            "failurePolicy": "Ignore",
            "matchConstraints": {
                "namespaceSelector": {
                    "matchExpressions": [
                        { "key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"] }
                    ]
                },
                "resourceRules": resource_rules(),
            },
            "matchConditions": [
                condition("has-a-pod-spec", cel::has_pod_spec()),
                condition(
                    "not-controller-owned",
                    "!has(object.metadata.ownerReferences) || \
                     !object.metadata.ownerReferences.exists(r, has(r.controller) && r.controller)"
                        .to_owned(),
                ),
                condition("not-being-deleted", "!has(object.metadata.deletionTimestamp)".to_owned()),
                condition("update-changes-the-template", cel::changes_the_template()),
            ],
            "variables": variables,
            "validations": checks,
        },
    })
}

fn binding(name: &str, action: &str) -> Value {
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": { "name": name, "labels": labels() },
        "spec": { "policyName": name, "validationActions": [action] },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(mode: AdmissionMode) -> Options {
        Options { mode, name: "lifeguard".to_owned() }
    }

    #[test]
    fn enforce_splits_deny_and_warn_by_the_deny_severity() {
        let out = export(&Policy::default(), &options(AdmissionMode::Enforce));
        let names: Vec<&str> = out.objects.iter().filter_map(|o| o["metadata"]["name"].as_str()).collect();
        assert_eq!(names, ["lifeguard-deny", "lifeguard-deny", "lifeguard-warn", "lifeguard-warn"]);
        let rules =
            |i: usize| out.objects[i]["metadata"]["annotations"]["lifeguard.dev/rules"].as_str().map(str::to_owned);
        let deny = rules(0).expect("rules");
        assert!(deny.contains("probe-port-unknown") && !deny.contains("liveness-too-aggressive"), "{deny}");
        assert_eq!(out.objects[1]["spec"]["validationActions"], json!(["Deny"]));
        let warn = rules(2).expect("rules");
        assert!(warn.contains("liveness-too-aggressive,") && !warn.contains("probe-port-unknown"), "{warn}");
        // A rule whose findings come at several severities is in both, once each.
        for list in [&deny, &warn] {
            assert_eq!(list.matches("probe-endpoint-reused").count(), 1, "{list}");
        }
        assert_eq!(out.objects[3]["spec"]["validationActions"], json!(["Warn"]));
    }

    #[test]
    fn warn_and_audit_are_one_policy_and_a_disabled_rule_is_left_out() {
        let out = export(&Policy::default(), &options(AdmissionMode::Audit));
        assert_eq!(out.objects.len(), 2);
        assert_eq!(out.objects[1]["spec"]["validationActions"], json!(["Audit"]));
        let mut file = Policy::default().to_file();
        file.rules.entry("liveness-too-aggressive".to_owned()).or_default().enabled = Some(false);
        let policy = Policy::from_file(file, "test").expect("policy");
        let out = export(&policy, &options(AdmissionMode::Warn));
        let others: Vec<&str> = coverage()
            .into_iter()
            .filter(|(r, c)| !matches!(c, Covered::No(_)) && *r != "liveness-too-aggressive")
            .map(|(r, _)| r)
            .collect();
        assert_eq!(out.rules, others);
        assert_eq!(out.left_out, [("liveness-too-aggressive", "disabled by the policy".to_owned())]);
    }

    #[test]
    fn every_rule_has_a_coverage_and_the_covered_ones_export() {
        assert_eq!(coverage().len(), crate::rules::RULES.len());
        let covered = coverage().iter().filter(|(_, c)| !matches!(c, Covered::No(_))).count();
        assert_eq!(export(&Policy::default(), &options(AdmissionMode::Warn)).rules.len(), covered);
    }
}
