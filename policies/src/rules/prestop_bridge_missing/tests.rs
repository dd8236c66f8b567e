//! `prestop-bridge-missing`'s unit tests: the check and the fix on objects built in place
//! (the fixtures' cases are `fixtures/`, linted by `lint/tests/rule_fixtures.rs`).

use serde_json::{Value, json};

use super::RULE;
use crate::finding::{Finding, Severity};
use crate::model::Batch;
use crate::policy::Policy;
use crate::rules::testing::{apply_fix, check_with, deployment, one_container};
use crate::settings::Settings;

fn policy(settings: Settings) -> Policy {
    // The bridge is an info finding: its fix applies only with fixInfoFindings.
    Policy::new(Settings { add_prestop_bridge: true, fix_info_findings: true, ..settings }).expect("valid policy")
}

fn service(selector: Value, ports: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "namespace": "prod"},
        "spec": {"selector": selector, "ports": ports}
    })
}

fn web_service() -> Value {
    service(json!({"app": "web"}), json!([{"port": 80, "targetPort": "http"}]))
}

fn run_with(obj: &Value, services: &[Value], settings: Settings) -> Vec<Finding> {
    check_with(&RULE, obj, &policy(settings), &Batch::from_objects(services.iter()))
}

fn run(obj: &Value) -> Vec<Finding> {
    run_with(obj, &[web_service()], Settings::default())
}

fn web(fields: Value) -> Value {
    let mut c = json!({"ports": [{"name": "http", "containerPort": 8080}]});
    if let (Some(c), Some(f)) = (c.as_object_mut(), fields.as_object()) {
        c.extend(f.clone());
    }
    one_container(c)
}

fn ops(f: &Finding) -> Value {
    serde_json::to_value(&f.fix.as_ref().expect("a fix").operations).expect("ops serialize")
}

/// The grace rules' findings on the fixed object, as `rule severity fixable`.
fn others(obj: &Value) -> Vec<String> {
    let batch = Batch::from_objects([&web_service()]);
    let report = crate::engine::lint_object(obj, &batch, &policy(Settings::default())).expect("lints");
    let findings = report.expect("a workload").findings;
    findings
        .iter()
        .filter(|f| f.rule.contains("grace") || f.rule.contains("prestop"))
        .map(|f| format!("{} {} {}", f.rule, f.severity, f.fix.is_some()))
        .collect()
}

#[test]
fn a_service_backed_container_without_prestop_gets_a_native_bridge() {
    let obj = web(json!({}));
    let f = run(&obj);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Info);
    assert_eq!(f[0].pointer, "/spec/template/spec/containers/0");
    assert_eq!(
        f[0].message,
        "Service/web sends traffic to port 8080/http, but the container has no preStop hook, so SIGTERM can come before endpoint removal stops new connections"
    );
    assert_eq!(
        ops(&f[0]),
        json!([{"op": "add", "path": "/spec/template/spec/containers/0/lifecycle",
                "value": {"preStop": {"sleep": {"seconds": 5}}}}])
    );
    let fixed = apply_fix(&obj, &f[0]);
    assert!(run(&fixed).is_empty());
    // The bridge is a note for prestop-sleep-only, never an error; nothing else fires.
    assert_eq!(others(&fixed), ["prestop-sleep-only info false"]);
}

#[test]
fn an_existing_lifecycle_keeps_its_post_start() {
    let obj = web(json!({"lifecycle": {"postStart": {"exec": {"command": ["/warm"]}}}}));
    let f = run_with(&obj, &[web_service()], Settings { prestop_bridge_seconds: 8, ..Settings::default() });
    assert_eq!(f[0].pointer, "/spec/template/spec/containers/0/lifecycle");
    assert_eq!(
        ops(&f[0]),
        json!([{"op": "add", "path": "/spec/template/spec/containers/0/lifecycle/preStop",
                "value": {"sleep": {"seconds": 8}}}])
    );
    let fixed = apply_fix(&obj, &f[0]);
    let lifecycle = &fixed["spec"]["template"]["spec"]["containers"][0]["lifecycle"];
    assert_eq!(lifecycle["postStart"], json!({"exec": {"command": ["/warm"]}}));
    assert_eq!(lifecycle["preStop"], json!({"sleep": {"seconds": 8}}));
}

