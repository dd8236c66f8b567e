//! `lifeguard export alerts` through the real binary: the PrometheusRule of
//! the built-in examples (a snapshot: the export is deterministic), what is
//! not alerted and why, the namespace given to workloads without one, a
//! policy's alert parameters, and usage and input errors. That the API
//! server accepts the objects with prometheus-operator's CRD installed is
//! `tests/tests/cluster_alerts.rs`.

mod support;

use std::path::Path;

fn export(args: &[&str], stdin: Option<&str>) -> support::Run {
    let mut all = vec!["export", "alerts"];
    all.extend(args);
    let r = support::lifeguard(Path::new(env!("CARGO_MANIFEST_DIR")), &all, stdin, &[("LIFEGUARD_POLICY", None)]);
    r.assert_no_panic();
    r
}

#[test]
fn the_examples_export_the_same_objects_every_time() {
    let first = export(&["examples"], None);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert_eq!(export(&["examples"], None).stdout, first.stdout, "deterministic");
    insta::assert_snapshot!("export_alerts_examples", first.stdout);
}

const SLOW_AND_QUICK: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata: {name: llm}
spec:
  template:
    metadata:
      annotations: {lifeguard.dev/cold-start-seconds: \"430\"}
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.6.0
          startupProbe: {httpGet: {path: /health, port: 8000}, periodSeconds: 10, failureThreshold: 48}
---
apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: shop}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: m, image: m:1}]
";

#[test]
fn a_workload_without_a_namespace_takes_the_one_given_and_a_job_is_named_as_not_alerted() {
    let r = export(&["--namespace", "ml", "-"], Some(SLOW_AND_QUICK));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains(r#"kube_pod_status_ready{namespace="ml", condition="false"} == 1"#), "{}", r.stdout);
    // The startup probe's 480 s covers the 430 s cold start and its 10%.
    assert!(r.stdout.contains("for: 8m\n"), "{}", r.stdout);
    assert!(r.stdout.contains("lifeguard_workload: Deployment/ml/llm\n"), "{}", r.stdout);
    assert!(r.stdout.contains("# Not alerted: Job/shop/migrate (<stdin>:14): runs to completion"), "{}", r.stdout);
}

#[test]
fn the_same_workload_twice_is_alerted_once() {
    let twice = format!("{SLOW_AND_QUICK}---\n{}", SLOW_AND_QUICK.split("---").next().unwrap_or_default());
    let r = export(&["-"], Some(&twice));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.matches("- alert: LifeguardPodUnreadyPastObjective").count(), 1, "{}", r.stdout);
    assert!(r.stdout.contains("the same workload as at <stdin>:1, alerted there"), "{}", r.stdout);
}

#[test]
fn usage_and_policy_errors_exit_2_naming_what_is_wrong() {
    let r = export(&["--name", "Bad_Name", "examples"], None);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--name \"Bad_Name\""), "{}", r.stderr);
    let r = export(&["--namespace", "Not A Namespace", "examples"], None);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--namespace \"Not A Namespace\": not a namespace name"), "{}", r.stderr);

    let dir = tempfile::tempdir().expect("a temporary directory");
    let policy = dir.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\nparameters:\n  alertLabels:\n    team-name: ml\n",
    )
    .expect("write the policy");
    let r = export(&["--policy", &policy.to_string_lossy(), "examples"], None);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("policy.yaml:5"), "{}", r.stderr);
    assert!(r.stderr.contains("\"team-name\" is not a Prometheus label name"), "{}", r.stderr);
}

#[test]
fn an_unreadable_document_is_an_error_and_the_others_are_still_alerted() {
    let broken = format!("{SLOW_AND_QUICK}---\nkind: Deployment\nmetadata: {{name: x\n");
    let r = export(&["-"], Some(&broken));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("<stdin>:"), "{}", r.stderr);
    assert!(r.stdout.contains("lifeguard_workload: Deployment/llm\n"), "{}", r.stdout);
}
