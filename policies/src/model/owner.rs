//! Controller ownership: an object a controller made (a ReplicaSet's Pods,
//! a Deployment's ReplicaSets) is judged once, where its template is
//! written, not again in each copy.

use serde_json::Value;

/// `ReplicaSet/web-5d8f` for an object with a controller `ownerReference`.
pub fn controller_of(object: &Value) -> Option<String> {
    let owners = object.pointer("/metadata/ownerReferences")?.as_array()?;
    owners.iter().find(|o| o.get("controller").and_then(Value::as_bool) == Some(true)).map(|o| {
        let text = |k: &str| o.get(k).and_then(Value::as_str).unwrap_or("?");
        format!("{}/{}", text("kind"), text("name"))
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::controller_of;

    #[test]
    fn only_a_controller_reference_owns() {
        let owned = json!({"metadata": {"ownerReferences": [
            {"kind": "Foo", "name": "f"}, {"kind": "ReplicaSet", "name": "web-1", "controller": true}]}});
        assert_eq!(controller_of(&owned).as_deref(), Some("ReplicaSet/web-1"));
        let referenced = json!({"metadata": {"ownerReferences": [{"kind": "X", "name": "y", "controller": false}]}});
        assert_eq!(controller_of(&referenced), None);
        assert_eq!(controller_of(&json!({"metadata": {}})), None);
    }
}
