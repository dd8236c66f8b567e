//! `/mutate`: the JSON Patch of the engine's fixes (the `plan_fixes` that
//! `lifeguard fix` uses, so the two never disagree) plus an annotation that
//! lists the rules fixed. Idempotent: a fixed object needs no patch, so
//! `reinvocationPolicy: IfNeeded` converges.

use kube_core::DynamicObject;
use kube_core::admission::{AdmissionRequest, AdmissionResponse, Operation};
use policies::finding::add_op;
use policies::fix::AppliedFix;
use policies::model::{Workload, join};
use policies::{Batch, Policy, plan_fixes};
use serde_json::{Value, json};

use super::endpoint::Endpoint;
use super::on_update;
use super::outcome::{Reply, Summary, Verdict, error_reply, reply, skipped};
use super::request::Parsed;
use super::restore;
use super::scope::unparsable;
use super::text::{fitted, warning_line};
use crate::config::OnError;

/// The annotation listing the rules whose fixes lifeguard applied.
pub const MUTATED_ANNOTATION: &str = policies::model::ANNOTATION_MUTATED;

/// Plans the fixes for `object` (the request's own JSON).
pub fn mutate(request: &AdmissionRequest<DynamicObject>, parsed: &Parsed, object: &Value, policy: &Policy) -> Reply {
    let endpoint = Endpoint::Mutate;
    let mut patching = on_update::Patching::All;
    if request.operation == Operation::Update {
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or_default();
        let template_pointer = match Workload::from_object(object) {
            Ok(Some(workload)) => workload.template_pointer,
            Ok(None) => return skipped(&parsed.head, endpoint, None, "the object carries no pod spec".to_owned()),
            Err(e) => return error_reply(&parsed.head, endpoint, None, OnError::Allow, &unparsable(&e)),
        };
        patching = match on_update::may_patch(kind, &template_pointer, object, parsed.raw_old_object()) {
            Ok(patching) => patching,
            Err(why) => return skipped(&parsed.head, endpoint, None, format!("UPDATE not patched: {why}")),
        };
    }
    let plan = match plan_fixes(object, &Batch::default(), policy, None) {
        Ok(Some(plan)) => plan,
        Ok(None) => return skipped(&parsed.head, endpoint, None, "the object carries no pod spec".to_owned()),
        Err(e) => return error_reply(&parsed.head, endpoint, None, OnError::Allow, &unparsable(&e)),
    };
    let (mut operations, applied) = match patching {
        on_update::Patching::All => (plan.operations, plan.applied),
        on_update::Patching::Restoring(old) => restored(plan.operations, plan.applied, object, old),
    };
    let mut response = AdmissionResponse::from(request);
    if operations.is_empty() {
        return reply(response, Summary::new(&parsed.head, endpoint, None, Verdict::Allowed));
    }
    let Some(annotation) = annotation_operation(object, &applied) else {
        return error_reply(&parsed.head, endpoint, None, OnError::Allow, "patch: no pointer for the annotation");
    };
    match patching {
        on_update::Patching::All => operations.push(annotation),
        // Written back only where the update dropped the old object's.
        on_update::Patching::Restoring(old) => {
            let mut fixed = object.clone();
            if json_patch::patch(&mut fixed, &operations).is_ok()
                && restore::restoring(std::slice::from_ref(&annotation), &fixed, old) == [true]
            {
                operations.push(annotation);
            }
        }
    }
    // kube-core speaks json-patch 4 and the engine json-patch 5: the wire
    // format is the same RFC 6902, so convert through serde.
    let converted = serde_json::to_value(&operations)
        .and_then(serde_json::from_value::<json_patch_v4::Patch>)
        .map_err(|e| e.to_string())
        .and_then(|patch| response.clone().with_patch(patch).map_err(|e| e.to_string()));
    response = match converted {
        Ok(patched) => patched,
        Err(why) => return error_reply(&parsed.head, endpoint, None, OnError::Allow, &format!("patch: {why}")),
    };
    response.warnings = Some(fitted(
        applied.iter().map(|a| warning_line(&format!("{} (fixed by lifeguard): {}", a.rule, a.description))).collect(),
        "fixes",
    ));
    let rules: Vec<String> = applied.iter().map(|a| a.rule.clone()).collect();
    response.audit_annotations.insert("fixed".to_owned(), rules.join(","));
    let mut summary = Summary::new(&parsed.head, endpoint, None, Verdict::Patched);
    summary.rules = rules;
    reply(response, summary)
}

