//! Whether a container serves a model, by the policy's `slowBootImages`:
//! free functions, not the container's methods, so the workload (which the
//! policy's own checks read) imports nothing of the policy.

use super::knowledge::Knowledge;
use super::workload::ContainerView;

/// Whether the image is a known model server (`slowBootImages`) that
/// actually serves here: an image whose command is a bare `sleep`, with
/// no GPU and no port, is a toolbox started from it.
pub fn serves_model_image(c: &ContainerView<'_>, policy: &dyn Knowledge) -> bool {
    policy.is_slow_boot_image(c.image()) && !(c.only_sleeps() && c.gpu_resource().is_none() && !c.declares_ports())
}

/// Whether the container is a model server: it requests a GPU or runs a
/// known model-server image ([`serves_model_image`]).
pub fn is_model_server(c: &ContainerView<'_>, policy: &dyn Knowledge) -> bool {
    c.gpu_resource().is_some() || serves_model_image(c, policy)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::is_model_server;
    use crate::model::Workload;
    use crate::policy::Policy;

    fn model_server(container: serde_json::Value) -> bool {
        let obj = json!({"kind": "Pod", "spec": {"containers": [container]}});
        let w = Workload::from_object(&obj).expect("reads").expect("a pod");
        let policy = Policy::default();
        w.containers().next().is_some_and(|c| is_model_server(&c, &policy))
    }

    #[test]
    fn a_sleeping_toolbox_from_a_serving_image_is_not_a_model_server() {
        let image = "vllm/vllm-openai:v0.6.3";
        assert!(model_server(json!({"name": "s", "image": image})));
        assert!(!model_server(json!({"name": "s", "image": image, "command": ["sleep", "infinity"]})));
        assert!(!model_server(json!({"name": "s", "image": image, "command": ["sh", "-c", "sleep 3600"]})));
        // A port, a GPU or a real command keep it a server.
        let ports = json!([{"containerPort": 8000}]);
        assert!(model_server(json!({"name": "s", "image": image, "command": ["sleep", "1d"], "ports": ports})));
        let gpu = json!({"limits": {"nvidia.com/gpu": 1}});
        assert!(model_server(json!({"name": "s", "image": "busybox", "command": ["sleep", "1d"], "resources": gpu})));
        assert!(model_server(json!({"name": "s", "image": image, "command": ["sh", "-c", "sleep 5 && vllm serve"]})));
        // Arguments without a command go to the image's entrypoint.
        assert!(model_server(json!({"name": "s", "image": image, "args": ["sleep", "1d"]})));
    }
}
