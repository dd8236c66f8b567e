//! The same policy gives the same verdict in pre-commit and CI (`lifeguard
//! lint` on a file) and at admission (the engine called directly on the
//! object as JSON, as the webhook will): same findings, same severities,
//! same suppressions, same deny decision.

use std::path::Path;

use lifeguard::input::Limits;
use lifeguard::lint::lint_paths;
use lifeguard::outcome::Outcome;
use lifeguard::policy_source::PolicySource;
use lifeguard_e2e::corpus_dir;
use policies::yaml::{parse_stream, to_yaml};
use policies::{Batch, Policy, lint_object, objects_in};
use serde_json::{Value, json};

const POLICY: &str = r#"apiVersion: lifeguard.dev/v1alpha1
kind: Policy
metadata: {name: inference-platform}
extends: gpu-serving
denySeverity: warning
parameters:
  gpuBootSeconds: 1200
rules:
  exec-probe: {enabled: false}
  liveness-too-aggressive: {severity: error}
exemptions:
- reason: the mesh team owns its sidecar's probes
  containers: [istio-proxy]
- reason: batch namespace has no Services
  namespaces: [batch]
  rules: [readiness-probe-missing]
customRules:
- name: memory-limit-missing
  severity: warning
  message: "container {container} has no memory limit"
  path: $.resources.limits.memory
  when: absent
"#;

/// One comparable line per finding and per suppression.
type Verdict = (Vec<String>, Vec<String>, bool);

fn verdict_of_outcome(out: &Outcome, policy: &Policy) -> Verdict {
    let mut findings: Vec<String> = out
        .findings
        .iter()
        .map(|l| {
            let f = &l.finding;
            format!("{} {} {} {:?} {}", l.object(), f.rule, f.severity, f.container, f.pointer)
        })
        .collect();
    let mut suppressed: Vec<String> = out
        .suppressed
        .iter()
        .map(|s| format!("{} {} {}", s.located.object(), s.located.finding.rule, s.reason))
        .collect();
    findings.sort();
    suppressed.sort();
    let denied = out.findings.iter().any(|l| policy.denies(l.finding.severity));
    (findings, suppressed, denied)
}

fn verdict_of_engine(objects: &[Value], policy: &Policy) -> Verdict {
    let batch = Batch::from_objects(objects.iter());
    let (mut findings, mut suppressed, mut denied) = (Vec::new(), Vec::new(), false);
    for object in objects {
        // The webhook receives JSON: go through the wire format.
        let wire = serde_json::to_string(object).expect("serialize");
        let received: Value = serde_json::from_str(&wire).expect("parse");
        let Some(report) = lint_object(&received, &batch, policy).expect("object reads") else {
            continue;
        };
        let name = |kind: &str| match (&report.namespace, &report.name) {
            (Some(ns), Some(n)) => format!("{kind}/{ns}/{n}"),
            (None, Some(n)) => format!("{kind}/{n}"),
            (ns, None) => format!("{kind}/{}<unnamed>", ns.as_ref().map(|n| format!("{n}/")).unwrap_or_default()),
        };
        let object = name(&report.kind);
        for f in &report.findings {
            findings.push(format!("{object} {} {} {:?} {}", f.rule, f.severity, f.container, f.pointer));
        }
        denied |= report.denied_by(policy);
        for s in &report.suppressed {
            suppressed.push(format!("{object} {} {}", s.finding.rule, s.reason));
        }
    }
    findings.sort();
    suppressed.sort();
    (findings, suppressed, denied)
}

