//! The objects of `export map`: the MutatingAdmissionPolicy `NAME-fix`
//! and its binding (and `NAME-fix-2`, ..., for the further pod templates
//! of the custom kinds it fixes), with the VAP's match constraints and
//! conditions of the same template slot.

use serde_json::{Value, json};

use super::build;
use crate::cel::fragments;
use crate::cel::kube_version::MapApi;
use crate::cel::mutation::Mutation;
use crate::cel::templates::Slot;
use crate::cel::text::layout;
use crate::policy::Policy;
use crate::vap::objects::{CEL_WIDTH, labels, match_conditions, match_constraints};

/// The policy's name for the export `name` and the template slot:
/// `NAME-fix`, `NAME-fix-2`, ...
pub(crate) fn object_name(name: &str, slot: &Slot) -> String {
    format!("{name}-fix{}", slot.suffix())
}

/// The policy of one template slot, then its binding.
pub(super) fn pair(name: &str, api: MapApi, policy: &Policy, slot: &Slot, fixes: &[Mutation]) -> [Value; 2] {
    let object = object_name(name, slot);
    let mut rules: Vec<&str> = fixes.iter().map(|f| f.rule).collect();
    rules.sort_by_key(|r| crate::rules::RULES.iter().position(|known| known.name == *r));
    rules.dedup();
    let mut conditions = match_conditions(slot);
    // What `/mutate` refuses to patch on an UPDATE: a Pod's or a Job's
    // template cannot change after creation, so a fix would make the API
    // server reject the user's update; unless lifeguard fixed the old
    // object (the annotation its fixes write on the object's own
    // metadata), where the fixes only restore what it stored
    // (`build::RESTORING`).
    let immutable: Vec<String> =
        build::IMMUTABLE_TEMPLATE_KINDS.iter().map(|k| format!("object.kind != '{k}'")).collect();
    conditions.push(json!({
        "name": "update-may-change-the-template",
        "expression": format!(
            "request.operation != 'UPDATE' || ({}) || \
             (has(oldObject.metadata.annotations) && {} in oldObject.metadata.annotations)",
            immutable.join(" && "),
            fragments::quoted(crate::model::ANNOTATION_MUTATED)
        ),
    }));
    let mut mutations: Vec<Value> = fixes.iter().map(build::mutation).collect();
    let variables: Vec<Value> = if mutations.is_empty() {
        // The API server requires a mutation, and this policy must exist to
        // replace what an earlier export put under its name: one that
        // changes nothing.
        mutations
            .push(json!({ "patchType": "ApplyConfiguration", "applyConfiguration": { "expression": "Object{}" } }));
        Vec::new()
    } else {
        crate::vap::variables::variables(policy, slot)
            .into_iter()
            .map(|(name, expression)| json!({ "name": name, "expression": expression }))
            .chain([build::pod_spec_path(slot)])
            .chain(build::restoring_variables(slot))
            .chain(fixes.iter().map(build::variable))
            .collect()
    };
    // Laid out as `export vap`'s CEL is, to be reviewed in a diff.
    let laid_out = |mut v: Value| {
        for pointer in ["/expression", "/jsonPatch/expression", "/applyConfiguration/expression"] {
            if let Some(expression) = v.pointer_mut(pointer) {
                if let Some(text) = expression.as_str() {
                    *expression = Value::String(layout(text, CEL_WIDTH));
                }
            }
        }
        v
    };
    let conditions: Vec<Value> = conditions.into_iter().map(laid_out).collect();
    let variables: Vec<Value> = variables.into_iter().map(laid_out).collect();
    let mutations: Vec<Value> = mutations.into_iter().map(laid_out).collect();
    let mut spec = json!({
        // A CEL error leaves the object as it came: the API server's hot
        // path never fails because of lifeguard.
        "failurePolicy": "Ignore",
        "matchConstraints": match_constraints(slot),
        "matchConditions": conditions,
        // Another admission plugin's change after this one's is looked at
        // again; a fixed object needs no change, so this converges.
        "reinvocationPolicy": "IfNeeded",
    });
    if !variables.is_empty() {
        spec["variables"] = Value::Array(variables);
    }
    spec["mutations"] = Value::Array(mutations);
    let admission_policy = json!({
        "apiVersion": api.api_version(),
        "kind": "MutatingAdmissionPolicy",
        "metadata": {
            "name": object,
            "labels": labels(name),
            "annotations": {
                "lifeguard.dev/policy": policy.origin,
                "lifeguard.dev/rules": rules.join(","),
            },
        },
        "spec": spec,
    });
    let binding = json!({
        "apiVersion": api.api_version(),
        "kind": "MutatingAdmissionPolicyBinding",
        "metadata": { "name": object, "labels": labels(name) },
        "spec": { "policyName": object },
    });
    [admission_policy, binding]
}

/// Every CEL expression of the objects.
pub(super) fn expressions(objects: &[Value]) -> impl Iterator<Item = &str> {
    objects.iter().flat_map(|o| {
        let spec = &o["spec"];
        let listed = |key: &str| spec[key].as_array().into_iter().flatten();
        listed("variables").chain(listed("matchConditions")).filter_map(|v| v["expression"].as_str()).chain(
            listed("mutations").filter_map(|m| {
                m.pointer("/applyConfiguration/expression").or_else(|| m.pointer("/jsonPatch/expression"))?.as_str()
            }),
        )
    })
}
