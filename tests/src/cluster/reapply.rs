//! A set of manifests applied twice, unchanged, as GitOps tools apply them
//! on every sync: `kubectl apply` (client-side, the three-way merge with
//! the last-applied annotation) and server-side apply under another field
//! manager (Argo CD's), each in one batch per apply. What the second apply
//! refused, and what it stored that the first had not: the objects of the
//! MutatingAdmissionPolicy's and the webhook's convergence tests.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use policies::yaml::{Limits, parse_stream};
use policies::{Batch, Policy};
use serde_json::{Value, json};

use super::Client;
use crate::files_under;

/// How a file is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApplyMode {
    /// `kubectl apply`: a strategic merge patch computed from the file, the
    /// live object and the last-applied annotation.
    ClientSide,
    /// `kubectl apply --server-side --field-manager=argocd-controller`, as
    /// Argo CD's server-side sync applies (Flux's is the same request
    /// under its own manager).
    ServerSide,
}

impl ApplyMode {
    /// Both, in the order the tests apply them.
    pub const ALL: [ApplyMode; 2] = [ApplyMode::ClientSide, ApplyMode::ServerSide];

    fn args(self) -> &'static [&'static str] {
        match self {
            ApplyMode::ClientSide => &["apply"],
            ApplyMode::ServerSide => &["apply", "--server-side", "--field-manager=argocd-controller"],
        }
    }

    /// The prefix of the objects' names, so both modes share a namespace.
    fn prefix(self) -> &'static str {
        match self {
            ApplyMode::ClientSide => "csa",
            ApplyMode::ServerSide => "ssa",
        }
    }

    /// The name [`apply_twice`] gives the `index`-th object.
    pub fn name(self, index: usize) -> String {
        format!("{}-{index}", self.prefix())
    }
}

/// What applying a set twice did.
#[derive(Debug, Default)]
pub struct Reapplied {
    /// Objects the first apply stored.
    pub stored: usize,
    /// The second apply's errors (it must have none).
    pub refused: Vec<String>,
    /// Objects the second apply changed: `label: what changed`.
    pub changed: Vec<String>,
    /// Objects whose resourceVersion moved with their spec, generation and
    /// fields' owners unchanged: `label: what moved` (a controller's status
    /// write, or the time of the applying manager's managedFields entry).
    pub metadata_only: Vec<String>,
}

impl Reapplied {
    /// Says on stderr what applying `total` objects twice did in `took`
    /// (under `label`: the pack and mode), and returns the failures: each
    /// object the second apply refused or changed.
    // A test's edge: it tells on the terminal what it measured.
    #[allow(clippy::print_stderr)]
    pub fn failures(&self, label: &str, total: usize, took: Duration) -> Vec<String> {
        eprintln!(
            "{label}: {} of {total} objects stored, applied again: {} refused, {} changed, {} with only metadata \
             moved, {took:.0?}",
            self.stored,
            self.refused.len(),
            self.changed.len(),
            self.metadata_only.len(),
        );
        // No field's value or owner moved: a controller's status write, or
        // the time of the applying manager's entry (said in docs/vap.md).
        for moved in &self.metadata_only {
            eprintln!("  only metadata moved: {moved}");
        }
        let refused = self.refused.iter().map(|r| format!("{label}, refused: {r}"));
        refused.chain(self.changed.iter().map(|c| format!("{label}: {c}"))).collect()
    }
}

