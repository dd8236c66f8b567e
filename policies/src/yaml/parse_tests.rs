//! The loader's documents, positions, limits and lean reads.

use serde_json::{Value, json};

use super::limits::Limits;
use super::parse::{ParseError, parse_part_context, parse_part_lean, parse_stream};
use super::source::{Document, Mark};

fn parse(text: &str) -> (Vec<Document>, Option<ParseError>) {
    parse_stream(text, &Limits::default())
}

#[test]
fn multi_document_with_empty_ones() {
    let (docs, err) = parse("---\n---\na: 1\n---\n# only a comment\n---\nb: [x, 2]\n");
    assert_eq!(err, None);
    let values: Vec<_> = docs.iter().map(|d| d.value.clone()).collect();
    assert_eq!(values, vec![json!({"a": 1}), json!({"b": ["x", 2]})]);
}

#[test]
fn locate_points_at_keys_and_items() {
    let text = "kind: Pod\nspec:\n  containers:\n  - name: a\n    ports:\n    - containerPort: 80\n";
    let (docs, _) = parse(text);
    let d = &docs[0];
    let at = |p: &str| {
        let l = d.locate(p);
        (l.line, l.column)
    };
    assert_eq!(at("/spec"), (2, 1));
    assert_eq!(at("/spec/containers/0"), (4, 5));
    assert_eq!(at("/spec/containers/0/ports/0/containerPort"), (6, 7));
    // A missing field points at its deepest existing parent.
    assert_eq!(at("/spec/containers/0/livenessProbe"), (4, 5));
}

#[test]
fn anchors_and_merge_keys() {
    let text = "base: &b {x: 1, z: 2}\nuse:\n  <<: *b\n  z: 3\nlist: [*b]\n";
    let (docs, err) = parse(text);
    assert_eq!(err, None);
    assert_eq!(docs[0].value["use"], json!({"z": 3, "x": 1}));
    assert_eq!(docs[0].value["list"], json!([{"x": 1, "z": 2}]));
    assert_eq!(docs[0].locate("/use/x").line, 1);
}

#[test]
fn duplicate_keys_take_the_last_value_at_the_last_position() {
    let (docs, err) = parse("a: 1\nb: 2\na: 3\n");
    assert_eq!(err, None);
    assert_eq!(docs[0].value, json!({"a": 3, "b": 2}));
    assert_eq!(docs[0].locate("/a").line, 3);
    let dup = &docs[0].duplicate_keys;
    assert_eq!(dup.len(), 1);
    assert_eq!((dup[0].key.as_str(), dup[0].at.line, dup[0].first.line), ("a", 3, 1));
    let (docs, _) = parse("a: 1\n---\nb: 2\n");
    assert!(docs.iter().all(|d| d.duplicate_keys.is_empty()), "no carry-over between documents");
}

#[test]
fn syntax_error_keeps_earlier_documents() {
    let (docs, err) = parse("a: 1\n---\nb: [1, 2\n");
    assert_eq!(docs.len(), 1);
    assert!(err.is_some());
}

#[test]
fn unexpected_end_points_at_the_last_line() {
    for text in ["kind: Pod\nspec: [unclosed", "kind: Pod\nspec: [unclosed\n\n  \n"] {
        let err = parse(text).1.expect("an error");
        assert_eq!((err.line, err.column), (2, 16), "{text:?}");
        assert!(err.message.ends_with("the input ends here"), "{}", err.message);
    }
}

#[test]
fn alias_bomb_is_refused() {
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let p = i - 1;
        text.push_str(&format!("a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"));
    }
    let (_, err) = parse(&text);
    let err = err.map(|e| e.message).unwrap_or_default();
    assert!(err.contains("alias bomb"), "{err}");
}

#[test]
fn deep_nesting_is_refused() {
    let text = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    let (_, err) = parse(&text);
    assert!(err.is_some());
    let text = format!("a:\n{}", (1..200).map(|i| format!("{}k{i}:\n", " ".repeat(i))).collect::<String>());
    let (_, err) = parse(&text);
    assert!(err.map(|e| e.message).unwrap_or_default().contains("nesting deeper"));
}

