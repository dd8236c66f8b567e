//! `lifeguard audit` of the loaded corpus against `lifeguard lint` and
//! `lifeguard simulate` of the same objects' files: the same findings,
//! but for the differences the API server's defaults and the audit's
//! knowledge of the namespace explain, and the same verdicts. Shared by
//! `cluster_audit.rs` and the version matrix (`cluster_versions.rs`).

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

use std::collections::{BTreeMap, BTreeSet};

use lifeguard_e2e::cluster::{ControlPlane, Run};
use serde_json::Value;

use super::{Loaded, lifeguard, verdicts};

/// What a JSON report says of each object: `(namespace, kind, name)` ->
/// `(rule, container, path)`.
pub type Judged = BTreeMap<(String, String, String), BTreeSet<(String, String, String)>>;

/// The findings of a JSON report of `lint` or `audit`, by object, the
/// namespace of each entry given by `namespace_of`.
pub fn judged(report: &str, namespace_of: impl Fn(&Value) -> String) -> Judged {
    let entries: Vec<Value> = serde_json::from_str(report).unwrap_or_else(|e| panic!("not JSON ({e}): {report}"));
    let mut out = Judged::new();
    // Input errors (`rule` null) and simulation verdicts are not findings.
    for e in entries.iter().filter(|e| e["rule"].as_str().is_some_and(|r| r != "simulate")) {
        let text = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
        out.entry((namespace_of(e), text("kind"), text("name"))).or_default().insert((
            text("rule"),
            text("container"),
            text("path"),
        ));
    }
    out
}

/// Fields the API server sets when a file leaves them out: a probe's, and a
/// Deployment's progress deadline (which `progress-deadline-too-short`
/// points at where it is written, else at the spec).
const DEFAULTED_FIELDS: [&str; 5] =
    ["failureThreshold", "periodSeconds", "timeoutSeconds", "successThreshold", "progressDeadlineSeconds"];

/// Why audit and lint differ on `finding` of an object, if the API
/// server's defaults or the audit's knowledge of the namespace explain it:
/// `in_audit` says which side has it, `other` is what the other side has
/// for the object, `services` whether its namespace holds any Service.
fn explained(
    finding: &(String, String, String),
    in_audit: bool,
    other: &BTreeSet<(String, String, String)>,
    services: bool,
) -> Option<&'static str> {
    let (rule, container, path) = finding;
    // lint, not knowing the Services, reports a pod that declares ports;
    // the audit read every Service of the namespace and there are none, so
    // no traffic waits on the pod's readiness.
    if rule == "readiness-probe-missing" && !in_audit && !services {
        return Some(
            "readiness-probe-missing only in lint: the namespace has no Service, which the audit knows and lint cannot",
        );
    }
    // The same finding, located at the field the API server filled in
    // (lint points at the probe, as the file has no such field).
    let moved = |(r, c, p): &(String, String, String)| {
        let (short, long) = if in_audit { (p, path) } else { (path, p) };
        r == rule
            && c == container
            && long
                .strip_prefix(short.as_str())
                .and_then(|f| f.strip_prefix('/'))
                .is_some_and(|f| DEFAULTED_FIELDS.contains(&f))
    };
    other.iter().any(moved).then_some("the same finding at the field the API server defaulted (the file leaves it out)")
}

