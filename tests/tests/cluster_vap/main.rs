//! `lifeguard export vap` against the real kube-apiserver: the exported
//! ValidatingAdmissionPolicies are accepted (their CEL compiles and passes
//! the cost estimate) for every pack and mode; under `Warn` every object of
//! the covered rules' fixtures and of the shared corpus gets exactly the
//! covered findings `lifeguard lint` reports on it alone (same rule, same
//! containers; for a partly covered rule, all of the part it carries), and
//! none it does not; under enforce an object is refused only where the
//! linter denies it, and a bad fixture with a rule named; cold-start values
//! and preStop hooks are read as the linter reads them; a pod of 20
//! containers is judged within the budget; an export applied over another
//! mode's replaces it (`modes.rs`); the pod templates of LeaderWorkerSets
//! (its real CRD) are judged each as the linter judges it
//! (`lws.rs`), and so are the head groups and RayJob submitters of
//! KubeRay's kinds, their worker groups left to the linter (`ray.rs`). The first two are `checks.rs`, which
//! the version matrix (`cluster_versions.rs`) runs on older API servers.
//!
//! The policies are cluster-wide, so the tests take turns.

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

mod checks;
mod lws;
mod modes;
mod per_template;
mod ray;
mod reading;
mod support;

use std::sync::Mutex;
use std::time::Duration;

use lifeguard_e2e::cluster::ControlPlane;
use lifeguard_e2e::cluster::process::wait_for;
use lifeguard_e2e::{repo_root, rule_fixtures};
use policies::{Batch, Policy, lint_object};
use serde_json::{Value, json};

use lifeguard_e2e::vap_parity::{carried, covered, denies, objects};
use lifeguard_e2e::vap_parity::{export, linted};
use support::{dry_run, fixtures_and_corpus, flagged, install, namespace, remove};

/// The policies are cluster-wide: one test at a time.
pub(crate) static TURN: Mutex<()> = Mutex::new(());

#[test]
fn every_pack_and_mode_is_accepted_by_the_api_server() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    checks::every_pack_and_mode_is_accepted(plane, &[]);
}

#[test]
fn under_warn_the_fixtures_and_the_corpus_get_exactly_the_linters_covered_findings() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    checks::parity_of_the_packs(plane, &[]);
}

#[test]
fn under_warn_leaderworkersets_get_exactly_the_linters_covered_findings_in_each_template() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    // One pack each for LeaderWorkerSets and Ray objects (default here,
    // gpu-serving for Ray): a pack changes only the constants of the slots'
    // CEL, which the fixtures' and the corpus's parity checks in both.
    lws::parity(plane, "default");
}

#[test]
fn under_warn_ray_objects_get_exactly_the_linters_covered_findings_in_the_head_and_the_submitter() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    ray::parity(plane, "gpu-serving");
}

#[test]
fn a_policy_that_declares_leaderworkerset_is_judged_as_the_linter_reads_the_declaration() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    lws::declared(plane);
}

#[test]
fn under_deny_a_leaderworkerset_with_a_bad_worker_template_is_refused() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    lws::deny(plane);
}

