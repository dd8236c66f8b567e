//! Installing lifeguard as the README says, into the real kube-apiserver:
//! `helm install` / `upgrade` / `uninstall` of the chart (without
//! cert-manager), and `kubectl apply --server-side` of `deploy/manifests/`
//! with cert-manager's real CRDs. Every object must pass the API server's
//! own validation; nothing runs them (there is no node).
//!
//! Both use the `lifeguard` namespace, so they take turns.

use std::sync::Mutex;

use lifeguard_e2e::cluster::ControlPlane;
use lifeguard_e2e::cluster::chart::CHART;
use lifeguard_e2e::cluster::control_plane::TOOLS;
use lifeguard_e2e::repo_root;
use serde_json::Value;

static TURN: Mutex<()> = Mutex::new(());

/// `kind/name` of every object in a namespace, of the kinds the chart makes.
fn objects_in(plane: &ControlPlane, namespace: &str) -> Vec<String> {
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

fn webhook_configurations(plane: &ControlPlane) -> Vec<String> {
    let run =
        plane.kubectl.run(&["get", "validatingwebhookconfigurations,mutatingwebhookconfigurations", "-o", "name"]);
    run.ok().lines().filter(|l| l.contains("lifeguard")).map(str::to_owned).collect()
}

fn ca_bundles(plane: &ControlPlane) -> Vec<Value> {
    let vwc = plane.kubectl.run(&["get", "validatingwebhookconfiguration", "lifeguard", "-o", "json"]).json();
    vwc["webhooks"].as_array().into_iter().flatten().map(|w| w["clientConfig"]["caBundle"].clone()).collect()
}

#[test]
fn helm_install_upgrade_and_uninstall_through_the_api_server() {
    let Some(plane) = ControlPlane::shared() else { return };
    let Some(helm) = plane.helm() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
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

/// Waits until a namespace is gone (the namespace controller finalises it).
fn wait_gone(plane: &ControlPlane, namespace: &str) {
    lifeguard_e2e::cluster::process::wait_for("namespace deletion", std::time::Duration::from_secs(60), || {
        if plane.kubectl.get("", "namespace", namespace).is_none() { Ok(()) } else { Err("still there".to_owned()) }
    });
}

#[test]
fn the_plain_manifests_apply_server_side_against_cert_managers_real_crds() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    // The namespace controller, so the tests can delete what they made.
    plane.start_controllers();
    let crds = repo_root().join(TOOLS).join("crds");
    let crds = crds.to_string_lossy();
    plane.kubectl.run(&["apply", "--server-side", "-f", &crds]).ok();
    plane
        .kubectl
        .run(&[
            "wait",
            "--for=condition=Established",
            "crd/certificates.cert-manager.io",
            "crd/issuers.cert-manager.io",
            "--timeout=60s",
        ])
        .ok();

    // The README's commands, as written.
    plane.kubectl.run(&["create", "namespace", "lifeguard"]).ok();
    let manifests = repo_root().join("deploy/manifests");
    let manifests = format!("{}/", manifests.to_string_lossy());
    let apply = plane.kubectl.run(&["apply", "--server-side", "-f", &manifests]);
    assert_eq!(apply.code, 0, "{apply:#?}");
    assert_eq!(apply.stderr, "", "no warning from the API server");
    let applied: Vec<&str> = apply.stdout.lines().collect();
    assert_eq!(applied.len(), 11, "{}", apply.stdout);
    assert!(applied.iter().all(|l| l.ends_with(" serverside-applied")), "{}", apply.stdout);
    for expected in [
        "certificate.cert-manager.io/lifeguard-serving",
        "issuer.cert-manager.io/lifeguard-ca",
        "deployment.apps/lifeguard",
    ] {
        assert!(applied.iter().any(|l| l.starts_with(expected)), "{expected}: {}", apply.stdout);
    }
    // Applying again changes nothing and conflicts with nothing.
    let again = plane.kubectl.run(&["apply", "--server-side", "-f", &manifests]);
    assert_eq!(again.code, 0, "{again:#?}");

    let delete = plane.kubectl.run(&["delete", "-f", &manifests]);
    assert_eq!(delete.code, 0, "{delete:#?}");
    assert!(webhook_configurations(plane).is_empty());
    plane.kubectl.run(&["delete", "namespace", "lifeguard", "--wait=false"]).ok();
    wait_gone(plane, "lifeguard");
}