/// `lifeguard audit --simulate` of the loaded namespaces judges every
/// object as `lifeguard lint` judges its file alone, but for the
/// differences [`explained`] accounts for; returns the audit's run (JSON).
pub fn findings(plane: &ControlPlane, loaded: &Loaded) -> Run {
    let (namespaces, lint_paths, with_services) = (&loaded.namespaces, &loaded.lint_paths, &loaded.with_services);
    let mut args = vec!["lint", "--format", "json", "--fail-on", "never"];
    args.extend(lint_paths.iter().map(String::as_str));
    let lint = lifeguard(plane, &args);
    assert_eq!(lint.code, 0, "{lint:#?}");
    let joined = namespaces.join(",");
    let audit = lifeguard(plane, &["audit", "--format", "json", "--fail-on", "never", "--simulate", "-n", &joined]);
    assert_eq!(audit.code, 0, "{}", audit.stderr);
    assert!(!audit.stderr.contains("lifeguard: warning"), "{}", audit.stderr);
    let by_namespace = |e: &Value| e["namespace"].as_str().unwrap_or_default().to_owned();
    let (linted, audited) = (judged(&lint.stdout, by_namespace), judged(&audit.stdout, by_namespace));

    let (mut agree, mut explained_rows, mut unexplained) = (0, BTreeMap::<String, usize>::new(), Vec::new());
    let keys: BTreeSet<_> = linted.keys().chain(audited.keys()).cloned().collect();
    let empty = BTreeSet::new();
    for key in keys {
        let (l, a) = (linted.get(&key).unwrap_or(&empty), audited.get(&key).unwrap_or(&empty));
        agree += l.intersection(a).count();
        let services = with_services.contains(&key.0);
        for (finding, in_audit) in l.difference(a).map(|f| (f, false)).chain(a.difference(l).map(|f| (f, true))) {
            let other = if in_audit { l } else { a };
            match explained(finding, in_audit, other, services) {
                Some(why) => *explained_rows.entry(format!("{}: {why}", finding.0)).or_default() += 1,
                None => unexplained
                    .push(format!("{key:?}: {finding:?} only in {}", if in_audit { "audit" } else { "lint" })),
            }
        }
    }
    eprintln!(
        "{} pod-bearing objects in {} namespaces; {agree} findings agree; explained differences: {explained_rows:#?}; {} refused by the API server",
        loaded.created,
        namespaces.len(),
        loaded.refused.len()
    );
    assert!(unexplained.is_empty(), "{unexplained:#?}");
    assert!(agree >= 100, "{agree} findings agree");
    audit
}

/// `audit`'s `--simulate` verdicts (its JSON run, from [`findings`]) are
/// those `lifeguard simulate` gives on each file, container by container
/// and scenario by scenario.
pub fn verdicts_agree(plane: &ControlPlane, loaded: &Loaded, audit: &Run) {
    let mut args = vec!["simulate", "--format", "json", "--fail-on", "never"];
    args.extend(loaded.lint_paths.iter().map(String::as_str));
    let simulate = lifeguard(plane, &args);
    assert_eq!(simulate.code, 0, "{simulate:#?}");
    let (simulated, audited) = (verdicts(&simulate.stdout), verdicts(&audit.stdout));
    assert!(simulated.len() >= 500, "{} verdicts from lifeguard simulate", simulated.len());
    // simulate, not knowing the Services, takes a file without one to send
    // traffic to each declared port (as lint's readiness-probe-missing
    // does); the audit read every Service of the namespace and there are
    // none, so nothing is refused at a deletion or a boot.
    let no_service = |k: &[String; 5]| {
        !loaded.with_services.contains(&k[0])
            && simulated.get(k).map(String::as_str) == Some("connections-refused")
            && audited.get(k).map(String::as_str) == Some("ok")
    };
    let mut explained = 0;
    let differ: Vec<String> = simulated
        .keys()
        .chain(audited.keys())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .filter(|k| simulated.get(*k) != audited.get(*k))
        .filter(|k| {
            let known = no_service(k);
            explained += usize::from(known);
            !known
        })
        .map(|k| format!("{k:?}: simulate {:?}, audit {:?}", simulated.get(k), audited.get(k)))
        .collect();
    assert!(differ.is_empty(), "{} verdicts differ: {differ:#?}", differ.len());
    eprintln!("{explained} verdicts differ only as the namespace's lack of a Service explains");
    let mut by_verdict: BTreeMap<&str, usize> = BTreeMap::new();
    for v in audited.values() {
        *by_verdict.entry(v.as_str()).or_default() += 1;
    }
    eprintln!("{} verdicts agree: {by_verdict:?}", audited.len());
}
