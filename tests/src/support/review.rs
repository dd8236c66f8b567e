//! AdmissionReview bodies as the API server sends them, built from kube's
//! `admission.k8s.io/v1` types.
//!
//! The envelope is kube's `AdmissionReview`; the objects go in as the test
//! wrote them. A `DynamicObject` would read their metadata into an
//! `ObjectMeta` and write it back, dropping what it does not know and
//! reordering the rest, and several tests send exactly the malformed or
//! unusual objects that would lose.

use k8s_openapi::api::authentication::v1::UserInfo;
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use kube::core::admission::{AdmissionRequest, AdmissionReview, Operation};
use kube::core::{DynamicObject, GroupVersionKind, GroupVersionResource, TypeMeta};
use serde_json::{Value, json};

/// A review being built; [`Review::body`] gives the JSON the webhook reads.
pub struct Review {
    request: AdmissionRequest<DynamicObject>,
    object: Value,
    old: Value,
}

impl Review {
    /// A review of `operation` (`CREATE`, `UPDATE`, `DELETE`, `CONNECT`) on
    /// `object` (the new object) and `old` (the stored one), by the cluster
    /// admin. Kind, resource, name and namespace are the object's (its
    /// namespace `default` when it has none).
    pub fn new(uid: &str, operation: &str, object: Option<&Value>, old: Option<&Value>) -> Review {
        let some = object.or(old).cloned().unwrap_or(Value::Null);
        let kind = some["kind"].as_str().unwrap_or("Pod");
        let (gvk, gvr) = kind_and_resource(kind);
        let operation: Operation =
            serde_json::from_value(json!(operation)).unwrap_or_else(|e| panic!("operation {operation}: {e}"));
        let options = if operation == Operation::Update { "UpdateOptions" } else { "CreateOptions" };
        let request = AdmissionRequest {
            types: TypeMeta::default(),
            uid: uid.to_owned(),
            kind: gvk.clone(),
            resource: gvr.clone(),
            sub_resource: None,
            request_kind: Some(gvk),
            request_resource: Some(gvr),
            request_sub_resource: None,
            name: some.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default().to_owned(),
            namespace: Some(
                some.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or("default").to_owned(),
            ),
            operation,
            user_info: UserInfo {
                username: Some("kubernetes-admin".to_owned()),
                groups: Some(vec!["system:masters".to_owned(), "system:authenticated".to_owned()]),
                ..UserInfo::default()
            },
            object: None,
            old_object: None,
            dry_run: false,
            options: Some(RawExtension(json!({"apiVersion": "meta.k8s.io/v1", "kind": options}))),
        };
        Review { request, object: object.cloned().unwrap_or(Value::Null), old: old.cloned().unwrap_or(Value::Null) }
    }

    /// Sent by `user` instead of the cluster admin.
    pub fn user(mut self, user: UserInfo) -> Review {
        self.request.user_info = user;
        self
    }

    /// The write's field manager (`kubectl apply --field-manager`), in its options.
    pub fn field_manager(mut self, manager: &str) -> Review {
        if let Some(RawExtension(options)) = &mut self.request.options {
            options["fieldManager"] = json!(manager);
        }
        self
    }

    /// The body.
    pub fn body(self) -> Value {
        let review = AdmissionReview {
            types: TypeMeta { api_version: "admission.k8s.io/v1".to_owned(), kind: "AdmissionReview".to_owned() },
            request: Some(self.request),
            response: None,
        };
        let mut body = serde_json::to_value(review).expect("an AdmissionReview serializes");
        let request = &mut body["request"];
        request["object"] = self.object;
        request["oldObject"] = self.old;
        if let Some(request) = request.as_object_mut() {
            // The API server leaves empty subresources out; kube writes null.
            request.retain(|key, value| !(key.ends_with("ubResource") && value.is_null()));
        }
        for resource in ["resource", "requestResource"] {
            // kube's GroupVersionResource carries a field of its own that the
            // API server never sends.
            if let Some(resource) = body["request"][resource].as_object_mut() {
                resource.remove("api_version");
            }
        }
        body
    }
}

/// An AdmissionReview as the API server sends it, by the cluster admin
/// (see [`Review::new`]).
pub fn review(uid: &str, operation: &str, object: Option<&Value>, old: Option<&Value>) -> Value {
    Review::new(uid, operation, object, old).body()
}

/// The API server's `request.kind` and `request.resource` for a kind: the
/// engine's for pod-bearing kinds, else those the tests send.
pub fn kind_and_resource(kind: &str) -> (GroupVersionKind, GroupVersionResource) {
    let (group, version, resource) = match (policies::model::pod_kind(kind), kind) {
        (Some(k), _) => (k.group, k.version, k.resource),
        (None, "Rollout") => ("argoproj.io", "v1alpha1", "rollouts"),
        (None, "Service") => ("", "v1", "services"),
        (None, "ConfigMap") => ("", "v1", "configmaps"),
        (None, other) => ("example.com", "v1", other),
    };
    (GroupVersionKind::gvk(group, version, kind), GroupVersionResource::gvr(group, version, resource))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_review_is_what_the_api_server_sends() {
        let object = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"}, "x": [1]});
        let body = review("u1", "UPDATE", Some(&object), Some(&object));
        assert_eq!(body["apiVersion"], "admission.k8s.io/v1");
        assert_eq!(body["kind"], "AdmissionReview");
        let request = &body["request"];
        assert_eq!(request["uid"], "u1");
        assert_eq!(request["operation"], "UPDATE");
        assert_eq!(request["kind"], json!({"group": "apps", "version": "v1", "kind": "Deployment"}));
        assert_eq!(request["resource"], json!({"group": "apps", "version": "v1", "resource": "deployments"}));
        assert_eq!(request["requestResource"], request["resource"]);
        assert_eq!((&request["name"], &request["namespace"]), (&json!("web"), &json!("shop")));
        assert_eq!(request["object"], object, "the object as the test wrote it");
        assert_eq!(request["oldObject"], object);
        assert_eq!(request["options"]["kind"], "UpdateOptions");
        assert!(request.get("subResource").is_none());
        assert_eq!(request["userInfo"]["username"], "kubernetes-admin");
    }

    #[test]
    fn a_delete_has_only_the_old_object_and_a_user_and_manager_can_be_set() {
        let pod = json!({"kind": "Pod", "metadata": {"name": "p"}});
        let user = UserInfo { username: Some("ci".to_owned()), ..UserInfo::default() };
        let body = Review::new("d", "DELETE", None, Some(&pod)).user(user).field_manager("ci").body();
        assert_eq!(body["request"]["object"], Value::Null);
        assert_eq!(body["request"]["namespace"], "default");
        assert_eq!(body["request"]["userInfo"], json!({"username": "ci"}));
        assert_eq!(body["request"]["options"]["fieldManager"], "ci");
    }
}
