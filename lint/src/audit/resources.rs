//! What `lifeguard audit` reads: the pod-bearing kinds the linter reads,
//! and the custom resources whose objects carry a pod template
//! (`spec.template.spec.containers`), found by API discovery and the
//! OpenAPI v3 schema each API group publishes.

use std::collections::BTreeSet;

use policies::model::{DeclaredPodKind, POD_KINDS};
use serde_json::Value;

/// One resource to list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// API group (`""` for the core group).
    pub group: String,
    /// Version.
    pub version: String,
    /// Plural name in URLs (`deployments`).
    pub plural: String,
    /// Kind (`Deployment`).
    pub kind: String,
}

/// Services: read in every namespace audited, so `readiness-probe-missing`
/// and `prestop-bridge-missing` see the traffic a pod really gets.
pub fn services() -> Resource {
    Resource::new("", "v1", "services", "Service")
}

/// PodDisruptionBudgets and HorizontalPodAutoscalers: read in every
/// namespace audited, so `pdb-blocks-eviction` sees the budgets that really
/// select a pod and the floor its autoscaler keeps.
pub fn disruption_context() -> [Resource; 2] {
    [
        Resource::new("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget"),
        Resource::new("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler"),
    ]
}

/// The Accept header of aggregated discovery (one request for every group).
pub const AGGREGATED_DISCOVERY: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";

impl Resource {
    /// A resource.
    pub fn new(group: &str, version: &str, plural: &str, kind: &str) -> Resource {
        Resource {
            group: group.to_owned(),
            version: version.to_owned(),
            plural: plural.to_owned(),
            kind: kind.to_owned(),
        }
    }

    /// The built-in pod-bearing kinds, in the engine's order.
    pub fn built_in() -> Vec<Resource> {
        POD_KINDS.iter().map(|k| Resource::new(k.group, k.version, k.resource, k.kind)).collect()
    }

    /// Whether the engine knows where this custom resource keeps its pod
    /// templates (a LeaderWorkerSet, a RayCluster: `CUSTOM_POD_KINDS`), so
    /// it is read whatever its schema says.
    pub fn known_pod_bearing(&self) -> bool {
        policies::model::custom_pod_kind(&self.kind, &self.api_version()).is_some()
    }

    /// Whether the policy's `podTemplates` declares this kind (kind and
    /// group; any version), so it is read whatever its schema says.
    pub fn declared_in(&self, declared: &[DeclaredPodKind]) -> bool {
        declared.iter().any(|d| d.kind == self.kind && d.group == self.group)
    }

    /// `deployments.apps`, `pods`: as kubectl and RBAC name it.
    pub fn name(&self) -> String {
        if self.group.is_empty() { self.plural.clone() } else { format!("{}.{}", self.plural, self.group) }
    }

    /// `apps/v1`, `v1`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() { self.version.clone() } else { format!("{}/{}", self.group, self.version) }
    }

    /// The collection's URL path, in a namespace or across all.
    pub fn url_path(&self, namespace: Option<&str>) -> String {
        let base = if self.group.is_empty() { "/api/v1".to_owned() } else { format!("/apis/{}", self.api_version()) };
        match namespace {
            Some(ns) => format!("{base}/namespaces/{ns}/{}", self.plural),
            None => format!("{base}/{}", self.plural),
        }
    }

    /// A LIST's item with the `apiVersion` and `kind` a LIST leaves out,
    /// first, as `kubectl get -o json` prints them.
    pub fn typed(&self, item: Value) -> Value {
        let Value::Object(fields) = item else { return item };
        let mut typed = serde_json::Map::with_capacity(fields.len() + 2);
        typed.insert("apiVersion".to_owned(), Value::String(self.api_version()));
        typed.insert("kind".to_owned(), Value::String(self.kind.clone()));
        for (key, value) in fields {
            if key != "apiVersion" && key != "kind" {
                typed.insert(key, value);
            }
        }
        Value::Object(typed)
    }

    /// Whether `--kinds` names it: `Deployment`, `deployment`, `deployments`,
    /// `deployments.apps` (case-insensitive).
    pub fn named_by(&self, name: &str) -> bool {
        let name = name.to_ascii_lowercase();
        name == self.kind.to_ascii_lowercase()
            || name == self.plural
            || name == self.name()
            || name == format!("{}.{}", self.kind.to_ascii_lowercase(), self.group)
    }
}

