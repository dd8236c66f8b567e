//! Deployments as the tests build them: one builder for the shape they all
//! share (`apps/v1`, a name, a selector and pod labels `app: NAME`) and for
//! what the tests vary, plus the named workloads several crates' tests send.

use serde_json::{Map, Value, json};

/// A Deployment being built; [`Deployment::build`] gives the object.
///
/// Every part a test leaves unset is absent from the object, not defaulted:
/// a test's object holds what the test says and nothing else, since the
/// engine judges what is there (a `replicas`, a label) and a cluster test
/// reads back what it stored.
#[derive(Debug, Clone)]
pub struct Deployment {
    name: String,
    namespace: Option<String>,
    labels: Option<Value>,
    annotations: Option<Value>,
    replicas: Option<u64>,
    template_annotations: Option<Value>,
    pod_spec: Value,
}

impl Deployment {
    /// A Deployment `name` whose selector and pod labels are `app: NAME`,
    /// with no containers yet.
    pub fn new(name: &str) -> Deployment {
        Deployment {
            name: name.to_owned(),
            namespace: None,
            labels: None,
            annotations: None,
            replicas: None,
            template_annotations: None,
            pod_spec: json!({"containers": []}),
        }
    }

    /// The pod spec holds `containers` (a JSON array) and nothing else.
    pub fn containers(mut self, containers: Value) -> Deployment {
        self.pod_spec = json!({"containers": containers});
        self
    }

    /// The whole pod spec.
    pub fn pod_spec(mut self, spec: Value) -> Deployment {
        self.pod_spec = spec;
        self
    }

    /// `metadata.namespace`.
    pub fn namespace(mut self, namespace: &str) -> Deployment {
        self.namespace = Some(namespace.to_owned());
        self
    }

    /// `metadata.labels` of its own: `app: NAME`, as its pods'.
    pub fn labelled(self) -> Deployment {
        let labels = json!({"app": self.name});
        self.labels(labels)
    }

    /// `metadata.labels`.
    pub fn labels(mut self, labels: Value) -> Deployment {
        self.labels = Some(labels);
        self
    }

    /// `metadata.annotations`.
    pub fn annotations(mut self, annotations: Value) -> Deployment {
        self.annotations = Some(annotations);
        self
    }

    /// `spec.replicas`.
    pub fn replicas(mut self, replicas: u64) -> Deployment {
        self.replicas = Some(replicas);
        self
    }

    /// The pod template's `metadata.annotations`.
    pub fn template_annotations(mut self, annotations: Value) -> Deployment {
        self.template_annotations = Some(annotations);
        self
    }

    /// The object, its fields in the order `kubectl get -o json` prints them.
    pub fn build(self) -> Value {
        let app = json!({"app": self.name});
        let mut metadata = Map::new();
        metadata.insert("name".to_owned(), json!(self.name));
        let optional = [
            ("namespace", self.namespace.map(Value::from)),
            ("labels", self.labels),
            ("annotations", self.annotations),
        ];
        for (key, value) in optional {
            if let Some(value) = value {
                metadata.insert(key.to_owned(), value);
            }
        }
        let mut template_metadata = Map::new();
        template_metadata.insert("labels".to_owned(), app.clone());
        if let Some(annotations) = self.template_annotations {
            template_metadata.insert("annotations".to_owned(), annotations);
        }
        let mut spec = Map::new();
        if let Some(replicas) = self.replicas {
            spec.insert("replicas".to_owned(), json!(replicas));
        }
        spec.insert("selector".to_owned(), json!({"matchLabels": app}));
        spec.insert("template".to_owned(), json!({"metadata": template_metadata, "spec": self.pod_spec}));
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata, "spec": spec})
    }
}

