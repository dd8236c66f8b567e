//! Which requests lifeguard judges: CREATE and UPDATE of an object that
//! carries a pod spec, not a subresource, not being deleted and (unless
//! asked) not owned by a controller. Everything else is let through
//! untouched: lifeguard never stands between the cluster and its own
//! controllers, deletions or `kubectl exec`.

use kube_core::DynamicObject;
use kube_core::admission::{AdmissionRequest, Operation};
use policies::{ModelError, Scope};
use serde_json::Value;

use super::options::ReviewOptions;
use super::request::Parsed;

/// Why a request is not judged: out of scope, allowed untouched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skip(pub String);

/// The raw object to judge, or why not.
pub fn judged_object<'a>(
    request: &AdmissionRequest<DynamicObject>,
    parsed: &'a Parsed,
    options: &ReviewOptions,
) -> Result<&'a Value, Skip> {
    if !matches!(request.operation, Operation::Create | Operation::Update) {
        return Err(Skip(format!("{} is not judged", parsed.head.operation)));
    }
    Scope::whole(request.sub_resource.as_deref()).map_err(|why| Skip(why.to_string()))?;
    let Some(object) = parsed.raw_object() else {
        return Err(Skip("the request carries no object".to_owned()));
    };
    // Whether it carries a pod spec is left to the engine, which reads it anyway.
    scope(options).admits(object).map_err(|why| Skip(why.to_string()))?;
    Ok(object)
}

/// For a request whose typed form did not deserialize: `Some(why)` when it
/// would not be judged anyway, `None` when it deserves the on-error answer.
pub fn skip_raw(raw: &Value, object: Option<&Value>, options: &ReviewOptions) -> Option<String> {
    let operation = raw.get("operation").and_then(Value::as_str).unwrap_or_default();
    if !matches!(operation, "CREATE" | "UPDATE") {
        return Some(format!("{operation} is not judged"));
    }
    if let Err(why) = Scope::whole(raw.get("subResource").and_then(Value::as_str)) {
        return Some(why.to_string());
    }
    let Some(object) = object.filter(|o| o.is_object()) else {
        return Some("the request carries no object".to_owned());
    };
    match scope(options).judges(object) {
        Ok(Err(why)) => Some(why.to_string()),
        // In scope, or in scope and unreadable: the on-error answer.
        Ok(Ok(())) | Err(_) => None,
    }
}

/// The engine's scope with the webhook's options.
fn scope(options: &ReviewOptions) -> Scope {
    Scope { include_controlled: options.include_controlled }
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
    fn the_options_reach_the_engines_scope() {
        let owned =
            pod(json!({"name": "p", "ownerReferences": [{"kind": "ReplicaSet", "name": "web-1", "controller": true}]}));
        let create = json!({"operation": "CREATE"});
        let skip = skip_raw(&create, Some(&owned), &ReviewOptions::default());
        assert_eq!(
            skip.as_deref(),
            Some("controlled by ReplicaSet/web-1, whose template is judged where it is written")
        );
        assert_eq!(
            skip_raw(&create, Some(&owned), &ReviewOptions { include_controlled: true, ..ReviewOptions::default() }),
            None
        );
        let cm = json!({"kind": "ConfigMap", "metadata": {"name": "c"}});
        assert_eq!(
            skip_raw(&create, Some(&cm), &ReviewOptions::default()).as_deref(),
            Some("the object carries no pod spec")
        );
        // In scope but unreadable: the on-error answer, not a skip.
        let broken =
            json!({"kind": "Pod", "spec": {"containers": [{"name": "c", "livenessProbe": {"periodSeconds": "ten"}}]}});
        assert_eq!(skip_raw(&create, Some(&broken), &ReviewOptions::default()), None);
    }

    #[test]
    fn unreadable_requests_out_of_scope_are_let_through() {
        let opts = ReviewOptions::default();
        let p = pod(json!({"name": "p"}));
        assert!(skip_raw(&json!({"operation": "DELETE"}), None, &opts).is_some());
        assert!(skip_raw(&json!({"operation": "CONNECT"}), Some(&json!({"kind": "PodExecOptions"})), &opts).is_some());
        assert!(skip_raw(&json!({"operation": "UPDATE", "subResource": "status"}), Some(&p), &opts).is_some());
        assert_eq!(skip_raw(&json!({"operation": "CREATE"}), Some(&p), &opts), None);
    }
}