/// The operations of a plan for an UPDATE of a Pod or a Job lifeguard
/// fixed that restore `old`'s values (`restore`), and the fixes that keep
/// at least one of theirs: those alone are told as made.
fn restored(
    operations: Vec<json_patch::PatchOperation>,
    applied: Vec<AppliedFix>,
    object: &Value,
    old: &Value,
) -> (Vec<json_patch::PatchOperation>, Vec<AppliedFix>) {
    let kept = restore::restoring(&operations, object, old);
    let mut kept_fixes = Vec::new();
    let mut at = 0;
    for fix in applied {
        let end = (at + fix.operations).min(kept.len());
        if kept[at..end].contains(&true) {
            kept_fixes.push(fix);
        }
        at = end;
    }
    let operations = operations.into_iter().zip(kept).filter_map(|(op, keep)| keep.then_some(op)).collect();
    (operations, kept_fixes)
}

/// Adds the fixed rules to `lifeguard.dev/mutated` (keeping rules an earlier
/// call listed), creating `metadata.annotations` when the object has none.
fn annotation_operation(object: &Value, applied: &[AppliedFix]) -> Option<json_patch::PatchOperation> {
    let existing = object.pointer("/metadata/annotations");
    let mut rules: Vec<String> = existing
        .and_then(|a| a.get(MUTATED_ANNOTATION))
        .and_then(Value::as_str)
        .map(|v| v.split(',').map(str::trim).filter(|r| !r.is_empty()).map(str::to_owned).collect())
        .unwrap_or_default();
    for fix in applied {
        if !rules.contains(&fix.rule) {
            rules.push(fix.rule.clone());
        }
    }
    let value = Value::String(rules.join(","));
    let (path, value) =
        match (existing.is_some_and(Value::is_object), object.get("metadata").is_some_and(Value::is_object)) {
            (true, _) => (join("/metadata/annotations", &[MUTATED_ANNOTATION]), value),
            (false, true) => ("/metadata/annotations".to_owned(), json!({ MUTATED_ANNOTATION: value })),
            (false, false) => ("/metadata".to_owned(), json!({"annotations": { MUTATED_ANNOTATION: value }})),
        };
    add_op(&path, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn applied(rule: &str) -> AppliedFix {
        AppliedFix {
            rule: rule.into(),
            container: None,
            description: String::new(),
            pointer: String::new(),
            operations: 1,
        }
    }

    fn apply(object: &Value, rules: &[&str]) -> Value {
        let op = annotation_operation(object, &rules.iter().map(|r| applied(r)).collect::<Vec<_>>()).expect("an op");
        let mut out = object.clone();
        json_patch::patch(&mut out, &[op]).expect("applies");
        out
    }

    #[test]
    fn the_annotation_is_created_or_extended() {
        let bare = apply(&json!({"metadata": {"name": "x"}}), &["a"]);
        assert_eq!(bare.pointer("/metadata/annotations/lifeguard.dev~1mutated"), Some(&json!("a")));
        let no_meta = apply(&json!({"kind": "Pod"}), &["a"]);
        assert_eq!(no_meta.pointer("/metadata/annotations/lifeguard.dev~1mutated"), Some(&json!("a")));
        let earlier = json!({"metadata": {"annotations": {"lifeguard.dev/mutated": "a", "keep": "me"}}});
        let both = apply(&earlier, &["b", "a"]);
        assert_eq!(both.pointer("/metadata/annotations/lifeguard.dev~1mutated"), Some(&json!("a,b")));
        assert_eq!(both.pointer("/metadata/annotations/keep"), Some(&json!("me")));
    }

    #[test]
    fn a_kubectl_applied_object_keeps_what_the_reader_left_out() {
        use crate::review::{Endpoint, ReviewOptions, review};
        // Its only annotation is the one the reader empties: the patch must
        // add a key to the map as sent, not create a new map over it.
        let last_applied = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}";
        let object = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {
                "name": "web",
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": last_applied},
                "managedFields": [{"manager": "kubectl", "operation": "Update", "fieldsV1": {"f:spec": {}}}]
            },
            "spec": {"containers": [{"name": "web", "image": "nginx",
                "livenessProbe": {"httpGet": {"path": "/healthz", "port": 80}, "periodSeconds": 5, "failureThreshold": 1}}]}
        });
        let body = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
            "uid": "u", "operation": "CREATE", "userInfo": {},
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"}, "object": object}});
        let body = serde_json::to_vec(&body).expect("json");
        let Reply::Review { review: answer, .. } =
            review(&body, Endpoint::Mutate, &Policy::default(), &ReviewOptions::default())
        else {
            panic!("not a review");
        };
        let patch = answer.response.and_then(|r| r.patch).expect("a patch");
        let patch: json_patch::Patch = serde_json::from_slice(&patch).expect("a JSON patch");
        let mut patched = object.clone();
        json_patch::patch(&mut patched, &patch).expect("applies to the object as sent");
        assert_eq!(
            patched.pointer("/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration"),
            Some(&json!(last_applied))
        );
        assert_eq!(patched["metadata"]["managedFields"], object["metadata"]["managedFields"]);
        assert!(patched.pointer("/metadata/annotations/lifeguard.dev~1mutated").is_some(), "{patched}");
    }
}

