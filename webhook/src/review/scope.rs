//! Which requests lifeguard judges: CREATE and UPDATE of an object that
//! carries a pod spec, not a subresource, not being deleted and (unless
//! asked) not owned by a controller. Everything else is let through
//! untouched: lifeguard never stands between the cluster and its own
//! controllers, deletions or `kubectl exec`.

use kube_core::DynamicObject;
use kube_core::admission::{AdmissionRequest, Operation};
use policies::ModelError;
use policies::model::{Workload, controller_of};
use serde_json::Value;

use super::options::Options;
use super::request::Parsed;

/// Why a request is not judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skip {
    /// Out of scope: allowed untouched.
    Because(String),
    /// In scope but unreadable: the on-error answer.
    Broken(String),
}

/// The raw object to judge, or why not.
pub fn judged_object<'a>(
    request: &AdmissionRequest<DynamicObject>,
    parsed: &'a Parsed,
    options: &Options,
) -> Result<&'a Value, Skip> {
    if !matches!(request.operation, Operation::Create | Operation::Update) {
        return Err(Skip::Because(format!("{} is not judged", parsed.head.operation)));
    }
    if let Some(sub) = request.sub_resource.as_deref().filter(|s| !s.is_empty()) {
        return Err(Skip::Because(format!("subresource {sub} is not judged")));
    }
    let Some(object) = parsed.raw_object() else {
        return Err(Skip::Because("the request carries no object".to_owned()));
    };
    // Whether it carries a pod spec is left to the engine, which reads it anyway.
    in_scope(object, options, false).map(|()| object)
}

/// For a request whose typed form did not deserialize: `Some(why)` when it
/// would not be judged anyway, `None` when it deserves the on-error answer.
pub fn skip_raw(raw: &Value, object: Option<&Value>, options: &Options) -> Option<String> {
    let operation = raw.get("operation").and_then(Value::as_str).unwrap_or_default();
    if !matches!(operation, "CREATE" | "UPDATE") {
        return Some(format!("{operation} is not judged"));
    }
    if let Some(sub) = raw.get("subResource").and_then(Value::as_str).filter(|s| !s.is_empty()) {
        return Some(format!("subresource {sub} is not judged"));
    }
    let Some(object) = object.filter(|o| o.is_object()) else {
        return Some("the request carries no object".to_owned());
    };
    match in_scope(object, options, true) {
        Err(Skip::Because(why)) => Some(why),
        Ok(()) | Err(Skip::Broken(_)) => None,
    }
}

fn in_scope(object: &Value, options: &Options, read_pod_spec: bool) -> Result<(), Skip> {
    if object.pointer("/metadata/deletionTimestamp").is_some_and(|t| !t.is_null()) {
        return Err(Skip::Because("the object is being deleted".to_owned()));
    }
    if !options.include_controlled
        && let Some(owner) = controller_of(object)
    {
        return Err(Skip::Because(format!("controlled by {owner}, whose template is judged where it is written")));
    }
    if !read_pod_spec {
        return Ok(());
    }
    match Workload::from_object(object) {
        Ok(Some(_)) => Ok(()),
        Ok(None) => Err(Skip::Because("the object carries no pod spec".to_owned())),
        Err(e) => Err(Skip::Broken(unparsable(&e))),
    }
}

/// Why an object that does not parse as its kind cannot be judged.
pub fn unparsable(e: &ModelError) -> String {
    format!("the object does not parse as its kind: {}: {}", e.pointer, e.message)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod(meta: Value) -> Value {
        json!({"kind": "Pod", "metadata": meta, "spec": {"containers": [{"name": "c", "image": "x"}]}})
    }

    #[test]
    fn controller_owned_objects_are_skipped_unless_included() {
        let owned = pod(json!({"name": "p", "ownerReferences": [
            {"kind": "ReplicaSet", "name": "rs", "controller": false},
            {"kind": "ReplicaSet", "name": "web-1", "controller": true}]}));
        let skip = in_scope(&owned, &Options::default(), true);
        assert!(matches!(skip, Err(Skip::Because(why)) if why.contains("ReplicaSet/web-1")));
        assert_eq!(in_scope(&owned, &Options { include_controlled: true, ..Options::default() }, true), Ok(()));
        let not_controller = pod(json!({"name": "p", "ownerReferences": [{"kind": "X", "name": "y"}]}));
        assert_eq!(in_scope(&not_controller, &Options::default(), true), Ok(()));
    }

    #[test]
    fn deleting_objects_and_objects_without_pods_are_skipped() {
        let opts = Options::default();
        let deleting = pod(json!({"name": "p", "deletionTimestamp": "2026-01-01T00:00:00Z"}));
        assert!(matches!(in_scope(&deleting, &opts, true), Err(Skip::Because(_))));
        let cm = json!({"kind": "ConfigMap", "metadata": {"name": "c"}});
        assert!(matches!(in_scope(&cm, &opts, true), Err(Skip::Because(_))));
        let broken =
            json!({"kind": "Pod", "spec": {"containers": [{"name": "c", "livenessProbe": {"periodSeconds": "ten"}}]}});
        assert!(matches!(in_scope(&broken, &opts, true), Err(Skip::Broken(why)) if why.contains("periodSeconds")));
        // Without reading the pod spec (the engine reads it next), only the cheap checks run.
        assert_eq!(in_scope(&broken, &opts, false), Ok(()));
    }

    #[test]
    fn unreadable_requests_out_of_scope_are_let_through() {
        let opts = Options::default();
        let p = pod(json!({"name": "p"}));
        assert!(skip_raw(&json!({"operation": "DELETE"}), None, &opts).is_some());
        assert!(skip_raw(&json!({"operation": "CONNECT"}), Some(&json!({"kind": "PodExecOptions"})), &opts).is_some());
        assert!(skip_raw(&json!({"operation": "UPDATE", "subResource": "status"}), Some(&p), &opts).is_some());
        assert_eq!(skip_raw(&json!({"operation": "CREATE"}), Some(&p), &opts), None);
    }
}
