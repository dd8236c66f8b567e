//! `startup-probe-missing`: a slow boot guarded only by liveness.

use k8s_openapi::api::core::v1::Probe;
use serde_json::{Map, Value};

use super::startup_budget_too_short::{ceil_div, cold_start_required};
use crate::finding::{Finding, Fix, Severity, add_op};
use crate::model::{ANNOTATION_COLD_START, ContainerView, ProbeKind, ProbeTiming, Workload, handler_count, handler_of};
use crate::rules::{Ctx, FixAvailability, Rule, with_fix};

pub(crate) static RULE: Rule = Rule {
    name: "startup-probe-missing",
    severity: Severity::Warning,
    summary: "a slow-booting container has a liveness probe but no startup probe",
    doc: DOC,
    fix: FixAvailability::Fix(
        "adds a startupProbe with the liveness handler and a budget covering the boot, and sets liveness initialDelaySeconds to 0",
    ),
    check,
};

const DOC: &str = r#"## What it does
Flags a container that has a liveness probe, no startup probe, and evidence of
a slow boot:
- liveness `initialDelaySeconds` at or above `slowBootInitialDelaySeconds` (30);
- a GPU request or limit (`nvidia.com/gpu`, `amd.com/gpu`, any `*/gpu`);
- a known slow-boot image (`slowBootImages`: Triton, vLLM, TGI, TorchServe,
  TensorFlow Serving, KServe, ...);
- a declared cold start (pod template annotation
  `lifeguard.dev/cold-start-seconds`) that is at least
  `slowBootInitialDelaySeconds`, or that the liveness probe's own
  `initialDelaySeconds + failureThreshold x periodSeconds` does not cover
  with the margin (`coldStartMarginPercent`).

The finding is an error for GPU containers, a warning otherwise. The message
names the evidence.

## Why is this bad?
Liveness has one budget for two jobs. Either `initialDelaySeconds` is long
enough for the slowest boot, and then a process that wedges right after a
restart goes unnoticed for that long; or it is short, and the kubelet kills a
healthy container that is still loading its model, every time, so the pod
never becomes ready. A startup probe holds liveness back only until the boot
has finished, however long it took.

With the policy's `requireStartupProbeForGpu` (on in the `gpu-serving`
pack), a GPU container of a long-running workload without any startup probe
is an error even without a liveness probe (no automatic fix: there is no
handler to copy).

## Not a finding
- A container without a liveness probe (nothing kills a slow boot), unless
  `requireStartupProbeForGpu` is on and it requests a GPU.
- A container that already has a startup probe (`startup-budget-too-short`
  checks its budget).
- A fast boot: a small `initialDelaySeconds`, an ordinary image, no GPU.
- A declared cold start on a sidecar init container: it is the application's.

## Example
```yaml
image: vllm/vllm-openai:v0.6.0
resources: {limits: {nvidia.com/gpu: 1}}
livenessProbe:
  httpGet: {path: /health, port: 8000}
  initialDelaySeconds: 240
```

## Use instead
```yaml
startupProbe:
  httpGet: {path: /health, port: 8000}
  periodSeconds: 10
  failureThreshold: 60        # 600 s to boot
livenessProbe:
  httpGet: {path: /health, port: 8000}
  initialDelaySeconds: 0
```

## Fix
Adds a `startupProbe` with the liveness handler copied verbatim,
`periodSeconds` = `startupPeriodSeconds` (10), the liveness `timeoutSeconds`
if set, and `failureThreshold = ceil(budget / periodSeconds)`. The budget is
the largest of:
- the liveness boot budget, `initialDelaySeconds + failureThreshold x periodSeconds`
  (the fix never shortens what was already tolerated);
- the declared cold start plus margin (430 s at 10% gives 473 s: failureThreshold 48);
- `gpuBootSeconds` (600) for a GPU container or a known slow-boot image. A
  declared cold start above it raises the budget; to size GPU boots from
  measurements instead, lower `gpuBootSeconds` in the policy.

Liveness `initialDelaySeconds` is then set to 0, since the startup probe now
guards the boot. No fix when the liveness probe has no single valid handler.
"#;

