//! Custom rules: each predicate, each scope, the pointer of the matched
//! value, message placeholders, and the policy switches that apply to them.

mod common;

use common::{policy, report, tags, web};
use policies::{Finding, Severity};
use serde_json::json;

fn custom(scope: &str, path: &str, when: &str) -> String {
    format!(
        "customRules:\n- name: house-rule\n  severity: warning\n  message: \"{{container}}: {{value}}\"\n  help: do better\n  scope: {scope}\n  path: \"{path}\"\n  when: {when}\n"
    )
}

/// The custom rule's findings on `web()`: `container pointer message` each.
fn run(scope: &str, path: &str, when: &str) -> Vec<String> {
    run_on(&web(), scope, path, when)
}

fn run_on(obj: &serde_json::Value, scope: &str, path: &str, when: &str) -> Vec<String> {
    let r = report(obj, &policy(&custom(scope, path, when)));
    r.findings
        .iter()
        .filter(|f| f.rule == "house-rule")
        .map(|f: &Finding| format!("{} {}", f.pointer, f.message))
        .collect()
}

const C0: &str = "/spec/template/spec/containers/0";
const C1: &str = "/spec/template/spec/containers/1";

#[test]
fn exists_reports_once_per_container_at_the_value() {
    assert_eq!(
        run("container", "$.livenessProbe.httpGet.path", "exists"),
        [
            format!("{C0}/livenessProbe/httpGet/path app: /livez"),
            format!("{C1}/livenessProbe/httpGet/path istio-proxy: /livez")
        ]
    );
    assert!(run("container", "$.livenessProbe.exec", "exists").is_empty());
}

#[test]
fn absent_reports_at_the_scope() {
    assert_eq!(
        run("container", "$.resources.limits.memory", "absent"),
        [format!("{C0} app: <absent>"), format!("{C1} istio-proxy: <absent>")]
    );
    assert!(run("container", "$.image", "absent").is_empty());
    let mut with_null = web();
    with_null["spec"]["template"]["spec"]["containers"][0]["workingDir"] = json!(null);
    assert_eq!(run_on(&with_null, "container", "$.workingDir", "absent").len(), 2);
}

#[test]
fn equals_compares_numbers_by_value_and_types_strictly() {
    assert_eq!(run("container", "$.livenessProbe.failureThreshold", "{equals: 1}").len(), 2);
    assert_eq!(run("container", "$.livenessProbe.failureThreshold", "{equals: 1.0}").len(), 2);
    assert!(run("container", "$.livenessProbe.failureThreshold", "{equals: '1'}").is_empty());
    assert_eq!(run("container", "$.name", "{equals: istio-proxy}"), [format!("{C1}/name istio-proxy: istio-proxy")]);
}

#[test]
fn matches_applies_a_regex_to_strings() {
    assert_eq!(run("container", "$.image", "{matches: ':1\\.2$'}"), [format!("{C0}/image app: example/web:1.2")]);
    assert!(run("container", "$.livenessProbe.failureThreshold", "{matches: '1'}").is_empty());
}

#[test]
fn numeric_comparisons() {
    let ports = "$.ports[*].containerPort";
    assert!(run("container", ports, "{lt: 8080}").is_empty());
    assert_eq!(
        run("container", ports, "{le: 8080}"),
        [format!("{C0}/ports/0/containerPort app: 8080"), format!("{C1}/ports/0/containerPort istio-proxy: 8080")]
    );
    assert_eq!(run("container", ports, "{gt: 8000}").len(), 2);
    assert!(run("container", ports, "{gt: 8080}").is_empty());
    assert_eq!(run("container", ports, "{ge: 8080}").len(), 2);
    assert!(run("container", ports, "{ge: 8081}").is_empty());
    assert!(run("container", "$.image", "{lt: 1}").is_empty(), "strings are not numbers");
}

#[test]
fn one_of() {
    assert_eq!(
        run("container", "$.name", "{oneOf: [linkerd-proxy, istio-proxy]}"),
        [format!("{C1}/name istio-proxy: istio-proxy")]
    );
    assert!(run("container", "$.name", "{oneOf: [sidecar]}").is_empty());
}

#[test]
fn filter_expressions_select_values() {
    let mut obj = web();
    obj["spec"]["template"]["spec"]["containers"][0]["env"] =
        json!([{"name": "LOG", "value": "info"}, {"name": "DEBUG", "value": "true"}]);
    assert_eq!(
        run_on(&obj, "container", "$.env[?@.name == 'DEBUG'].value", "{equals: 'true'}"),
        [format!("{C0}/env/1/value app: true")]
    );
}

#[test]
fn pod_and_object_scopes() {
    let pod = report(&web(), &policy(&custom("pod", "$.terminationGracePeriodSeconds", "absent")));
    let f = pod.findings.iter().find(|f| f.rule == "house-rule").expect("finding");
    assert_eq!((f.pointer.as_str(), f.container.as_deref()), ("/spec/template/spec", None));
    assert_eq!(f.message, "<pod>: <absent>");
    assert_eq!(run("object", "$.metadata.name", "{equals: web}"), ["/metadata/name <pod>: web"]);
}

#[test]
fn custom_findings_look_like_built_in_ones() {
    let r = report(&web(), &policy(&custom("container", "$.image", "{matches: istio}")));
    assert_eq!(
        tags(&r.findings),
        ["liveness-too-aggressive@app", "liveness-too-aggressive@istio-proxy", "house-rule@istio-proxy"]
    );
    let f = &r.findings[2];
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(f.help, "do better");
    assert!(f.fix.is_none());
}

#[test]
fn rules_switches_and_exemptions_apply_to_custom_rules() {
    let base = custom("container", "$.image", "exists");
    let off = report(&web(), &policy(&format!("{base}rules:\n  house-rule: {{enabled: false}}\n")));
    assert!(!off.findings.iter().any(|f| f.rule == "house-rule"));
    let raised = report(&web(), &policy(&format!("{base}rules:\n  house-rule: {{severity: error}}\n")));
    assert!(raised.findings.iter().filter(|f| f.rule == "house-rule").all(|f| f.severity == Severity::Error));
    let exempt = report(
        &web(),
        &policy(&format!("{base}exemptions:\n- reason: mesh\n  containers: [istio-proxy]\n  rules: [house-rule]\n")),
    );
    assert_eq!(
        tags(&exempt.suppressed.iter().map(|s| s.finding.clone()).collect::<Vec<_>>()),
        ["house-rule@istio-proxy"]
    );
}

#[test]
fn the_short_form_is_the_message_cut_after_a_word_where_the_warning_would_not_fit() {
    let shorts = |message: &str| -> Vec<(String, String)> {
        let text = format!(
            "customRules:\n- name: house-rule\n  severity: warning\n  message: \"{message}\"\n  help: do better\n  scope: container\n  path: \"$.image\"\n  when: exists\n"
        );
        let r = report(&web(), &policy(&text));
        r.findings.iter().filter(|f| f.rule == "house-rule").map(|f| (f.message.clone(), f.short.clone())).collect()
    };
    for (message, short) in shorts("{container} runs {value}") {
        assert_eq!(short, message);
    }
    let long =
        format!("{{container}} runs an image from {{value}}, {}", "which the platform team does not build ".repeat(4));
    for (message, short) in shorts(&long) {
        assert!(message.chars().count() > 120, "{message}");
        let line = format!("house-rule: {short}");
        assert!(line.chars().count() <= 120, "{line}");
        let kept = short.strip_suffix("...").expect("cut with ...");
        assert!(message.starts_with(kept) && message[kept.len()..].starts_with(' '), "{short:?} of {message:?}");
    }
}
