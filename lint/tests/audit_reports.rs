//! `lifeguard audit --format openreports|policyreport` on a fixed
//! namespace (the built-in examples, as the API server would list them,
//! and a Pod its ReplicaSet owns): the reports as printed, at a fixed
//! time; and `lint` refusing the two formats, which are audit's alone.

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use lifeguard::audit::judge::{Judged, Namespace, judge};
use lifeguard::audit::verdicts::Simulation;
use lifeguard::input::{Limits, parse_stream};
use lifeguard::report::policy_report::{ReportKind, Reports, write};
use policies::Policy;
use policies::simulate::Scenario;
use serde_json::{Value, json};

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples")
}

/// The objects of an example file, in namespace `shop`, each with a uid.
fn listed(file: &str, uids: &mut u32) -> Vec<Value> {
    let text = std::fs::read_to_string(examples().join(file)).expect("read the example");
    let (docs, _) = parse_stream(&text, &Limits::default());
    let mut out = Vec::new();
    for doc in docs {
        for (_, object) in policies::objects_in(&doc.value) {
            let mut object = object.clone();
            *uids += 1;
            object["metadata"]["namespace"] = json!("shop");
            object["metadata"]["uid"] = json!(format!("00000000-0000-4000-8000-{:012}", *uids));
            out.push(object);
        }
    }
    out
}

/// The `shop` namespace: the examples' workloads and Service, and a Pod a
/// ReplicaSet owns (no result: its controller's template is judged).
fn shop() -> Namespace {
    let mut uids = 0;
    let mut objects = Vec::new();
    for file in ["web-api.yaml", "good-web.yaml"] {
        objects.extend(listed(file, &mut uids));
    }
    let (services, mut objects): (Vec<Value>, Vec<Value>) = objects.into_iter().partition(|o| o["kind"] == "Service");
    let mut owned = objects[0].clone();
    owned["apiVersion"] = json!("v1");
    owned["kind"] = json!("Pod");
    owned["metadata"]["name"] = json!("orders-7d4b9c-x2x8z");
    owned["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "orders-7d4b9c", "uid": "r", "controller": true}]);
    owned["spec"] = owned["spec"]["template"]["spec"].clone();
    objects.push(owned);
    Namespace { name: "shop".into(), objects, services: Some(services) }
}

/// What `audit --format KIND --simulate --scenario stall:2m` prints for `shop`, at a fixed time.
fn printed(kind: ReportKind) -> String {
    let policy = Policy::default();
    let mut simulation = Simulation::new(&[Scenario::parse("stall:2m").expect("scenario")]);
    let Judged { mut outcome, verdicts, workloads, .. } = judge(shop(), &policy, Some(&mut simulation));
    let reports = Reports::new(kind, &policy, UNIX_EPOCH + Duration::new(1_767_225_600, 250_000_000));
    reports.namespace(&mut outcome, "shop", &workloads, &verdicts);
    let mut text = Vec::new();
    write(&outcome, &mut text).expect("write");
    String::from_utf8(text).expect("UTF-8")
}

fn parsed(text: &str) -> Value {
    let (docs, errors) = parse_stream(text, &Limits::default());
    assert!(errors.is_none(), "{errors:?}");
    assert_eq!(docs.len(), 1, "one namespace, one document");
    docs.into_iter().next().map(|d| d.value).unwrap_or_default()
}

#[test]
fn openreports() {
    let text = printed(ReportKind::Openreports);
    insta::assert_snapshot!(text);
    let report = parsed(&text);
    assert_eq!(report["apiVersion"], "openreports.io/v1alpha1");
    assert_eq!(report["source"], "lifeguard");
    summary_counts_its_results(&report);
}

#[test]
fn policyreport() {
    let text = printed(ReportKind::Policyreport);
    insta::assert_snapshot!(text);
    let report = parsed(&text);
    assert_eq!(report["apiVersion"], "wgpolicyk8s.io/v1alpha2");
    assert!(report["results"].as_array().is_some_and(|r| r.iter().all(|r| r["source"] == "lifeguard")));
    summary_counts_its_results(&report);
    // The same results as a Report's, but for where `source` is said.
    let mut open = parsed(&printed(ReportKind::Openreports));
    let mut policy = report;
    for r in policy["results"].as_array_mut().into_iter().flatten() {
        r.as_object_mut().map(|r| r.remove("source"));
    }
    open.as_object_mut().map(|r| r.remove("source"));
    open["apiVersion"] = policy["apiVersion"].clone();
    open["kind"] = policy["kind"].clone();
    assert_eq!(open, policy);
}

/// The summary counts the results by outcome: a finding at or above the
/// deny severity fails, one below warns, a workload without any passes.
fn summary_counts_its_results(report: &Value) {
    let results = report["results"].as_array().expect("results");
    let count = |outcome: &str| results.iter().filter(|r| r["result"] == outcome).count();
    for outcome in ["pass", "fail", "warn", "error", "skip"] {
        assert_eq!(report["summary"][outcome].as_u64(), Some(count(outcome) as u64), "{outcome}");
    }
    assert_eq!(count("pass"), 1, "good-web's catalog");
    assert!(results.iter().all(|r| r["resources"][0]["name"] != "orders-7d4b9c-x2x8z"), "the owned Pod has no result");
    for r in results.iter().filter(|r| r["result"] != "pass") {
        let expected = match r["severity"].as_str() {
            Some("high") => "fail",
            _ => "warn",
        };
        assert_eq!(r["result"], expected, "{r}");
        assert!(!r["message"].as_str().unwrap_or_default().starts_with("container "), "{r}");
    }
}

#[test]
fn lint_refuses_the_formats_of_audit() {
    for format in ["openreports", "policyreport"] {
        let r = support::lifeguard(
            Path::new(env!("CARGO_MANIFEST_DIR")),
            &["lint", "--format", format, "examples"],
            None,
            &[],
        );
        r.assert_no_panic();
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert_eq!(
            r.stderr,
            format!(
                "error: --format {format} is a format of `lifeguard audit` only: its reports name the cluster's workloads by uid, which files do not have; run `lifeguard audit --format {format}`\n"
            )
        );
        assert!(r.stdout.is_empty(), "{}", r.stdout);
    }
}
