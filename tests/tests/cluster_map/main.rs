//! `lifeguard export map` against the real kube-apiserver (v1.37, which
//! serves MutatingAdmissionPolicy v1 by default): the exports are accepted;
//! bound to a namespace, every object of the fixtures and of the shared
//! corpus that the API server admits is stored with exactly the fixes
//! `lifeguard fix --rule ...` makes for the rules it carries there (its
//! probes, lifecycle hooks and grace period compared once both are stored,
//! so server defaults are the same on both sides), listed in
//! `lifeguard.dev/mutated`, and sending the stored object again changes
//! nothing; the ValidatingAdmissionPolicies at Warn beside it judge the
//! stored object, so they warn only what `lifeguard lint` finds on the
//! fixed file; a relabel, a scale and an update of a Pod are not mutated, a
//! template change is; a second `kubectl apply` changes nothing; a rule in
//! `lifeguard.dev/ignore` is not fixed; what only the linter reads is left
//! as it came; 20 containers are fixed within the cost budget; the seed's
//! GPU model server is stored with `failureThreshold: 49`; a
//! LeaderWorkerSet, and a head or a submitter of KubeRay's kinds (their
//! real CRDs), is fixed in each template as `lifeguard fix` fixes it, a Ray
//! worker group left as it came (`custom_resources.rs`).
//!
//! The policies are cluster-wide objects, so the tests take turns.

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

mod boundaries;
mod custom_resources;
mod expected;
mod install;
mod reapply;
// The VAP tests' harness: the corpus, the fixtures, what the VAP flags and
// what the linter finds; this test uses part of it.
#[allow(dead_code)]
#[path = "../cluster_vap/support.rs"]
mod support;
mod updates;
// The custom resources the VAP tests judge: their CRDs, the corpus's and the made ones.
#[allow(dead_code)]
#[path = "../cluster_vap/lws.rs"]
mod lws;
#[allow(dead_code)]
#[path = "../cluster_vap/per_template.rs"]
mod per_template;
#[allow(dead_code)]
#[path = "../cluster_vap/ray.rs"]
mod ray;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use lifeguard_e2e::cluster::ControlPlane;
use lifeguard_e2e::corpus_dir;
use lifeguard_e2e::support::deployment as seed;
use policies::Policy;
use serde_json::Value;

use expected::{carried_rules, fixed_by_lifeguard, fixed_rules, mutated, resubmittable, touched};
use install::{dry_run_json, dry_run_output, export_map, install_map, remove_map};
use lifeguard_e2e::vap_parity::linted;
use support::{fixtures_and_corpus, flagged, namespace};

/// The policies are cluster-wide: one test at a time.
pub(crate) static TURN: Mutex<()> = Mutex::new(());

#[test]
fn every_pack_is_accepted_by_the_api_server() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().expect("tempdir");
    let readme_policy = dir.path().join("policy.yaml");
    std::fs::write(&readme_policy, lifeguard_e2e::documented_policy_example()).expect("write the README's policy");
    // No rule carried: the policy must still exist, with a mutation that changes nothing.
    let none = dir.path().join("none.yaml");
    let disabled: String = ["startup-probe-missing", "startup-budget-too-short", "liveness-too-aggressive"]
        .iter()
        .chain(&["probe-window-too-long", "grace-period-too-short", "prestop-sleep-only"])
        .map(|r| format!("  {r}: {{enabled: false}}\n"))
        .collect();
    std::fs::write(&none, format!("apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\nrules:\n{disabled}"))
        .expect("write a policy");
    let policies = ["default".to_owned(), "strict".to_owned(), "gpu-serving".to_owned()]
        .into_iter()
        .chain([&readme_policy, &none].map(|p| p.display().to_string()));
    for policy in policies {
        for kube in ["1.36", "1.37"] {
            let yaml = export_map(&["--policy", &policy, "--kube-version", kube]);
            // NAME-fix, and NAME-fix-2 for a LeaderWorkerSet's workers.
            assert_eq!(yaml.matches("kind: MutatingAdmissionPolicyBinding\n").count(), 2, "{policy}: {yaml}");
            let run = plane.kubectl.run_with_input(&["apply", "--dry-run=server", "-f", "-"], Some(&yaml));
            assert_eq!(run.code, 0, "{policy} {kube}: {run:#?}");
            assert_eq!(run.warnings(), Vec::<&str>::new(), "{policy} {kube}: {run:#?}");
        }
    }
}

