//! `prestop-sleep-only`'s unit tests: the check and the fix on objects built in place
//! (the fixtures' cases are `fixtures/`, linted by `lint/tests/rule_fixtures.rs`).

use serde_json::{Value, json};

use super::RULE;
use crate::finding::Severity;
use crate::model::Batch;
use crate::policy::Policy;
use crate::rules::testing::{apply_fix, check, check_with, one_container};
use crate::settings::Settings;

fn exec_sleep(cmd: Value) -> Value {
    one_container(json!({"lifecycle": {"preStop": {"exec": {"command": cmd}}}}))
}

#[test]
fn long_sleep_is_an_error_and_the_fix_raises_grace_and_goes_native() {
    let obj = exec_sleep(json!(["sh", "-c", "sleep 28"]));
    let f = check(&RULE, &obj);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Error);
    assert_eq!(f[0].pointer, "/spec/template/spec/containers/0/lifecycle/preStop/exec/command");
    assert!(
        f[0].message.contains("sleeps 28s, leaving 2s of terminationGracePeriodSeconds 30")
            && f[0].message.contains("less than 5s (prestopMinRemainingSeconds)"),
        "{}",
        f[0].message
    );
    let fixed = apply_fix(&obj, &f[0]);
    let spec = &fixed["spec"]["template"]["spec"];
    assert_eq!(spec["terminationGracePeriodSeconds"], 33);
    assert_eq!(spec["containers"][0]["lifecycle"]["preStop"], json!({"sleep": {"seconds": 28}}));
    // What remains is the informational note, with nothing left to fix.
    let again = check(&RULE, &fixed);
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].severity, Severity::Info);
    assert!(again[0].fix.is_none());
}

#[test]
fn shutdown_budget_and_drain_size_the_fix_like_grace_period_too_short() {
    let mut obj = one_container(json!({
        "env": [{"name": "APP_DRAIN_SECONDS", "value": "5"}],
        "lifecycle": {"preStop": {"sleep": {"seconds": 20}}}
    }));
    obj["spec"]["template"]["metadata"]["annotations"] = json!({"lifeguard.dev/shutdown-budget-seconds": "15"});
    let f = check(&RULE, &obj);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Error);
    assert!(f[0].message.contains("less than 15s (shutdown budget, annotation"), "{}", f[0].message);
    let fixed = apply_fix(&obj, &f[0]);
    assert_eq!(fixed["spec"]["template"]["spec"]["terminationGracePeriodSeconds"], 40);
    assert_eq!(f[0].fix.as_ref().map(|x| x.operations.len()), Some(1));
    let other = crate::rules::find("grace-period-too-short").expect("registered");
    assert!(check(other, &fixed).is_empty());
    // Now the sleep is a bridge in front of the declared drain, with the time for both.
    assert!(check(&RULE, &fixed).is_empty());
}

#[test]
fn merged_fixes_leave_neither_grace_rule_firing() {
    let mut obj = crate::rules::testing::deployment(json!([
        {"name": "a", "lifecycle": {"preStop": {"exec": {"command": ["sleep", "28"]}}}},
        {"name": "b", "env": [{"name": "APP_DRAIN_SECONDS", "value": "20"}],
         "lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", "sleep 25 && /drain"]}}}},
        {"name": "c", "lifecycle": {"preStop": {"sleep": {"seconds": 29}}}}
    ]));
    obj["spec"]["template"]["metadata"]["annotations"] = json!({"lifeguard.dev/shutdown-budget-seconds": "3"});
    let plan =
        crate::fix::plan_fixes(&obj, &Batch::default(), &Policy::default(), None).expect("lints").expect("a workload");
    let fixed = plan.fixed.expect("fixed");
    let spec = &fixed["spec"]["template"]["spec"];
    // b needs 25 + 20 + 3 = 48; c needs 29 + max(3, 5) = 34.
    assert_eq!(spec["terminationGracePeriodSeconds"], 48);
    assert_eq!(spec["containers"][0]["lifecycle"]["preStop"], json!({"sleep": {"seconds": 28}}));
    assert!(
        plan.remaining.iter().all(|f| f.severity == Severity::Info && f.automatic_fix().is_none()),
        "{:?}",
        plan.remaining
    );
}

#[test]
fn short_exec_sleep_is_info_with_a_native_rewrite() {
    let obj = exec_sleep(json!(["/bin/sleep", "5s"]));
    let f = check(&RULE, &obj);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Info);
    let fixed = apply_fix(&obj, &f[0]);
    assert!(fixed["spec"]["template"]["spec"]["terminationGracePeriodSeconds"].is_null());
    let again = check(&RULE, &fixed);
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].severity, Severity::Info);
    assert_eq!(again[0].pointer, "/spec/template/spec/containers/0/lifecycle/preStop/sleep/seconds");
    assert!(again[0].fix.is_none());
}

#[test]
fn info_says_how_long_the_application_has_after_the_sleep() {
    let mut obj = exec_sleep(json!(["sleep", "10"]));
    obj["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = json!(45);
    let f = check(&RULE, &obj);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Info);
    assert_eq!(
        f[0].message,
        "preStop only sleeps 10s, a bridge for endpoint removal; SIGTERM then leaves the application 35s of terminationGracePeriodSeconds 45 to finish in-flight work"
    );
    assert!(f[0].help.contains("within 35s of SIGTERM"), "{}", f[0].help);
    assert!(!f[0].message.contains("nothing drains"), "{}", f[0].message);
}