#[test]
fn under_deny_a_bad_object_is_refused_with_the_rule_named_and_a_good_one_admitted() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    remove(plane);
    let ns = "vap-deny";
    namespace(plane, ns);
    // Created before the policy: an update that leaves its template alone
    // is not judged, and one that changes it is judged only by the findings
    // the old object did not have, as the webhook's ratchet (same rule,
    // same container).
    let dir = rule_fixtures("probe-port-unknown");
    let old = objects(&dir.join("bad.yaml")).into_iter().find(|o| o["kind"] == "Deployment").expect("a bad Deployment");
    let name = old["metadata"]["name"].as_str().expect("name").to_owned();
    let mut stored = old.clone();
    stored["metadata"].as_object_mut().expect("metadata").remove("namespace");
    plane.kubectl.run_with_input(&["create", "-n", ns, "-f", "-"], Some(&stored.to_string())).ok();
    install(plane, &export(&["--policy", "default", "--mode", "enforce"]), ns);
    let relabel = plane.kubectl.run(&["label", "deployment", &name, "-n", ns, "team=payments"]);
    assert_eq!(relabel.code, 0, "a relabel is not judged: {relabel:#?}");
    let scale = plane.kubectl.run(&["scale", "deployment", &name, "-n", ns, "--replicas=3"]);
    assert_eq!(scale.code, 0, "a scale is not judged: {scale:#?}");
    let patch =
        |patch: &str| plane.kubectl.run(&["patch", "deployment", &name, "-n", ns, "--type=strategic", "-p", patch]);
    let bump = r#"{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"example/app:2.1"}]}}}}"#;
    let run = patch(bump);
    assert_eq!(run.code, 0, "an image bump keeps the findings the workload had: {run:#?}");
    let annotate = r#"{"spec":{"template":{"metadata":{"annotations":{"rev":"2"}}}}}"#;
    assert_eq!(patch(annotate).code, 0, "a template change without a new finding goes through");
    // A new finding: a container the old object did not have, with a port
    // it does not declare. Refused, naming it alone.
    let added = r#"{"spec":{"template":{"spec":{"containers":[{"name":"cache","image":"example/cache:1",
        "livenessProbe":{"tcpSocket":{"port":"redis"}}}]}}}}"#;
    let run = patch(added);
    assert_eq!(run.code, 1, "a new finding is refused: {run:#?}");
    assert!(
        run.stderr.contains("denied request: probe-port-unknown: container \"cache\": port \"redis\""),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("container \"app\"") && !run.stderr.contains("container \"worker\""),
        "{}",
        run.stderr
    );
    // `--ratchet=false` judges the whole object: the same bump is refused.
    // (The policies replaced in place: the API server acts on the new one within seconds.)
    install(plane, &export(&["--policy", "default", "--mode", "enforce", "--ratchet=false"]), ns);
    let bump = r#"{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"example/app:2.2"}]}}}}"#;
    wait_for("the export without the ratchet in force", Duration::from_secs(30), || {
        let run = plane.kubectl.run(&["patch", "deployment", &name, "-n", ns, "--dry-run=server", "-p", bump]);
        let judged = run.code == 1 && run.stderr.contains("probe-port-unknown: container \"app\"");
        if judged { Ok(()) } else { Err(format!("{run:?}")) }
    });
    for object in objects(&dir.join("bad.yaml")) {
        let run = dry_run(plane, ns, &object);
        assert_eq!(run.code, 1, "{run:#?}");
        assert!(run.stderr.contains("ValidatingAdmissionPolicy 'lifeguard-deny'"), "{}", run.stderr);
        assert!(run.stderr.contains("denied request: probe-port-unknown: container \""), "{}", run.stderr);
        eprintln!("kubectl: {}", run.stderr.trim_end());
    }
    for object in objects(&dir.join("good.yaml")) {
        let run = dry_run(plane, ns, &object);
        assert!(!run.stderr.contains("probe-port-unknown"), "{run:#?}");
    }
    // What docs/vap.md shows a user: the shipped example (the bad fixture's
    // Deployment without its namespace; tests/tests/docs.rs holds them equal)
    // created from its file.
    namespace(plane, "demo");
    let example = "lint/examples/renamed-port.yaml";
    let file = repo_root().join(example);
    let run = plane.kubectl.run(&["-n", "demo", "create", "-f", &file.display().to_string()]);
    assert_eq!(run.code, 1, "{run:#?}");
    let session = format!("$ kubectl -n demo create -f {example}\n{}{}", run.stderr, run.stdout)
        .replace(&file.display().to_string(), example);
    assert_eq!(lifeguard_e2e::docs::marked_block("docs/vap.md", "vap-deny-output"), session);
    // liveness-too-aggressive is a warning in the default pack: warned, admitted.
    let run = dry_run(plane, ns, &objects(&rule_fixtures("liveness-too-aggressive").join("bad.yaml"))[0]);
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(run.warnings().iter().any(|w| w.contains("liveness-too-aggressive: container \"")), "{run:#?}");
    remove(plane);
}

