//! `export map` on LeaderWorkerSets and KubeRay's kinds (their real
//! CRDs): bound to a namespace, each object of their projects' examples
//! and samples, and the ones made to reach each template's semantics, is
//! stored with exactly the fixes `lifeguard fix --rule ...` makes in each
//! template it fixes for the rules carried there (a leader's or a head's by
//! `NAME-fix`, the workers' or a submitter's by `NAME-fix-2`), the others
//! (a Ray worker group) as they came; the rules listed in
//! `lifeguard.dev/mutated`, and sending it again changes nothing.

use std::collections::BTreeSet;
use std::time::Duration;

use lifeguard_e2e::cluster::ControlPlane;
use lifeguard_e2e::cluster::process::wait_for;
use policies::model::Workload;
use policies::{Batch, Policy, plan_fixes};
use serde_json::{Value, json};

use crate::expected::{carried_rules_of, fixed_by_lifeguard, mutated, resubmittable, touched_at};
use crate::install::{dry_run_json, install_map, remove_map};
use crate::lws::{corpus_lws, install_lws_crd, lws, made, template};
use crate::per_template::slot_suffix;
use crate::support::{self, namespace};

/// The rules `lifeguard fix --rule RULES` fixes in the template at
/// `template` (a finding of the object outside every template counts for each).
fn fixed_in(object: &Value, policy: &Policy, rules: &[String], template: &str, all: &[Workload]) -> BTreeSet<String> {
    let plan = plan_fixes(object, &Batch::default(), policy, Some(rules)).ok().flatten();
    let inside = |pointer: &str, w: &Workload| pointer.starts_with(&format!("{}/", w.template_pointer));
    plan.into_iter()
        .flat_map(|p| p.applied)
        .filter(|a| a.pointer.starts_with(&format!("{template}/")) || !all.iter().any(|w| inside(&a.pointer, w)))
        .map(|a| a.rule)
        .collect()
}