#[test]
fn json_parses_with_positions() {
    let (docs, err) = parse("{\n  \"kind\": \"Pod\",\n  \"spec\": {\"containers\": []}\n}\n");
    assert_eq!(err, None);
    assert_eq!(docs[0].locate("/spec/containers").line, 3);
}

fn lean(text: &str) -> (Vec<Document>, Option<ParseError>) {
    let mut docs = Vec::new();
    let err = parse_part_lean(text, Mark::default(), &Limits::default(), |d| docs.push(d));
    (docs, err)
}

#[test]
fn a_lean_read_skips_only_what_no_rule_reads() {
    let text = "kind: ConfigMap\ndata:\n  a: {x: 1, x: 2}\n  b: [1, {y: 1, y: 2}]\n  c: 1\n  c: 2\n---\n\
                kind: Deployment\nspec: {template: {spec: {containers: [{name: a}]}}}\n---\n\
                kind: CustomResourceDefinition\nspec: {template: {x: 1}, versions: [{schema: {a: 1}}]}\n---\n\
                kind: Rollout\nspec: {template: {spec: {containers: [{name: b}]}}}\n";
    let (full, full_err) = parse(text);
    let (lean, lean_err) = lean(text);
    assert_eq!((full_err, lean_err), (None, None));
    assert_eq!(full.len(), lean.len());
    for (f, l) in full.iter().zip(&lean) {
        assert_eq!((f.root.start, f.root.end, f.start), (l.root.start, l.root.end, l.start));
        assert_eq!(format!("{:?}", f.duplicate_keys), format!("{:?}", l.duplicate_keys));
        assert_eq!(f.value["kind"], l.value["kind"]);
    }
    assert_eq!(lean[0].value["data"], Value::Null, "a ConfigMap's data is not built");
    assert_eq!(lean[0].duplicate_keys.len(), 3);
    assert_eq!(lean[1].value, full[1].value);
    assert_eq!(lean[2].value["spec"], json!({"template": {"x": null}, "versions": null}));
    assert_eq!(lean[3].value, full[3].value, "another kind with a pod template is read in full");
}

#[test]
fn a_lean_read_reads_again_what_it_cannot_skip_safely() {
    for text in [
        "kind: ConfigMap\ndata: {a: 1}\nkind: Deployment\nspec: {template: {spec: {containers: []}}}\n",
        "base: &b {kind: Pod}\nkind: ConfigMap\n<<: *b\n",
        "kind: ConfigMap\ndata: &d {a: 1}\nother: *d\n",
        "a: 1\n---\nkind: Secret\ndata: {a: [1, *x]}\n",
    ] {
        let (full, full_err) = parse(text);
        let (lean, lean_err) = lean(text);
        assert_eq!(full_err.is_some(), lean_err.is_some(), "{text}");
        let values = |d: &[Document]| d.iter().map(|d| d.value.clone()).collect::<Vec<_>>();
        assert_eq!(values(&full), values(&lean), "{text}");
    }
}

#[test]
fn a_read_for_services_builds_only_services_and_finds_every_error() {
    let text = "kind: Deployment\nmetadata: {name: web}\nspec: {template: {spec: {containers: [{name: a}]}}}\n---\nkind: Service\nmetadata: {name: web}\nspec: {selector: {app: web}}\n---\nkind: List\nitems: [{kind: Service}]\n";
    let (full, full_err) = parse(text);
    let mut read = Vec::new();
    let err = parse_part_context(text, Mark::default(), &Limits::default(), |d| read.push(d));
    assert_eq!((full_err, err), (None, None));
    assert_eq!(read.len(), 3);
    assert_eq!(read[0].value["spec"], Value::Null, "a workload is not built");
    assert_eq!((read[0].root.start, read[0].root.end), (full[0].root.start, full[0].root.end), "its positions are");
    assert_eq!(read[1].value, full[1].value);
    assert_eq!(read[2].value, full[2].value);
    for broken in [
        "kind: Deployment\nspec: {template: [1\n",
        "kind: Deployment\nspec: {a: *nowhere}\n",
        "kind: Deployment\nspec: {a: !!int x}\n",
    ] {
        let (_, full_err) = parse(broken);
        let err = parse_part_context(broken, Mark::default(), &Limits::default(), |_| {});
        assert_eq!(full_err.is_some(), err.is_some(), "{broken}");
        assert!(err.is_some(), "{broken}");
    }
}