#[test]
fn the_fixtures_and_the_corpus_are_stored_with_exactly_the_fixes_lifeguard_fix_makes() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    // The default pack, and gpu-serving: its overrides, the drain it assumes
    // for a model server and its fixInfoFindings.
    for pack in ["default", "gpu-serving"] {
        parity(plane, pack);
    }
}

/// How many objects get a fix, and of which rules and kinds.
#[derive(Debug, Default)]
struct Tally {
    /// Objects with a fix from the export, and from the webhook (all of `lifeguard fix`).
    objects: (usize, usize),
    /// Per rule: objects it fixes through the export, and through the webhook.
    rules: BTreeMap<String, (usize, usize)>,
    /// Per kind: objects the export fixes.
    kinds: BTreeMap<String, usize>,
}

impl Tally {
    fn add(&mut self, kind: &Value, by_export: &BTreeSet<String>, by_webhook: &BTreeSet<String>) {
        self.objects.0 += usize::from(!by_export.is_empty());
        self.objects.1 += usize::from(!by_webhook.is_empty());
        if !by_export.is_empty() {
            *self.kinds.entry(kind.as_str().unwrap_or_default().to_owned()).or_default() += 1;
        }
        for rule in by_export {
            self.rules.entry(rule.clone()).or_default().0 += 1;
        }
        for rule in by_webhook {
            self.rules.entry(rule.clone()).or_default().1 += 1;
        }
    }
}

/// One pack's export, bound to a namespace with the pack's
/// ValidatingAdmissionPolicies at Warn beside it, against `lifeguard fix`.
fn parity(plane: &ControlPlane, pack: &str) {
    remove_map(plane);
    support::remove(plane);
    let (ns, plain) = (format!("map-{pack}"), format!("map-plain-{pack}"));
    namespace(plane, &ns);
    namespace(plane, &plain);
    // The VAP's probe objects are waited for where nothing fixes them.
    support::install(plane, &lifeguard_e2e::vap_parity::export(&["--policy", pack, "--mode", "warn"]), &plain);
    install_map(plane, pack, &ns);
    let policy = Policy::pack(pack).expect("a built-in pack");
    let corpus = corpus_dir().map(|d| d.display().to_string());
    let in_corpus = |file: &str| corpus.as_deref().is_some_and(|c| file.starts_with(c));
    let (mut compared, mut refused, mut differences) = (0, 0, Vec::new());
    let (mut all, mut of_corpus) = (Tally::default(), Tally::default());
    let started = std::time::Instant::now();
    for (file, object) in fixtures_and_corpus() {
        let name = format!("{file} {}/{}", object["kind"], object["metadata"]["name"]);
        let run = dry_run_output(plane, &ns, &object);
        if run.code != 0 {
            // Refused for a reason of its own (placeholders, privileged containers).
            refused += 1;
            continue;
        }
        compared += 1;
        let stored: Value = serde_json::from_str(&run.stdout).expect("the stored object");
        let rules = carried_rules(&object, &policy);
        let by_export = fixed_rules(&object, &policy, Some(&rules));
        let by_webhook = fixed_rules(&object, &policy, None);
        all.add(&object["kind"], &by_export, &by_webhook);
        if in_corpus(&file) {
            of_corpus.add(&object["kind"], &by_export, &by_webhook);
        }
        if mutated(&stored) != by_export {
            differences
                .push(format!("{name}: lifeguard.dev/mutated {:?}, lifeguard fix {by_export:?}", mutated(&stored)));
            continue;
        }
        // Every mutation writes the annotation: without it, nothing was changed.
        let fixed = if by_export.is_empty() { object.clone() } else { fixed_by_lifeguard(&object, pack, &rules) };
        // The VAP at Warn judged the stored object: what the linter finds on the fixed file.
        let (cel, lint) = (flagged(&run), linted(&fixed, &policy));
        if !lint.agrees(&cel) {
            differences.push(format!("{name}: warned {cel:?}, lint of the fixed file {lint:?}"));
        }
        if by_export.is_empty() {
            continue;
        }
        match dry_run_json(plane, &plain, &fixed) {
            Ok(want) if touched(&want) == touched(&stored) => {}
            Ok(want) => {
                differences.push(format!("{name}: stored {}\n  lifeguard fix {}", touched(&stored), touched(&want)))
            }
            Err(e) => differences.push(format!("{name}: the fixed file is refused: {e}")),
        }
        match dry_run_json(plane, &ns, &resubmittable(&stored)) {
            Ok(again) if touched(&again) == touched(&stored) && mutated(&again) == mutated(&stored) => {}
            Ok(again) => differences.push(format!("{name}: sent again, stored {}", touched(&again))),
            Err(e) => differences.push(format!("{name}: sent again, refused: {e}")),
        }
    }
    eprintln!(
        "{pack}: {compared} objects compared, {refused} refused by the API server, {} disagreements, {:.0?}",
        differences.len(),
        started.elapsed()
    );
    for (what, tally) in [("fixtures and corpus", &all), ("corpus", &of_corpus)] {
        eprintln!("  {what}: {} objects fixed by export map, {} by the webhook", tally.objects.0, tally.objects.1);
        for (rule, (export, webhook)) in &tally.rules {
            eprintln!("    {rule}: {export} by export map, {webhook} by the webhook");
        }
        eprintln!("    kinds fixed by export map: {:?}", tally.kinds);
    }
    assert!(differences.is_empty(), "{differences:#?}");
    assert!(all.objects.0 >= 20, "{} objects fixed", all.objects.0);
    assert!(compared >= 250, "{compared} objects compared");
    remove_map(plane);
    support::remove(plane);
}

