//! `lifeguard export alerts` against the real kube-apiserver with
//! prometheus-operator's PrometheusRule CRD installed (from its module, see
//! `.ci/install-prometheus-crds.sh`): on the shared corpus (its files and
//! its layouts: Kustomize overlays, Helm charts, custom resources), every
//! object printed is accepted by a client-side `kubectl apply` (its
//! last-applied copy within the annotations' limit) and stored as printed,
//! no field pruned; every alert's expression parses as PromQL; and a
//! policy's severity and labels reach every alert.

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

mod audit_corpus;

use std::time::Duration;

use audit_corpus::lifeguard;
use lifeguard::input::{Limits, parse_stream};
use lifeguard_e2e::cluster::ControlPlane;
use lifeguard_e2e::cluster::process::wait_for;
use lifeguard_e2e::support::layouts;
use lifeguard_e2e::{corpus_dir, installed_tool, repo_root};
use serde_json::Value;

const CRD: &str = "target/tools/prometheus-crds/monitoring.coreos.com_prometheusrules.yaml";
const INSTALLER: &str = ".ci/install-prometheus-crds.sh";

/// The CRD installed and its schema served; `false` (after saying why)
/// when it is not installed.
fn install_crd(plane: &ControlPlane) -> bool {
    let Some(path) = installed_tool(CRD, INSTALLER) else { return false };
    plane.kubectl.install_crds(&path, &["prometheusrules.monitoring.coreos.com"]);
    wait_for("the CRD's schema published", Duration::from_secs(60), || {
        let run = plane.kubectl.run(&["get", "--raw", "/openapi/v3/apis/monitoring.coreos.com/v1"]);
        if run.code == 0 { Ok(()) } else { Err(run.stderr) }
    });
    true
}

/// The documents of a YAML stream.
fn documents(stream: &str) -> Vec<Value> {
    let (docs, error) = parse_stream(stream, &Limits::default());
    assert!(error.is_none(), "{error:?}");
    docs.into_iter().map(|d| d.value).collect()
}

/// Every rule of the printed objects.
fn rules(objects: &[Value]) -> Vec<&Value> {
    objects
        .iter()
        .flat_map(|o| o["spec"]["groups"].as_array().into_iter().flatten())
        .flat_map(|g| g["rules"].as_array().into_iter().flatten())
        .collect()
}

/// Applies each object client-side into `namespace`, reads it back and
/// checks the API server kept its spec as printed.
fn apply_and_read_back(plane: &ControlPlane, namespace: &str, objects: &[Value]) {
    for object in objects {
        let name = object["metadata"]["name"].as_str().expect("a name");
        let run = plane.kubectl.run_with_input(&["apply", "-n", namespace, "-f", "-"], Some(&object.to_string()));
        assert_eq!(run.code, 0, "{name} refused: {}", run.stderr);
        assert!(run.stderr.trim().is_empty(), "{name}: {}", run.stderr);
        let stored = plane.kubectl.get(namespace, "prometheusrules", name).expect("stored");
        assert_eq!(stored["spec"], object["spec"], "{name}: the API server changed or pruned its spec");
        assert_eq!(stored["metadata"]["labels"], object["metadata"]["labels"], "{name}");
    }
}

#[test]
fn the_corpus_alerts_are_accepted_as_printed_and_parse_as_promql() {
    let Some(plane) = ControlPlane::shared() else { return };
    // The layouts' Helm charts and Kustomize trees are built by the real
    // helm and kustomize, found on PATH as a user has them.
    let Some(tools) = layouts::tools() else { return };
    let Some(corpus) = corpus_dir() else { return };
    if !install_crd(plane) {
        return;
    }
    let run = tools.lifeguard(
        &std::env::temp_dir(),
        &["export", "alerts", "--name", "corpus-alerts", &corpus.to_string_lossy()],
        None,
    );
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(0), "{}", String::from_utf8_lossy(&run.stderr));
    let objects = documents(&stdout);
    let rules = rules(&objects);
    eprintln!("{} alerts in {} PrometheusRule object(s) from the corpus", rules.len(), objects.len());
    // The corpus's files and layouts hold hundreds of long-running workloads.
    assert!(rules.len() >= 100, "{} alerts", rules.len());
    for rule in &rules {
        let expr = rule["expr"].as_str().expect("an expression");
        let parsed = promql_parser::parser::parse(expr).unwrap_or_else(|e| panic!("not PromQL ({e}): {expr}"));
        // `and` binds looser than `==`: the pods of the workload whose Ready
        // is False and phase Running, not a comparison of sets.
        let top = parsed.to_string();
        assert!(top.starts_with("kube_pod_status_ready{"), "{top}");
        assert!(top.contains(" == 1 and on (namespace, pod) kube_pod_status_phase{"), "{top}");
    }
    plane.kubectl.namespace("alerts", &[]);
    apply_and_read_back(plane, "alerts", &objects);
}

#[test]
fn a_policys_severity_and_labels_reach_every_alert() {
    let Some(plane) = ControlPlane::shared() else { return };
    if !install_crd(plane) {
        return;
    }
    let dir = std::env::temp_dir().join(format!("lifeguard-alerts-policy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let policy = dir.join("policy.yaml");
    std::fs::write(
        &policy,
        "apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\nextends: gpu-serving\nparameters:\n  alertSeverity: page\n  \
         alertLabels:\n    team: ml-serving\n  alertRecoverySeconds: 120\n",
    )
    .expect("write the policy");
    let examples = repo_root().join("lint/examples");
    let run = lifeguard(
        plane,
        &["export", "alerts", "--policy", &policy.to_string_lossy(), "--name", "team", &examples.to_string_lossy()],
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let objects = documents(&run.stdout);
    let rules = rules(&objects);
    assert!(!rules.is_empty());
    for rule in &rules {
        assert_eq!(rule["labels"]["severity"], "page", "{rule}");
        assert_eq!(rule["labels"]["team"], "ml-serving", "{rule}");
    }
    plane.kubectl.namespace("alerts-team", &[]);
    apply_and_read_back(plane, "alerts-team", &objects);
}