/// A YAML 1.1 boolean where a string belongs: `kubectl` sends `true`, and
/// the API server refuses the object; lifeguard says so at the field
/// rather than lint a probe on a port named "on". Quoted, the same words
/// are the strings the author meant.
#[test]
fn an_unquoted_yes_or_on_is_the_boolean_kubectl_sends() {
    let deployment = |port: &str, value: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web}}\nspec:\n  template:\n    spec:\n      \
             containers:\n      - name: web\n        image: example/web:1\n        \
             env: [{{name: VERBOSE, value: {value}}}]\n        \
             readinessProbe:\n          httpGet: {{path: /ready, port: {port}}}\n"
        )
    };
    let lint = |text: &str| {
        let (docs, err) = parse(text);
        assert_eq!(err, None);
        crate::lint_object(&docs[0].value, &crate::Batch::default(), &crate::Policy::default())
    };
    let refused = |text: &str| lint(text).err().map(|e| e.pointer);
    let containers = "/spec/template/spec/containers/0";
    assert_eq!(refused(&deployment("on", "\"yes\"")), Some(format!("{containers}/readinessProbe/httpGet/port")));
    assert_eq!(refused(&deployment("\"on\"", "yes")), Some(format!("{containers}/env/0/value")));
    let quoted = lint(&deployment("\"on\"", "\"yes\"")).expect("reads").expect("a pod spec");
    let rules: Vec<&str> = quoted.findings.iter().map(|f| f.rule.as_str()).collect();
    assert!(rules.contains(&"probe-port-unknown"), "{rules:?}");
    // A key reads the same way, and its boolean is written as text, as
    // sigs.k8s.io/yaml writes it: the label `on` is the label "true".
    let (docs, _) = parse("labels: {on: a, \"off\": b}\n");
    assert_eq!(docs[0].value, json!({"labels": {"true": "a", "off": "b"}}));
}

/// Numbers as `kubectl` sends them (go-yaml v2, then Go's JSON): a probe
/// written `periodSeconds: 010` is checked every 8 s, `failureThreshold:
/// 1_0` is 10, and `timeoutSeconds: 2.0` is the integer 2 the API server
/// takes, so lifeguard judges the probe the kubelet runs.
#[test]
fn probe_numbers_read_as_kubectl_sends_them() {
    let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - name: web\n    \
                image: example/web:1\n    livenessProbe:\n      httpGet: {path: /livez, port: 8080}\n      \
                periodSeconds: 010\n      failureThreshold: 1_0\n      timeoutSeconds: 2.0\n      \
                initialDelaySeconds: 0x0\n";
    let (docs, err) = parse(text);
    assert_eq!(err, None);
    let probe = &docs[0].value["spec"]["containers"][0]["livenessProbe"];
    assert_eq!(probe["periodSeconds"], json!(8));
    assert_eq!(probe["failureThreshold"], json!(10));
    assert_eq!(probe["timeoutSeconds"], json!(2));
    assert_eq!(probe["initialDelaySeconds"], json!(0));
    let report = crate::lint_object(&docs[0].value, &crate::Batch::default(), &crate::Policy::default())
        .expect("reads as a Pod")
        .expect("a pod spec");
    assert!(report.findings.iter().all(|f| f.rule != "probe-invalid"), "{:#?}", report.findings);
}