#[test]
fn a_model_servers_drain_is_named_the_policys_assumption() {
    let policy = Policy::new(Settings { model_server_drain_seconds: 20, ..Settings::default() }).expect("valid");
    let mut obj = one_container(json!({
        "image": "example/vllm-openai:0.6",
        "resources": {"limits": {"nvidia.com/gpu": 1}},
        "lifecycle": {"preStop": {"exec": {"command": ["sleep", "5"]}}}
    }));
    obj["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = json!(60);
    let f = check_with(&RULE, &obj, &policy, &Batch::default());
    assert_eq!(f.len(), 1);
    assert!(f[0].message.contains("before the policy's assumed 20s drain"), "{}", f[0].message);
    obj["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = json!(8);
    let f = check_with(&RULE, &obj, &policy, &Batch::default());
    let fix = f[0].fix.as_ref().expect("a fix");
    assert!(fix.description.contains("the policy's assumed drain 20s"), "{}", fix.description);
}

/// A second apply of a file whose exec sleep was rewritten sends the
/// exec back beside the stored native action; its fixes make the object
/// the first apply stored, the grace period from the file's included.
#[test]
fn an_exec_sleep_beside_the_native_action_is_rewritten_again() {
    let file = exec_sleep(json!(["sh", "-c", "sleep 28"]));
    let policy = Policy::default();
    let fixed = |obj: &Value| {
        crate::plan_fixes(obj, &Batch::default(), &policy, None).expect("a workload").expect("a plan").fixed
    };
    let stored = fixed(&file).expect("the first apply is fixed");
    let mut again = stored.clone();
    let pre_stop = &mut again["spec"]["template"]["spec"]["containers"][0]["lifecycle"]["preStop"];
    pre_stop["exec"] = json!({"command": ["sh", "-c", "sleep 28"]});
    again["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = json!(30);
    let f = check(&RULE, &again);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].severity, Severity::Error);
    assert!(f[0].message.contains("more than one handler"), "{}", f[0].message);
    assert_eq!(fixed(&again), Some(stored));
    // Not on a release without the native action, and not beside an exec that does more than sleep.
    let old = Policy::new(Settings { kubernetes_version: "1.29".into(), ..Settings::default() }).expect("valid");
    assert!(check_with(&RULE, &again, &old, &Batch::default()).is_empty());
    let mut drains = again.clone();
    drains["spec"]["template"]["spec"]["containers"][0]["lifecycle"]["preStop"]["exec"]["command"] =
        json!(["sh", "-c", "sleep 5 && /drain"]);
    assert!(check(&RULE, &drains).is_empty());
}

#[test]
fn old_kubernetes_keeps_exec() {
    let policy = Policy::new(Settings { kubernetes_version: "1.29".into(), ..Settings::default() }).expect("valid");
    let obj = exec_sleep(json!(["sleep", "5"]));
    let f = check_with(&RULE, &obj, &policy, &Batch::default());
    assert!(f[0].fix.is_none());
    let obj = exec_sleep(json!(["sleep", "29"]));
    let f = check_with(&RULE, &obj, &policy, &Batch::default());
    let ops = &f[0].fix.as_ref().expect("grace fix").operations;
    assert_eq!(ops.len(), 1);
}

#[test]
fn endless_sleep_is_an_error_without_fix() {
    let f = check(&RULE, &exec_sleep(json!(["sh", "-c", "sleep infinity"])));
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Error);
    assert!(f[0].fix.is_none());
}

#[test]
fn not_findings() {
    for cmd in [
        json!(["sh", "-c", "sleep 5 && /app/drain"]),
        json!(["/bin/sh", "-c", "sleep 5; nginx -s quit"]),
        json!(["sh", "-c", "sleep $DELAY"]),
        json!(["/bin/bash", "/pre-stop-hook.sh"]),
    ] {
        assert!(check(&RULE, &exec_sleep(cmd.clone())).is_empty(), "{cmd}");
    }
    let http = one_container(json!({
        "lifecycle": {"preStop": {"httpGet": {"path": "/drain", "port": 8080}}}
    }));
    assert!(check(&RULE, &http).is_empty());
    assert!(check(&RULE, &one_container(json!({}))).is_empty());
}

#[test]
fn a_bridge_before_a_declared_app_drain_is_the_recommended_pattern() {
    let with = |prestop: Value, grace: i64| {
        let mut obj = one_container(json!({
            "env": [{"name": "APP_DRAIN_SECONDS", "value": "5"}, {"name": "APP_SHUTDOWN_BUDGET_SECONDS", "value": "10"}],
            "lifecycle": {"preStop": prestop}
        }));
        obj["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = json!(grace);
        obj
    };
    // 2 + 5 + 10 = 17 s fit in 20 s: no finding for a native sleep.
    assert!(check(&RULE, &with(json!({"sleep": {"seconds": 2}}), 20)).is_empty());
    // An exec sleep keeps an info finding, for the native rewrite.
    let exec = check(&RULE, &with(json!({"exec": {"command": ["sleep", "2"]}}), 20));
    assert_eq!(exec.len(), 1);
    assert_eq!(exec[0].severity, Severity::Info);
    assert!(exec[0].message.contains("declared 5s drain"), "{}", exec[0].message);
    // Without the time for the drain it is reported as before.
    let short = check(&RULE, &with(json!({"sleep": {"seconds": 2}}), 14));
    assert_eq!(short.len(), 1, "{short:?}");
    // No declared drain: the info stays.
    let mut plain = one_container(json!({"lifecycle": {"preStop": {"sleep": {"seconds": 2}}}}));
    plain["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = json!(30);
    assert_eq!(check(&RULE, &plain)[0].severity, Severity::Info);
}
