//! Installing lifeguard as the README says, into the real kube-apiserver:
//! `helm install` / `upgrade` / `uninstall` of the chart (without
//! cert-manager), and `kubectl apply --server-side` of `deploy/manifests/`
//! with cert-manager's real CRDs. Every object must pass the API server's
//! own validation; nothing runs them (there is no node).
//!
//! Both use the `lifeguard` namespace, so they take turns.

mod chart_checks;

use std::sync::Mutex;

use chart_checks::{wait_gone, webhook_configurations};
use lifeguard_e2e::cluster::ControlPlane;
use lifeguard_e2e::cluster::control_plane::TOOLS;
use lifeguard_e2e::repo_root;

static TURN: Mutex<()> = Mutex::new(());

#[test]
fn helm_install_upgrade_and_uninstall_through_the_api_server() {
    let Some(plane) = ControlPlane::shared() else { return };
    let Some(helm) = plane.helm() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    chart_checks::helm_install_upgrade_and_uninstall(plane, &helm);
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
    plane.kubectl.wait_established(&["certificates.cert-manager.io", "issuers.cert-manager.io"]);

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