#[test]
fn grace_is_raised_only_when_the_bridge_needs_it() {
    let with_budget = |seconds: &str| {
        let mut obj = web(json!({}));
        obj["spec"]["template"]["metadata"]["annotations"] = json!({"lifeguard.dev/shutdown-budget-seconds": seconds});
        obj
    };
    // 5 + 25 = 30 fits the default 30.
    assert_eq!(ops(&run(&with_budget("25"))[0]).as_array().map(Vec::len), Some(1));
    // 5 + 28 = 33 does not.
    let obj = with_budget("28");
    let f = run(&obj);
    assert_eq!(
        ops(&f[0])[1],
        json!({"op": "add", "path": "/spec/template/spec/terminationGracePeriodSeconds", "value": 33})
    );
    let description = &f[0].fix.as_ref().expect("fix").description;
    assert!(description.contains("to 33 (container \"app\": bridge 5s + drain 0s + 28s to shut down"), "{description}");
    let fixed = apply_fix(&obj, &f[0]);
    assert!(run(&fixed).is_empty());
    assert_eq!(others(&fixed), ["prestop-sleep-only info false"]);
    // An explicit grace period below the bridge gets bridge + prestopMinRemainingSeconds.
    let obj = web(json!({}));
    let mut short = obj.clone();
    short["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = json!(0);
    assert_eq!(ops(&run(&short)[0])[1]["value"], 10);
}

#[test]
fn fixing_is_idempotent_and_covers_every_container() {
    let mut obj = deployment(json!([
        {"name": "a", "ports": [{"name": "http", "containerPort": 8080}],
         "readinessProbe": {"httpGet": {"path": "/readyz", "port": "http"}}},
        {"name": "b", "ports": [{"name": "grpc", "containerPort": 9000}],
         "env": [{"name": "APP_DRAIN_SECONDS", "value": "30"}]}
    ]));
    obj["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = json!(20);
    let svc = service(json!({"app": "web"}), json!([{"port": 80, "targetPort": "http"}, {"port": 9000}]));
    let batch = Batch::from_objects([&svc]);
    let policy = policy(Settings::default());
    let plan = crate::fix::plan_fixes(&obj, &batch, &policy, None).expect("lints").expect("a workload");
    let fixed = plan.fixed.expect("fixed");
    let spec = &fixed["spec"]["template"]["spec"];
    // b: bridge 5 + drain 30 + 5 left to shut down.
    assert_eq!(spec["terminationGracePeriodSeconds"], 40);
    for i in 0..2 {
        assert_eq!(spec["containers"][i]["lifecycle"]["preStop"], json!({"sleep": {"seconds": 5}}));
    }
    assert!(
        plan.remaining.iter().all(|f| f.severity == Severity::Info && f.automatic_fix().is_none()),
        "{:?}",
        plan.remaining
    );
    let again = crate::fix::plan_fixes(&fixed, &batch, &policy, None).expect("lints").expect("a workload");
    assert!(again.operations.is_empty(), "{:?}", again.operations);
}

#[test]
fn an_undeclared_port_is_bridged_where_readiness_probe_missing_attributes_it() {
    // A 4-GPU video server on undeclared 8000 beside a runtime sidecar on 8080.
    let obj = deployment(json!([
        {"name": "video", "image": "example/video-gen:1", "args": ["--num-gpus", "4"],
         "resources": {"limits": {"nvidia.com/gpu": "4"}}},
        {"name": "runtime", "image": "example/runtime:1", "ports": [{"containerPort": 8080}]}
    ]));
    let svc = service(json!({"app": "web"}), json!([{"port": 80, "targetPort": 8000}]));
    let batch = Batch::from_objects([&svc]);
    let f = run_with(&obj, std::slice::from_ref(&svc), Settings::default());
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].container.as_deref(), Some("video"));
    assert!(f[0].message.starts_with("Service/web sends traffic to port 8000, but"), "{}", f[0].message);
    let readiness = crate::rules::find("readiness-probe-missing").expect("registered");
    let r = check_with(readiness, &obj, &Policy::default(), &batch);
    assert_eq!(r.iter().map(|f| f.container.as_deref()).collect::<Vec<_>>(), [Some("video")]);
    // The command line names the listener, GPU or not.
    let obj = deployment(json!([
        {"name": "helper"},
        {"name": "server", "ports": [{"containerPort": 9090}], "command": ["python", "-m", "server", "--port=8000"]}
    ]));
    let f = run_with(&obj, &[svc], Settings::default());
    assert_eq!(f.iter().map(|f| f.container.as_deref()).collect::<Vec<_>>(), [Some("server")]);
}