/// The built-in pod-bearing objects of the manifests under `dir`, not
/// controller-owned, that `lifeguard fix` changes under `policy` (what
/// neither the export nor the webhook mutates, Kubernetes applies as it
/// always does), each labelled `file kind/name`.
pub fn fixed_workloads_under(dir: &Path, policy: &Policy) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for file in files_under(dir, |p| p.extension().is_some_and(|e| e == "yaml" || e == "yml" || e == "json")) {
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        let (docs, _) = parse_stream(&text, &Limits::default());
        for doc in docs {
            for (_, object) in policies::objects_in(&doc.value) {
                let owned = object["metadata"]["ownerReferences"]
                    .as_array()
                    .is_some_and(|refs| refs.iter().any(|r| r["controller"] == true));
                // A whole object: not a kustomize patch (no `$patch`, its pod spec's containers there).
                let whole =
                    object["kind"].as_str().and_then(policies::model::pod_kind).is_some_and(|k| {
                        object.pointer(&format!("{}/containers", k.spec)).is_some_and(Value::is_array)
                    }) && !object.to_string().contains("\"$patch\"");
                let fixed = || {
                    policies::plan_fixes(object, &Batch::default(), policy, None)
                        .ok()
                        .flatten()
                        .is_some_and(|plan| !plan.applied.is_empty())
                };
                if whole && !owned && object["apiVersion"].is_string() && fixed() {
                    let label = format!(
                        "{} {}/{}",
                        file.strip_prefix(dir).unwrap_or(&file).display(),
                        object["kind"].as_str().unwrap_or_default(),
                        object["metadata"]["name"].as_str().unwrap_or_default()
                    );
                    out.push((label, object.clone()));
                }
            }
        }
    }
    out
}

/// The doc's example of `prestop-sleep-only`: an `exec` sleep that leaves 2 s
/// of the grace period, so every pack raises the grace period and rewrites
/// the exec into the native action (the corpus's exec sleeps leave enough
/// time, and only packs that fix info findings rewrite them).
pub fn short_exec_sleep() -> (String, Value) {
    let object = json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"terminationGracePeriodSeconds": 30, "containers": [{"name": "app", "image": "example/web:1",
                "lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", "sleep 28"]}}}}]}}}
    });
    ("prestop-sleep-only's example Deployment/web".to_owned(), object)
}

/// A bare Pod and a suspended Job whose files set liveness
/// `failureThreshold: 1`, which liveness-too-aggressive raises to 3, and
/// an exec preStop sleep of 28 s in a grace period of 30 s, which
/// prestop-sleep-only rewrites into the native action and whose grace
/// period it raises: values the file sets that the fixes change, in the
/// kinds whose pod spec the API server keeps immutable, so a re-apply
/// converges only where the fixes are made again on the update and put
/// back what is stored.
pub fn immutable_with_a_fixed_value() -> Vec<(String, Value)> {
    let spec = json!({"terminationGracePeriodSeconds": 30, "containers": [{"name": "app", "image": "example/web:1",
        "startupProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 5, "failureThreshold": 30},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}, "periodSeconds": 5},
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10, "failureThreshold": 1},
        "lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", "sleep 28"]}}}}]});
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": spec});
    let mut job_spec = spec.clone();
    job_spec["restartPolicy"] = json!("Never");
    // Suspended: no pods of its own, whose status writes are not the re-apply's.
    let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "batch"},
        "spec": {"suspend": true, "template": {"spec": job_spec}}});
    vec![
        ("liveness failureThreshold 1, a bare Pod/web".to_owned(), pod),
        ("liveness failureThreshold 1, Job/batch".to_owned(), job),
    ]
}

