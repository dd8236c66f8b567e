//! The version matrix: on each older API server the project supports
//! (v1.34, the oldest, and v1.36; the newest, v1.37, runs every cluster
//! test), the smoke subset of the cluster tests, each the same check as
//! the newest's: the chart installs, upgrades and uninstalls with `helm`;
//! its webhook configurations are stored as rendered, and they refuse
//! under enforce and warn under warn; `lifeguard export vap` of every pack
//! and mode is accepted and its parity with `lifeguard lint` on the
//! fixtures and the corpus holds (the custom kinds' slot objects are among
//! those accepted; their parity runs on the newest release, in
//! `cluster_vap`); `lifeguard audit` judges the corpus as
//! `lint` and `simulate` do.
//!
//! Each test starts a control plane of its own, which stops when it ends;
//! they take turns, as each alone keeps the two cores of CI busy.

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

#[allow(dead_code)]
#[path = "cluster_vap/checks.rs"]
mod checks;
#[allow(dead_code)]
#[path = "cluster_vap/support.rs"]
mod support;

#[allow(dead_code)]
#[path = "cluster_map/install.rs"]
mod map_install;

mod audit_corpus;
mod chart_checks;

use std::sync::Mutex;
use std::time::Instant;

use audit_corpus::parity;
use lifeguard_e2e::cluster::release::Release;
use lifeguard_e2e::cluster::{ControlPlane, Installation};

static TURN: Mutex<()> = Mutex::new(());

/// The smoke subset on `release`'s API server.
fn smoke(release: Release) {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let started = Instant::now();
    let Some(plane) = ControlPlane::start_release(release) else { return };
    let Some(helm) = plane.helm() else { return };
    let version = plane.kubectl.run(&["version", "-o", "json"]).json();
    let server = version["serverVersion"]["gitVersion"].as_str().unwrap_or_default().to_owned();
    assert!(server.starts_with(&format!("v{}.", release.minor())), "the API server of {release:?} is {server}");
    let step = |what: &str, since: &mut Instant| {
        eprintln!("{server}: {what} in {:.0?}", since.elapsed());
        *since = Instant::now();
    };
    let mut since = started;
    step("started", &mut since);

    chart_checks::helm_install_upgrade_and_uninstall(&plane, &helm);
    step("helm install, upgrade and uninstall", &mut since);

    let Some(lifeguard) = Installation::install(&plane, &["certManager.enabled=false"]) else { return };
    assert_eq!(lifeguard.stored_changes(&plane), Vec::<String>::new(), "stored as the chart renders them");
    chart_checks::enforce_refuses_the_naive_gpu_server(&plane, "enforce-gpu");
    chart_checks::warn_admits_with_one_warning_per_finding(&plane, "warn-gpu");
    // The exports' dry runs are the policies' alone.
    lifeguard.unregister(&plane);
    step("the webhooks under enforce and warn", &mut since);

    // The export for this release, as a user of its clusters asks for it.
    let kube_version = ["--kube-version", release.minor()];
    checks::every_pack_and_mode_is_accepted(&plane, &kube_version);
    step("export vap of every pack and mode accepted", &mut since);
    checks::parity_of_the_packs(&plane, &kube_version);
    step("export vap's parity with lint", &mut since);

    if release.serves_mutating_admission_policy_v1() {
        for (i, pack) in ["default", "strict", "gpu-serving"].into_iter().enumerate() {
            let ns = format!("map-{i}");
            support::namespace(&plane, &ns);
            map_install::install_map_for(&plane, pack, &ns, release.minor());
            map_install::remove_map(&plane);
        }
        step("export map of every pack accepted and in force", &mut since);
    }

    let Some(loaded) = audit_corpus::load(&plane, "au") else { return };
    let audit = parity::findings(&plane, &loaded);
    parity::verdicts_agree(&plane, &loaded, &audit);
    step("audit's parity with lint and simulate", &mut since);
    eprintln!("{server}: the smoke subset passed in {:.0?}", started.elapsed());
}

#[test]
fn v1_34() {
    smoke(Release::V1_34);
}

/// On 1.34 MutatingAdmissionPolicy is beta and off: with the feature gate
/// and the beta API switched on, as `export map`'s refusal tells a user to,
/// `export map --map-api v1beta1` of every pack is accepted and in force.
#[test]
fn v1_34_with_the_beta_mutating_admission_policy() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let release = Release::V1_34;
    let beta =
        ["--feature-gates=MutatingAdmissionPolicy=true", "--runtime-config=admissionregistration.k8s.io/v1beta1=true"];
    let Some(plane) = ControlPlane::start_release_with(release, &beta) else { return };
    for (i, pack) in ["default", "strict", "gpu-serving"].into_iter().enumerate() {
        let ns = format!("map-beta-{i}");
        support::namespace(&plane, &ns);
        let args = ["--policy", pack, "--kube-version", release.minor(), "--map-api", "v1beta1"];
        map_install::install_exported_map(&plane, &args, &ns);
        map_install::remove_map(&plane);
    }
}

#[test]
fn v1_36() {
    smoke(Release::V1_36);
}
