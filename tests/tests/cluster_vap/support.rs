//! The harness of the export's tests against the API server: installing
//! and removing the policies, dry runs through admission, what they flag,
//! the objects compared. What they must flag (the covered rules, the
//! linter's findings and the part the export carries) is
//! `lifeguard_e2e::vap_parity`'s, shared with the offline test of the CEL
//! (`tests/tests/cel_fixtures.rs`).

use std::collections::BTreeSet;
use std::time::Duration;

use lifeguard_e2e::cluster::process::wait_for;
use lifeguard_e2e::cluster::{ControlPlane, Run};
use lifeguard_e2e::vap_parity::{covered, fixtures, flagged_in, objects};
use lifeguard_e2e::{corpus_dir, files_under};
use serde_json::{Value, json};

// The expectations' names these tests and those that include this file by
// path (`cluster_map`, `cluster_versions`) use beside the harness.

/// The suffixes of the pairs an export of a built-in pack writes: the
/// built-in kinds' (and each custom kind's first template), then one per
/// further template of the known custom kinds (KServe's four components).
pub(crate) const SLOT_SUFFIXES: [&str; 4] = ["", "-2", "-3", "-4"];

/// Removes every exported policy and binding.
pub(crate) fn remove(plane: &ControlPlane) {
    let selector = "app.kubernetes.io/managed-by=lifeguard";
    for kind in ["validatingadmissionpolicybindings", "validatingadmissionpolicies"] {
        plane.kubectl.run(&["delete", kind, "-l", selector, "--ignore-not-found", "--wait"]).ok();
    }
    // The API server drops a deleted policy from its cache a moment after
    // the delete returns: until then a create the next test expects to be
    // admitted can still be refused by the last test's binding.
    // The probes are Pods: admitted only where a service account exists.
    plane.kubectl.default_service_account("default");
    wait_for("the removed policies out of force", Duration::from_secs(30), || {
        for (rule, probe) in probe_objects() {
            let run = dry_run(plane, "default", &probe);
            if run.code != 0 || !flagged(&run).is_empty() {
                return Err(format!("{rule}: {run:?}"));
            }
        }
        Ok(())
    });
}

/// Applies an export and waits until the API server enforces all of it:
/// each probe object (one per covered rule) comes back flagged by its rule.
pub(crate) fn install(plane: &ControlPlane, yaml: &str, namespace: &str) {
    plane.kubectl.run_with_input(&["apply", "-f", "-"], Some(yaml)).ok();
    for (rule, probe) in probe_objects() {
        wait_for("the exported policies in force", Duration::from_secs(30), || {
            let run = dry_run(plane, namespace, &probe);
            if flagged(&run).iter().any(|(r, _)| r == rule) { Ok(()) } else { Err(format!("{rule}: {run:?}")) }
        });
    }
}

/// Creates `object` in `namespace` with `--dry-run=server`: admission runs, nothing is stored.
pub(crate) fn dry_run(plane: &ControlPlane, namespace: &str, object: &Value) -> Run {
    let mut object = object.clone();
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("namespace");
    }
    plane.kubectl.run_with_input(&["create", "--dry-run=server", "-n", namespace, "-f", "-"], Some(&object.to_string()))
}

/// (rule, container) of every message of the exported policies in a run:
/// its warnings, or its deny; a finding of the object names no container
/// (an empty name).
pub(crate) fn flagged(run: &Run) -> BTreeSet<(String, String)> {
    flagged_in(&run.stderr)
}

/// Known-bad objects for the wait, one per covered rule, each with that
/// rule's finding alone among the rules an enforce export denies.
pub(crate) fn probe_objects() -> Vec<(&'static str, Value)> {
    let pod = |container: Value, annotations: Value| {
        let mut container = container;
        container["name"] = json!("app");
        container["image"] = json!("example/app:1");
        container["ports"] = json!([{"name": "http", "containerPort": 8080}]);
        json!({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "vap-probe", "annotations": annotations},
            "spec": {"containers": [container]}
        })
    };
    let http = |port: &str| json!({"httpGet": {"path": "/livez", "port": port}});
    let probes = [
        ("probe-port-unknown", json!({"livenessProbe": http("nope")})),
        (
            "liveness-too-aggressive",
            json!({"livenessProbe": {"httpGet": http("http")["httpGet"], "failureThreshold": 1}}),
        ),
        (
            "probe-window-too-long",
            json!({"readinessProbe": {"httpGet": http("http")["httpGet"], "failureThreshold": 100}}),
        ),
        ("probe-endpoint-reused", json!({"livenessProbe": http("http"), "readinessProbe": http("http")})),
        (
            "startup-probe-missing",
            json!({"livenessProbe": {"httpGet": http("http")["httpGet"], "initialDelaySeconds": 120}}),
        ),
        ("probe-invalid", json!({"livenessProbe": {"exec": {"command": [" ", "check"]}}})),
        ("readiness-port-only", json!({"readinessProbe": {"tcpSocket": {"port": 8080}}})),
    ];
    let mut out: Vec<(&str, Value)> = probes.into_iter().map(|(rule, c)| (rule, pod(c, json!({})))).collect();
    let startup = json!({"startupProbe": {"tcpSocket": {"port": 8080}}});
    out.push(("startup-budget-too-short", pod(startup, json!({"lifeguard.dev/cold-start-seconds": "5m"}))));
    let hook = json!({"lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", "sleep 28"]}}}});
    out.push(("prestop-sleep-only", pod(hook, json!({}))));
    out.push(("grace-period-too-short", pod(json!({}), json!({"lifeguard.dev/drain-seconds": "40"}))));
    let covered = covered();
    assert!(covered.iter().all(|rule| out.iter().any(|(r, _)| r == rule)), "a probe object per covered rule");
    out.retain(|(rule, _)| covered.contains(rule));
    out
}

/// The namespace's default ServiceAccount, which Pods need (no controllers run here).
pub(crate) fn namespace(plane: &ControlPlane, name: &str) {
    plane.kubectl.namespace(name, &[]);
    plane.kubectl.default_service_account(name);
}

/// The covered rules' fixtures, then every pod-bearing object of the shared corpus.
pub(crate) fn fixtures_and_corpus() -> Vec<(String, Value)> {
    let mut out = fixtures();
    if let Some(corpus) = corpus_dir() {
        for file in files_under(&corpus, lifeguard::input::is_manifest) {
            for object in objects(&file) {
                out.push((file.display().to_string(), object));
            }
        }
    }
    out
}