fn check(w: &Workload, ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let settings = &ctx.policy.settings;
    // An unreadable annotation is reported by startup-budget-too-short.
    let cold = match w.annotation_seconds(ANNOTATION_COLD_START) {
        Some(Ok(s)) => Some(s),
        _ => None,
    };
    w.for_each_container(|c| {
        let container = c.container;
        if ProbeKind::Startup.of(container).is_some() {
            return;
        }
        let Some(live) = ProbeKind::Liveness.of(container) else {
            if settings.require_startup_probe_for_gpu && w.long_running {
                out.extend(gpu_without_startup(c));
            }
            return;
        };
        let t = ProbeTiming::of(live);
        let gpu = c.gpu_resource();
        let slow_image = ctx.policy.is_slow_boot_image(c.image());
        let cold = cold
            .filter(|_| !c.sidecar)
            .map(|s| (s, cold_start_required(s, settings.cold_start_margin_percent)));

        let mut evidence = Vec::new();
        if t.initial_delay >= settings.slow_boot_initial_delay_seconds {
            evidence.push(format!(
                "initialDelaySeconds {} >= {}",
                t.initial_delay, settings.slow_boot_initial_delay_seconds
            ));
        }
        if let Some(gpu) = gpu {
            evidence.push(format!("requests {gpu}"));
        }
        if slow_image {
            evidence.push(format!(
                "image {} looks like a model server",
                image_name(c.image())
            ));
        }
        if let Some((s, required)) = cold {
            if s >= settings.slow_boot_initial_delay_seconds || required > t.boot_budget() {
                evidence.push(format!("declared cold start {s}s"));
            }
        }
        if evidence.is_empty() {
            return;
        }

        // The larger of every budget that applies: a measured cold start can
        // raise the GPU default but not lower it (lower `gpuBootSeconds` in
        // the policy for a fleet that boots faster).
        let declared = cold.map_or(0, |(_, required)| required);
        let gpu_default = if gpu.is_some() || slow_image { settings.gpu_boot_seconds } else { 0 };
        let assumed = declared.max(gpu_default);
        let budget = t.boot_budget().max(assumed);
        let severity = if gpu.is_some() {
            Severity::Error
        } else {
            Severity::Warning
        };
        let message = format!(
            "container {:?}: no startup probe although the boot is slow ({}); liveness alone must either wait out the boot or restart it",
            c.name(),
            evidence.join(", ")
        );
        let finding = RULE.finding(
            severity,
            c.at(&[ProbeKind::Liveness.field()]),
            Some(c.name()),
            message,
            "add a startupProbe with the liveness handler whose failureThreshold x periodSeconds covers the boot",
        );
        out.push(with_fix(
            finding,
            fix(c, live, budget, settings.startup_period_seconds),
        ));
    });
}

/// The policy's `requireStartupProbeForGpu`: a serving GPU container
/// without any startup probe, even without liveness.
fn gpu_without_startup(c: ContainerView<'_>) -> Option<Finding> {
    let gpu = c.gpu_resource()?;
    Some(RULE.finding(
        Severity::Error,
        c.pointer.to_owned(),
        Some(c.name()),
        format!(
            "container {:?} requests {gpu} but has no startup probe; the policy requires one for GPU containers (requireStartupProbeForGpu)",
            c.name()
        ),
        "add a startupProbe on a model-aware endpoint whose failureThreshold x periodSeconds covers the boot",
    ))
}

/// The startup probe and liveness change; `None` when the liveness handler
/// cannot be copied or the budget does not fit the API's int32.
fn fix(c: ContainerView<'_>, live: &Probe, budget: i64, period: i64) -> Option<Fix> {
    let handler = handler_of(c.container, live)?;
    let (key, value) = copied_handler(live)?;
    let failure = i32::try_from(ceil_div(budget, period).max(1)).ok()?;
    let mut probe = Map::new();
    probe.insert(key.to_owned(), value);
    if let Some(timeout) = live.timeout_seconds {
        probe.insert("timeoutSeconds".to_owned(), timeout.into());
    }
    probe.insert("periodSeconds".to_owned(), period.into());
    probe.insert("failureThreshold".to_owned(), failure.into());
    let mut operations = vec![add_op(&c.at(&[ProbeKind::Startup.field()]), Value::Object(probe))?];
    let mut description = format!(
        "add startupProbe to container {:?} ({}, periodSeconds {period}, failureThreshold {failure}: {}s to boot)",
        c.name(),
        handler.describe(),
        i64::from(failure).saturating_mul(period)
    );
    if live.initial_delay_seconds.is_some_and(|d| d != 0) {
        operations.push(add_op(&c.at(&[ProbeKind::Liveness.field(), "initialDelaySeconds"]), 0.into())?);
        description.push_str(" and set liveness initialDelaySeconds to 0");
    }
    Some(Fix { description, operations })
}

