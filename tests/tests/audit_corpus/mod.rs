//! What the audit tests share (`cluster_audit.rs`, `cluster_reports.rs`,
//! `cluster_write_reports.rs`, the chart's audit Job in `node_chart.rs`,
//! the version matrix's `cluster_versions.rs`): the `lifeguard` binary run
//! against a control plane, every pod-bearing object of the shared corpus
//! created in it with its Services, the audit's parity with `lint` and
//! `simulate` on them (`parity.rs`), the report CRDs installed and a
//! report's results read.

// Each test binary uses a different part of it.
#![allow(dead_code)]

pub mod parity;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use lifeguard::input::{Limits, parse_stream};
use lifeguard_e2e::cluster::process::wait_for;
use lifeguard_e2e::cluster::webhook::workspace_binary;
use lifeguard_e2e::cluster::{ControlPlane, Run};
use lifeguard_e2e::{corpus_dir, files_under, installed_tool};
use policies::objects_in;
use serde_json::{Value, json};

/// `lifeguard ARGS` with the test cluster's kubeconfig.
pub fn lifeguard(plane: &ControlPlane, args: &[&str]) -> Run {
    lifeguard_with(&plane.kubeconfig, args)
}

/// `lifeguard ARGS` with `kubeconfig`.
pub fn lifeguard_with(kubeconfig: &Path, args: &[&str]) -> Run {
    let binary = workspace_binary("lifeguard", "lifeguard").expect("the lifeguard binary");
    let out = std::process::Command::new(binary)
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .env_remove("LIFEGUARD_POLICY")
        .env("NO_COLOR", "1")
        .current_dir(std::env::temp_dir())
        .output()
        .expect("run lifeguard");
    Run {
        command: format!("lifeguard {}", args.join(" ")),
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The kinds the audit reads that the corpus holds: the engine's own list.
pub fn is_pod_bearing(object: &Value) -> bool {
    object["kind"].as_str().is_some_and(policies::model::names_pod_kind)
}

/// The corpus as created in the cluster.
pub struct Loaded {
    /// The namespaces made for it: `PREFIX-FILE-N` for a file's Nth.
    pub namespaces: Vec<String>,
    /// Per file, the objects the API server accepted, alone in a file of
    /// their own (a `List`), for `lint` and `simulate`.
    pub lint_paths: Vec<String>,
    /// The namespaces that hold a Service.
    pub with_services: BTreeSet<String>,
    /// Pod-bearing objects created.
    pub created: usize,
    /// What the API server refused, and why.
    pub refused: Vec<String>,
    _work: tempfile::TempDir,
}

/// Creates every pod-bearing object of the shared corpus (and the
/// Services of its files) in `plane`, each file's namespaces its own
/// (`PREFIX-FILE-N`); `None` (after saying why) without the corpus.
pub fn load(plane: &ControlPlane, prefix: &str) -> Option<Loaded> {
    let corpus: PathBuf = corpus_dir()?;
    let work = tempfile::tempdir().expect("tempdir");
    let mut loaded = Loaded {
        namespaces: Vec::new(),
        lint_paths: Vec::new(),
        with_services: BTreeSet::new(),
        created: 0,
        refused: Vec::new(),
        _work: work,
    };
    for (i, file) in files_under(&corpus, lifeguard::input::is_manifest).iter().enumerate() {
        let text = std::fs::read_to_string(file).expect("read");
        let (docs, _) = parse_stream(&text, &Limits::default());
        let objects: Vec<Value> = docs
            .iter()
            .flat_map(|d| objects_in(&d.value).into_iter().map(|(_, o)| o.clone()))
            .filter(|o| is_pod_bearing(o) || o["kind"] == "Service")
            .filter(|o| o["metadata"]["name"].is_string() && o["metadata"]["ownerReferences"].is_null())
            .collect();
        if !objects.iter().any(is_pod_bearing) {
            continue;
        }
        let mut renamed: BTreeMap<String, String> = BTreeMap::new();
        let mut kept = Vec::new();
        for mut object in objects {
            let original = object["metadata"]["namespace"].as_str().unwrap_or("default").to_owned();
            let n = renamed.len();
            let ns = renamed.entry(original).or_insert_with(|| format!("{prefix}-{i}-{n}")).clone();
            if !loaded.namespaces.contains(&ns) {
                plane.kubectl.namespace(&ns, &[]);
                plane.kubectl.default_service_account(&ns);
                loaded.namespaces.push(ns.clone());
            }
            object["metadata"]["namespace"] = json!(ns);
            let run = plane.kubectl.run_with_input(&["create", "-f", "-"], Some(&object.to_string()));
            if run.code != 0 {
                loaded.refused.push(format!("{}: {}", file.display(), run.stderr.lines().next().unwrap_or_default()));
                continue;
            }
            loaded.created += usize::from(is_pod_bearing(&object));
            if object["kind"] == "Service" {
                loaded.with_services.insert(ns.clone());
            }
            kept.push(object);
        }
        // The same objects, alone in a directory of their own, for lint.
        let dir = loaded._work.path().join(format!("f{i}"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let path = dir.join("objects.json");
        std::fs::write(&path, json!({"apiVersion": "v1", "kind": "List", "items": kept}).to_string()).expect("write");
        loaded.lint_paths.push(path.display().to_string());
    }
    assert!(loaded.created >= 150, "{} objects created; refused: {:#?}", loaded.created, loaded.refused);
    Some(loaded)
}

impl Loaded {
    /// Deletes the namespaces, without waiting.
    pub fn delete(&self, plane: &ControlPlane) {
        for ns in &self.namespaces {
            plane.kubectl.run(&["delete", "namespace", ns, "--wait=false"]).ok();
        }
    }
}

/// What installs the report CRDs.
const INSTALLER: &str = ".ci/install-report-crds.sh";

/// `(kind of report, its CRD's file, its resource, its group and version)`.
pub const REPORTS: [(&str, &str, &str, &str); 2] = [
    (
        "openreports",
        "target/tools/report-crds/openreports.io_reports.yaml",
        "reports.openreports.io",
        "openreports.io/v1alpha1",
    ),
    (
        "policyreport",
        "target/tools/report-crds/wgpolicyk8s.io_policyreports.yaml",
        "policyreports.wgpolicyk8s.io",
        "wgpolicyk8s.io/v1alpha2",
    ),
];

/// Installs the CRD of `REPORTS[i]` and waits until it is served and its
/// OpenAPI schema published (the audit reads the schemas of custom
/// resources, and the schema lags the CRD); `false` (after saying why)
/// when `.ci/install-report-crds.sh` has not run.
pub fn install_crd(plane: &ControlPlane, i: usize) -> bool {
    let (_, file, resource, group_version) = REPORTS[i];
    let Some(path) = installed_tool(file, INSTALLER) else { return false };
    plane.kubectl.run(&["apply", "--server-side", "-f", &path.to_string_lossy()]).ok();
    plane.kubectl.wait_established(&[resource]);
    let schema = format!("/openapi/v3/apis/{group_version}");
    wait_for("the CRD's schema published", Duration::from_secs(60), || {
        let run = plane.kubectl.run(&["get", "--raw", &schema]);
        if run.code == 0 { Ok(()) } else { Err(run.stderr) }
    });
    true
}

/// What a JSON report of `simulate` or `audit --simulate` says:
/// `(namespace, kind, name, container, scenario)` -> verdict.
pub fn verdicts(report: &str) -> BTreeMap<[String; 5], String> {
    let entries: Vec<Value> = serde_json::from_str(report).unwrap_or_else(|e| panic!("not JSON ({e}): {report}"));
    let text = |e: &Value, k: &str| e[k].as_str().unwrap_or_default().to_owned();
    entries
        .iter()
        .filter(|e| e["verdict"].is_string())
        .map(|e| {
            let key = ["namespace", "kind", "name", "container", "scenario"].map(|k| text(e, k));
            (key, text(e, "verdict"))
        })
        .collect()
}

/// `(policy, result, workload)` of each result of a report object.
pub fn results(report: &Value) -> Vec<(String, String, String)> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let results = report["results"].as_array().into_iter().flatten();
    results.map(|r| (text(&r["policy"]), text(&r["result"]), text(&r["resources"][0]["name"]))).collect()
}
