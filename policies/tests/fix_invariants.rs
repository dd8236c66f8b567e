//! The invariants every fix keeps, on hand-written specs and on thousands of
//! generated ones: a spec without a fixable finding gets no operation; after
//! the fixes no fixable finding is left; fixing again changes nothing (the
//! mutating webhook is reinvoked); and the fixed spec is one the API server
//! accepts (one handler per probe, liveness/startup successThreshold 1,
//! positive periods and thresholds, grace period >= 0, a native preStop
//! sleep within the grace period); and no boot is restarted earlier than
//! before, by the kubelet's timing.

mod fix_gen;

use fix_gen::{deployment, object_strategy};
use policies::{Batch, FixPlan, Policy, Settings, lint_object, plan_fixes};
use proptest::prelude::*;
use serde_json::{Value, json};

fn plan(object: &Value, batch: &Batch, policy: &Policy) -> FixPlan {
    plan_fixes(object, batch, policy, None).expect("the spec reads").expect("a pod-bearing object")
}

fn fixable(object: &Value, batch: &Batch, policy: &Policy) -> Vec<String> {
    lint_object(object, batch, policy)
        .expect("the spec reads")
        .map(|r| r.findings)
        .unwrap_or_default()
        .into_iter()
        .filter(|f| f.automatic_fix().is_some())
        .map(|f| format!("{} at {}", f.rule, f.pointer))
        .collect()
}

/// Every way the fixed spec could be rejected by the API server, as text.
fn api_problems(object: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let spec = &object["spec"]["template"]["spec"];
    let grace = spec.get("terminationGracePeriodSeconds");
    if let Some(g) = grace {
        if g.as_i64().is_none_or(|g| g < 0) {
            problems.push(format!("terminationGracePeriodSeconds {g}"));
        }
    }
    let grace = grace.and_then(Value::as_i64).unwrap_or(30);
    let containers =
        ["containers", "initContainers"].iter().filter_map(|k| spec.get(*k).and_then(Value::as_array)).flatten();
    for c in containers {
        let name = c["name"].as_str().unwrap_or("?");
        for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
            let Some(p) = c.get(probe) else { continue };
            let handlers = ["httpGet", "tcpSocket", "exec", "grpc"].iter().filter(|h| p.get(**h).is_some()).count();
            if handlers != 1 {
                problems.push(format!("{name}.{probe}: {handlers} handlers"));
            }
            for field in ["periodSeconds", "timeoutSeconds", "failureThreshold", "successThreshold"] {
                if let Some(v) = p.get(field) {
                    if v.as_i64().is_none_or(|v| !(1..=i64::from(i32::MAX)).contains(&v)) {
                        problems.push(format!("{name}.{probe}.{field} {v}"));
                    }
                }
            }
            if let Some(v) = p.get("initialDelaySeconds") {
                if v.as_i64().is_none_or(|v| !(0..=i64::from(i32::MAX)).contains(&v)) {
                    problems.push(format!("{name}.{probe}.initialDelaySeconds {v}"));
                }
            }
            let success = p.get("successThreshold").and_then(Value::as_i64).unwrap_or(1);
            if probe != "readinessProbe" && success != 1 {
                problems.push(format!("{name}.{probe}.successThreshold {success}"));
            }
        }
        if let Some(s) = c.pointer("/lifecycle/preStop/sleep/seconds") {
            if s.as_i64().is_none_or(|s| s < 1 || s > grace) {
                problems.push(format!("{name}: native preStop sleep {s} with grace period {grace}"));
            }
        }
        if let Some(pre) = c.pointer("/lifecycle/preStop").and_then(Value::as_object) {
            let handlers = ["httpGet", "tcpSocket", "exec", "sleep"].iter().filter(|h| pre.contains_key(**h)).count();
            if handlers != 1 {
                problems.push(format!("{name}: preStop with {handlers} handlers"));
            }
        }
    }
    problems
}

/// For each probed container (name), when the kubelet restarts a boot that
/// never answers, at the earliest: the startup probe decides when there is
/// one (it holds liveness back), else liveness; the `failureThreshold`-th
/// failure restarts, at `initialDelaySeconds + (failureThreshold - 1) x
/// periodSeconds`. `None`: nothing restarts it (readiness never does).
fn earliest_restarts(object: &Value) -> Vec<(String, Option<i64>)> {
    let spec = &object["spec"]["template"]["spec"];
    let containers =
        ["containers", "initContainers"].iter().filter_map(|k| spec.get(*k).and_then(Value::as_array)).flatten();
    containers
        .map(|c| {
            let probe = c.get("startupProbe").or_else(|| c.get("livenessProbe"));
            let restart = probe.map(|p| {
                let field = |k: &str, default: i64| p.get(k).and_then(Value::as_i64).unwrap_or(default);
                field("initialDelaySeconds", 0) + (field("failureThreshold", 3) - 1) * field("periodSeconds", 10)
            });
            (c["name"].as_str().unwrap_or("?").to_owned(), restart)
        })
        .collect()
}