#[test]
fn under_enforce_the_api_server_denies_what_the_linter_denies_and_nothing_more() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    remove(plane);
    let ns = "vap-enforce";
    namespace(plane, ns);
    install(plane, &export(&["--policy", "default", "--mode", "enforce"]), ns);
    let policy = Policy::default();
    // Each covered rule's bad fixtures that the linter denies for that rule
    // are refused with the rule named; its good fixtures are not flagged by it.
    let mut named_rules = 0;
    for rule in covered() {
        let dir = rule_fixtures(rule);
        let mut files: Vec<_> = std::fs::read_dir(&dir).expect("fixtures").flatten().map(|e| e.path()).collect();
        files.sort();
        for file in files {
            let name = file.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
            for object in objects(&file) {
                let run = dry_run(plane, ns, &object);
                let named = run.stderr.contains(&format!("{rule}: "));
                if name.starts_with("good") {
                    assert!(!named, "{rule} {name}: {run:#?}");
                    continue;
                }
                if run.code != 0 && !run.stderr.contains("ValidatingAdmissionPolicy 'lifeguard-deny'") {
                    // Refused by the API server for a reason of its own (probe-invalid's bad
                    // fixtures: what it rejects before any admission policy runs).
                    continue;
                }
                let report = lint_object(&object, &Batch::default(), &policy).ok().flatten();
                let deny = report.iter().flat_map(|r| &r.findings).any(|f| {
                    f.rule == rule
                        && policy.denies(f.severity)
                        && carried(f, &object, &policy)
                        && denies(&object, &policy).1
                });
                if deny {
                    assert_eq!(run.code, 1, "{rule} {name}: {run:#?}");
                    assert!(
                        run.stderr.contains("ValidatingAdmissionPolicy 'lifeguard-deny'"),
                        "{rule} {name}: {run:#?}"
                    );
                    // The API server names the first failing validation: this rule,
                    // or another the linter denies the object for.
                    let denying: Vec<&str> = report
                        .iter()
                        .flat_map(|r| &r.findings)
                        .filter(|f| policy.denies(f.severity) && covered().contains(&f.rule.as_str()))
                        .map(|f| f.rule.as_str())
                        .collect();
                    let first = run.stderr.split("denied request: ").nth(1).and_then(|m| m.split(':').next());
                    assert!(named || first.is_some_and(|r| denying.contains(&r)), "{rule} {name}: {run:#?}");
                    named_rules += usize::from(named);
                }
            }
        }
    }
    assert!(named_rules >= 5, "{named_rules} bad fixtures refused with their rule named");
    // Every object: refused by the export only where the linter denies it,
    // and wherever the linter denies it by a finding whose severity the export settles.
    let objects = fixtures_and_corpus();
    let (mut compared, mut refused, mut differences) = (0, 0, Vec::new());
    for (file, object) in &objects {
        let run = dry_run(plane, ns, object);
        let denied = run.stderr.contains("ValidatingAdmissionPolicy 'lifeguard-deny'");
        if run.code != 0 && !denied {
            continue;
        }
        compared += 1;
        refused += usize::from(denied);
        let (may, must) = denies(object, &policy);
        if denied && !may || must && !denied {
            differences.push(format!(
                "{file} {}: refused {denied}, linter denies {may}: {}",
                object["metadata"]["name"],
                run.stderr.trim()
            ));
        }
    }
    eprintln!("enforce: {compared} objects compared, {refused} refused, {} disagreements", differences.len());
    assert!(differences.is_empty(), "{differences:#?}");
    assert!(refused >= 10, "{refused} refused");
    remove(plane);
}

