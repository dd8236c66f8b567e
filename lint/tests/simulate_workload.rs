//! `lifeguard simulate --scenario rollout` and `--scenario drain`: the
//! workload's controller over the pod model, in every format, with the
//! exit code and `--diff-fix`.
//!
//! Runs happen in `tests/fixtures/simulate` with relative paths, as in
//! `simulate.rs`.

mod support;

use serde_json::Value;
use support::simulate::{lifeguard, simulate_json};

const WEB: &str = "rollout-web.yaml";

/// The entry of `scenario` among `entries`.
fn entry<'a>(entries: &'a [Value], scenario: &str) -> &'a Value {
    entries.iter().find(|e| e["scenario"] == scenario).unwrap_or_else(|| panic!("no {scenario} entry: {entries:?}"))
}

/// `(t, event, pod)` of the steps of an entry whose event is one of `events`.
fn steps(e: &Value, events: &[&str]) -> Vec<(f64, String, String)> {
    e["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| events.iter().any(|x| s["event"] == *x))
        .map(|s| {
            let text = |k: &str| s[k].as_str().unwrap_or_default().to_owned();
            (s["t"].as_f64().unwrap_or(-1.0), text("event"), text("pod"))
        })
        .collect()
}

#[test]
fn a_rolling_update_and_a_drain_under_a_sound_budget_keep_two_of_three() {
    let (entries, code) = simulate_json(&["--scenario", "rollout", "--scenario", "drain", WEB]);
    assert_eq!(code, 0);
    assert_eq!(entries.len(), 2, "one entry per workload scenario, no container's: {entries:?}");
    let rollout = entry(&entries, "rollout");
    assert_eq!(rollout["container"], Value::Null);
    assert_eq!(rollout["verdict"], "ok");
    assert_eq!(rollout["complete_at"], 24);
    assert_eq!(rollout["lowest_available"]["available"], 2);
    assert_eq!(rollout["new_pod"]["ready_after"], 8);
    let created: Vec<f64> = steps(rollout, &["created"]).iter().map(|s| s.0).collect();
    assert_eq!(created, [0.0, 8.0, 16.0], "one new pod per boot");
    let drain = entry(&entries, "drain");
    assert_eq!(drain["verdict"], "ok");
    assert_eq!(drain["lowest_ready"]["ready"], 2);
    // The budget refuses each next eviction until the replacement before
    // it is Ready; kubectl tries again 5 s later.
    let evicted: Vec<f64> = steps(drain, &["evicted"]).iter().map(|s| s.0).collect();
    assert_eq!(evicted, [0.0, 10.0, 20.0]);
    assert_eq!(steps(drain, &["eviction-refused"]).len(), 2);
    insta::assert_snapshot!("rollout_web_json", serde_json::to_string_pretty(&entries).unwrap_or_default());
}

#[test]
fn a_deadline_shorter_than_the_boot_is_exceeded_and_the_fix_takes_it_away() {
    let (entries, code) = simulate_json(&["--scenario", "rollout", "--diff-fix", "workload/deadline.yaml"]);
    assert_eq!(code, 0, "a warning fails no run by default");
    let rollout = entry(&entries, "rollout");
    assert_eq!(rollout["verdict"], "progress-deadline-exceeded");
    assert_eq!(rollout["severity"], "warning");
    assert_eq!(rollout["progress_deadline_exceeded_at"], serde_json::json!([10]));
    // Ready within a readiness period (2 s) of the 24 s boot.
    let done = rollout["complete_at"].as_f64().unwrap_or_default();
    assert!((24.0..=26.0).contains(&done), "{rollout}");
    let fixed = &rollout["fixed"];
    assert_eq!(fixed["progress_deadline_exceeded_at"], serde_json::json!([]), "{fixed}");
    assert_ne!(fixed["verdict"], "progress-deadline-exceeded", "{fixed}");
    assert!(fixed["fixes"].to_string().contains("progressDeadlineSeconds"), "{fixed}");
}

#[test]
fn recreate_leaves_no_pod_ready_while_the_new_ones_boot() {
    let (entries, _) = simulate_json(&["--scenario", "rollout", "workload/recreate.yaml"]);
    let rollout = entry(&entries, "rollout");
    assert_eq!(rollout["verdict"], "out-of-service");
    assert!(rollout["message"].as_str().unwrap_or_default().starts_with("no pod is Ready for 61 s"), "{rollout}");
    let created: Vec<f64> = steps(rollout, &["created"]).iter().map(|s| s.0).collect();
    assert_eq!(created, [0.0, 0.0], "created once the old pods are gone (no drain, no hook: at once)");
}

#[test]
fn a_stateful_set_takes_two_at_a_time_only_where_the_cluster_reads_it() {
    let order = |args: &[&str]| {
        let (entries, _) = simulate_json(args);
        let rollout = entry(&entries, "rollout").clone();
        (steps(&rollout, &["deleted", "created"]), rollout["lowest_available"]["available"].clone())
    };
    let (one, lowest) = order(&["--scenario", "rollout", "workload/stateful.yaml"]);
    let pods: Vec<&str> = one.iter().filter(|s| s.1 == "deleted").map(|s| s.2.as_str()).collect();
    assert_eq!(pods, ["shards-2", "shards-1", "shards-0"], "highest ordinal first, one at a time");
    assert_eq!(lowest, 2);
    let policy = "--policy=workload/k137.policy.yaml";
    let (two, lowest) = order(&[policy, "--scenario", "rollout", "workload/stateful.yaml"]);
    let at_once: Vec<&str> = two.iter().filter(|s| s.1 == "deleted" && s.0 == 0.0).map(|s| s.2.as_str()).collect();
    assert_eq!(at_once, ["shards-2", "shards-1"]);
    // OrderedReady: the lower ordinal is created first, the next once it is Ready.
    let created: Vec<(f64, &str)> = two.iter().filter(|s| s.1 == "created").map(|s| (s.0, s.2.as_str())).collect();
    assert_eq!(created[..2], [(1.0, "shards-1"), (9.0, "shards-2")]);
    assert_eq!(lowest, 1);
}

#[test]
fn a_budget_that_wants_every_replica_blocks_the_drain_and_fails_only_when_asked() {
    let (entries, code) = simulate_json(&["--scenario", "drain", "workload/blocked.yaml"]);
    assert_eq!(code, 0);
    let drain = entry(&entries, "drain");
    assert_eq!(drain["verdict"], "eviction-blocked");
    assert_eq!(drain["complete_at"], Value::Null);
    assert!(drain["stuck"].as_str().unwrap_or_default().contains("PodDisruptionBudget/api allows no disruption"));
    let asked =
        lifeguard(&["simulate", "--scenario", "drain", "--fail-on", "eviction-blocked", "workload/blocked.yaml"]);
    assert_eq!(asked.code, 1, "{}", asked.stderr);
}

#[test]
fn a_new_pod_that_never_boots_stalls_the_rollout_and_fails_the_run() {
    let (entries, code) = simulate_json(&["--scenario", "rollout", "workload/stuck.yaml"]);
    assert_eq!(code, 1, "rollout-stuck is an error");
    let rollout = entry(&entries, "rollout");
    assert_eq!(rollout["verdict"], "rollout-stuck");
    assert_eq!(rollout["new_pod"]["verdict"], "boot-loop");
    assert_eq!(rollout["new_pod"]["ready_after"], Value::Null);
    assert_eq!(rollout["lowest_available"]["available"], 2, "the old pods are kept");
}

#[test]
fn a_job_is_not_rolled_and_says_why() {
    let (entries, code) = simulate_json(&["--scenario", "rollout", "workload/job.yaml"]);
    assert_eq!(code, 0);
    let rollout = entry(&entries, "rollout");
    assert_eq!(rollout["verdict"], Value::Null);
    assert_eq!(rollout["not_simulated"], "a Job runs to completion; no controller keeps its pods serving");
    let text = lifeguard(&["simulate", "--scenario", "rollout", "workload/job.yaml"]).stdout;
    assert!(text.contains("rollout: not simulated: a Job runs to completion"), "{text}");
}

#[test]
fn svg_and_html_draw_the_capacity() {
    let svg = lifeguard(&["simulate", "--format", "svg", "--scenario", "rollout", "--scenario", "drain", WEB]).stdout;
    assert_eq!(svg.matches(r#"<g class="panel workload">"#).count(), 2, "{svg}");
    assert!(svg.contains(">complete</text>") && svg.contains(">eviction refused</text>"), "{svg}");
    let html = lifeguard(&["simulate", "--format", "html", "--scenario", "rollout", WEB]).stdout;
    assert!(html.contains(r#"<section class="workload">"#), "{html}");
    assert!(html.contains("RollingUpdate: maxSurge 0, maxUnavailable 1 of 3"), "{html}");
    assert!(html.contains(r#"<g class="panel workload">"#), "the picture inline");
}

#[test]
fn text_shows_the_steps_with_the_counts_after_each() {
    let text = lifeguard(&["simulate", "--scenario", "rollout", "--scenario", "drain", WEB]).stdout;
    insta::assert_snapshot!("rollout_web_text", text);
}

#[test]
fn a_daemon_set_rolls_one_node_at_a_time_over_the_nodes_given() {
    let (entries, _) = simulate_json(&["--scenario", "rollout", "--scenario", "drain", "workload/daemonset.yaml"]);
    let rollout = entry(&entries, "rollout");
    assert_eq!(rollout["how"], "RollingUpdate on 3 nodes: maxSurge 0, maxUnavailable 1");
    let nodes = rollout["assumptions"].as_array().into_iter().flatten().find(|a| a["about"] == "replicas");
    assert_eq!(nodes.map(|a| (a["value"].clone(), a["source"].clone())), Some(("3".into(), "default".into())));
    assert_eq!(rollout["complete_at"], 33, "three nodes, one 11 s boot each");
    // kubectl drain leaves a DaemonSet's pods.
    let drain = entry(&entries, "drain");
    assert!(drain["not_simulated"].as_str().unwrap_or_default().contains("--ignore-daemonsets"), "{drain}");
    let (entries, _) = simulate_json(&["--scenario", "rollout", "--nodes", "10", "workload/daemonset.yaml"]);
    let rollout = entry(&entries, "rollout");
    assert_eq!(rollout["complete_at"], 110);
    assert_eq!(rollout["lowest_available"]["available"], 9);
}
