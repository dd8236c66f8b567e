//! What the version matrix (`tests/tests/cluster_versions.rs`) runs too, on
//! each API server: every pack and mode accepted, and the parity of the
//! packs' exports with `lifeguard lint` on the fixtures and the corpus.
//! `extra` are arguments added to every `lifeguard export vap`.

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

use std::collections::BTreeMap;

use lifeguard_e2e::cluster::ControlPlane;
use policies::Policy;

use lifeguard_e2e::vap_parity::{covered, fixtures};

use crate::support::{dry_run, fixtures_and_corpus, flagged, install, namespace, remove};
use lifeguard_e2e::vap_parity::{export, linted};

/// `export vap ARGS EXTRA`.
fn export_with(args: &[&str], extra: &[&str]) -> String {
    let all: Vec<&str> = args.iter().chain(extra).copied().collect();
    export(&all)
}

/// Every pack, the README's policy, one where every finding denies and one
/// with every covered rule disabled, in every mode: each export passes a
/// server-side dry run (its CEL compiles and passes the cost estimate)
/// with no warning.
pub(crate) fn every_pack_and_mode_is_accepted(plane: &ControlPlane, extra: &[&str]) {
    let dir = tempfile::tempdir().expect("tempdir");
    let readme_policy = dir.path().join("policy.yaml");
    std::fs::write(&readme_policy, lifeguard_e2e::documented_policy_example()).expect("write the README's policy");
    // Policies with a group of no rule: every finding denies (NAME-warn
    // carries none), every covered rule disabled (neither carries one).
    let all_deny = dir.path().join("all-deny.yaml");
    std::fs::write(
        &all_deny,
        "apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\nextends: default\ndenySeverity: info\n",
    )
    .expect("write a policy");
    let none = dir.path().join("none.yaml");
    let disabled: String = covered().iter().map(|r| format!("  {r}: {{enabled: false}}\n")).collect();
    std::fs::write(
        &none,
        format!("apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\nextends: default\nrules:\n{disabled}"),
    )
    .expect("write a policy");
    let policies = ["default".to_owned(), "strict".to_owned(), "gpu-serving".to_owned()]
        .into_iter()
        .chain([&readme_policy, &all_deny, &none].map(|p| p.display().to_string()))
        .collect::<Vec<_>>();
    for policy in &policies {
        for mode in ["enforce", "warn", "audit"] {
            let yaml = export_with(&["--policy", policy, "--mode", mode], extra);
            let pairs = crate::support::SLOT_SUFFIXES.len();
            assert_eq!(
                yaml.matches("kind: ValidatingAdmissionPolicyBinding\n").count(),
                2 * pairs,
                "{policy} {mode}: {yaml}"
            );
            let run = plane.kubectl.run_with_input(&["apply", "--dry-run=server", "-f", "-"], Some(&yaml));
            assert_eq!(run.code, 0, "{policy} {mode}: {run:#?}");
            assert_eq!(run.warnings(), Vec::<&str>::new(), "{policy} {mode}: {run:#?}");
        }
    }
}

/// [`parity`] of the default pack, and of gpu-serving: its overrides,
/// requireStartupProbeForGpu and the drain it assumes for a model server.
pub(crate) fn parity_of_the_packs(plane: &ControlPlane, extra: &[&str]) {
    for pack in ["default", "gpu-serving"] {
        parity(plane, pack, extra);
    }
}

/// The parity of one pack's export under `Warn` with `lifeguard lint` under
/// that pack: every object of the covered rules' fixtures and of the shared
/// corpus gets exactly the covered findings the linter reports on it alone.
pub(crate) fn parity(plane: &ControlPlane, pack: &str, extra: &[&str]) {
    remove(plane);
    let ns = format!("vap-parity-{pack}");
    let ns = ns.as_str();
    namespace(plane, ns);
    install(plane, &export_with(&["--policy", pack, "--mode", "warn"], extra), ns);
    let policy = Policy::pack(pack).expect("a built-in pack");

    let fixture_count = fixtures().len();
    let objects = fixtures_and_corpus();
    let (mut compared, mut flagged_objects, mut refused) = (0, 0, Vec::new());
    let mut differences = Vec::new();
    // Per rule: findings both report, and the linter's the export is documented to miss.
    let mut tally: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (file, object) in &objects {
        let run = dry_run(plane, ns, object);
        if run.code != 0 {
            // Not admitted for a reason of its own (an unknown field's type, say).
            refused.push(format!("{file}: {}", run.stderr.lines().next().unwrap_or_default()));
            continue;
        }
        compared += 1;
        let (cel, lint) = (flagged(&run), linted(object, &policy));
        flagged_objects += usize::from(!lint.all.is_empty());
        if !lint.agrees(&cel) {
            differences.push(format!("{file} {}: admission {cel:?}, lint {lint:?}", object["metadata"]["name"]));
        }
        for (rule, _) in &cel {
            tally.entry(rule.clone()).or_default().0 += 1;
        }
        for (rule, _) in lint.all.difference(&cel) {
            tally.entry(rule.clone()).or_default().1 += 1;
        }
    }
    eprintln!(
        "{pack}: {compared} objects compared ({fixture_count} from fixtures), {flagged_objects} with covered findings, {} refused by the API server, {} disagreements",
        refused.len(),
        differences.len()
    );
    for (rule, (both, missed)) in &tally {
        eprintln!("  {rule}: {both} findings reported by both, {missed} of the linter's not carried (documented)");
    }
    assert!(differences.is_empty(), "{differences:#?}");
    assert!(flagged_objects >= 4, "the fixtures' bad objects were judged");
    // Refused for reasons of their own: placeholders (`$K8S_SA_NAME`), privileged
    // containers (this API server disallows them), names the API server rejects.
    assert!(compared >= 250, "{compared} objects compared; refused: {refused:#?}");
    remove(plane);
}
