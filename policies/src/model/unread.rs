//! Pod templates lifeguard does not read: `containers` lists in an object
//! no table or policy declaration gives a pod template, found so that the
//! run says where they are and how to declare them, never passing them in
//! silence.

use serde_json::Value;

use super::pod_kinds::group_of;
use super::pointer::join;

/// How deep the search for `containers` goes: deeper than any pod
/// template of the custom resources lifeguard knows (JobSet's is at 6).
const MAX_DEPTH: usize = 12;

/// Pod templates of one object that lifeguard does not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadTemplates {
    /// The pointer of the first `containers` list, for the warning's place.
    pub first: String,
    /// Each template's pointer as a declaration takes it (`*` for a list
    /// item), in the object's order, once each.
    pub templates: Vec<String>,
}

impl UnreadTemplates {
    /// The warning: where the containers are, and the policy entry that
    /// has them checked.
    pub fn message(&self, object: &Value) -> String {
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or_default();
        let api_version = object.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
        let label = super::workload::object_label_of(object);
        format!(
            "{label} holds containers at {}, in a pod template lifeguard does not read, so they are not checked: declare it in the policy: `podTemplates: [{{kind: {kind}, group: {}, templates: [{}]}}]`",
            self.first,
            quoted(group_of(api_version)),
            self.templates.join(", "),
        )
    }
}

/// A group as a YAML flow scalar (the core group is `""`).
fn quoted(group: &str) -> String {
    if group.is_empty() { "\"\"".to_owned() } else { group.to_owned() }
}

/// The pod templates of `object` that hold a `containers` list of
/// objects; `None` when it has none. Asked of an object lifeguard read no
/// pod template of.
pub fn unread_templates(object: &Value) -> Option<UnreadTemplates> {
    let mut specs = Vec::new();
    find(object, "", "", 0, &mut specs);
    let first = specs.first()?.0.clone();
    let mut templates: Vec<String> = Vec::new();
    for (_, pattern) in specs {
        // A pod spec under `spec` sits in a template beside its metadata;
        // one holding `containers` with its other fields is inline.
        let template = pattern.strip_suffix("/spec").filter(|t| !t.is_empty()).map_or(pattern.clone(), str::to_owned);
        if !templates.contains(&template) {
            templates.push(template);
        }
    }
    Some(UnreadTemplates { first: join(&first, &["containers"]), templates })
}

/// Collects `(pointer, pattern)` of each mapping with a `containers` list
/// of objects at or under `value` (at `at`): the pattern has `*` for list
/// indices. The search stops at a pod spec: a template holds no other.
fn find(value: &Value, at: &str, pattern: &str, depth: usize, out: &mut Vec<(String, String)>) {
    if depth > MAX_DEPTH {
        return;
    }
    match value {
        Value::Object(map) => {
            let holds = map
                .get("containers")
                .and_then(Value::as_array)
                .is_some_and(|items| !items.is_empty() && items.iter().all(Value::is_object));
            if holds && depth > 0 {
                out.push((at.to_owned(), pattern.to_owned()));
                return;
            }
            for (key, v) in map {
                if v.is_object() || v.is_array() {
                    find(v, &join(at, &[key]), &join(pattern, &[key]), depth + 1, out);
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                find(v, &join(at, &[&i.to_string()]), &join(pattern, &["*"]), depth + 1, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_template_under_spec_and_one_inline_are_named_as_a_declaration_takes_them() {
        let sandbox = json!({
            "apiVersion": "extensions.agents.x-k8s.io/v1beta1", "kind": "SandboxTemplate", "metadata": {"name": "py"},
            "spec": {"podTemplate": {"metadata": {}, "spec": {"containers": [{"name": "runtime"}]}}}
        });
        let unread = unread_templates(&sandbox).expect("found");
        assert_eq!(unread.first, "/spec/podTemplate/spec/containers");
        assert_eq!(unread.templates, ["/spec/podTemplate"]);
        assert_eq!(
            unread.message(&sandbox),
            "SandboxTemplate/py holds containers at /spec/podTemplate/spec/containers, in a pod template lifeguard does not read, so they are not checked: declare it in the policy: `podTemplates: [{kind: SandboxTemplate, group: extensions.agents.x-k8s.io, templates: [/spec/podTemplate]}]`"
        );
        let groups = json!({"kind": "Fleet", "apiVersion": "v1", "spec": {"groups": [
            {"pod": {"containers": [{"name": "a"}]}},
            {"pod": {"containers": [{"name": "b"}]}},
        ]}});
        let unread = unread_templates(&groups).expect("found");
        assert_eq!(unread.first, "/spec/groups/0/pod/containers");
        assert_eq!(unread.templates, ["/spec/groups/*/pod"]);
        assert!(unread.message(&groups).contains("group: \"\""));
    }

    #[test]
    fn a_schema_or_a_list_of_names_is_no_pod_template() {
        // A CRD's schema has `containers` as a mapping; a list of strings is no containers.
        let crd = json!({"kind": "CustomResourceDefinition", "spec": {"versions": [{"schema": {"openAPIV3Schema":
            {"properties": {"containers": {"type": "array", "items": {"type": "object"}}}}}}]}});
        assert_eq!(unread_templates(&crd), None);
        let names = json!({"kind": "Policy", "spec": {"containers": ["a", "b"], "other": {"containers": []}}});
        assert_eq!(unread_templates(&names), None);
    }
}
