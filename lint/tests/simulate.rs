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
