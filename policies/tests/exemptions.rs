//! What a policy does to findings: rules off, severities, exemptions of
//! each kind, and the `lifeguard.dev/ignore` annotation with and without a
//! reason. Suppressed findings are kept (counted) and never fixed.

mod common;

use common::{policy, report, suppressed_tags, tags, web};
use policies::{Batch, Policy, Severity, SuppressedBy, plan_fixes};
use serde_json::json;

const BOTH: [&str; 2] = ["liveness-too-aggressive@app", "liveness-too-aggressive@istio-proxy"];

#[test]
fn without_a_policy_both_containers_are_reported() {
    let r = report(&web(), &Policy::default());
    assert_eq!(tags(&r.findings), BOTH);
    assert!(r.suppressed.is_empty());
}

#[test]
fn a_disabled_rule_does_not_run_and_is_not_counted() {
    let r = report(&web(), &policy("rules:\n  liveness-too-aggressive: {enabled: false}\n"));
    assert!(r.findings.is_empty());
    assert!(r.suppressed.is_empty());
}

#[test]
fn severity_overrides_apply_to_every_finding_of_the_rule() {
    let r = report(&web(), &policy("rules:\n  liveness-too-aggressive: {severity: error}\n"));
    assert!(r.findings.iter().all(|f| f.severity == Severity::Error));
    assert_eq!(r.findings.len(), 2);
}

fn exempt(conditions: &str) -> policies::ObjectReport {
    report(&web(), &policy(&format!("exemptions:\n- reason: platform sidecars\n{conditions}")))
}

#[test]
fn exemption_by_namespace() {
    assert_eq!(suppressed_tags(&exempt("  namespaces: [prod]\n")), BOTH);
    assert_eq!(suppressed_tags(&exempt("  namespaces: ['pr*']\n")), BOTH);
    assert!(exempt("  namespaces: [staging]\n").suppressed.is_empty());
    let mut no_namespace = web();
    no_namespace["metadata"].as_object_mut().map(|m| m.remove("namespace"));
    let r = report(&no_namespace, &policy("exemptions:\n- reason: r\n  namespaces: ['*']\n"));
    assert!(r.suppressed.is_empty(), "an object without namespace matches no namespace");
}

#[test]
fn exemption_by_object_name_glob() {
    assert_eq!(suppressed_tags(&exempt("  names: ['we?']\n")), BOTH);
    assert!(exempt("  names: ['web-*']\n").suppressed.is_empty());
}

#[test]
fn exemption_by_label_selector_on_the_pod_labels() {
    assert_eq!(suppressed_tags(&exempt("  selector: {matchLabels: {tier: frontend}}\n")), BOTH);
    assert!(exempt("  selector: {matchLabels: {tier: backend}}\n").suppressed.is_empty());
    let expr = |e: &str| exempt(&format!("  selector:\n    matchExpressions:\n    - {e}\n"));
    assert_eq!(suppressed_tags(&expr("{key: tier, operator: In, values: [frontend, edge]}")), BOTH);
    assert!(expr("{key: tier, operator: NotIn, values: [frontend]}").suppressed.is_empty());
    assert_eq!(suppressed_tags(&expr("{key: tier, operator: NotIn, values: [batch]}")), BOTH);
    assert_eq!(suppressed_tags(&expr("{key: app, operator: Exists}")), BOTH);
    assert!(expr("{key: app, operator: DoesNotExist}").suppressed.is_empty());
    assert_eq!(suppressed_tags(&expr("{key: legacy, operator: DoesNotExist}")), BOTH);
}

#[test]
fn exemption_by_container_name_only_covers_that_container() {
    let r = exempt("  containers: [istio-*]\n");
    assert_eq!(suppressed_tags(&r), ["liveness-too-aggressive@istio-proxy"]);
    assert_eq!(tags(&r.findings), ["liveness-too-aggressive@app"]);
    assert_eq!(r.suppressed[0].reason, "platform sidecars");
    assert_eq!(r.suppressed[0].by, SuppressedBy::Exemption(0));
}

#[test]
fn container_exemptions_never_cover_pod_level_findings() {
    let mut obj = web();
    obj["spec"]["template"]["metadata"]["annotations"] = json!({"lifeguard.dev/drain-seconds": "soon"});
    let r = report(&obj, &policy("exemptions:\n- reason: r\n  containers: ['*']\n"));
    assert_eq!(tags(&r.findings), ["grace-period-too-short@-"]);
    assert_eq!(r.suppressed.len(), 2);
}

