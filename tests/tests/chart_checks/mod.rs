//! What the chart must do on any API server, shared by `cluster_install.rs`,
//! `cluster_admission.rs` and the version matrix (`cluster_versions.rs`):
//! `helm install`, `upgrade` and `uninstall` through it, and its webhooks
//! refusing under enforce and warning under warn.

// Each test binary uses a different part of it.
#![allow(dead_code)]

use std::time::Duration;

use lifeguard_e2e::cluster::chart::CHART;
use lifeguard_e2e::cluster::process::wait_for;
use lifeguard_e2e::cluster::{Client, ControlPlane, Run};
use lifeguard_e2e::repo_root;
use lifeguard_e2e::support::deployment;
use serde_json::Value;

/// `kind/name` of every object in a namespace, of the kinds the chart makes.
pub fn objects_in(plane: &ControlPlane, namespace: &str) -> Vec<String> {
    let kinds = "deployments,services,configmaps,secrets,serviceaccounts,poddisruptionbudgets";
    let run = plane.kubectl.run(&["get", kinds, "-n", namespace, "-o", "name"]);
    let mut names: Vec<String> = run.ok().lines().map(str::to_owned).collect();
    // What the controllers put in every namespace, and Helm's own record of
    // the release.
    names.retain(|n| {
        n != "configmap/kube-root-ca.crt" && n != "serviceaccount/default" && !n.starts_with("secret/sh.helm.release.")
    });
    names.sort();
    names
}

/// lifeguard's webhook configurations the cluster holds.
pub fn webhook_configurations(plane: &ControlPlane) -> Vec<String> {
    let run =
        plane.kubectl.run(&["get", "validatingwebhookconfigurations,mutatingwebhookconfigurations", "-o", "name"]);
    run.ok().lines().filter(|l| l.contains("lifeguard")).map(str::to_owned).collect()
}

fn ca_bundles(plane: &ControlPlane) -> Vec<Value> {
    let vwc = plane.kubectl.run(&["get", "validatingwebhookconfiguration", "lifeguard", "-o", "json"]).json();
    vwc["webhooks"].as_array().into_iter().flatten().map(|w| w["clientConfig"]["caBundle"].clone()).collect()
}

/// Waits until a namespace is gone (the namespace controller finalises it).
pub fn wait_gone(plane: &ControlPlane, namespace: &str) {
    wait_for("namespace deletion", Duration::from_secs(60), || {
        if plane.kubectl.get("", "namespace", namespace).is_none() { Ok(()) } else { Err("still there".to_owned()) }
    });
}

/// `helm install` of the chart (without cert-manager) into the `lifeguard`
/// namespace, an `upgrade` that keeps its CA, and `uninstall`, which leaves
/// only the TLS Secret the README says stays; the namespace is deleted at
/// the end. Every object must pass the API server's own validation.
pub fn helm_install_upgrade_and_uninstall(plane: &ControlPlane, helm: &Client) {
    // The namespace controller, so the tests can delete what they made.
    plane.start_controllers();
    let chart = repo_root().join(CHART);
    let chart = chart.to_string_lossy();

    let install = helm.run(&[
        "install",
        "lifeguard",
        &chart,
        "--namespace",
        "lifeguard",
        "--create-namespace",
        "--set",
        "certManager.enabled=false",
    ]);
    assert_eq!(install.code, 0, "{install:#?}");
    assert!(install.stdout.contains("STATUS: deployed"), "{}", install.stdout);
    assert_eq!(
        objects_in(plane, "lifeguard"),
        [
            "configmap/lifeguard-policy",
            "deployment.apps/lifeguard",
            "poddisruptionbudget.policy/lifeguard",
            "secret/lifeguard-tls",
            "service/lifeguard",
            "serviceaccount/lifeguard",
        ]
    );
    assert_eq!(
        webhook_configurations(plane),
        [
            "validatingwebhookconfiguration.admissionregistration.k8s.io/lifeguard",
            "mutatingwebhookconfiguration.admissionregistration.k8s.io/lifeguard"
        ]
    );
    let bundles = ca_bundles(plane);
    assert_eq!(bundles.len(), 3, "enforce, warn and audit");

    let upgrade = helm.run(&[
        "upgrade",
        "lifeguard",
        &chart,
        "--namespace",
        "lifeguard",
        "--set",
        "certManager.enabled=false",
        "--set",
        "replicaCount=3",
        "--set",
        "webhook.defaultMode=audit",
    ]);
    assert_eq!(upgrade.code, 0, "{upgrade:#?}");
    assert!(upgrade.stdout.contains("REVISION: 2"), "{}", upgrade.stdout);
    let deployment = plane.kubectl.get("lifeguard", "deployment", "lifeguard").expect("the Deployment");
    assert_eq!(deployment["spec"]["replicas"], 3);
    let after = ca_bundles(plane);
    assert_eq!(after.len(), 4, "the default-mode webhook joins");
    // helm's `lookup` of the Secret (a real API server answers it) keeps the CA.
    assert!(after.iter().all(|b| *b == bundles[0]), "the upgrade kept the CA the configurations trust");

    let uninstall = helm.run(&["uninstall", "lifeguard", "--namespace", "lifeguard"]);
    assert_eq!(uninstall.code, 0, "{uninstall:#?}");
    assert!(webhook_configurations(plane).is_empty(), "the configurations go with the release");
    let left = objects_in(plane, "lifeguard");
    // What the README says stays: the generated TLS Secret (resource-policy keep).
    assert_eq!(left, ["secret/lifeguard-tls"]);
    plane.kubectl.run(&["delete", "namespace", "lifeguard", "--wait=false"]).ok();
    wait_gone(plane, "lifeguard");
}

