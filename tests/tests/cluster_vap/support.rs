//! The harness of the export's tests: exporting, installing and removing
//! the policies, dry runs through admission, what they flag and what
//! `lifeguard lint` finds, the objects compared.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use lifeguard::input::{Limits, parse_stream};
use lifeguard_e2e::cluster::process::wait_for;
use lifeguard_e2e::cluster::webhook::workspace_binary;
use lifeguard_e2e::cluster::{ControlPlane, Run};
use lifeguard_e2e::{corpus_dir, files_under, repo_root, rule_fixtures};
use policies::vap::Covered;
use policies::{Batch, Policy, lint_object, objects_in};
use serde_json::{Value, json};

use crate::subset::carried;

/// The suffixes of the pairs an export of a built-in pack writes: the
/// built-in kinds' (and each custom kind's first template), then one per
/// further template of the known custom kinds (KServe's four components).
pub(crate) const SLOT_SUFFIXES: [&str; 4] = ["", "-2", "-3", "-4"];

/// `lifeguard export vap ARGS`: its YAML.
pub(crate) fn export(args: &[&str]) -> String {
    let binary = workspace_binary("lifeguard", "lifeguard").expect("the lifeguard binary");
    let out = std::process::Command::new(binary)
        .args(["export", "vap"])
        .args(args)
        .env_remove("LIFEGUARD_POLICY")
        .current_dir(repo_root())
        .output()
        .expect("run lifeguard export vap");
    assert!(out.status.success(), "lifeguard export vap {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// The rules the export covers, wholly or partly.
pub(crate) fn covered() -> Vec<&'static str> {
    policies::vap::coverage().into_iter().filter(|(_, c)| !matches!(c, Covered::No(_))).map(|(r, _)| r).collect()
}

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
    let mut out = BTreeSet::new();
    for line in run.stderr.lines() {
        for rule in covered() {
            let Some(at) = line.find(&format!("{rule}: ")) else { continue };
            let rest = &line[at + rule.len() + 2..];
            if !rest.starts_with("container \"") {
                out.insert((rule.to_owned(), String::new()));
                continue;
            }
            for part in rest.split("container \"").skip(1) {
                if let Some((name, _)) = part.split_once('"') {
                    out.insert((rule.to_owned(), name.to_owned()));
                }
            }
        }
    }
    out
}

/// (rule, container) of the covered findings `lifeguard lint` reports on the
/// object alone: all of them, and those the export carries.
pub(crate) fn linted(object: &Value, policy: &Policy) -> Linted {
    let report = lint_object(object, &Batch::default(), policy).ok().flatten();
    let covered = covered();
    let mut out = Linted::default();
    for f in report.into_iter().flat_map(|r| r.findings).filter(|f| covered.contains(&f.rule.as_str())) {
        let key = (f.rule.clone(), f.container.clone().unwrap_or_default());
        if carried(&f, object, policy) {
            out.carried.insert(key.clone());
        }
        out.all.insert(key);
    }
    out
}

/// What `lifeguard lint` finds on an object, of the covered rules.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Linted {
    /// Every (rule, container).
    pub(crate) all: BTreeSet<(String, String)>,
    /// Those the export must report too.
    pub(crate) carried: BTreeSet<(String, String)>,
}

impl Linted {
    /// Whether admission flagged exactly what it must: everything carried,
    /// nothing the linter does not report.
    pub(crate) fn agrees(&self, cel: &BTreeSet<(String, String)>) -> bool {
        self.carried.is_subset(cel) && cel.is_subset(&self.all)
    }
}

/// The kinds the export matches, not owned by a controller.
pub(crate) fn judged(object: &Value) -> bool {
    let owned = object["metadata"]["ownerReferences"]
        .as_array()
        .is_some_and(|refs| refs.iter().any(|r| r["controller"] == true));
    object["kind"].as_str().is_some_and(policies::model::names_pod_kind) && !owned
}

/// The objects of a manifest file.
pub(crate) fn objects(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("read manifest");
    let (docs, _) = parse_stream(&text, &Limits::default());
    docs.iter().flat_map(|d| objects_in(&d.value).into_iter().map(|(_, o)| o.clone())).filter(judged).collect()
}

/// The fixtures of the covered rules.
pub(crate) fn fixtures() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for rule in covered() {
        let dir = rule_fixtures(rule);
        let mut files: Vec<_> =
            std::fs::read_dir(&dir).expect("fixtures").filter_map(|e| e.ok()).map(|e| e.path()).collect();
        files.sort();
        for file in files {
            for object in objects(&file) {
                out.push((file.display().to_string(), object));
            }
        }
    }
    out
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
