//! `lifeguard simulate` on the design sources' cases: golden timelines
//! (insta snapshots of the real binary's text output) and their verdicts
//! (asserted on the JSON output).
//!
//! Runs happen in `tests/fixtures/simulate` with relative paths, so file
//! names in the snapshots do not depend on where the repository is.

mod support;

use std::path::PathBuf;

use serde_json::Value;
use support::Run;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/simulate")
}

fn lifeguard(args: &[&str]) -> Run {
    let r = support::lifeguard(&fixtures(), args, None, &[("NO_COLOR", Some("1"))]);
    r.assert_no_panic();
    r
}

/// The JSON entries of a run, and its exit code.
fn simulate_json(args: &[&str]) -> (Vec<Value>, i32) {
    let mut all = vec!["simulate", "--format", "json"];
    all.extend_from_slice(args);
    let r = lifeguard(&all);
    match serde_json::from_str(&r.stdout) {
        Ok(Value::Array(items)) => (items, r.code),
        other => panic!("stdout is not a JSON array: {other:?}\n{}\n{}", r.stdout, r.stderr),
    }
}

fn one(args: &[&str]) -> (Value, i32) {
    let (mut items, code) = simulate_json(args);
    assert_eq!(items.len(), 1, "{items:?}");
    (items.remove(0), code)
}

fn text(args: &[&str]) -> String {
    let mut all = vec!["simulate"];
    all.extend_from_slice(args);
    lifeguard(&all).stdout
}

#[test]
fn a_two_second_stall_restarts_every_replica_of_the_shared_handler() {
    let (e, code) = one(&["--scenario", "stall:2s", "stall-shared-handler.yaml"]);
    assert_eq!(e["verdict"], "restart-storm");
    assert_eq!(e["scenario"], "stall:2s");
    assert_eq!(e["best"]["restarts"].as_u64().map(|n| n > 0), Some(true), "every offset restarts: {e}");
    assert_eq!(e["restart_at"], 1);
    assert!(e["message"].as_str().is_some_and(|m| m.contains("all 3 replicas restart")), "{e}");
    assert!(e["message"].as_str().is_some_and(|m| m.contains("zero endpoints")), "{e}");
    assert_eq!(code, 1, "a restart storm fails the run");
    insta::assert_snapshot!("stall_shared_handler", text(&["--scenario", "stall:2s", "stall-shared-handler.yaml"]));
}

#[test]
fn separating_liveness_from_readiness_survives_the_same_stall() {
    let (e, code) = one(&["--scenario", "stall:2s", "stall-separated.yaml"]);
    assert_eq!(e["restarts"], 0);
    assert_eq!(e["best"]["restarts"], 0);
    // At most the stall plus one period (1 s) out of endpoints.
    assert!(e["worst"]["unready_seconds"].as_f64().is_some_and(|s| s <= 3.0), "{e}");
    assert!(matches!(e["verdict"].as_str(), Some("ok" | "out-of-service")), "{e}");
    assert_eq!(code, 0);
    insta::assert_snapshot!("stall_separated", text(&["--scenario", "stall:2s", "stall-separated.yaml"]));
}

#[test]
fn a_480_second_startup_window_boots_the_430_second_model_server() {
    let (e, code) = one(&["--scenario", "boot", "gpu-startup-480.yaml"]);
    assert_eq!(e["verdict"], "ok");
    assert_eq!(e["restarts"], 0);
    assert_eq!(e["restart_at"], Value::Null);
    assert_eq!(code, 0);
    insta::assert_snapshot!("gpu_startup_480", text(&["--scenario", "boot", "gpu-startup-480.yaml"]));
}

#[test]
fn a_300_second_startup_window_restarts_it_in_a_loop_with_back_off() {
    let (e, code) = one(&["--scenario", "boot", "gpu-startup-300.yaml"]);
    assert_eq!(e["verdict"], "boot-loop");
    // The 30th check fails at 290 s: initialDelaySeconds 0 + 29 x 10.
    assert_eq!(e["restart_at"], 290);
    let events = e["events"].as_array().cloned().unwrap_or_default();
    assert!(!events.iter().any(|ev| ev["event"] == "startup-succeeded"), "never boots");
    assert!(events.iter().any(|ev| ev["event"] == "back-off" && ev["detail"] == "CrashLoopBackOff 10s"), "{events:?}");
    assert_eq!(code, 1, "a boot loop fails the run");
    insta::assert_snapshot!("gpu_startup_300", text(&["--scenario", "boot", "gpu-startup-300.yaml"]));
}