/// `kubectl create -n NAMESPACE -f -` of `object`, with `extra` flags.
pub fn create(plane: &ControlPlane, namespace: &str, object: &Value, extra: &[&str]) -> Run {
    let mut args = vec!["create", "-n", namespace, "-f", "-"];
    args.extend_from_slice(extra);
    plane.kubectl.run_with_input(&args, Some(&object.to_string()))
}

/// In a new namespace labelled `lifeguard.dev/mode=enforce`, the installed
/// chart's webhook refuses the naive GPU server naming its two rules, and
/// nothing is stored.
pub fn enforce_refuses_the_naive_gpu_server(plane: &ControlPlane, namespace: &str) {
    plane.kubectl.namespace(namespace, &["lifeguard.dev/mode=enforce"]);
    let run = create(plane, namespace, &deployment::naive_gpu("llm"), &[]);
    assert_eq!(run.code, 1, "{run:#?}");
    assert_eq!(run.stdout, "");
    // After the warnings (the info finding below the deny severity).
    let first = run.stderr.lines().find(|l| !l.starts_with("Warning: ")).unwrap_or_default();
    let expected = format!(
        "Error from server (Forbidden): error when creating \"STDIN\": admission webhook \
         \"enforce.validate.lifeguard.dev\" denied the request: lifeguard denied Deployment/{namespace}/llm: \
         1 finding at or above the deny severity of "
    );
    assert!(first.starts_with(&expected), "{}", run.stderr);
    // The shared /health is vLLM's own engine's (info): not what denies.
    assert!(!run.stderr.contains("\n- probe-endpoint-reused container"), "{}", run.stderr);
    assert!(run.stderr.contains("\n- startup-probe-missing container \"vllm\" at "));
    assert!(plane.kubectl.get(namespace, "deployment", "llm").is_none(), "nothing is stored");
}

/// In a new namespace labelled `lifeguard.dev/mode=warn`, the installed
/// chart's webhook admits the naive GPU server with one `kubectl` warning
/// per finding, each within 120 characters, and it is stored.
pub fn warn_admits_with_one_warning_per_finding(plane: &ControlPlane, namespace: &str) {
    plane.kubectl.namespace(namespace, &["lifeguard.dev/mode=warn"]);
    let run = create(plane, namespace, &deployment::naive_gpu("llm"), &[]);
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(run.stdout, "deployment.apps/llm created\n");
    let warnings = run.warnings();
    assert_eq!(warnings.len(), 2, "{}", run.stderr);
    assert!(warnings[0].starts_with("probe-endpoint-reused: container \"vllm\": "), "{warnings:?}");
    assert!(warnings[1].starts_with("startup-probe-missing: container \"vllm\": "), "{warnings:?}");
    for line in run.stderr.lines() {
        assert!(line.starts_with("Warning: "), "every stderr line is a warning: {line}");
        assert!(line.trim_start_matches("Warning: ").chars().count() <= 120, "{line}");
    }
    assert!(plane.kubectl.get(namespace, "deployment", "llm").is_some());
}
