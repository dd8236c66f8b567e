//! The objects of an export: `NAME-deny` and `NAME-warn`, each a
//! ValidatingAdmissionPolicy and its binding, in every mode. The policies
//! depend on the policy file alone (which rules, at which severity); the
//! mode sets only the bindings' `validationActions`. So an export applied
//! over another mode's replaces all of it, and nothing of the old mode
//! keeps denying.

use serde_json::{Value, json};

use crate::cel::check::Validation;
use crate::cel::fragments;
use crate::cel::templates::Slot;
use crate::cel::text::layout;
use crate::policy::{AdmissionMode, Policy};
use crate::scope::OutOfScope;

/// Which of the two policies: the rules `enforce` denies (at or above
/// `denySeverity`), or the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Group {
    /// `NAME-deny`.
    Deny,
    /// `NAME-warn`.
    Warn,
}

impl Group {
    /// The object's name for the export `name`: `NAME-deny`, or
    /// `NAME-deny-2` for the second template slot, ...
    pub(crate) fn object_name(self, name: &str, slot: &Slot) -> String {
        let suffix = slot.suffix();
        match self {
            Group::Deny => format!("{name}-deny{suffix}"),
            Group::Warn => format!("{name}-warn{suffix}"),
        }
    }

    /// The binding's action in `mode`: a binding's actions apply to all its
    /// policy's validations, hence two policies.
    pub(crate) fn action(self, mode: AdmissionMode) -> &'static str {
        match (mode, self) {
            (AdmissionMode::Enforce, Group::Deny) => "Deny",
            (AdmissionMode::Enforce | AdmissionMode::Warn, _) => "Warn",
            (AdmissionMode::Audit, _) => "Audit",
        }
    }
}

/// The label every exported object carries with the export's `--name`, so
/// that `kubectl delete -l` (or `kubectl apply --prune -l`) finds them all.
pub const EXPORT_LABEL: &str = "lifeguard.dev/export";

/// The width of the CEL's lines, so that with the YAML's indentation
/// every line of an export is short enough to review in a diff.
pub(crate) const CEL_WIDTH: usize = 120;

/// The policy of one slot and group, then its binding. `all` is every
/// validation of the export; with `ratchet`, the policy reads the old
/// object by all of its rules' checks.
#[allow(clippy::too_many_arguments)]
pub(crate) fn pair(
    group: Group,
    name: &str,
    policy: &Policy,
    mode: AdmissionMode,
    slot: &Slot,
    validations: &[&Validation],
    all: &[Validation],
    ratchet: bool,
) -> [Value; 2] {
    let object = group.object_name(name, slot);
    [
        admission_policy(&object, name, policy, slot, validations, all, ratchet),
        binding(&object, name, group.action(mode), mode),
    ]
}

/// The kinds the slot reads: in slot 0 the built-in pod-bearing kinds the
/// webhook registers for (the chart's rules), a rule per API group and
/// version; then the slot's custom kinds, a rule per group, any version
/// (the template's place is the same in each version lifeguard reads).
fn resource_rules(slot: &Slot) -> Value {
    let rule = |group: &str, versions: Vec<&str>, resources: Vec<&str>| {
        json!({
            "apiGroups": [group],
            "apiVersions": versions,
            "operations": ["CREATE", "UPDATE"],
            "resources": resources,
            "scope": "Namespaced",
        })
    };
    let mut rules: Vec<Value> = Vec::new();
    if slot.builtins {
        rules.extend(
            crate::model::resources_by_group()
                .into_iter()
                .map(|((group, version), resources)| rule(group, vec![version], resources)),
        );
    }
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for r in &slot.customs {
        match groups.iter_mut().find(|(g, _)| *g == r.group) {
            Some((_, resources)) if !resources.contains(&r.resource.as_str()) => resources.push(&r.resource),
            Some(_) => {}
            None => groups.push((&r.group, vec![&r.resource])),
        }
    }
    rules.extend(groups.into_iter().map(|(group, resources)| rule(group, vec!["*"], resources)));
    Value::Array(rules)
}

/// The labels of every exported object.
pub(super) fn labels(export: &str) -> Value {
    json!({ "app.kubernetes.io/managed-by": "lifeguard", EXPORT_LABEL: export })
}

/// What every export matches, as the webhook: the kinds it registers for
/// (and the slot's custom kinds), CREATE and UPDATE, never `kube-system`.
pub(super) fn match_constraints(slot: &Slot) -> Value {
    json!({
        "namespaceSelector": {
            "matchExpressions": [
                { "key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"] }
            ]
        },
        "resourceRules": resource_rules(slot),
    })
}