fn objects() -> Vec<Value> {
    let gpu = json!({"limits": {"nvidia.com/gpu": 1, "memory": "64Gi"}});
    vec![
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "llm", "namespace": "ml"},
        "spec": {"template": {"metadata": {"labels": {"app": "llm"}}, "spec": {"containers": [
            {"name": "vllm", "image": "vllm/vllm-openai:v0.6.0", "resources": gpu,
             "ports": [{"containerPort": 8000}],
             "livenessProbe": {"httpGet": {"path": "/health", "port": 8000}, "initialDelaySeconds": 240},
             "readinessProbe": {"tcpSocket": {"port": 8000}}},
            {"name": "istio-proxy", "image": "istio/proxyv2:1.22",
             "livenessProbe": {"httpGet": {"path": "/healthz/live", "port": 15021}, "failureThreshold": 1}}
        ]}}}}),
        json!({"apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "embed", "namespace": "batch",
                     "annotations": {"lifeguard.dev/ignore": "memory-limit-missing",
                                     "lifeguard.dev/ignore-reason": "sized by the scheduler"}},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
            {"name": "embed", "image": "corp/embed:3",
             "livenessProbe": {"exec": {"command": ["cat", "/tmp/ok"]}, "periodSeconds": 1, "failureThreshold": 1}}
        ]}}}}),
        json!({"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "debug", "annotations": {"lifeguard.dev/ignore": "readiness-probe-missing"}},
               "spec": {"containers": [{"name": "sh", "image": "busybox", "ports": [{"containerPort": 80}]}]}}),
    ]
}

fn lint_file(path: &Path, policy_file: &Path) -> (Outcome, Policy) {
    let policy = PolicySource::File(policy_file.to_path_buf()).load().expect("policy loads");
    let out = lint_paths(&[path.display().to_string()], &policy, &Limits::default());
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    (out, policy)
}

#[test]
fn lint_on_files_and_the_engine_on_json_agree() {
    let dir = tempfile::tempdir().expect("tempdir");
    let policy_file = dir.path().join("policy.yaml");
    std::fs::write(&policy_file, POLICY).expect("write policy");
    let engine_policy = Policy::load(POLICY, "policy.yaml").expect("policy");
    let mut suppressed_total = 0;
    for (i, object) in objects().iter().enumerate() {
        let file = dir.path().join(format!("object-{i}.yaml"));
        std::fs::write(&file, to_yaml(object)).expect("write manifest");
        let (out, policy) = lint_file(&file, &policy_file);
        let from_lint = verdict_of_outcome(&out, &policy);
        let from_engine = verdict_of_engine(std::slice::from_ref(object), &engine_policy);
        assert_eq!(from_lint, from_engine, "object {i}");
        assert!(!from_lint.0.is_empty(), "object {i} should have findings to compare");
        suppressed_total += from_lint.1.len();
    }
    // The policy's exemptions and the annotation are exercised, not idle.
    assert!(suppressed_total >= 3, "{suppressed_total}");
}

#[test]
fn lint_and_engine_agree_on_every_corpus_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let policy_file = dir.path().join("policy.yaml");
    std::fs::write(&policy_file, POLICY).expect("write policy");
    let engine_policy = Policy::load(POLICY, "policy.yaml").expect("policy");
    let Some(corpus) = corpus_dir() else { return };
    let files = std::fs::read_dir(corpus.join("files")).expect("corpus files");
    let mut compared = 0;
    for entry in files.flatten() {
        let path = entry.path();
        let text = std::fs::read_to_string(&path).expect("read corpus file");
        let (docs, err) = parse_stream(&text, &Limits::default());
        if err.is_some() {
            continue;
        }
        let objects: Vec<Value> = docs
            .iter()
            .flat_map(|d| objects_in(&d.value).into_iter().map(|(_, v)| v.clone()))
            .filter(Value::is_object)
            .collect();
        // Alone in a directory: lint reads a file's directory for Services,
        // and the engine here has only the file's own objects.
        let alone_dir = tempfile::tempdir().expect("tempdir");
        let alone = alone_dir.path().join(entry.file_name());
        std::fs::write(&alone, &text).expect("copy corpus file");
        let (out, policy) = lint_file(&alone, &policy_file);
        assert_eq!(
            verdict_of_outcome(&out, &policy),
            verdict_of_engine(&objects, &engine_policy),
            "{}",
            path.display()
        );
        compared += 1;
    }
    assert!(compared >= 190, "{compared} corpus files compared");
}
