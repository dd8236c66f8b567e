//! `lifeguard audit --format openreports|policyreport` against the real
//! kube-apiserver, with the real CRDs (OpenReports' `Report` from its
//! module, the `PolicyReport` as Kyverno installs it; see
//! `.ci/install-report-crds.sh`): on every pod-bearing object of the shared
//! corpus, as `cluster_audit.rs` loads it, every report is accepted (a
//! server-side dry run, then a real `kubectl apply`) and stored without a
//! field pruned, and its results are `audit --format json`'s findings,
//! finding for finding (rule, resource, container, pointer), with one
//! `pass` per workload without any.

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

mod audit_corpus;

use std::collections::{BTreeMap, BTreeSet};

use audit_corpus::{REPORTS, install_crd, lifeguard, verdicts};
use lifeguard::input::{Limits, parse_stream};
use lifeguard_e2e::cluster::ControlPlane;
use lifeguard_e2e::docs::marked_block;
use lifeguard_e2e::support::deployment::Deployment;
use serde_json::{Value, json};

/// `(namespace, kind, name)`.
type Object = (String, String, String);
/// `(rule, container, pointer)`.
type Found = (String, String, String);

/// The findings of a JSON report (`--simulate`'s verdicts left out).
fn findings(report: &str) -> BTreeMap<Object, BTreeSet<Found>> {
    let entries: Vec<Value> = serde_json::from_str(report).unwrap_or_else(|e| panic!("not JSON ({e}): {report}"));
    let mut out: BTreeMap<Object, BTreeSet<Found>> = BTreeMap::new();
    for e in entries.iter().filter(|e| e["rule"].as_str().is_some_and(|r| r != "simulate")) {
        let text = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
        out.entry((text("namespace"), text("kind"), text("name"))).or_default().insert((
            text("rule"),
            text("container"),
            text("path"),
        ));
    }
    out
}

/// The documents of a YAML stream.
fn documents(stream: &str) -> Vec<Value> {
    let (docs, error) = parse_stream(stream, &Limits::default());
    assert!(error.is_none(), "{error:?}");
    docs.into_iter().map(|d| d.value).collect()
}

/// The workloads judged, by namespace: the WORKLOADS column of the table
/// the audit prints on stderr.
fn judged(stderr: &str, namespaces: &[String]) -> usize {
    stderr
        .lines()
        .filter_map(|l| {
            let mut cells = l.split_whitespace();
            let ns = cells.next()?;
            namespaces.iter().any(|n| n == ns).then(|| cells.next()?.parse::<usize>().ok())?
        })
        .sum()
}

/// Every pod-bearing object's uid, by `(namespace, kind, name)`.
fn uids(plane: &ControlPlane) -> BTreeMap<Object, String> {
    let kinds: Vec<&str> = policies::model::POD_KINDS.iter().map(|k| k.resource).collect();
    let list = plane.kubectl.run(&["get", &kinds.join(","), "-A", "-o", "json"]).json();
    let text = |o: &Value, p: &str| o.pointer(p).and_then(Value::as_str).unwrap_or_default().to_owned();
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            ((text(o, "/metadata/namespace"), text(o, "/kind"), text(o, "/metadata/name")), text(o, "/metadata/uid"))
        })
        .collect()
}