/// The seed's naive GPU model server: one endpoint for liveness and
/// readiness, no startup probe, a declared cold start of 430 s and a 10 s
/// period (the worked example: the fix sizes the startup window at 48).
/// lifeguard finds `probe-endpoint-reused` and `startup-probe-missing`, both
/// errors in the default pack.
pub fn naive_gpu(name: &str) -> Value {
    Deployment::new(name)
        .labelled()
        .replicas(1)
        .template_annotations(json!({ "lifeguard.dev/cold-start-seconds": "430" }))
        .containers(json!([{
            "name": "vllm",
            "image": "vllm/vllm-openai:v0.6.3",
            "args": ["--model", "google/gemma-2-9b-it", "--port", "8000"],
            "ports": [{ "name": "http", "containerPort": 8000 }],
            "resources": { "limits": { "nvidia.com/gpu": "1" } },
            "livenessProbe": { "httpGet": { "path": "/health", "port": "http" }, "periodSeconds": 10 },
            "readinessProbe": { "httpGet": { "path": "/health", "port": "http" }, "periodSeconds": 10 }
        }]))
        .build()
}

/// [`naive_gpu`]'s pod as a bare Pod: judged like it, and nothing else is
/// created from it (no controller acts on a bare Pod, and no kubelet runs
/// it in a control-plane-only cluster).
pub fn naive_gpu_pod(name: &str) -> Value {
    let deployment = naive_gpu(name);
    let template = &deployment["spec"]["template"];
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": { "name": name, "labels": template["metadata"]["labels"], "annotations": template["metadata"]["annotations"] },
        "spec": template["spec"],
    })
}

/// A typical web Deployment lifeguard has nothing to say about: liveness on
/// a local endpoint, readiness on another, a native preStop sleep and a
/// grace period that covers it.
pub fn typical(name: &str) -> Value {
    Deployment::new(name)
        .labelled()
        .replicas(2)
        .pod_spec(json!({
            "terminationGracePeriodSeconds": 40,
            "containers": [{
                "name": "web",
                "image": "registry.example/web:1.4.2",
                "ports": [{ "name": "http", "containerPort": 8080 }],
                "resources": { "requests": { "cpu": "100m", "memory": "128Mi" } },
                "livenessProbe": { "httpGet": { "path": "/livez", "port": "http" }, "periodSeconds": 10, "failureThreshold": 3 },
                "readinessProbe": { "httpGet": { "path": "/readyz", "port": "http" }, "periodSeconds": 5 },
                "lifecycle": { "preStop": { "sleep": { "seconds": 5 } } }
            }]
        }))
        .build()
}

/// A container whose liveness and readiness share `/actuator/health`
/// (probe-endpoint-reused and liveness-checks-dependency, both errors).
pub fn shared_endpoint_container(name: &str) -> Value {
    json!({
        "name": name, "image": "registry.example/orders:1.4",
        "ports": [{"containerPort": 8080, "name": "http"}],
        "livenessProbe": {"httpGet": {"path": "/actuator/health", "port": 8080}, "periodSeconds": 10},
        "readinessProbe": {"httpGet": {"path": "/actuator/health", "port": 8080}, "periodSeconds": 5}
    })
}

/// A container with separate, sane probes (no finding under `default`).
pub fn clean_container(name: &str) -> Value {
    json!({
        "name": name, "image": "registry.example/web:2.0",
        "ports": [{"containerPort": 8080, "name": "http"}],
        "livenessProbe": {"httpGet": {"path": "/livez", "port": "http"}, "periodSeconds": 10, "failureThreshold": 3, "timeoutSeconds": 2},
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": "http"}, "periodSeconds": 5}
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_a_test_sets_is_in_the_object() {
        let bare = Deployment::new("web").build();
        assert_eq!(
            bare,
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                "spec": {"selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}}}})
        );
        let full = Deployment::new("web")
            .namespace("shop")
            .labelled()
            .annotations(json!({"a": "1"}))
            .replicas(0)
            .template_annotations(json!({"b": "2"}))
            .containers(json!([{"name": "c"}]))
            .build();
        assert_eq!(
            full["metadata"],
            json!({"name": "web", "namespace": "shop", "labels": {"app": "web"}, "annotations": {"a": "1"}})
        );
        assert_eq!(full["spec"]["replicas"], 0);
        assert_eq!(full["spec"]["template"]["metadata"]["annotations"], json!({"b": "2"}));
        assert_eq!(full["spec"]["template"]["spec"]["containers"][0]["name"], "c");
    }
}