/// The objects of [`immutable_with_a_fixed_value`], `pod` and `job` as
/// [`apply_twice`] named them, are stored fixed; then updates of the Pod: a
/// relabel is accepted and leaves the spec as it was, and liveness
/// `failureThreshold: 5` (neither the stored 3 nor a fix's: it has no
/// finding) is refused by the API server as before. What went otherwise.
pub fn updates_of_a_fixed_pod(kubectl: &Client, namespace: &str, name: &str, job: &str) -> Vec<String> {
    let mut failures = Vec::new();
    let stored_job = kubectl.run(&["get", "job", job, "-n", namespace, "-o", "json"]).json();
    if stored_job.pointer("/spec/template/spec/containers/0/livenessProbe/failureThreshold") != Some(&json!(3)) {
        failures.push(format!("job {job} is not stored fixed: {}", stored_job["spec"]));
    }
    let get = || kubectl.run(&["get", "pod", name, "-n", namespace, "-o", "json"]).json();
    let before = get();
    if before.pointer("/spec/containers/0/livenessProbe/failureThreshold") != Some(&json!(3))
        || before.pointer("/spec/containers/0/lifecycle/preStop") != Some(&json!({"sleep": {"seconds": 28}}))
        || before.pointer("/spec/terminationGracePeriodSeconds").and_then(Value::as_i64).unwrap_or(0) <= 30
    {
        failures.push(format!("pod {name} is not stored fixed: {}", before["spec"]));
    }
    let label = kubectl.run(&["label", "pod", name, "-n", namespace, "team=checkout"]);
    let relabelled = get();
    if label.code != 0 || relabelled["spec"] != before["spec"] || relabelled["metadata"]["labels"]["team"] != "checkout"
    {
        failures.push(format!("pod {name}: the relabel: {} {}", label.stderr.trim(), relabelled["spec"]));
    }
    let patch = r#"[{"op": "replace", "path": "/spec/containers/0/livenessProbe/failureThreshold", "value": 5}]"#;
    let changed = kubectl.run(&["patch", "pod", name, "-n", namespace, "--type=json", "-p", patch]);
    if changed.code == 0 || !changed.stderr.contains("pod updates may not change fields") {
        failures.push(format!("pod {name}: failureThreshold 5 was not refused: {}", changed.stderr.trim()));
    }
    if get()["spec"] != before["spec"] {
        failures.push(format!("pod {name}: the spec changed: {}", get()["spec"]));
    }
    failures
}

/// Applies `objects` in `namespace` with `mode` (each renamed
/// `PREFIX-INDEX`, as the corpus repeats names), then applies the ones the
/// first apply stored again, and compares each object's spec, generation
/// and resourceVersion before and after the second apply.
pub fn apply_twice(kubectl: &Client, namespace: &str, objects: &[(String, Value)], mode: ApplyMode) -> Reapplied {
    let renamed: Vec<(String, Value)> = objects
        .iter()
        .enumerate()
        .map(|(i, (label, object))| {
            let mut object = object.clone();
            if let Some(map) = object.as_object_mut() {
                map.remove("status");
            }
            if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
                // What a live object dumped into a file carries (the corpus
                // has some) is the server's to set.
                for field in [
                    "namespace",
                    "generateName",
                    "uid",
                    "resourceVersion",
                    "selfLink",
                    "creationTimestamp",
                    "generation",
                    "managedFields",
                ] {
                    meta.remove(field);
                }
                meta.insert("name".to_owned(), json!(mode.name(i)));
            }
            (label.clone(), object)
        })
        .collect();
    let apply = |items: Vec<&Value>| {
        let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
        let mut args = mode.args().to_vec();
        args.extend(["-n", namespace, "-f", "-"]);
        kubectl.run_with_input(&args, Some(&list.to_string()))
    };
    // Refusals of the first apply are the objects' own (placeholders,
    // privileged containers, fields of a newer release): left out.
    apply(renamed.iter().map(|(_, o)| o).collect());
    let first = settled(kubectl, namespace, mode);
    let again: Vec<&(String, Value)> = renamed.iter().filter(|(_, o)| first.contains_key(&key(o))).collect();
    let second = apply(again.iter().map(|(_, o)| o).collect());
    let mut out = Reapplied { stored: again.len(), ..Reapplied::default() };
    if second.code != 0 {
        // kubectl's warnings (deprecated fields) are the objects' own.
        out.refused = second.stderr.lines().filter(|l| !l.starts_with("Warning: ")).map(|l| named(l, &again)).collect();
    }
    let after = stored(kubectl, namespace, mode);
    for (label, object) in again {
        let (Some(before), Some(now)) = (first.get(&key(object)), after.get(&key(object))) else {
            out.changed.push(format!("{label}: gone after the second apply"));
            continue;
        };
        let differs: Vec<&str> = [
            ("spec", before["spec"] != now["spec"]),
            ("generation", before["metadata"]["generation"] != now["metadata"]["generation"]),
            ("resourceVersion", before["metadata"]["resourceVersion"] != now["metadata"]["resourceVersion"]),
        ]
        .into_iter()
        .filter_map(|(what, differs)| differs.then_some(what))
        .collect();
        let mut paths = Vec::new();
        differences("", before, now, &mut paths);
        match differs.as_slice() {
            [] => {}
            ["resourceVersion"] if unowned(before) == unowned(now) => {
                let moved: Vec<&str> = paths.iter().map(|p| p.split(' ').next().unwrap_or_default()).collect();
                out.metadata_only.push(format!("{label}: {}", moved.join(", ")));
            }
            _ => out.changed.push(format!("{label}: {} changed: {}", differs.join(", "), paths.join(", "))),
        }
    }
    out
}