/// The liveness handler as written (field name and value), when it has exactly one.
fn copied_handler(p: &Probe) -> Option<(&'static str, Value)> {
    if handler_count(p) != 1 {
        return None;
    }
    let copied = if let Some(h) = &p.http_get {
        ("httpGet", serde_json::to_value(h))
    } else if let Some(h) = &p.tcp_socket {
        ("tcpSocket", serde_json::to_value(h))
    } else if let Some(h) = &p.exec {
        ("exec", serde_json::to_value(h))
    } else {
        ("grpc", serde_json::to_value(p.grpc.as_ref()?))
    };
    Some((copied.0, copied.1.ok()?))
}

/// The image without tag or digest, for messages.
fn image_name(image: &str) -> &str {
    let image = image.split('@').next().unwrap_or(image);
    match image.rfind(':') {
        Some(i) if !image[i..].contains('/') => &image[..i],
        _ => image,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{RULE, image_name};
    use crate::finding::{Finding, Severity};
    use crate::rules::startup_budget_too_short;
    use crate::rules::testing::{check, names, one_container};

    fn with_cold(mut obj: Value, cold: &str) -> Value {
        obj["spec"]["template"]["metadata"]["annotations"] = json!({"lifeguard.dev/cold-start-seconds": cold});
        obj
    }

    /// The single finding, whose message must contain `part`.
    fn one(obj: &Value, part: &str) -> Finding {
        let mut f = check(&RULE, obj);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].message.contains(part), "{part}: {}", f[0].message);
        f.remove(0)
    }

    /// Applies the fix and returns the fixed container.
    fn apply(obj: &mut Value) -> Value {
        let fix = one(obj, "").fix.expect("fix");
        json_patch::patch(obj, &fix.operations).expect("patch applies");
        assert!(check(&RULE, obj).is_empty(), "fix leaves a finding");
        obj["spec"]["template"]["spec"]["containers"][0].clone()
    }

    #[test]
    fn long_initial_delay_is_a_warning_and_fix_moves_it_to_startup() {
        let mut obj = one_container(json!({
            "ports": [{"name": "http", "containerPort": 8080}],
            "livenessProbe": {
                "httpGet": {"path": "/livez", "port": "http"},
                "initialDelaySeconds": 120, "timeoutSeconds": 3, "failureThreshold": 3
            }
        }));
        let f = one(&obj, "initialDelaySeconds 120 >= 30");
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.pointer, "/spec/template/spec/containers/0/livenessProbe");
        let c = apply(&mut obj);
        // 120 + 3 x 10 = 150 s: 15 checks of 10 s.
        assert_eq!(
            c["startupProbe"],
            json!({
                "httpGet": {"path": "/livez", "port": "http"},
                "timeoutSeconds": 3, "periodSeconds": 10, "failureThreshold": 15
            })
        );
        assert_eq!(c["livenessProbe"]["initialDelaySeconds"], json!(0));
        assert_eq!(c["livenessProbe"]["timeoutSeconds"], json!(3));
    }

    #[test]
    fn gpu_is_an_error_and_gets_the_gpu_boot_budget() {
        let mut obj = one_container(json!({
            "resources": {"limits": {"nvidia.com/gpu": "1"}},
            "livenessProbe": {"tcpSocket": {"port": 8000}}
        }));
        let f = one(&obj, "requests nvidia.com/gpu");
        assert_eq!(f.severity, Severity::Error);
        let ops = f.fix.expect("fix").operations;
        assert_eq!(ops.len(), 1, "no initialDelaySeconds to reset");
        let c = apply(&mut obj);
        assert_eq!(c["startupProbe"]["tcpSocket"], json!({"port": 8000}));
        assert_eq!(c["startupProbe"]["failureThreshold"], json!(60));
        assert!(c["startupProbe"].get("timeoutSeconds").is_none());
        assert!(c["livenessProbe"].get("initialDelaySeconds").is_none());
    }

    #[test]
    fn model_server_image_is_named() {
        let obj = one_container(json!({
            "image": "vllm/vllm-openai:v0.6.0",
            "livenessProbe": {"httpGet": {"path": "/health", "port": 8000}}
        }));
        let f = one(&obj, "image vllm/vllm-openai looks like a model server");
        assert_eq!(f.severity, Severity::Warning);
    }

    #[test]
    fn worked_example_declared_cold_start_gives_48() {
        let live = json!({"grpc": {"port": 9000, "service": "live"}, "initialDelaySeconds": 10});
        let mut obj = with_cold(one_container(json!({"livenessProbe": live})), "430");
        one(&obj, "declared cold start 430s");
        let c = apply(&mut obj);
        assert_eq!(
            c["startupProbe"],
            json!({"grpc": {"port": 9000, "service": "live"}, "periodSeconds": 10, "failureThreshold": 48})
        );
        assert_eq!(c["livenessProbe"]["initialDelaySeconds"], json!(0));
        let after = check(&startup_budget_too_short::RULE, &obj);
        assert!(names(&after).is_empty(), "{:?}", names(&after));
    }

    #[test]
    fn budget_is_the_larger_of_declared_cold_start_and_gpu_default() {
        let gpu = |cold: &str| {
            with_cold(
                one_container(json!({
                    "resources": {"requests": {"amd.com/gpu": 1}},
                    "livenessProbe": {"exec": {"command": ["/bin/check"]}}
                })),
                cold,
            )
        };
        // 120 s + 10% = 132 s is below gpuBootSeconds (600 s): 60 checks.
        assert_eq!(apply(&mut gpu("2m"))["startupProbe"]["failureThreshold"], json!(60));
        // 900 s + 10% = 990 s is above it: 99 checks.
        assert_eq!(apply(&mut gpu("900"))["startupProbe"]["failureThreshold"], json!(99));
    }

    #[test]
    fn short_cold_start_covered_by_liveness_is_not_evidence() {
        let obj = one_container(json!({"livenessProbe": {"httpGet": {"path": "/livez", "port": 8080}}}));
        assert!(check(&RULE, &with_cold(obj.clone(), "20")).is_empty());
        // 28 s + 10% = 31 s > 30 s of default liveness: the boot can be killed.
        one(&with_cold(obj, "28"), "declared cold start 28s");
    }

    #[test]
    fn no_valid_handler_means_no_fix() {
        for live in [
            json!({"httpGet": {"path": "/", "port": 80}, "tcpSocket": {"port": 80}, "initialDelaySeconds": 60}),
            json!({"initialDelaySeconds": 60}),
        ] {
            let obj = one_container(json!({"livenessProbe": live}));
            assert!(one(&obj, "initialDelaySeconds 60").fix.is_none());
        }
    }

    #[test]
    fn not_findings() {
        for fields in [
            // No liveness probe at all.
            json!({
                "image": "nvcr.io/nvidia/tritonserver:24.05-py3",
                "resources": {"limits": {"nvidia.com/gpu": 1}},
                "readinessProbe": {"httpGet": {"path": "/v2/health/ready", "port": 8000}}
            }),
            // Startup probe present.
            json!({
                "resources": {"limits": {"nvidia.com/gpu": 1}},
                "startupProbe": {"httpGet": {"path": "/livez", "port": 8080}, "failureThreshold": 60},
                "livenessProbe": {"httpGet": {"path": "/livez", "port": 8080}, "initialDelaySeconds": 120}
            }),
            // Fast boot.
            json!({
                "image": "nginx:1.27",
                "resources": {"limits": {"nvidia.com/gpu": 0, "cpu": "1"}},
                "livenessProbe": {"httpGet": {"path": "/", "port": 80}, "initialDelaySeconds": 10}
            }),
        ] {
            assert!(check(&RULE, &one_container(fields.clone())).is_empty(), "{fields}");
        }
    }

    #[test]
    fn model_server_controllers_are_not_model_servers() {
        let live = json!({"httpGet": {"path": "/healthz", "port": 8081}});
        for image in
            ["kserve/kserve-controller:v0.15.0", "kserve/models-web-app:v0.14.0", "seldonio/seldon-core-operator:1.18"]
        {
            let obj = one_container(json!({"image": image, "livenessProbe": live}));
            assert!(check(&RULE, &obj).is_empty(), "{image}");
        }
        let obj = one_container(json!({"image": "kserve/huggingfaceserver:v0.15.0", "livenessProbe": live}));
        one(&obj, "kserve/huggingfaceserver looks like a model server");
    }

    #[test]
    fn image_names_drop_tag_and_digest() {
        assert_eq!(image_name("vllm/vllm-openai:v0.6.0"), "vllm/vllm-openai");
        assert_eq!(image_name("registry:5000/triton"), "registry:5000/triton");
        assert_eq!(image_name("a/b@sha256:abc"), "a/b");
    }
}