#[test]
fn every_report_is_accepted_and_says_what_the_json_report_says() {
    let Some(plane) = ControlPlane::shared() else { return };
    if !(install_crd(plane, 0) && install_crd(plane, 1)) {
        return;
    }
    let Some(loaded) = audit_corpus::load(plane, "rp") else { return };
    // A namespace of its own with a Pod a ReplicaSet owns: no result.
    let owned_ns = "rp-owned";
    plane.kubectl.namespace(owned_ns, &[]);
    plane.kubectl.default_service_account(owned_ns);
    plane.kubectl.apply(&json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "owned", "namespace": owned_ns, "ownerReferences": [{"apiVersion": "apps/v1",
            "kind": "ReplicaSet", "name": "web-1", "uid": "6b1e0f4c-1111-4222-8333-944455556666", "controller": true}]},
        "spec": {"containers": [{"name": "app", "image": "example/app:1"}]}}));
    let mut namespaces = loaded.namespaces.clone();
    namespaces.push(owned_ns.to_owned());
    let joined = namespaces.join(",");

    let json = lifeguard(plane, &["audit", "--format", "json", "--simulate", "--fail-on", "never", "-n", &joined]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    let (expected, expected_verdicts) = (findings(&json.stdout), verdicts(&json.stdout));
    let uids = uids(plane);

    for (format, _, resource, _) in REPORTS {
        let run = lifeguard(plane, &["audit", "--format", format, "--simulate", "--fail-on", "never", "-n", &joined]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(!run.stderr.contains("lifeguard: warning"), "{}", run.stderr);
        let reports = documents(&run.stdout);

        // What the reports say, result by result.
        let mut reported: BTreeMap<Object, BTreeSet<Found>> = BTreeMap::new();
        let mut passed: BTreeSet<Object> = BTreeSet::new();
        let (mut results, mut by_outcome) = (0, BTreeMap::<String, usize>::new());
        let mut seen_namespaces = BTreeSet::new();
        for report in &reports {
            let ns = report["metadata"]["namespace"].as_str().unwrap_or_default().to_owned();
            assert!(seen_namespaces.insert(ns.clone()), "one report per namespace: {ns}");
            assert_eq!(report["metadata"]["name"], "lifeguard");
            assert_eq!(report["metadata"]["labels"]["app.kubernetes.io/managed-by"], "lifeguard");
            let mut summary = BTreeMap::<String, u64>::new();
            for r in report["results"].as_array().expect("results") {
                results += 1;
                let outcome = r["result"].as_str().unwrap_or_default().to_owned();
                *summary.entry(outcome.clone()).or_default() += 1;
                *by_outcome.entry(outcome.clone()).or_default() += 1;
                let res = &r["resources"][0];
                let text = |k: &str| res[k].as_str().unwrap_or_default().to_owned();
                let object = (text("namespace"), text("kind"), text("name"));
                assert_eq!(object.0, ns, "{r}");
                assert_eq!(uids.get(&object), Some(&text("uid")), "{object:?}: the workload's uid");
                let property = |k: &str| r["properties"][k].as_str().unwrap_or_default().to_owned();
                if outcome == "pass" {
                    assert_eq!((&r["policy"], &r["rule"]), (&json!("lifeguard"), &json!("lifeguard")), "{r}");
                    assert!(passed.insert(object), "one pass per workload: {r}");
                    continue;
                }
                assert_eq!(r["policy"], r["rule"], "{r}");
                let severity = r["severity"].as_str().unwrap_or_default();
                let expected_outcome = if severity == "high" { "fail" } else { "warn" };
                assert_eq!(outcome, expected_outcome, "the default policy denies errors: {r}");
                let container = property("container");
                for (key, verdict) in r["properties"].as_object().into_iter().flatten() {
                    let Some(scenario) = key.strip_prefix("simulate.") else { continue };
                    let at = [&object.0, &object.1, &object.2, &container, scenario].map(|s| s.to_owned());
                    assert_eq!(expected_verdicts.get(&at), verdict.as_str().map(str::to_owned).as_ref(), "{at:?}");
                }
                let rule = r["rule"].as_str().unwrap_or_default().to_owned();
                reported.entry(object).or_default().insert((rule, container, property("pointer")));
            }
            for outcome in ["pass", "fail", "warn", "error", "skip"] {
                let counted = summary.get(outcome).copied().unwrap_or_default();
                assert_eq!(report["summary"][outcome].as_u64(), Some(counted), "{ns}: summary.{outcome}");
            }
        }
        assert_eq!(reported, expected, "{format}: the results are the JSON report's findings");
        assert!(passed.iter().all(|o| !expected.contains_key(o)), "a pass only where nothing was found");
        let workloads = judged(&run.stderr, &namespaces);
        assert_eq!(expected.len() + passed.len(), workloads, "{format}: every workload judged has a result");
        assert!(!seen_namespaces.contains(owned_ns), "a namespace with nothing judged has no report");
        assert!(passed.len() >= 10 && !expected.is_empty(), "{passed:?}");

        // The API server accepts every one: a server-side dry run, then a
        // real apply, as `kubectl apply -f -` of the printed stream.
        let dry =
            plane.kubectl.run_with_input(&["apply", "--server-side", "--dry-run=server", "-f", "-"], Some(&run.stdout));
        assert_eq!(dry.code, 0, "{}", dry.stderr);
        assert_eq!(dry.stdout.lines().count(), reports.len(), "{}", dry.stdout);
        let applied = plane.kubectl.run_with_input(&["apply", "-f", "-"], Some(&run.stdout));
        assert_eq!(applied.code, 0, "{}", applied.stderr);
        assert!(applied.warnings().is_empty(), "{}", applied.stderr);
        // Stored whole: a field the CRD's schema does not know would be pruned.
        let stored = plane
            .kubectl
            .run(&["get", resource, "-A", "-l", "app.kubernetes.io/managed-by=lifeguard", "-o", "json"])
            .json();
        let stored: BTreeMap<String, &Value> = stored["items"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| (r["metadata"]["namespace"].as_str().unwrap_or_default().to_owned(), r))
            // The other test of this binary writes one of its own.
            .filter(|(ns, _)| namespaces.contains(ns))
            .collect();
        assert_eq!(stored.len(), reports.len());
        for report in &reports {
            let ns = report["metadata"]["namespace"].as_str().unwrap_or_default();
            let kept = stored.get(ns).unwrap_or_else(|| panic!("{resource} of {ns} not stored"));
            for key in ["results", "summary", "source"] {
                assert_eq!(kept[key], report[key], "{ns}: {key} as stored");
            }
        }
        eprintln!(
            "{format}: {} reports, {results} results {by_outcome:?} for {workloads} workloads ({} with findings) in {} namespaces",
            reports.len(),
            expected.len(),
            namespaces.len()
        );
        if let Some(small) =
            stored.values().find(|r| r["results"].as_array().is_some_and(|a| (2..=3).contains(&a.len())))
        {
            eprintln!("{format}, as stored:\n{}", serde_json::to_string_pretty(small).unwrap_or_default());
        }
    }
    loaded.delete(plane);
    plane.kubectl.run(&["delete", "namespace", owned_ns, "--wait=false"]).ok();
}

/// A Deployment named `name` with `containers`.
fn deployment(ns: &str, name: &str, containers: Value) -> Value {
    Deployment::new(name).namespace(ns).containers(containers).build()
}

/// Values the API server or the clock sets anew on every run, blanked.
fn without_volatile(text: &str) -> String {
    let volatile = ["uid: ", "creationTimestamp: ", "resourceVersion: ", "seconds: ", "nanos: "];
    text.lines()
        .map(|line| {
            let value_at = volatile.iter().find_map(|k| line.find(k).map(|at| at + k.len()));
            match value_at {
                Some(at) => format!("{}...\n", &line[..at]),
                None => format!("{line}\n"),
            }
        })
        .collect()
}

#[test]
fn docs_show_a_report_as_the_api_server_stores_it() {
    let Some(plane) = ControlPlane::shared() else { return };
    // Both, as the other test installs them: an audit that discovers a CRD
    // whose schema is not yet published warns.
    if !(install_crd(plane, 0) && install_crd(plane, 1)) {
        return;
    }
    let ns = "audit-reports";
    plane.kubectl.namespace(ns, &[]);
    let http = |path: &str| json!({"httpGet": {"path": path, "port": "http"}});
    let port = json!([{"name": "http", "containerPort": 8080}]);
    plane.kubectl.apply(&deployment(
        ns,
        "orders",
        json!([{"name": "orders", "image": "example/orders:1",
        "ports": port, "livenessProbe": http("/health"), "readinessProbe": http("/health")}]),
    ));
    plane.kubectl.apply(&deployment(
        ns,
        "catalog",
        json!([{"name": "catalog", "image": "example/catalog:1",
        "ports": port, "livenessProbe": http("/livez"), "readinessProbe": http("/readyz")}]),
    ));
    let args = ["audit", "-n", ns, "--format", "openreports", "--quiet", "--fail-on", "never"];
    let audit = lifeguard(plane, &args);
    assert_eq!(audit.code, 0, "{}", audit.stderr);
    assert!(audit.stderr.is_empty(), "{}", audit.stderr);
    let applied = plane.kubectl.run_with_input(&["apply", "--server-side", "-f", "-"], Some(&audit.stdout));
    let get = ["get", "reports.openreports.io", "lifeguard", "-n", ns, "-o", "yaml"];
    let stored = plane.kubectl.run(&get);
    let shown = format!(
        "$ lifeguard {} | kubectl apply --server-side -f -\n{}$ kubectl {}\n{}",
        args.join(" "),
        applied.ok(),
        get.join(" "),
        stored.ok()
    );
    eprintln!("{shown}");
    // docs/audit.md shows this session; what the server sets anew each run is left out of the comparison.
    let block = marked_block("docs/audit.md", "audit-report-stored");
    assert_eq!(without_volatile(&block), without_volatile(&shown), "docs/audit.md's stored Report");
}
