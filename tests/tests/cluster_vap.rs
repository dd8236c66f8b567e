//! `lifeguard export vap` against the real kube-apiserver: the exported
//! ValidatingAdmissionPolicies are accepted (their CEL compiles and passes
//! the cost estimate) for every pack and mode; under `Warn` every object of
//! the covered rules' fixtures and of the shared corpus gets exactly the
//! covered findings `lifeguard lint` reports on it alone (same rule, same
//! containers), and none it does not; under `Deny` a bad fixture is refused
//! with the rule named; a pod of 20 containers is judged within the budget.
//!
//! The policies are cluster-wide, so the tests take turns.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use lifeguard::input::{Limits, parse_stream};
use lifeguard_e2e::cluster::process::wait_for;
use lifeguard_e2e::cluster::webhook::workspace_binary;
use lifeguard_e2e::cluster::{ControlPlane, Run};
use lifeguard_e2e::{corpus_dir, repo_root};
use policies::vap::Covered;
use policies::{Batch, Policy, lint_object, objects_in};
use serde_json::{Value, json};

static TURN: Mutex<()> = Mutex::new(());

/// `lifeguard export vap ARGS`: its YAML.
fn export(args: &[&str]) -> String {
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

/// The rules the export covers.
fn covered() -> Vec<&'static str> {
    policies::vap::coverage().into_iter().filter(|(_, c)| *c == Covered::Yes).map(|(r, _)| r).collect()
}

/// Removes every exported policy and binding.
fn remove(plane: &ControlPlane) {
    let selector = "app.kubernetes.io/managed-by=lifeguard";
    for kind in ["validatingadmissionpolicybindings", "validatingadmissionpolicies"] {
        plane.kubectl.run(&["delete", kind, "-l", selector, "--ignore-not-found", "--wait"]).ok();
    }
}

/// Applies an export and waits until the API server enforces all of it:
/// each probe object (one per covered rule) comes back flagged.
fn install(plane: &ControlPlane, yaml: &str, namespace: &str) {
    plane.kubectl.run_with_input(&["apply", "-f", "-"], Some(yaml)).ok();
    for probe in probe_objects() {
        wait_for("the exported policies in force", Duration::from_secs(30), || {
            let run = dry_run(plane, namespace, &probe);
            if !flagged(&run).is_empty() { Ok(()) } else { Err(format!("{run:?}")) }
        });
    }
}

/// Creates `object` in `namespace` with `--dry-run=server`: admission runs, nothing is stored.
fn dry_run(plane: &ControlPlane, namespace: &str, object: &Value) -> Run {
    let mut object = object.clone();
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("namespace");
    }
    plane.kubectl.run_with_input(&["create", "--dry-run=server", "-n", namespace, "-f", "-"], Some(&object.to_string()))
}

/// (rule, container) of every message of the exported policies in a run:
/// its warnings, or its deny.
fn flagged(run: &Run) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for line in run.stderr.lines() {
        for rule in covered() {
            let Some(at) = line.find(&format!("{rule}: ")) else { continue };
            let rest = &line[at..];
            for part in rest.split("container \"").skip(1) {
                if let Some((name, _)) = part.split_once('"') {
                    out.insert((rule.to_owned(), name.to_owned()));
                }
            }
        }
    }
    out
}

/// (rule, container) of the covered findings `lifeguard lint` reports on the object alone.
fn linted(object: &Value, policy: &Policy) -> BTreeSet<(String, String)> {
    let report = lint_object(object, &Batch::default(), policy).ok().flatten();
    let covered = covered();
    report
        .into_iter()
        .flat_map(|r| r.findings)
        .filter(|f| covered.contains(&f.rule.as_str()))
        .map(|f| (f.rule, f.container.unwrap_or_default()))
        .collect()
}

/// The kinds the export matches, not owned by a controller.
fn judged(object: &Value) -> bool {
    let kinds = [
        "Pod",
        "ReplicationController",
        "PodTemplate",
        "Deployment",
        "StatefulSet",
        "DaemonSet",
        "ReplicaSet",
        "Job",
        "CronJob",
    ];
    let owned = object["metadata"]["ownerReferences"]
        .as_array()
        .is_some_and(|refs| refs.iter().any(|r| r["controller"] == true));
    object["kind"].as_str().is_some_and(|k| kinds.contains(&k)) && !owned
}

/// The objects of a manifest file.
fn objects(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("read manifest");
    let (docs, _) = parse_stream(&text, &Limits::default());
    docs.iter().flat_map(|d| objects_in(&d.value).into_iter().map(|(_, o)| o.clone())).filter(judged).collect()
}

/// The fixtures of the covered rules.
fn fixtures() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for rule in covered() {
        let dir = repo_root().join("lint/tests/fixtures/rules").join(rule);
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

/// Known-bad objects for the wait, one per covered rule: a port name
/// nobody declares; a liveness that one failure ends.
fn probe_objects() -> [Value; 2] {
    let pod = |port: &str, failure: i32| {
        json!({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "vap-probe"},
            "spec": {"containers": [{"name": "app", "image": "example/app:1",
                "ports": [{"name": "http", "containerPort": 8080}],
                "livenessProbe": {"httpGet": {"path": "/livez", "port": port}, "failureThreshold": failure}}]}
        })
    };
    [pod("nope", 3), pod("http", 1)]
}

/// The namespace's default ServiceAccount, which Pods need (no controllers run here).
fn namespace(plane: &ControlPlane, name: &str) {
    plane.kubectl.namespace(name, &[]);
    plane.kubectl.default_service_account(name);
}