#[test]
fn a_pod_of_20_containers_is_judged_within_the_cost_budget() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    remove(plane);
    let ns = "vap-cost";
    namespace(plane, ns);
    install(plane, &export(&["--policy", "default", "--mode", "warn"]), ns);
    let handler =
        |port: &str| json!({"httpGet": {"path": "/x", "port": port}, "periodSeconds": 10, "failureThreshold": 1});
    // Readiness on another path: compared with liveness field by field, not
    // reported (the API server cuts warnings short once they pass 4 KiB in all).
    let ready = |port: &str| json!({"httpGet": {"path": "/ready", "port": port}, "periodSeconds": 10});
    // Every other preStop a script that sleeps 0 s and lets the app drain: read, weighed, not reported.
    // The last sleeps 28 s: too long for its budget, and the pod's neediest.
    let pre_stop = |i: usize, port: &str| match i {
        19 => json!({"exec": {"command": ["/bin/sh", "-c", "sleep 28; exit 0"]}}),
        _ if i % 2 == 0 => json!({"exec": {"command": ["/bin/sh", "-c", "sleep 0; exit 0"]}}),
        _ => json!({"httpGet": {"path": "/stop", "port": port}}),
    };
    let containers: Vec<Value> = (0..20)
        .map(|i| {
            let port = if i == 19 { "missing".to_owned() } else { format!("http-{i}") };
            let port = port.as_str();
            json!({
                "name": format!("c{i}"), "image": "example/app:1",
                "ports": [{"name": format!("http-{i}"), "containerPort": 8080 + i}, {"name": format!("grpc-{i}"), "containerPort": 9000 + i}],
                "startupProbe": handler(port), "livenessProbe": handler(port), "readinessProbe": ready(port),
                "lifecycle": {"preStop": pre_stop(i, port),
                              "postStart": {"tcpSocket": {"port": port}}}
            })
        })
        .collect();
    // A cold start every startup probe covers: the annotation is read, the windows weighed, nothing found.
    let annotations = json!({"lifeguard.dev/cold-start-seconds": "0.05m", "lifeguard.dev/drain-seconds": "20"});
    let meta = json!({"name": "twenty", "annotations": annotations});
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": containers}});
    let run = dry_run(plane, ns, &pod);
    assert_eq!(run.code, 0, "{run:#?}");
    // Every container's liveness fails at once, and the last names an unknown port: both judged in full.
    assert!(linted(&pod, &Policy::default()).agrees(&flagged(&run)), "{run:#?}");
    for rule in ["probe-port-unknown", "prestop-sleep-only", "grace-period-too-short"] {
        assert!(flagged(&run).contains(&(rule.to_owned(), "c19".to_owned())), "{rule}: {run:#?}");
    }
    // An UPDATE reads the old object as well: the same containers in a
    // Deployment, stored, then given one new finding (c3's liveness on a
    // port it does not declare). Every check reads both objects, and the
    // ratchet still names c3 alone: the old findings (c19's) are not new.
    let template = json!({"metadata": {"labels": {"app": "twenty"}, "annotations": annotations}, "spec": {"containers": containers}});
    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "twenty"},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "twenty"}}, "template": template}
    });
    let created = plane.kubectl.run_with_input(&["create", "-n", ns, "-f", "-"], Some(&deployment.to_string()));
    assert_eq!(created.code, 0, "{created:#?}");
    let new_finding =
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"c3","livenessProbe":{"httpGet":{"port":"gone"}}}]}}}}"#;
    let run = plane.kubectl.run(&["patch", "deployment", "twenty", "-n", ns, "--dry-run=server", "-p", new_finding]);
    assert_eq!(run.code, 0, "{run:#?}");
    let flagged = flagged(&run);
    assert!(flagged.contains(&("probe-port-unknown".to_owned(), "c3".to_owned())), "{run:#?}");
    for rule in ["probe-port-unknown", "prestop-sleep-only", "grace-period-too-short"] {
        assert!(!flagged.contains(&(rule.to_owned(), "c19".to_owned())), "{rule}: old, not new: {run:#?}");
    }
    // NAME-warn is not ratcheted: its findings are warned of on every template change.
    assert!(flagged.iter().any(|(rule, _)| rule == "liveness-too-aggressive"), "{run:#?}");
    remove(plane);
}
