//! `lifeguard audit --write-reports` against the real kube-apiserver, in a
//! control plane of its own (it starts without the report CRDs): a missing
//! CRD is one error naming it; with OpenReports' CRD, each namespace's
//! Report is written by server-side apply as field manager `lifeguard`, a
//! rerun replaces it in place, a namespace with no workload left loses it,
//! and reports of other sources stay. A namespace of 3,000 workloads, whose
//! one report the API server refuses, gets parts it stores, and a rerun
//! with fewer workloads removes the parts it no longer needs.

mod audit_corpus;

use audit_corpus::{install_crd, lifeguard, results};
use lifeguard_e2e::cluster::ControlPlane;
use lifeguard_e2e::support::deployment::Deployment;
use serde_json::{Value, json};

fn deployment(ns: &str, name: &str, liveness: &str) -> Value {
    let http = |path: &str| json!({"httpGet": {"path": path, "port": "http"}});
    Deployment::new(name)
        .namespace(ns)
        .containers(json!([{"name": name, "image": "example/app:1", "ports": [{"name": "http", "containerPort": 8080}],
            "livenessProbe": http(liveness), "readinessProbe": http("/readyz")}]))
        .build()
}

/// Another tool's Report in `ns`.
fn foreign_report(ns: &str) -> Value {
    json!({"apiVersion": "openreports.io/v1alpha1", "kind": "Report",
        "metadata": {"name": "other-scanner", "namespace": ns, "labels": {"app.kubernetes.io/managed-by": "other"}},
        "source": "other", "results": [{"policy": "require-labels", "result": "pass"}]})
}

