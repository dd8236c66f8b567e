//! Generated pod specs for the fix invariants: random containers with
//! probes of every handler kind, named and numeric ports, GPU resources,
//! model-server images, cold start / drain / shutdown annotations, preStop
//! exec sleeps, native sleeps, drains and httpGet hooks, postStart hooks,
//! grace periods and a sidecar.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// A Deployment `prod/web` whose pod template has these containers, pod
/// spec fields and annotations.
pub fn deployment(containers: Value, pod: Value, annotations: Value) -> Value {
    let mut spec = json!({"containers": containers});
    if let (Some(spec), Some(pod)) = (spec.as_object_mut(), pod.as_object()) {
        spec.extend(pod.clone());
    }
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "prod"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}, "annotations": annotations},
                "spec": spec
            }
        }
    })
}

fn probe_strategy(kind: &'static str) -> BoxedStrategy<Value> {
    let handler = prop_oneof![
        prop_oneof![Just(json!(8080)), Just(json!("http")), Just(json!("8080"))]
            .prop_map(|port| json!({"httpGet": {"path": "/health", "port": port}})),
        prop_oneof![Just(json!(8080)), Just(json!("http"))].prop_map(|port| json!({"tcpSocket": {"port": port}})),
        Just(json!({"grpc": {"port": 9000}})),
        Just(json!({"exec": {"command": ["/bin/check"]}})),
        Just(json!({"exec": {"command": ["grpc_health_probe", "-addr=:9000"]}})),
    ];
    (
        handler,
        proptest::option::of(0i64..700),
        // Small periods and thresholds often, so aggressive probes are common.
        proptest::option::of(prop_oneof![1i64..5, 1i64..130]),
        proptest::option::of(1i64..40),
        proptest::option::of(prop_oneof![1i64..4, 1i64..100]),
        proptest::option::of(1i64..4),
    )
        .prop_map(move |(handler, delay, period, timeout, failure, success)| {
            let mut p = handler.as_object().cloned().unwrap_or_default();
            let mut put = |k: &str, v: Option<i64>| {
                if let Some(v) = v {
                    p.insert(k.to_owned(), json!(v));
                }
            };
            put("initialDelaySeconds", delay);
            put("periodSeconds", period);
            put("timeoutSeconds", timeout);
            put("failureThreshold", failure);
            // The API server requires 1 on liveness and startup probes.
            put("successThreshold", success.map(|s| if kind == "readinessProbe" { s } else { 1 }));
            Value::Object(p)
        })
        .boxed()
}

fn prestop_strategy() -> BoxedStrategy<Value> {
    prop_oneof![
        (0i64..120).prop_map(|s| json!({"exec": {"command": ["sleep", s.to_string()]}})),
        (0i64..120).prop_map(|s| json!({"exec": {"command": ["sh", "-c", format!("sleep {s}")]}})),
        (1i64..120).prop_map(|s| json!({"sleep": {"seconds": s}})),
        (0i64..30).prop_map(|s| json!({"exec": {"command": ["/bin/sh", "-c", format!("sleep {s} && /app/drain")]}})),
        Just(json!({"httpGet": {"path": "/drain", "port": 8080}})),
        Just(json!({"exec": {"command": ["sh", "-c", "sleep infinity"]}})),
    ]
    .boxed()
}

fn container_strategy() -> BoxedStrategy<Value> {
    let image = prop_oneof![
        Just("nginx:1.27"),
        Just("example/app:1"),
        Just("vllm/vllm-openai:v0.6.3"),
        Just("nvcr.io/nvidia/tritonserver:24.05-py3"),
        Just("ghcr.io/huggingface/text-generation-inference:2.0"),
    ];
    let env = proptest::collection::vec(
        (prop_oneof![Just("APP_DRAIN_SECONDS"), Just("APP_SHUTDOWN_TIMEOUT_SECONDS")], 0i64..60),
        0..3,
    );
    (
        image,
        any::<bool>(),
        proptest::option::of(prop_oneof![Just(json!(1)), Just(json!("1")), Just(json!(0))]),
        env,
        proptest::option::of(probe_strategy("livenessProbe")),
        proptest::option::of(probe_strategy("readinessProbe")),
        proptest::option::of(probe_strategy("startupProbe")),
        proptest::option::of(prestop_strategy()),
        any::<bool>(),
    )
        .prop_map(|(image, ports, gpu, env, live, ready, start, prestop, post_start)| {
            let mut c = Map::new();
            c.insert("image".into(), json!(image));
            if ports {
                c.insert(
                    "ports".into(),
                    json!([{"name": "http", "containerPort": 8080}, {"name": "grpc", "containerPort": 9000}]),
                );
            }
            if let Some(n) = gpu {
                c.insert("resources".into(), json!({"limits": {"nvidia.com/gpu": n}}));
            }
            if !env.is_empty() {
                let env: Vec<Value> =
                    env.into_iter().map(|(k, v)| json!({"name": k, "value": v.to_string()})).collect();
                c.insert("env".into(), Value::Array(env));
            }
            for (k, v) in [("livenessProbe", live), ("readinessProbe", ready), ("startupProbe", start)] {
                if let Some(v) = v {
                    c.insert(k.into(), v);
                }
            }
            // A postStart hook makes a preStop fix add below an existing `lifecycle`.
            let mut lifecycle = Map::new();
            if post_start {
                lifecycle.insert("postStart".into(), json!({"exec": {"command": ["/bin/warm"]}}));
            }
            if let Some(p) = prestop {
                lifecycle.insert("preStop".into(), p);
            }
            if !lifecycle.is_empty() {
                c.insert("lifecycle".into(), Value::Object(lifecycle));
            }
            Value::Object(c)
        })
        .boxed()
}

/// A Deployment with 1-3 generated containers and generated pod settings.
pub fn object_strategy() -> BoxedStrategy<Value> {
    let annotation = |key: &'static str| {
        proptest::option::of(prop_oneof![
            (0i64..900).prop_map(|s| s.to_string()),
            Just("7m10s".to_owned()),
            Just("slow".to_owned()),
        ])
        .prop_map(move |v| v.map(|v| (key, v)))
    };
    (
        proptest::collection::vec(container_strategy(), 1..4),
        proptest::option::of(container_strategy()),
        proptest::option::of(0i64..300),
        annotation("lifeguard.dev/cold-start-seconds"),
        annotation("lifeguard.dev/drain-seconds"),
        annotation("lifeguard.dev/shutdown-budget-seconds"),
    )
        .prop_map(|(containers, sidecar, grace, cold, drain, shutdown)| {
            let named: Vec<Value> = containers
                .into_iter()
                .enumerate()
                .map(|(i, mut c)| {
                    c["name"] = json!(format!("c{i}"));
                    c
                })
                .collect();
            let mut pod = Map::new();
            if let Some(g) = grace {
                pod.insert("terminationGracePeriodSeconds".into(), json!(g));
            }
            if let Some(mut s) = sidecar {
                s["name"] = json!("proxy");
                s["restartPolicy"] = json!("Always");
                pod.insert("initContainers".into(), json!([s]));
            }
            let annotations: Map<String, Value> =
                [cold, drain, shutdown].into_iter().flatten().map(|(k, v)| (k.to_owned(), json!(v))).collect();
            deployment(Value::Array(named), Value::Object(pod), Value::Object(annotations))
        })
        .boxed()
}