/// The containers whose boot the fixed object restarts earlier than the original did.
fn boots_restarted_earlier(original: &Value, fixed: &Value) -> Vec<String> {
    earliest_restarts(original)
        .into_iter()
        .zip(earliest_restarts(fixed))
        .filter(|((_, before), (_, after))| match (before, after) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(b), Some(a)) => a < b,
        })
        .map(|((name, before), (_, after))| format!("{name}: restart at {after:?}s, was {before:?}s"))
        .collect()
}

/// Checks all invariants on one object; `Err` says which failed.
fn check_invariants(object: &Value, batch: &Batch, policy: &Policy) -> Result<(), String> {
    let before = fixable(object, batch, policy);
    let p = plan(object, batch, policy);
    if !policy.settings.fix_info_findings {
        // Info-tier findings are opt-in: none of the spec as given is fixed.
        let findings = lint_object(object, batch, policy).expect("the spec reads").map(|r| r.findings);
        let info: Vec<_> = findings
            .unwrap_or_default()
            .into_iter()
            .filter(|f| f.severity == policies::Severity::Info)
            .map(|f| (f.rule, f.container, f.pointer))
            .collect();
        if let Some(a) =
            p.applied.iter().find(|a| info.contains(&(a.rule.clone(), a.container.clone(), a.pointer.clone())))
        {
            return Err(format!("an info finding was fixed without fixInfoFindings: {a:?}"));
        }
    }
    if before.is_empty() && !p.operations.is_empty() {
        return Err(format!("no fixable finding, yet operations: {:?}", p.operations));
    }
    let Some(fixed) = &p.fixed else {
        if p.operations.is_empty() && p.remaining.iter().all(|f| f.automatic_fix().is_none()) {
            return Ok(());
        }
        return Err(format!("fixable findings but no fix applied: {before:?}"));
    };
    let mut patched = object.clone();
    json_patch::patch(&mut patched, &p.operations).map_err(|e| format!("the merged patch does not apply: {e}"))?;
    if patched != *fixed {
        return Err("the merged patch does not give the fixed object".into());
    }
    let after = fixable(fixed, batch, policy);
    if !after.is_empty() {
        return Err(format!("fixable findings left after fixing: {after:?}"));
    }
    let again = plan(fixed, batch, policy);
    if !again.operations.is_empty() {
        return Err(format!("fixing twice changes the spec again: {:?}", again.operations));
    }
    let problems = api_problems(fixed);
    if !problems.is_empty() {
        return Err(format!("the fixed spec would be rejected: {problems:?}"));
    }
    let earlier = boots_restarted_earlier(object, fixed);
    if !earlier.is_empty() {
        return Err(format!("a boot is restarted earlier than before: {earlier:?}"));
    }
    Ok(())
}

fn gpu_model_server() -> Value {
    deployment(
        json!([{
            "name": "vllm",
            "image": "vllm/vllm-openai:v0.6.3",
            "ports": [{"name": "http", "containerPort": 8000}],
            "env": [{"name": "VLLM_SHUTDOWN_TIMEOUT_SECONDS", "value": "20"}],
            "resources": {"limits": {"nvidia.com/gpu": "1"}},
            "livenessProbe": {"httpGet": {"path": "/health", "port": "http"}, "initialDelaySeconds": 240, "periodSeconds": 10},
            "readinessProbe": {"tcpSocket": {"port": "http"}},
            "lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", "sleep 25"]}}}
        }]),
        json!({"terminationGracePeriodSeconds": 30}),
        json!({"lifeguard.dev/cold-start-seconds": "430"}),
    )
}

fn aggressive_liveness() -> Value {
    deployment(
        json!([{
            "name": "api", "image": "example/api:1",
            "livenessProbe": {"exec": {"command": ["/bin/ok"]}, "periodSeconds": 1, "failureThreshold": 1},
            "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8080}},
            "lifecycle": {"preStop": {"sleep": {"seconds": 40}}}
        }]),
        json!({}),
        json!({"lifeguard.dev/drain-seconds": "15"}),
    )
}

fn startup_too_short() -> Value {
    deployment(
        json!([{
            "name": "triton", "image": "nvcr.io/nvidia/tritonserver:24.05-py3",
            "startupProbe": {"grpc": {"port": 8001}, "periodSeconds": 10, "failureThreshold": 30},
            "livenessProbe": {"grpc": {"port": 8001}}
        }]),
        json!({"terminationGracePeriodSeconds": 0}),
        json!({"lifeguard.dev/cold-start-seconds": "7m10s"}),
    )
}