#[test]
fn leaderworkersets_are_stored_with_exactly_the_fixes_lifeguard_fix_makes_in_each_template() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    // gpu-serving fixes the most of them (fixInfoFindings); the default
    // pack's fixes of the built-in kinds are checked above.
    custom_resources::parity(plane, "gpu-serving");
}

#[test]
fn ray_objects_are_stored_with_exactly_the_fixes_lifeguard_fix_makes_in_the_head_and_the_submitter() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    custom_resources::ray_parity(plane, "gpu-serving");
}

#[test]
fn the_seeds_gpu_model_server_is_stored_with_a_startup_window_of_49_checks() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    remove_map(plane);
    support::remove(plane);
    let ns = "map-seed";
    namespace(plane, ns);
    install_map(plane, "default", ns);
    let deployment = seed::naive_gpu("llm");
    plane.kubectl.run_with_input(&["create", "-n", ns, "-f", "-"], Some(&deployment.to_string())).ok();
    let stored = plane.kubectl.get(ns, "deployment", "llm").expect("stored");
    let container = &stored["spec"]["template"]["spec"]["containers"][0];
    let startup = &container["startupProbe"];
    assert_eq!(startup["failureThreshold"], 49, "{container:#}");
    assert_eq!(startup["periodSeconds"], 10, "{container:#}");
    assert_eq!(startup["httpGet"]["path"], "/health", "{container:#}");
    assert_eq!(startup["httpGet"]["port"], "http", "{container:#}");
    // Liveness had no delay to clear and a window within the limit: left as it was.
    assert_eq!(container["livenessProbe"]["failureThreshold"], 3, "{container:#}");
    assert!(container["livenessProbe"].get("initialDelaySeconds").is_none(), "{container:#}");
    assert_eq!(mutated(&stored), BTreeSet::from(["startup-probe-missing".to_owned()]));
    eprintln!("stored startupProbe: {startup}");
    remove_map(plane);
}
