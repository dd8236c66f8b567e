//! Reading `request.object` and `request.oldObject` into the JSON the engine
//! judges and patches apply to, without building what nothing reads.
//!
//! Two parts of what the API server sends are large and never read:
//! `metadata.managedFields` (one entry per field manager, often the largest
//! part of an object) and the `kubectl.kubernetes.io/last-applied-configuration`
//! annotation (the whole object again, as an escaped string). Building them
//! as `serde_json::Value` was about a third of a review's CPU. They are
//! scanned (the JSON is still checked in full) but not built.
//!
//! The annotation keeps its key, with an empty value: patches address
//! annotations by key, and an annotations map that lost its only key would
//! make the mutating endpoint believe it has to create the map, replacing
//! the real one. No patch ever addresses `managedFields`, which the API
//! server manages itself.

use std::fmt;

use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};

/// The annotation that repeats the whole object.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Reads an object as the engine judges it (see the module doc for what is
/// left out), as a `DeserializeSeed` so it runs inside the body's one pass.
#[derive(Debug, Clone, Copy)]
pub struct Seed;

impl<'de> DeserializeSeed<'de> for Seed {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        Level::Object.deserialize(deserializer)
    }
}

/// Where in the object a map is, for what to leave out of it.
#[derive(Clone, Copy)]
enum Level {
    /// The object itself.
    Object,
    /// `metadata`.
    Metadata,
    /// `metadata.annotations`.
    Annotations,
}

impl Level {
    /// What a key of this map holds.
    fn child(self, key: &str) -> Child {
        match (self, key) {
            (Level::Object, "metadata") => Child::Map(Level::Metadata),
            (Level::Metadata, "managedFields") => Child::Dropped,
            (Level::Metadata, "annotations") => Child::Map(Level::Annotations),
            (Level::Annotations, LAST_APPLIED) => Child::Emptied,
            _ => Child::Kept,
        }
    }
}

enum Child {
    Kept,
    Map(Level),
    Dropped,
    Emptied,
}

impl<'de> DeserializeSeed<'de> for Level {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Level {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            match self.child(&key) {
                Child::Kept => {
                    map.insert(key, access.next_value()?);
                }
                Child::Map(level) => {
                    map.insert(key, access.next_value_seed(level)?);
                }
                Child::Dropped => {
                    access.next_value::<IgnoredAny>()?;
                }
                Child::Emptied => {
                    access.next_value::<IgnoredAny>()?;
                    map.insert(key, Value::String(String::new()));
                }
            }
        }
        Ok(Value::Object(map))
    }

    // Anything but a map at these places is kept as it is: judging it (and
    // saying why it is wrong) is the engine's business, not the reader's.
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, access: A) -> Result<Value, A::Error> {
        serde::de::Visitor::visit_seq(ValueVisitor, access)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}

/// A plain `Value` for the elements of a sequence found where a map was expected.
struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON array")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = access.next_element::<Value>()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read_value(v: &Value) -> Value {
        let text = v.to_string();
        let mut de = serde_json::Deserializer::from_str(&text);
        Seed.deserialize(&mut de).expect("read")
    }

    #[test]
    fn leaves_out_managed_fields_and_the_last_applied_value() {
        let object = json!({
            "kind": "Deployment",
            "metadata": {
                "name": "orders",
                "annotations": {LAST_APPLIED: "{\"kind\":\"Deployment\"}", "lifeguard.dev/drain-seconds": "20"},
                "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]
            },
            "spec": {"template": {"metadata": {"annotations": {LAST_APPLIED: "kept: not the object's own"}}}}
        });
        let read = read_value(&object);
        let mut expected = object.clone();
        expected["metadata"].as_object_mut().map(|m| m.remove("managedFields"));
        expected["metadata"]["annotations"][LAST_APPLIED] = json!("");
        assert_eq!(read, expected);
        let keys: Vec<_> = read["metadata"]["annotations"].as_object().map(|m| m.keys().collect()).unwrap_or_default();
        assert_eq!(keys, [LAST_APPLIED, "lifeguard.dev/drain-seconds"], "key order is kept");
    }

    #[test]
    fn keeps_everything_else_as_sent() {
        for object in [
            json!({"kind": "Pod", "spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80}]}]}, "x": [1, -2, 2.5, null, true]}),
            json!({"kind": "Pod", "metadata": "not a map"}),
            json!({"kind": "Pod", "metadata": {"annotations": ["not", "a", "map"], "managedFields": null}}),
            json!([1, 2]),
            json!("text"),
        ] {
            let mut expected = object.clone();
            if let Some(m) = expected.get_mut("metadata").and_then(Value::as_object_mut) {
                m.remove("managedFields");
            }
            assert_eq!(read_value(&object), expected, "{object}");
        }
    }

    #[test]
    fn still_refuses_broken_json() {
        let mut de = serde_json::Deserializer::from_str("{\"metadata\": {\"managedFields\": [}");
        assert!(Seed.deserialize(&mut de).is_err());
    }
}