#[test]
fn every_pack_and_mode_is_accepted_by_the_api_server() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().expect("tempdir");
    let readme_policy = dir.path().join("policy.yaml");
    std::fs::write(&readme_policy, lifeguard_e2e::readme_policy_example()).expect("write the README's policy");
    let policies =
        ["default".to_owned(), "strict".to_owned(), "gpu-serving".to_owned(), readme_policy.display().to_string()];
    for policy in &policies {
        for mode in ["enforce", "warn", "audit"] {
            let yaml = export(&["--policy", policy, "--mode", mode]);
            assert!(yaml.contains("kind: ValidatingAdmissionPolicyBinding"), "{policy} {mode}: {yaml}");
            let run = plane.kubectl.run_with_input(&["apply", "--dry-run=server", "-f", "-"], Some(&yaml));
            assert_eq!(run.code, 0, "{policy} {mode}: {run:#?}");
            assert_eq!(run.warnings(), Vec::<&str>::new(), "{policy} {mode}: {run:#?}");
        }
    }
}

#[test]
fn under_warn_the_fixtures_and_the_corpus_get_exactly_the_linters_covered_findings() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    remove(plane);
    let ns = "vap-parity";
    namespace(plane, ns);
    install(plane, &export(&["--policy", "default", "--mode", "warn"]), ns);
    let policy = Policy::default();

    let mut objects: Vec<(String, Value)> = fixtures();
    let fixture_count = objects.len();
    if let Some(corpus) = corpus_dir() {
        let mut files: Vec<_> = walk(&corpus);
        files.sort();
        for file in files {
            for object in self::objects(&file) {
                objects.push((file.display().to_string(), object));
            }
        }
    }
    let (mut compared, mut flagged_objects, mut refused) = (0, 0, Vec::new());
    let mut differences = Vec::new();
    for (file, object) in &objects {
        let run = dry_run(plane, ns, object);
        if run.code != 0 {
            // Not admitted for a reason of its own (an unknown field's type, say).
            refused.push(format!("{file}: {}", run.stderr.lines().next().unwrap_or_default()));
            continue;
        }
        compared += 1;
        let (cel, lint) = (flagged(&run), linted(object, &policy));
        flagged_objects += usize::from(!lint.is_empty());
        if cel != lint {
            differences.push(format!("{file} {}: admission {cel:?}, lint {lint:?}", object["metadata"]["name"]));
        }
    }
    eprintln!(
        "{compared} objects compared ({fixture_count} from fixtures), {flagged_objects} with covered findings, {} refused by the API server",
        refused.len()
    );
    assert!(differences.is_empty(), "{differences:#?}");
    assert!(flagged_objects >= 4, "the fixtures' bad objects were judged");
    // Refused for reasons of their own: placeholders (`$K8S_SA_NAME`), privileged
    // containers (this API server disallows them), names the API server rejects.
    assert!(compared >= 250, "{compared} objects compared; refused: {refused:#?}");
    remove(plane);
}

#[test]
fn under_deny_a_bad_object_is_refused_with_the_rule_named_and_a_good_one_admitted() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    remove(plane);
    let ns = "vap-deny";
    namespace(plane, ns);
    // Created before the policy: an update that leaves its template alone
    // is not judged (as the webhook's ratchet lets a relabel through).
    let dir = repo_root().join("lint/tests/fixtures/rules/probe-port-unknown");
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
    let template = plane.kubectl.run(&[
        "patch",
        "deployment",
        &name,
        "-n",
        ns,
        "--type=merge",
        "-p",
        r#"{"spec":{"template":{"metadata":{"annotations":{"rev":"2"}}}}}"#,
    ]);
    assert_eq!(template.code, 1, "a template change is judged: {template:#?}");
    assert!(template.stderr.contains("probe-port-unknown"), "{}", template.stderr);
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
    // liveness-too-aggressive is a warning in the default pack: warned, admitted.
    let run = dry_run(
        plane,
        ns,
        &objects(&repo_root().join("lint/tests/fixtures/rules/liveness-too-aggressive/bad.yaml"))[0],
    );
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(run.warnings().iter().any(|w| w.contains("liveness-too-aggressive: container \"")), "{run:#?}");
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
    let containers: Vec<Value> = (0..20)
        .map(|i| {
            let port = if i == 19 { "missing".to_owned() } else { format!("http-{i}") };
            let port = port.as_str();
            json!({
                "name": format!("c{i}"), "image": "example/app:1",
                "ports": [{"name": format!("http-{i}"), "containerPort": 8080 + i}, {"name": format!("grpc-{i}"), "containerPort": 9000 + i}],
                "startupProbe": handler(port), "livenessProbe": handler(port), "readinessProbe": handler(port),
                "lifecycle": {"preStop": {"httpGet": {"path": "/stop", "port": port}},
                              "postStart": {"tcpSocket": {"port": port}}}
            })
        })
        .collect();
    let pod =
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "twenty"}, "spec": {"containers": containers}});
    let run = dry_run(plane, ns, &pod);
    assert_eq!(run.code, 0, "{run:#?}");
    // Every container's liveness fails at once, and the last names an unknown port: both judged in full.
    assert_eq!(flagged(&run), linted(&pod, &Policy::default()), "{run:#?}");
    assert!(flagged(&run).contains(&("probe-port-unknown".to_owned(), "c19".to_owned())), "{run:#?}");
    remove(plane);
}

/// The manifest files under a directory.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else if lifeguard::input::is_manifest(&path) {
            out.push(path);
        }
    }
    out
}
