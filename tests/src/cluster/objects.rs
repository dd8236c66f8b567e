//! The objects the cluster tests send through the API server.

use serde_json::{Value, json};

/// The seed's naive GPU model server: one endpoint for liveness and
/// readiness, no startup probe, a declared cold start of 430 s and a 10 s
/// period (the worked example: the fix sizes the startup window at 48).
/// lifeguard finds `probe-endpoint-reused` and `startup-probe-missing`, both
/// errors in the default pack.
pub fn naive_gpu_deployment(name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": { "name": name, "labels": { "app": name } },
        "spec": {
            "replicas": 1,
            "selector": { "matchLabels": { "app": name } },
            "template": {
                "metadata": {
                    "labels": { "app": name },
                    "annotations": { "lifeguard.dev/cold-start-seconds": "430" }
                },
                "spec": {
                    "containers": [{
                        "name": "vllm",
                        "image": "vllm/vllm-openai:v0.6.3",
                        "args": ["--model", "google/gemma-2-9b-it", "--port", "8000"],
                        "ports": [{ "name": "http", "containerPort": 8000 }],
                        "resources": { "limits": { "nvidia.com/gpu": "1" } },
                        "livenessProbe": { "httpGet": { "path": "/health", "port": "http" }, "periodSeconds": 10 },
                        "readinessProbe": { "httpGet": { "path": "/health", "port": "http" }, "periodSeconds": 10 }
                    }]
                }
            }
        }
    })
}

/// [`naive_gpu_deployment`]'s pod as a bare Pod: judged like it, and
/// nothing else is created from it (no controller acts on a bare Pod, and
/// no kubelet runs it here).
pub fn naive_gpu_pod(name: &str) -> Value {
    let deployment = naive_gpu_deployment(name);
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
pub fn typical_deployment(name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": { "name": name, "labels": { "app": name } },
        "spec": {
            "replicas": 2,
            "selector": { "matchLabels": { "app": name } },
            "template": {
                "metadata": { "labels": { "app": name } },
                "spec": {
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
                }
            }
        }
    })
}