fn broken_specs() -> Vec<Value> {
    vec![gpu_model_server(), aggressive_liveness(), startup_too_short()]
}

#[test]
fn a_spec_without_a_fixable_finding_gets_no_operation() {
    let (batch, policy) = (Batch::default(), Policy::default());
    let good = deployment(
        json!([{
            "name": "web", "image": "nginx:1.27",
            "livenessProbe": {"httpGet": {"path": "/livez", "port": 8080}},
            "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8080}}
        }]),
        json!({}),
        json!({}),
    );
    // Findings without a fix (one endpoint for both probes) are not a reason to touch anything.
    let unfixable = deployment(
        json!([{
            "name": "web", "image": "nginx:1.27",
            "livenessProbe": {"httpGet": {"path": "/health", "port": 8080}},
            "readinessProbe": {"httpGet": {"path": "/health", "port": 8080}}
        }]),
        json!({}),
        json!({}),
    );
    assert!(!lint_object(&unfixable, &batch, &policy).expect("reads").expect("pod").findings.is_empty());
    for spec in [good, unfixable] {
        assert!(fixable(&spec, &batch, &policy).is_empty());
        let p = plan(&spec, &batch, &policy);
        assert!(p.operations.is_empty(), "{:?}", p.operations);
        assert_eq!(p.fixed, None);
    }
}

#[test]
fn applying_all_fixes_leaves_no_fixable_finding() {
    let (batch, policy) = (Batch::default(), Policy::default());
    for spec in broken_specs() {
        assert!(!fixable(&spec, &batch, &policy).is_empty(), "the example must need fixing");
        let fixed = plan(&spec, &batch, &policy).fixed.expect("fixed");
        assert_eq!(fixable(&fixed, &batch, &policy), Vec::<String>::new());
    }
}

#[test]
fn fixing_twice_changes_nothing() {
    let (batch, policy) = (Batch::default(), Policy::default());
    for spec in broken_specs() {
        let fixed = plan(&spec, &batch, &policy).fixed.expect("fixed");
        let again = plan(&fixed, &batch, &policy);
        assert!(again.operations.is_empty(), "{:?}", again.operations);
        assert_eq!(again.fixed, None);
    }
}

