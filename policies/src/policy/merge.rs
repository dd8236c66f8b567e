//! How a file extends a pack: it overrides single values. Mappings merge key
//! by key (so `rules.X.severity` leaves `rules.X.enabled` alone, and one
//! parameter leaves the others); lists replace, except `exemptions`, which
//! add up, and `customRules`, where a rule replaces the pack's rule of the
//! same name.

use serde_json::{Map, Value};

/// Merges a policy document over its base. Both are policy files as JSON;
/// `extends` is dropped, `metadata` is the file's own (none if it has none).
pub(crate) fn merge_policy(base: Value, over: Value) -> Value {
    let (Value::Object(mut base), Value::Object(over)) = (base, over) else {
        return Value::Null;
    };
    base.remove("extends");
    // A name and description describe one file, not what it extends.
    base.remove("metadata");
    for (key, value) in over {
        match key.as_str() {
            "extends" => {}
            "metadata" => {
                base.insert(key, value);
            }
            "exemptions" => {
                let mut list = take_list(&mut base, &key);
                list.extend(as_list(value));
                base.insert(key, Value::Array(list));
            }
            "customRules" => {
                let mut list = take_list(&mut base, &key);
                for rule in as_list(value) {
                    let name = rule.get("name").cloned();
                    match list.iter_mut().find(|r| name.is_some() && r.get("name") == name.as_ref()) {
                        Some(slot) => *slot = rule,
                        None => list.push(rule),
                    }
                }
                base.insert(key, Value::Array(list));
            }
            _ => {
                let merged = match base.remove(&key) {
                    Some(old) => deep(old, value),
                    None => value,
                };
                base.insert(key, merged);
            }
        }
    }
    Value::Object(base)
}

fn take_list(map: &mut Map<String, Value>, key: &str) -> Vec<Value> {
    map.remove(key).map(as_list).unwrap_or_default()
}

fn as_list(v: Value) -> Vec<Value> {
    match v {
        Value::Array(items) => items,
        Value::Null => Vec::new(),
        other => vec![other],
    }
}

fn deep(base: Value, over: Value) -> Value {
    match (base, over) {
        (Value::Object(mut b), Value::Object(o)) => {
            for (k, v) in o {
                let merged = match b.remove(&k) {
                    Some(old) => deep(old, v),
                    None => v,
                };
                b.insert(k, merged);
            }
            Value::Object(b)
        }
        (_, over) => over,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::merge_policy;

    #[test]
    fn single_values_override_and_lists_follow_their_rules() {
        let base = json!({
            "apiVersion": "v", "kind": "Policy", "metadata": {"name": "pack", "description": "d"},
            "parameters": {"gpuBootSeconds": 900, "coldStartMarginPercent": 20, "slowBootImages": ["a", "b"]},
            "rules": {"exec-probe": {"enabled": true, "severity": "warning"}},
            "exemptions": [{"reason": "pack"}],
            "customRules": [{"name": "x", "message": "pack"}, {"name": "y", "message": "pack"}]
        });
        let over = json!({
            "extends": "gpu-serving", "metadata": {"name": "mine"},
            "parameters": {"gpuBootSeconds": 1200, "slowBootImages": ["c"]},
            "rules": {"exec-probe": {"severity": "error"}},
            "exemptions": [{"reason": "mine"}],
            "customRules": [{"name": "y", "message": "mine"}, {"name": "z", "message": "mine"}]
        });
        let m = merge_policy(base, over);
        assert_eq!(m.get("extends"), None);
        assert_eq!(m["metadata"], json!({"name": "mine"}));
        assert_eq!(
            m["parameters"],
            json!({"gpuBootSeconds": 1200, "coldStartMarginPercent": 20, "slowBootImages": ["c"]})
        );
        assert_eq!(m["rules"]["exec-probe"], json!({"enabled": true, "severity": "error"}));
        assert_eq!(m["exemptions"], json!([{"reason": "pack"}, {"reason": "mine"}]));
        let messages: Vec<_> = m["customRules"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| format!("{}={}", r["name"], r["message"]))
            .collect();
        assert_eq!(messages, ["\"x\"=\"pack\"", "\"y\"=\"mine\"", "\"z\"=\"mine\""]);
    }
}