/// Waits until the workers' policy fixes: an aggressive worker liveness raised.
fn wait_for_the_workers(plane: &ControlPlane, ns: &str) {
    let none = json!({});
    let aggressive = json!({"livenessProbe": {"httpGet": {"path": "/livez", "port": "http"}, "failureThreshold": 1}});
    let probe = lws("map-probe", Value::Null, template("worker", aggressive, none.clone(), none));
    wait_for("the workers' mutating policy in force", Duration::from_secs(30), || {
        match dry_run_json(plane, ns, &probe) {
            Ok(stored)
                if stored["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["livenessProbe"]
                    ["failureThreshold"]
                    != 1 =>
            {
                Ok(())
            }
            other => Err(format!("{other:?}")),
        }
    });
}

/// Whether `export map` fixes the template: a kind whose CRD keys its
/// containers by name, in a template not behind a `*`.
fn fixed_by_export(object: &Value, w: &Workload) -> bool {
    let merged = policies::vap::mutation::FIXED_CUSTOM_KINDS.iter().any(|(kind, group)| {
        object["kind"] == *kind && object["apiVersion"].as_str().is_some_and(|v| v.starts_with(&format!("{group}/")))
    });
    merged && slot_suffix(object, &w.template_pointer).is_some()
}

/// One pack's export against `lifeguard fix` on the LeaderWorkerSets, template by template.
pub(crate) fn parity(plane: &ControlPlane, pack: &str) {
    let Some(corpus) = install_lws_crd(plane) else { return };
    let objects = corpus_lws(&corpus).into_iter().chain(made()).collect();
    let fixed_second = parity_of(plane, pack, "lws", objects, wait_for_the_workers, |plane, ns| {
        // The GPU worker's startup probe (a JSON Patch into the workers' pod spec) is there.
        let gpu = made().into_iter().find(|(f, _)| f == "made: gpu-worker").map(|(_, o)| o).expect("the GPU worker");
        let stored = dry_run_json(plane, ns, &gpu).expect("admitted");
        let worker = &stored["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0];
        assert_eq!(worker["startupProbe"]["httpGet"]["path"], "/livez", "{worker:#}");
        let leader = &stored["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0];
        assert!(leader.get("startupProbe").is_none(), "{leader:#}");
    });
    assert!(fixed_second >= 2, "{fixed_second} workers' templates fixed");
}

/// One pack's export against `lifeguard fix` on KubeRay's kinds, template by template.
pub(crate) fn ray_parity(plane: &ControlPlane, pack: &str) {
    if !crate::ray::install_kuberay_crds(plane) {
        return;
    }
    let objects = crate::ray::corpus_ray().into_iter().chain(crate::ray::made()).collect();
    parity_of(plane, pack, "ray", objects, |_, _| {}, |_, _| {});
}

/// The export of `pack` bound to a namespace, against `lifeguard fix` on
/// each of `objects`, template by template (`wait` until the second
/// policy is in force, `after` the comparison, checks of its own); how many
/// templates of the second policy it fixed.
fn parity_of(
    plane: &ControlPlane,
    pack: &str,
    what: &str,
    objects: Vec<(String, Value)>,
    wait: impl Fn(&ControlPlane, &str),
    after: impl Fn(&ControlPlane, &str),
) -> usize {
    remove_map(plane);
    support::remove(plane);
    let (ns, plain) = (format!("map-{what}-{pack}"), format!("map-{what}-plain-{pack}"));
    namespace(plane, &ns);
    namespace(plane, &plain);
    install_map(plane, pack, &ns);
    wait(plane, &ns);
    let policy = Policy::pack(pack).expect("a built-in pack");
    let (mut compared, mut refused, mut fixed_objects, mut fixed_second) = (0, 0, 0, 0);
    let mut differences = Vec::new();
    for (file, object) in objects {
        let name = format!("{file} {}", object["metadata"]["name"]);
        let Ok(stored) = dry_run_json(plane, &ns, &object) else {
            // Refused by its CRD's schema (a sample of a newer version's field).
            assert!(!file.starts_with("made: "), "{name}: refused");
            refused += 1;
            continue;
        };
        compared += 1;
        let all = Workload::all_from_object(&object).expect("reads");
        let mut by_export = BTreeSet::new();
        for w in &all {
            // A template the export does not fix (a Ray worker group) is stored as it came.
            let rules = if fixed_by_export(&object, w) { carried_rules_of(w, &policy) } else { Vec::new() };
            let fixed_here = fixed_in(&object, &policy, &rules, &w.template_pointer, &all);
            let second = slot_suffix(&object, &w.template_pointer).is_some_and(|s| s == "-2");
            fixed_second += usize::from(second && !fixed_here.is_empty());
            by_export.extend(fixed_here.iter().cloned());
            let want = if rules.is_empty() || fixed_here.is_empty() {
                dry_run_json(plane, &plain, &object)
            } else {
                dry_run_json(plane, &plain, &fixed_by_lifeguard(&object, pack, &rules))
            };
            match want {
                Ok(want) if touched_at(&want, &w.spec_pointer) == touched_at(&stored, &w.spec_pointer) => {}
                Ok(want) => differences.push(format!(
                    "{name} {}: stored {}\n  lifeguard fix {}",
                    w.template_pointer,
                    touched_at(&stored, &w.spec_pointer),
                    touched_at(&want, &w.spec_pointer)
                )),
                Err(e) => differences.push(format!("{name}: the fixed file is refused: {e}")),
            }
        }
        fixed_objects += usize::from(!by_export.is_empty());
        if mutated(&stored) != by_export {
            differences
                .push(format!("{name}: lifeguard.dev/mutated {:?}, lifeguard fix {by_export:?}", mutated(&stored)));
        }
        match dry_run_json(plane, &ns, &resubmittable(&stored)) {
            Ok(again) if again["spec"] == stored["spec"] && mutated(&again) == mutated(&stored) => {}
            Ok(again) => differences.push(format!("{name}: sent again, stored {}", again["spec"])),
            Err(e) => differences.push(format!("{name}: sent again, refused: {e}")),
        }
    }
    eprintln!(
        "{pack}: {compared} {what} objects compared, {refused} refused by their CRD, {fixed_objects} fixed, {fixed_second} in a second template, {} disagreements",
        differences.len()
    );
    assert!(differences.is_empty(), "{differences:#?}");
    assert!(compared >= 20, "{compared} compared");
    after(plane, &ns);
    remove_map(plane);
    fixed_second
}