#[test]
fn exemption_conditions_all_apply_and_rules_narrow_it() {
    assert!(exempt("  namespaces: [prod]\n  names: [api]\n").suppressed.is_empty());
    assert!(exempt("  namespaces: [prod]\n  rules: [exec-probe]\n").suppressed.is_empty());
    assert_eq!(suppressed_tags(&exempt("  namespaces: [prod]\n  rules: [liveness-too-aggressive]\n")), BOTH);
}

#[test]
fn suppressed_findings_keep_the_policy_severity() {
    let r = report(
        &web(),
        &policy("rules:\n  liveness-too-aggressive: {severity: info}\nexemptions:\n- reason: r\n  containers: [app]\n"),
    );
    assert_eq!(r.suppressed[0].finding.severity, Severity::Info);
}

fn annotated(on_template: bool, annotations: serde_json::Value) -> serde_json::Value {
    let mut obj = web();
    let meta = if on_template { &mut obj["spec"]["template"]["metadata"] } else { &mut obj["metadata"] };
    meta["annotations"] = annotations;
    obj
}

#[test]
fn ignore_annotation_with_a_reason_suppresses_on_object_or_template() {
    for on_template in [true, false] {
        let obj = annotated(
            on_template,
            json!({"lifeguard.dev/ignore": "exec-probe, liveness-too-aggressive",
                   "lifeguard.dev/ignore-reason": "legacy app, fixed in JIRA-42"}),
        );
        let r = report(&obj, &Policy::default());
        assert!(r.findings.is_empty(), "{:?}", tags(&r.findings));
        assert_eq!(suppressed_tags(&r), BOTH);
        assert_eq!(r.suppressed[0].reason, "legacy app, fixed in JIRA-42");
        assert_eq!(r.suppressed[0].by, SuppressedBy::Annotation);
    }
}

#[test]
fn ignore_annotation_without_a_reason_is_reported_and_not_applied() {
    let obj = annotated(true, json!({"lifeguard.dev/ignore": "liveness-too-aggressive"}));
    let r = report(&obj, &Policy::default());
    assert!(r.suppressed.is_empty());
    let mut t = tags(&r.findings);
    t.sort();
    assert_eq!(
        t,
        ["ignore-annotation-invalid@-", "liveness-too-aggressive@app", "liveness-too-aggressive@istio-proxy"]
    );
    let f = r.findings.iter().find(|f| f.rule == "ignore-annotation-invalid").expect("finding");
    assert_eq!(f.pointer, "/spec/template/metadata/annotations/lifeguard.dev~1ignore");
    assert_eq!(f.severity, Severity::Warning);
}

#[test]
fn ignore_annotation_on_the_object_is_reported_at_the_object() {
    let obj = annotated(false, json!({"lifeguard.dev/ignore": "liveness-too-aggressive"}));
    let r = report(&obj, &Policy::default());
    let f = r.findings.iter().find(|f| f.rule == "ignore-annotation-invalid").expect("finding");
    assert_eq!(f.pointer, "/metadata/annotations/lifeguard.dev~1ignore");
}

#[test]
fn ignore_annotation_may_name_custom_rules() {
    let p = policy(
        "customRules:\n- name: team-label\n  severity: warning\n  message: no team\n  scope: object\n  path: $.metadata.labels.team\n  when: absent\n",
    );
    let obj =
        annotated(true, json!({"lifeguard.dev/ignore": "team-label", "lifeguard.dev/ignore-reason": "shared service"}));
    let r = report(&obj, &p);
    assert_eq!(suppressed_tags(&r), ["team-label@-"]);
    assert!(!r.findings.iter().any(|f| f.rule == "ignore-annotation-invalid"));
}

#[test]
fn suppressed_findings_are_not_fixed() {
    let p = policy("exemptions:\n- reason: mesh-managed\n  containers: [istio-proxy]\n");
    let plan = plan_fixes(&web(), &Batch::default(), &p, None).expect("reads").expect("pod spec");
    let fixed: Vec<_> = plan.applied.iter().map(|a| a.container.as_deref().unwrap_or("-")).collect();
    assert_eq!(fixed, ["app"]);
    let after = plan.fixed.expect("something was fixed");
    assert_eq!(after["spec"]["template"]["spec"]["containers"][1]["livenessProbe"]["failureThreshold"], json!(1));
}