/// The match conditions every export shares: the engine's scope
/// ([`crate::scope`]), one condition per reason an object is not judged,
/// and on UPDATE only when the pod template (the slot's) changes.
pub(super) fn match_conditions(slot: &Slot) -> Vec<Value> {
    let condition = |(name, expression): (&str, String)| json!({ "name": name, "expression": expression });
    let mut conditions: Vec<Value> =
        OutOfScope::ALL.iter().filter_map(|reason| scope_condition(reason, slot)).map(condition).collect();
    conditions.push(condition(("update-changes-the-template", fragments::changes_the_template(slot))));
    conditions
}

/// The match condition that holds when an object is not out of scope for
/// `reason`, or `None` where the binding's rules say it instead.
fn scope_condition(reason: &OutOfScope, slot: &Slot) -> Option<(&'static str, String)> {
    match reason {
        OutOfScope::NoPodSpec => Some(("has-a-pod-spec", fragments::has_pod_spec(slot))),
        OutOfScope::Controlled(_) => Some((
            "not-controller-owned",
            "!has(object.metadata.ownerReferences) || \
             !object.metadata.ownerReferences.exists(r, has(r.controller) && r.controller)"
                .to_owned(),
        )),
        OutOfScope::BeingDeleted => Some(("not-being-deleted", "!has(object.metadata.deletionTimestamp)".to_owned())),
        // The resource rules name no subresource, so the API server never
        // sends one to the policy.
        OutOfScope::Subresource(_) => None,
    }
}

fn admission_policy(
    name: &str,
    export: &str,
    policy: &Policy,
    slot: &Slot,
    validations: &[&Validation],
    all: &[Validation],
    ratchet: bool,
) -> Value {
    // A rule with findings at several severities has a validation for each.
    let mut rules: Vec<&str> = validations.iter().map(|v| v.rule).collect();
    rules.dedup();
    let cel = |expression: &str| layout(expression, CEL_WIDTH);
    let vars = super::ratchet::variables(policy, slot, validations, all, ratchet);
    let mut checks: Vec<Value> = validations
        .iter()
        .map(|v| {
            let old = vars.old(v.rule);
            json!({
                "expression": cel(&v.expression(old)),
                "messageExpression": cel(&v.message(old, &vars.sided)),
                "reason": "Invalid",
            })
        })
        .collect();
    let variables: Vec<Value> = if checks.is_empty() {
        // The API server refuses a policy without a validation, and this one
        // must exist to replace what an earlier export put under its name:
        // one that always holds.
        checks.push(json!({ "expression": "true", "message": "no rule of the policy is at this severity" }));
        Vec::new()
    } else {
        vars.list
            .into_iter()
            .map(|(name, expression)| json!({ "name": name, "expression": cel(&expression) }))
            .collect()
    };
    let conditions: Vec<Value> = match_conditions(slot)
        .into_iter()
        .map(|mut c| {
            if let Some(expression) = c["expression"].as_str() {
                c["expression"] = Value::String(cel(expression));
            }
            c
        })
        .collect();
    let mut spec = json!({
        // A CEL error (a cost limit, say) admits the object: the API
        // server's hot path never fails because of lifeguard.
        "failurePolicy": "Ignore",
        "matchConstraints": match_constraints(slot),
        "matchConditions": conditions,
    });
    if !variables.is_empty() {
        spec["variables"] = Value::Array(variables);
    }
    spec["validations"] = Value::Array(checks);
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {
            "name": name,
            "labels": labels(export),
            "annotations": {
                "lifeguard.dev/policy": policy.origin,
                "lifeguard.dev/rules": rules.join(","),
            },
        },
        "spec": spec,
    })
}

fn binding(name: &str, export: &str, action: &str, mode: AdmissionMode) -> Value {
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {
            "name": name,
            "labels": labels(export),
            "annotations": { "lifeguard.dev/mode": mode.as_str() },
        },
        "spec": { "policyName": name, "validationActions": [action] },
    })
}

/// Every CEL expression of a VAP export's objects.
pub(super) fn expressions(objects: &[Value]) -> impl Iterator<Item = &str> {
    objects.iter().flat_map(|o| {
        let spec = &o["spec"];
        let listed = |key: &str| spec[key].as_array().into_iter().flatten();
        listed("variables").chain(listed("matchConditions")).filter_map(|v| v["expression"].as_str()).chain(
            listed("validations").flat_map(|v| [v["expression"].as_str(), v["messageExpression"].as_str()]).flatten(),
        )
    })
}