#[test]
fn a_fixed_spec_is_one_the_api_server_accepts() {
    let (batch, policy) = (Batch::default(), Policy::default());
    for spec in broken_specs() {
        let fixed = plan(&spec, &batch, &policy).fixed.expect("fixed");
        assert_eq!(api_problems(&fixed), Vec::<String>::new(), "{fixed:#}");
    }
    // The checker itself catches what it must.
    let mut bad = gpu_model_server();
    bad["spec"]["template"]["spec"]["containers"][0]["livenessProbe"]["successThreshold"] = json!(2);
    bad["spec"]["template"]["spec"]["containers"][0]["livenessProbe"]["tcpSocket"] = json!({"port": 1});
    bad["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = json!(-1);
    assert_eq!(api_problems(&bad).len(), 3, "{:?}", api_problems(&bad));
}

#[test]
fn no_boot_is_restarted_earlier_than_before() {
    // The case: liveness 30 + 3 x 3 restarts at 36 s; a startup probe
    // of 4 x 10 would restart at 30 s and loop a boot of 31-36 s.
    let spec = deployment(
        json!([{
            "name": "api", "image": "example/api:1",
            "livenessProbe": {"tcpSocket": {"port": 8080}, "initialDelaySeconds": 30, "periodSeconds": 3}
        }]),
        json!({}),
        json!({"lifeguard.dev/cold-start-seconds": "30"}),
    );
    let (batch, policy) = (Batch::default(), Policy::default());
    let fixed = plan(&spec, &batch, &policy).fixed.expect("fixed");
    assert_eq!(earliest_restarts(&spec), vec![("api".to_owned(), Some(36))]);
    assert_eq!(earliest_restarts(&fixed), vec![("api".to_owned(), Some(40))]);
    check_invariants(&spec, &batch, &policy).expect("invariants hold");
    // The checker itself catches an earlier restart.
    let mut shorter = fixed.clone();
    shorter["spec"]["template"]["spec"]["containers"][0]["startupProbe"]["failureThreshold"] = json!(4);
    assert_eq!(boots_restarted_earlier(&spec, &shorter).len(), 1);
}

#[test]
fn the_worked_example_gets_the_documented_values() {
    // A declared cold start sizes the startup probe, whatever gpuBootSeconds
    // says: 430 s x 1.1 = 473 s, with a 10 s period 49 checks (the kubelet
    // restarts at the 49th, 480 s), with the default policy (gpuBootSeconds
    // 600) as with one that lowers it.
    let default_fix = plan(&gpu_model_server(), &Batch::default(), &Policy::default()).fixed.expect("fixed");
    assert_eq!(default_fix["spec"]["template"]["spec"]["containers"][0]["startupProbe"]["failureThreshold"], 49);
    let settings = Settings { gpu_boot_seconds: 300, ..Settings::default() };
    let (batch, policy) = (Batch::default(), Policy::new(settings).expect("valid policy"));
    let fixed = plan(&gpu_model_server(), &batch, &policy).fixed.expect("fixed");
    let spec = &fixed["spec"]["template"]["spec"];
    let c = &spec["containers"][0];
    assert_eq!(c["startupProbe"]["failureThreshold"], 49);
    assert_eq!(c["startupProbe"]["periodSeconds"], 10);
    assert_eq!(c["startupProbe"]["httpGet"], json!({"path": "/health", "port": "http"}));
    assert_eq!(c["livenessProbe"]["initialDelaySeconds"], 240, "left as written");
    // preStop sleep 25 s + shutdown budget 20 s.
    assert_eq!(spec["terminationGracePeriodSeconds"], 45);
    assert_eq!(c["lifecycle"]["preStop"], json!({"sleep": {"seconds": 25}}));
}

/// The default policy, one for a cluster without the native sleep action,
/// and both with `addPrestopBridge` and `fixInfoFindings` (compiled once: a
/// policy holds compiled patterns).
static POLICIES: std::sync::LazyLock<[Policy; 4]> = std::sync::LazyLock::new(|| {
    let old = Settings { kubernetes_version: "1.29".into(), ..Settings::default() };
    let bridge = |s: &Settings| {
        Policy::new(Settings { add_prestop_bridge: true, fix_info_findings: true, ..s.clone() }).expect("valid policy")
    };
    [Policy::default(), Policy::new(old.clone()).expect("valid policy"), bridge(&Settings::default()), bridge(&old)]
});

/// No Service, or a Service selecting the generated pod: without ports, to
/// a named port, to a declared number, to a number no container declares.
fn service_strategy() -> BoxedStrategy<Option<Value>> {
    let service = |ports: Value| {
        let mut s = json!({"kind": "Service", "metadata": {"name": "web", "namespace": "prod"}, "spec": {"selector": {"app": "web"}}});
        if !ports.is_null() {
            s["spec"]["ports"] = ports;
        }
        Some(s)
    };
    prop_oneof![
        Just(None),
        Just(service(Value::Null)),
        Just(service(json!([{"port": 80, "targetPort": "http"}]))),
        Just(service(json!([{"port": 9000}]))),
        Just(service(json!([{"port": 80, "targetPort": 3000}]))),
    ]
    .boxed()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn invariants_hold_on_generated_pod_specs(object in object_strategy(), service in service_strategy(), which in 0usize..4) {
        let batch = Batch::from_objects(service.iter());
        let policy = &POLICIES[which];
        if let Err(why) = check_invariants(&object, &batch, policy) {
            return Err(TestCaseError::fail(format!("{why}\nspec: {object:#}")));
        }
    }
}

#[test]
fn a_bridge_is_added_below_an_existing_lifecycle_and_fixes_converge() {
    let policy = &POLICIES[2];
    let svc = json!({"kind": "Service", "metadata": {"name": "web", "namespace": "prod"},
                     "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": "http"}]}});
    let batch = Batch::from_objects([&svc]);
    let spec = deployment(
        json!([{
            "name": "api", "image": "gcr.io/distroless/static:nonroot",
            "ports": [{"name": "http", "containerPort": 8080}],
            "readinessProbe": {"httpGet": {"path": "/readyz", "port": "http"}},
            "lifecycle": {"postStart": {"exec": {"command": ["/warm"]}}}
        }]),
        json!({"terminationGracePeriodSeconds": 10}),
        json!({"lifeguard.dev/shutdown-budget-seconds": "8"}),
    );
    check_invariants(&spec, &batch, policy).expect("invariants hold");
    let fixed = plan(&spec, &batch, policy).fixed.expect("fixed");
    let lifecycle = &fixed["spec"]["template"]["spec"]["containers"][0]["lifecycle"];
    assert_eq!(
        *lifecycle,
        json!({"postStart": {"exec": {"command": ["/warm"]}}, "preStop": {"sleep": {"seconds": 5}}})
    );
    // Bridge 5 s + shutdown budget 8 s.
    assert_eq!(fixed["spec"]["template"]["spec"]["terminationGracePeriodSeconds"], 13);
}