/// The custom resources in an aggregated discovery answer (`GET /apis`)
/// that could carry a pod template: namespaced, listable, in each group's
/// preferred version, other than Kubernetes' own pod-bearing kinds and the
/// groups of Kubernetes itself that hold none. `(group-version path, resources)`.
pub fn candidates(discovery: &Value) -> Vec<Resource> {
    let mut out = Vec::new();
    let groups = discovery.get("items").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    for group in groups {
        let name = group.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
        if KUBERNETES_GROUPS.contains(&name) {
            continue;
        }
        // The first version is the preferred one: one list of each resource.
        let Some(version) = group.get("versions").and_then(Value::as_array).and_then(|v| v.first()) else { continue };
        let version_name = version.get("version").and_then(Value::as_str).unwrap_or_default();
        let resources = version.get("resources").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        for r in resources {
            let text = |p: &str| r.pointer(p).and_then(Value::as_str).unwrap_or_default();
            let listable = r.get("verbs").and_then(Value::as_array).is_some_and(|v| v.iter().any(|v| v == "list"));
            if text("/scope") != "Namespaced" || !listable || text("/resource").is_empty() {
                continue;
            }
            out.push(Resource::new(name, version_name, text("/resource"), text("/responseKind/kind")));
        }
    }
    out
}

/// API groups Kubernetes itself serves (none with a pod template beyond
/// `apps` and `batch`, which are read as built-in kinds); any other group,
/// `*.k8s.io` ones included, may be a custom resource's.
const KUBERNETES_GROUPS: [&str; 20] = [
    "apps",
    "batch",
    "autoscaling",
    "policy",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "certificates.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "networking.k8s.io",
    "node.k8s.io",
    "rbac.authorization.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "resource.k8s.io",
];

/// The kinds of a group version's OpenAPI v3 document whose schema has
/// `spec.template.spec.containers`.
pub fn kinds_with_pod_template(openapi: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let Some(schemas) = openapi.pointer("/components/schemas").and_then(Value::as_object) else { return out };
    for schema in schemas.values() {
        let kinds = schema.get("x-kubernetes-group-version-kind").and_then(Value::as_array);
        let Some(kinds) = kinds else { continue };
        let has = ["spec", "template", "spec", "containers"]
            .iter()
            .try_fold(schema, |s, field| property(openapi, s, field))
            .is_some();
        if has {
            out.extend(kinds.iter().filter_map(|k| k.get("kind").and_then(Value::as_str)).map(str::to_owned));
        }
    }
    out
}

/// `schema.properties[field]`, through `$ref` and `allOf` (how OpenAPI v3
/// documents refer to shared schemas), at most a few references deep.
fn property<'a>(doc: &'a Value, schema: &'a Value, field: &str) -> Option<&'a Value> {
    let schema = resolve(doc, schema, 0)?;
    if let Some(found) = schema.get("properties").and_then(|p| p.get(field)) {
        return resolve(doc, found, 0);
    }
    schema.get("allOf")?.as_array()?.iter().find_map(|part| property(doc, part, field))
}