#[test]
fn a_30_second_grace_period_sigkills_the_drain_and_45_does_not() {
    let (e, code) = one(&["--scenario", "delete", "drain-grace-30.yaml"]);
    assert_eq!(e["verdict"], "sigkill-in-flight");
    assert_eq!(e["sigkill"], true);
    assert!(e["message"].as_str().is_some_and(|m| m.contains("15 s before the drain ends")), "{e}");
    assert_eq!(code, 1);
    let (e, code) = one(&["--scenario", "delete", "drain-grace-45.yaml"]);
    assert_eq!(e["verdict"], "ok");
    assert_eq!(e["sigkill"], false);
    assert_eq!(code, 0);
    insta::assert_snapshot!("drain", text(&["--scenario", "delete", "drain-grace-30.yaml", "drain-grace-45.yaml"]));
}

#[test]
fn a_three_second_pause_restarts_the_aggressive_liveness_and_not_the_fixed_one() {
    let (e, _) = one(&["--scenario", "pause:3s", "--diff-fix", "pause-aggressive.yaml"]);
    assert_eq!(e["verdict"], "restarts");
    assert_eq!(e["restarts"], 1);
    assert_eq!(e["fixed"]["verdict"], "ok");
    assert_eq!(e["fixed"]["restarts"], 0);
    let fixes = e["fixed"]["fixes"].as_array().cloned().unwrap_or_default();
    assert!(fixes.iter().any(|f| f.as_str().is_some_and(|f| f.contains("failureThreshold 1 -> 3"))), "{fixes:?}");
    insta::assert_snapshot!("pause_diff_fix", text(&["--scenario", "pause:3s", "--diff-fix", "pause-aggressive.yaml"]));
}

fn code(args: &[&str]) -> i32 {
    let mut all = vec!["simulate"];
    all.extend_from_slice(args);
    lifeguard(&all).code
}

#[test]
fn exit_codes_follow_the_verdicts_and_fail_on() {
    // A restart storm, a boot loop and SIGKILL of in-flight work fail by default; restarts do not.
    assert_eq!(code(&["--scenario", "pause:3s", "pause-aggressive.yaml"]), 0);
    assert_eq!(code(&["--scenario", "pause:3s", "--fail-on", "restarts", "pause-aggressive.yaml"]), 1);
    assert_eq!(code(&["--scenario", "stall:2s", "--fail-on", "never", "stall-shared-handler.yaml"]), 0);
    assert_eq!(code(&["--scenario", "stall:2s", "--fail-on", "boot-loop,sigkill-in-flight", "stall-shared-handler.yaml"]), 0);
    assert_eq!(code(&["--scenario", "delete", "--fail-on", "sigkill-in-flight", "drain-grace-30.yaml"]), 1);
    // --fail-on judges the manifests as written, not as fixed.
    assert_eq!(code(&["--scenario", "delete", "--diff-fix", "drain-grace-30.yaml"]), 1);
}

#[test]
fn usage_errors_exit_2_and_name_what_is_wrong() {
    let r = lifeguard(&["simulate", "--scenario", "stall", "stall-separated.yaml"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("scenario \"stall\": needs a duration"), "{}", r.stderr);
    let r = lifeguard(&["simulate", "--fail-on", "restart", "stall-separated.yaml"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("unknown verdict \"restart\""), "{}", r.stderr);
    let r = lifeguard(&["simulate", "--probe-checks", "liveness=remote", "stall-separated.yaml"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("the value must be local or dependency"), "{}", r.stderr);
}

#[test]
fn a_bad_input_is_an_error_at_its_line_and_the_other_files_are_still_simulated() {
    let r = lifeguard(&["simulate", "--scenario", "wedge", "bad/probe-checks-invalid.yaml", "pause-aggressive.yaml"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("bad/probe-checks-invalid.yaml:12:")
            && r.stderr.contains("annotation lifeguard.dev/probe-checks: \"liveness=remote\": the value must be local or dependency"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.contains("pause-aggressive.yaml:"), "{}", r.stdout);
    let broken = "kind: Deployment\nmetadata: {name: x\n";
    let r = support::lifeguard(&fixtures(), &["simulate", "-"], Some(broken), &[("NO_COLOR", Some("1"))]);
    r.assert_no_panic();
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("<stdin>:"), "{}", r.stderr);
}

#[test]
fn the_standard_set_runs_without_a_scenario_and_explain_states_the_model() {
    let (items, _) = simulate_json(&["stall-separated.yaml"]);
    let scenarios: Vec<&str> = items.iter().filter_map(|e| e["scenario"].as_str()).collect();
    assert_eq!(scenarios, policies::simulate::STANDARD);
    for e in &items {
        for field in ["file", "line", "kind", "namespace", "name", "container", "scenario", "verdict", "restarts",
            "restart_at", "unready_seconds", "sigkill", "best", "worst", "events"] {
            assert!(e.get(field).is_some(), "{field} missing: {e}");
        }
    }
    let r = lifeguard(&["explain", "simulate"]);
    assert_eq!(r.code, 0);
    assert_eq!(r.stdout, policies::simulate::MODEL);
    for assumption in ["CrashLoopBackOff", "initialDelaySeconds", "counted from deletion", "Phase offsets", "successThreshold"] {
        assert!(r.stdout.contains(assumption), "explain simulate states {assumption:?}");
    }
}