/// [`stored`] once two reads a second apart agree: where
/// kube-controller-manager runs, a new Deployment's controller writes its
/// revision annotation and status just after the apply, which must not be
/// taken for the second apply's doing (a test that shares its control
/// plane with one that starts the controllers starts them first).
fn settled(kubectl: &Client, namespace: &str, mode: ApplyMode) -> BTreeMap<(String, String), Value> {
    let versions = |objects: &BTreeMap<(String, String), Value>| -> Vec<Value> {
        objects.values().map(|o| o["metadata"]["resourceVersion"].clone()).collect()
    };
    let mut last = stored(kubectl, namespace, mode);
    for _ in 0..30 {
        std::thread::sleep(Duration::from_secs(1));
        let now = stored(kubectl, namespace, mode);
        if versions(&now) == versions(&last) {
            return now;
        }
        last = now;
    }
    panic!("the objects of {namespace} still change after 30 s");
}

/// An object's identity in a namespace.
fn key(object: &Value) -> (String, String) {
    (
        object["kind"].as_str().unwrap_or_default().to_owned(),
        object["metadata"]["name"].as_str().unwrap_or_default().to_owned(),
    )
}

/// The objects of `mode` stored in `namespace`, by kind and name.
fn stored(kubectl: &Client, namespace: &str, mode: ApplyMode) -> BTreeMap<(String, String), Value> {
    let kinds: Vec<&str> = policies::model::POD_KINDS.iter().map(|k| k.resource).collect();
    let run = kubectl.run(&["get", &kinds.join(","), "-n", namespace, "-o", "json", "--show-managed-fields"]);
    let list = run.json();
    let items = list["items"].as_array().cloned().unwrap_or_default();
    items
        .into_iter()
        .filter(|o| o["metadata"]["name"].as_str().is_some_and(|n| n.starts_with(mode.prefix())))
        .map(|o| (key(&o), o))
        .collect()
}

/// An object without its status and resourceVersion, its managed fields
/// without their times and without the status subresource's entries (a
/// controller's): what a write that changes no field's value or owner
/// leaves as it was.
fn unowned(object: &Value) -> Value {
    let mut object = object.clone();
    if let Some(map) = object.as_object_mut() {
        map.remove("status");
    }
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("resourceVersion");
        if let Some(fields) = meta.get_mut("managedFields").and_then(Value::as_array_mut) {
            fields.retain(|f| f["subresource"] != "status");
            for field in fields.iter_mut().filter_map(Value::as_object_mut) {
                field.remove("time");
            }
        }
    }
    object
}

/// An error line of kubectl, with the label of the object it names.
fn named(line: &str, objects: &[&(String, Value)]) -> String {
    let by = objects
        .iter()
        .find(|(_, o)| o["metadata"]["name"].as_str().is_some_and(|n| line.contains(&format!("\"{n}\""))));
    match by {
        Some((label, _)) => format!("{label}: {line}"),
        None => line.to_owned(),
    }
}

/// The paths where `a` and `b` differ, each with both values.
fn differences(at: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for key in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                let (u, v) = (x.get(key).unwrap_or(&Value::Null), y.get(key).unwrap_or(&Value::Null));
                differences(&format!("{at}/{key}"), u, v, out);
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (u, v)) in x.iter().zip(y).enumerate() {
                differences(&format!("{at}/{i}"), u, v, out);
            }
        }
        _ if a != b => out.push(format!("{at} {a} -> {b}")),
        _ => {}
    }
}
