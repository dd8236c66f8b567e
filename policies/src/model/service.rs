//! Services in the same input, read only to know which pods get traffic.

use std::collections::BTreeMap;

use serde_json::Value;

/// A Service's namespace, name and selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceView {
    /// `metadata.namespace`, if set.
    pub namespace: Option<String>,
    /// `metadata.name`, if set.
    pub name: Option<String>,
    /// `spec.selector` (empty for selector-less Services).
    pub selector: BTreeMap<String, String>,
}

impl ServiceView {
    /// Reads a Service object; `None` for any other kind.
    pub fn from_object(object: &Value) -> Option<ServiceView> {
        if object.get("kind").and_then(Value::as_str) != Some("Service") {
            return None;
        }
        let meta = object.get("metadata");
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
        let selector = object
            .pointer("/spec/selector")
            .and_then(Value::as_object)
            .map(|m| m.iter().filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned()))).collect())
            .unwrap_or_default();
        Some(ServiceView {
            namespace: text(meta.and_then(|m| m.get("namespace"))),
            name: text(meta.and_then(|m| m.get("name"))),
            selector,
        })
    }

    /// Whether this Service sends traffic to pods with these labels in this
    /// namespace. An unset namespace matches any: manifests applied together
    /// with `-n` land in one namespace. A Service without selector selects nothing.
    pub fn selects(&self, namespace: Option<&str>, labels: &BTreeMap<String, String>) -> bool {
        let same_ns = match (self.namespace.as_deref(), namespace) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        same_ns && !self.selector.is_empty() && self.selector.iter().all(|(k, v)| labels.get(k) == Some(v))
    }

    /// `Service/name` for messages.
    pub fn display_name(&self) -> String {
        format!("Service/{}", self.name.as_deref().unwrap_or("<unnamed>"))
    }
}