fn resolve<'a>(doc: &'a Value, schema: &'a Value, depth: u8) -> Option<&'a Value> {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) if depth < 8 => {
            let name = reference.strip_prefix("#/components/schemas/")?;
            let target = doc.pointer("/components/schemas")?.get(name)?;
            resolve(doc, target, depth + 1)
        }
        Some(_) => None,
        None => match schema.get("allOf").and_then(Value::as_array) {
            // `allOf: [{$ref}]` is how a described reference is written.
            Some(parts) if parts.len() == 1 && schema.get("properties").is_none() => resolve(doc, &parts[0], depth + 1),
            _ => Some(schema),
        },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn list_items_get_their_type_first() {
        let r = Resource::new("apps", "v1", "deployments", "Deployment");
        let typed = r.typed(json!({"metadata": {"name": "a"}, "spec": {}}));
        let keys: Vec<&String> = typed.as_object().expect("object").keys().collect();
        assert_eq!(keys, ["apiVersion", "kind", "metadata", "spec"]);
        assert_eq!(typed["apiVersion"], "apps/v1");
        assert_eq!(r.url_path(Some("shop")), "/apis/apps/v1/namespaces/shop/deployments");
        assert_eq!(Resource::new("", "v1", "pods", "Pod").url_path(Some("a")), "/api/v1/namespaces/a/pods");
    }

    #[test]
    fn kinds_are_named_as_kubectl_names_them() {
        let r = Resource::new("argoproj.io", "v1alpha1", "rollouts", "Rollout");
        for name in ["Rollout", "rollout", "rollouts", "rollouts.argoproj.io", "rollout.argoproj.io"] {
            assert!(r.named_by(name), "{name}");
        }
        assert!(!r.named_by("deployments"));
    }

    #[test]
    fn discovery_gives_namespaced_listable_resources_of_other_groups() {
        let discovery = json!({"items": [
            {"metadata": {"name": "apps"}, "versions": [{"version": "v1", "resources": [
                {"resource": "deployments", "responseKind": {"kind": "Deployment"}, "scope": "Namespaced", "verbs": ["list"]}]}]},
            {"metadata": {"name": "argoproj.io"}, "versions": [
                {"version": "v1alpha1", "resources": [
                    {"resource": "rollouts", "responseKind": {"kind": "Rollout"}, "scope": "Namespaced", "verbs": ["get", "list"]},
                    {"resource": "clusterthings", "responseKind": {"kind": "ClusterThing"}, "scope": "Cluster", "verbs": ["list"]},
                    {"resource": "watchonly", "responseKind": {"kind": "W"}, "scope": "Namespaced", "verbs": ["watch"]}]},
                {"version": "v1alpha0", "resources": [
                    {"resource": "rollouts", "responseKind": {"kind": "Rollout"}, "scope": "Namespaced", "verbs": ["list"]}]}]}
        ]});
        assert_eq!(candidates(&discovery), vec![Resource::new("argoproj.io", "v1alpha1", "rollouts", "Rollout")]);
    }

    #[test]
    fn the_engines_custom_pod_kinds_are_known_by_group() {
        assert!(
            Resource::new("leaderworkerset.x-k8s.io", "v1", "leaderworkersets", "LeaderWorkerSet").known_pod_bearing()
        );
        assert!(Resource::new("ray.io", "v1", "rayclusters", "RayCluster").known_pod_bearing());
        assert!(!Resource::new("example.com", "v1", "rayclusters", "RayCluster").known_pod_bearing());
        assert!(!Resource::new("argoproj.io", "v1alpha1", "rollouts", "Rollout").known_pod_bearing());
    }

    #[test]
    fn a_pod_template_is_found_through_references() {
        let doc = json!({"components": {"schemas": {
            "io.argoproj.v1alpha1.Rollout": {
                "x-kubernetes-group-version-kind": [{"group": "argoproj.io", "kind": "Rollout", "version": "v1alpha1"}],
                "properties": {"spec": {"properties": {"template": {"allOf": [{"$ref": "#/components/schemas/PodTemplateSpec"}]}}}}},
            "PodTemplateSpec": {"properties": {"spec": {"$ref": "#/components/schemas/PodSpec"}}},
            "PodSpec": {"properties": {"containers": {"type": "array"}}},
            "io.example.v1.Other": {
                "x-kubernetes-group-version-kind": [{"group": "example.io", "kind": "Other", "version": "v1"}],
                "properties": {"spec": {"properties": {"template": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}},
            "io.example.v1.Loop": {
                "x-kubernetes-group-version-kind": [{"group": "example.io", "kind": "Loop", "version": "v1"}],
                "$ref": "#/components/schemas/io.example.v1.Loop"}
        }}});
        assert_eq!(kinds_with_pod_template(&doc).into_iter().collect::<Vec<_>>(), ["Rollout"]);
    }
}