#[cfg(test)]
mod restoring_tests {
    use super::*;
    use crate::review::{Endpoint, ReviewOptions, review};

    fn pod(threshold: u32, labels: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "labels": labels, "annotations": {MUTATED_ANNOTATION: "liveness-too-aggressive"}},
            "spec": {"containers": [{"name": "c", "image": "nginx",
                "startupProbe": {"httpGet": {"path": "/healthz", "port": 80}, "periodSeconds": 5, "failureThreshold": 30},
                "readinessProbe": {"httpGet": {"path": "/ready", "port": 80}, "periodSeconds": 5},
                "livenessProbe": {"httpGet": {"path": "/healthz", "port": 80}, "periodSeconds": 10, "failureThreshold": threshold}}]}})
    }

    /// The patched object of an UPDATE from `old` to `new`, `None` without a patch.
    fn update(old: &Value, new: &Value) -> Option<Value> {
        let body = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
            "uid": "u", "operation": "UPDATE", "userInfo": {}, "namespace": "shop", "name": "p",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"}, "object": new, "oldObject": old}});
        let body = serde_json::to_vec(&body).expect("json");
        let Reply::Review { review: answer, .. } =
            review(&body, Endpoint::Mutate, &Policy::default(), &ReviewOptions::default())
        else {
            panic!("not a review");
        };
        let response = answer.response.expect("a response");
        assert!(response.allowed, "/mutate never refuses");
        let patch: json_patch::Patch = serde_json::from_slice(&response.patch?).expect("a JSON patch");
        let mut patched = new.clone();
        json_patch::patch(&mut patched, &patch).expect("applies to the object as sent");
        Some(patched)
    }

    #[test]
    fn a_reapplied_file_gets_the_stored_fix_back() {
        let stored = pod(3, json!({}));
        // The file's value sent back over the fixed one: put back as stored.
        assert_eq!(update(&stored, &pod(1, json!({}))), Some(stored.clone()));
        // The update the API server would have refused, it now accepts; no
        // patch where the update already agrees with the stored pod.
        assert_eq!(update(&stored, &pod(3, json!({"team": "a"}))), None);
    }

    #[test]
    fn a_value_neither_stored_nor_the_fixes_is_left_to_the_api_server() {
        let stored = pod(3, json!({}));
        // No finding, so no fix: the API server refuses the change as before.
        assert_eq!(update(&stored, &pod(5, json!({}))), None);
        // A fix whose value is not the stored one is not made either.
        assert_eq!(update(&pod(4, json!({})), &pod(1, json!({}))), None);
    }

    #[test]
    fn a_pod_lifeguard_did_not_fix_is_not_patched_on_update() {
        let mut stored = pod(3, json!({}));
        stored["metadata"]["annotations"] = json!({});
        let mut new = pod(1, json!({}));
        new["metadata"]["annotations"] = json!({});
        assert_eq!(update(&stored, &new), None);
    }

    #[test]
    fn the_annotation_an_update_dropped_is_restored_with_the_fix() {
        let stored = pod(3, json!({}));
        let mut new = pod(1, json!({}));
        new["metadata"].as_object_mut().map(|m| m.remove("annotations"));
        assert_eq!(update(&stored, &new), Some(stored));
    }
}