#[test]
fn reports_are_written_replaced_and_removed_and_a_missing_crd_is_named() {
    let Some(plane) = ControlPlane::shared() else { return };
    let (ns, gone) = ("write-reports", "write-reports-gone");
    for n in [ns, gone] {
        plane.kubectl.namespace(n, &[]);
    }
    plane.kubectl.apply(&deployment(ns, "orders", "/readyz"));
    plane.kubectl.apply(&deployment(gone, "web", "/readyz"));
    let both = format!("{ns},{gone}");
    let write = |kind: &str| {
        lifeguard(plane, &["audit", "-n", &both, "--write-reports", kind, "--format", "json", "--fail-on", "never"])
    };

    // No CRD: one error naming it, before anything is read or written.
    let missing = write("openreports");
    assert_eq!(missing.code, 2, "{missing:#?}");
    assert_eq!(
        missing.stderr,
        "lifeguard: --write-reports openreports: the API server does not serve reports.openreports.io \
         (openreports.io/v1alpha1); install its CRD (config/crd/openreports.io_reports.yaml of \
         github.com/openreports/reports-api) or print the reports with --format instead\n"
    );
    assert!(missing.stdout.is_empty(), "{}", missing.stdout);
    if !install_crd(plane, 0) {
        return;
    }
    let missing = write("policyreport");
    assert_eq!(missing.code, 2, "{missing:#?}");
    assert!(missing.stderr.contains("does not serve policyreports.wgpolicyk8s.io"), "{}", missing.stderr);
    // A report replaces the namespace's: it is written only from a whole audit.
    let narrowed = lifeguard(plane, &["audit", "-n", ns, "--write-reports", "openreports", "--kinds", "pods"]);
    assert_eq!(narrowed.code, 2, "{narrowed:#?}");
    assert!(narrowed.stderr.contains("cannot be used with"), "{}", narrowed.stderr);
    for n in [ns, gone] {
        plane.kubectl.apply(&foreign_report(n));
    }

    // Written: what `--format openreports` prints, applied by `lifeguard`.
    let first = write("openreports");
    assert_eq!(first.code, 0, "{first:#?}");
    assert!(
        first
            .stderr
            .contains("lifeguard: wrote 2 reports.openreports.io in 2 namespaces (0 removed: parts no longer needed"),
        "{}",
        first.stderr
    );
    let stored = plane.kubectl.get(ns, "reports.openreports.io", "lifeguard").expect("the namespace's report");
    let printed = lifeguard(plane, &["audit", "-n", ns, "--format", "openreports", "--fail-on", "never"]);
    let (docs, _) = lifeguard::input::parse_stream(&printed.stdout, &lifeguard::input::Limits::default());
    assert_eq!(docs.len(), 1, "{}", printed.stdout);
    assert_eq!(results(&stored), results(&docs[0].value));
    assert_eq!(results(&stored), [("probe-endpoint-reused".into(), "fail".into(), "orders".into())]);
    let get = ["get", "reports.openreports.io", "lifeguard", "-n", ns, "-o", "json", "--show-managed-fields"];
    let with_managers = plane.kubectl.run(&get).json();
    let managers: Vec<(&str, &str)> = with_managers["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| (m["manager"].as_str().unwrap_or_default(), m["operation"].as_str().unwrap_or_default()))
        .collect();
    assert_eq!(managers, [("lifeguard", "Apply")], "{with_managers}");
    let uid = stored["metadata"]["uid"].clone();

    // Rerun after a fix: the same object, its results replaced.
    plane.kubectl.apply(&deployment(ns, "orders", "/livez"));
    plane.kubectl.run(&["delete", "deployment", "web", "-n", gone]).ok();
    let second = write("openreports");
    assert_eq!(second.code, 0, "{second:#?}");
    assert!(
        second
            .stderr
            .contains("lifeguard: wrote 1 reports.openreports.io in 1 namespace (1 removed: parts no longer needed"),
        "{}",
        second.stderr
    );
    let stored = plane.kubectl.get(ns, "reports.openreports.io", "lifeguard").expect("the namespace's report");
    assert_eq!(stored["metadata"]["uid"], uid, "replaced in place");
    assert_eq!(results(&stored), [("lifeguard".into(), "pass".into(), "orders".into())]);
    assert_eq!(stored["summary"], json!({"pass": 1, "fail": 0, "warn": 0, "error": 0, "skip": 0}));
    // The namespace with no workload left lost lifeguard's report, and only it.
    assert!(plane.kubectl.get(gone, "reports.openreports.io", "lifeguard").is_none());
    for n in [ns, gone] {
        let other = plane.kubectl.get(n, "reports.openreports.io", "other-scanner").expect("the other tool's report");
        assert_eq!(results(&other), [("require-labels".into(), "pass".into(), String::new())]);
    }
    // Nothing left to remove: a third run removes nothing.
    let third = write("openreports");
    assert!(third.stderr.contains("wrote 1 reports.openreports.io in 1 namespace (0 removed"), "{}", third.stderr);
    for n in [ns, gone] {
        plane.kubectl.run(&["delete", "namespace", n, "--wait=false"]).ok();
    }
    // After the CRD is installed: the test of a large namespace needs it.
    a_large_namespace_gets_reports_in_parts(plane);
}

/// Workloads in the large namespace: half of them with a finding.
const LARGE: usize = 3_000;

/// 3,000 Deployments in one namespace: their results in one report are
/// refused by the API server; `--write-reports` stores them in parts, each
/// what `--format openreports` prints, and a rerun after 2,000 are deleted
/// keeps the parts it needs and removes the rest (and no other source's).
fn a_large_namespace_gets_reports_in_parts(plane: &ControlPlane) {
    let ns = "write-reports-large";
    plane.kubectl.namespace(ns, &[]);
    let items: Vec<Value> = (0..LARGE)
        .map(|i| {
            let liveness = if i % 2 == 0 { "/readyz" } else { "/livez" };
            let mut d = deployment(ns, &format!("app-{i:04}"), liveness);
            d["metadata"]["labels"] = json!({"batch": if i < 1_000 { "kept" } else { "deleted" }});
            d
        })
        .collect();
    let list = json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string();
    plane.kubectl.run_with_input(&["create", "-f", "-", "-o", "name"], Some(&list)).ok();
    plane.kubectl.apply(&foreign_report(ns));
    let write = || lifeguard(plane, &["audit", "-n", ns, "--write-reports", "openreports", "--fail-on", "never"]);
    let stored = || -> Vec<Value> {
        let list = plane.kubectl.run(&["get", "reports.openreports.io", "-n", ns, "-o", "json"]).json();
        let mut ours: Vec<Value> = list["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "lifeguard")
            .cloned()
            .collect();
        ours.sort_by_key(|r| {
            r["metadata"]["labels"]["lifeguard.dev/report-part"].as_str().and_then(|p| p.parse::<u32>().ok())
        });
        ours
    };
    let count = |reports: &[Value]| reports.iter().map(|r| results(r).len()).sum::<usize>();

    let first = write();
    assert_eq!(first.code, 0, "{first:#?}");
    let parts = stored();
    assert_eq!(parts.len(), 3, "1,000 results a part");
    assert!(
        first.stderr.contains(&format!("wrote {} reports.openreports.io in 1 namespace", parts.len())),
        "{}",
        first.stderr
    );
    assert_eq!(count(&parts), LARGE, "a pass per sound workload, a result for the other's finding");
    let names: Vec<&str> = parts.iter().filter_map(|r| r["metadata"]["name"].as_str()).collect();
    let expected: Vec<String> =
        (1..=parts.len()).map(|n| if n == 1 { "lifeguard".into() } else { format!("lifeguard-{n}") }).collect();
    assert_eq!(names, expected);
    // What `--format openreports` prints is what is stored.
    let printed = lifeguard(plane, &["audit", "-n", ns, "--format", "openreports", "--fail-on", "never"]);
    let (docs, _) = lifeguard::input::parse_stream(&printed.stdout, &lifeguard::input::Limits::default());
    assert_eq!(docs.len(), parts.len());
    for (doc, part) in docs.iter().zip(&parts) {
        assert_eq!(results(&doc.value), results(part));
    }
    // Why parts: the same results in one report are refused.
    let mut whole = parts[0].clone();
    whole["metadata"] = json!({"name": "lifeguard-whole", "namespace": ns});
    whole["results"] =
        Value::Array(parts.iter().flat_map(|r| r["results"].as_array().cloned().unwrap_or_default()).collect());
    let refused = plane.kubectl.run_with_input(&["create", "-f", "-"], Some(&whole.to_string()));
    assert_ne!(refused.code, 0, "{} results in one report are stored", count(&parts));
    assert!(refused.stderr.contains("etcdserver: request is too large"), "{}", refused.stderr);

    // 2,000 fewer workloads: fewer parts, the rest removed.
    plane.kubectl.run(&["delete", "deployments", "-n", ns, "-l", "batch=deleted", "--wait=false"]).ok();
    let second = write();
    assert_eq!(second.code, 0, "{second:#?}");
    let kept = stored();
    assert_eq!(count(&kept), 1_000);
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0]["metadata"]["name"], "lifeguard");
    assert_eq!(kept[0]["metadata"]["uid"], parts[0]["metadata"]["uid"], "the first part is replaced in place");
    assert!(second.stderr.contains("wrote 1 reports.openreports.io in 1 namespace (2 removed"), "{}", second.stderr);
    let other = plane.kubectl.get(ns, "reports.openreports.io", "other-scanner").expect("the other tool's report");
    assert_eq!(results(&other), [("require-labels".into(), "pass".into(), String::new())]);
    plane.kubectl.run(&["delete", "namespace", ns, "--wait=false"]).ok();
}