#[test]
fn a_named_port_a_sidecar_reuses_is_the_regular_containers_for_both_rules() {
    let mut obj = deployment(json!([
        {"name": "app", "ports": [{"name": "http", "containerPort": 8080}]},
        {"name": "debug", "ports": [{"name": "http", "containerPort": 8081}]}
    ]));
    obj["spec"]["template"]["spec"]["initContainers"] =
        json!([{"name": "proxy", "restartPolicy": "Always", "ports": [{"name": "http", "containerPort": 15001}]}]);
    let f = run(&obj);
    assert_eq!(f.iter().map(|f| f.container.as_deref()).collect::<Vec<_>>(), [Some("app")]);
    let readiness = crate::rules::find("readiness-probe-missing").expect("registered");
    let r = check_with(readiness, &obj, &Policy::default(), &Batch::from_objects([&web_service()]));
    assert_eq!(r.iter().map(|f| f.container.as_deref()).collect::<Vec<_>>(), [Some("app")]);
}

#[test]
fn before_kubernetes_1_30_there_is_no_fix_and_the_help_says_why() {
    let old = Settings { kubernetes_version: "1.29".into(), ..Settings::default() };
    let f = run_with(&web(json!({})), &[web_service()], old);
    assert_eq!(f.len(), 1);
    assert!(f[0].fix.is_none());
    assert!(f[0].help.contains("sleep binary") && f[0].help.contains("\"1.29\""), "{}", f[0].help);
}

#[test]
fn not_findings() {
    let obj = web(json!({}));
    // Opt-in off (the default policy).
    assert!(check_with(&RULE, &obj, &Policy::default(), &Batch::from_objects([&web_service()])).is_empty());
    // No Service; Services that select nothing here; a headless one.
    assert!(run_with(&obj, &[], Settings::default()).is_empty());
    let ports = json!([{"port": 80, "targetPort": "http"}]);
    let mut other_ns = web_service();
    other_ns["metadata"]["namespace"] = json!("dev");
    let mut headless = web_service();
    headless["spec"]["clusterIP"] = json!("None");
    for svc in [service(json!({"app": "api"}), ports.clone()), service(json!({}), ports), other_ns, headless] {
        assert!(run_with(&obj, std::slice::from_ref(&svc), Settings::default()).is_empty(), "{svc}");
    }
    // Any preStop hook.
    for hook in [json!({"httpGet": {"path": "/drain", "port": 8080}}), json!({"sleep": {"seconds": 3}})] {
        assert!(run(&web(json!({"lifecycle": {"preStop": hook}}))).is_empty());
    }
    // Jobs.
    let mut job = obj.clone();
    job["kind"] = json!("Job");
    job["apiVersion"] = json!("batch/v1");
    assert!(run(&job).is_empty());
    // A sidecar that declares the port takes the traffic; sidecars are not bridged.
    let mut sidecar = one_container(json!({}));
    sidecar["spec"]["template"]["spec"]["initContainers"] =
        json!([{"name": "proxy", "restartPolicy": "Always", "ports": [{"name": "http", "containerPort": 8080}]}]);
    assert!(run(&sidecar).is_empty());
    let svc = service(json!({"app": "web"}), json!([{"port": 8080}]));
    assert!(run_with(&sidecar, &[svc], Settings::default()).is_empty());
}
