//! A policy's `podTemplates`: the pod templates of a custom resource
//! lifeguard does not know are judged like a known one's once declared,
//! and a declaration that cannot be right is refused at its place.

mod common;

use common::{policy, tags};
use policies::model::unread_templates;
use policies::{Batch, Policy, lint_object};
use serde_json::{Value, json};

/// A container whose liveness and readiness share one handler.
fn shared_probe(name: &str) -> Value {
    json!({"name": name, "image": "python:3.12",
        "livenessProbe": {"httpGet": {"path": "/ready", "port": 8080}},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}}})
}

fn sandbox() -> Value {
    json!({"apiVersion": "extensions.agents.x-k8s.io/v1beta1", "kind": "SandboxTemplate", "metadata": {"name": "py"},
        "spec": {"podTemplate": {"metadata": {"labels": {"app": "py"}}, "spec": {"containers": [shared_probe("runtime")]}}}})
}

fn fleet() -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Fleet", "metadata": {"name": "f"},
        "spec": {"groups": [{"pod": {"containers": [shared_probe("a")]}}, {"pod": {"containers": [shared_probe("b")]}}]}})
}

const DECLARED: &str = "podTemplates:\n- kind: SandboxTemplate\n  group: extensions.agents.x-k8s.io\n  templates: [/spec/podTemplate]\n- kind: Fleet\n  group: example.com\n  templates: [/spec/groups/*/pod]\n  runToCompletion: true\n";

#[test]
fn an_undeclared_template_is_not_judged_and_is_found_for_the_warning() {
    for object in [sandbox(), fleet()] {
        assert!(lint_object(&object, &Batch::default(), &Policy::default()).expect("reads").is_none());
        assert!(unread_templates(&object).is_some(), "{object}");
    }
}

#[test]
fn a_declared_template_is_judged_as_the_pod_it_makes_under_spec_or_inline() {
    let declared = policy(DECLARED);
    let r = lint_object(&sandbox(), &Batch::default(), &declared).expect("reads").expect("a workload");
    assert_eq!(tags(&r.findings), ["probe-endpoint-reused@runtime"]);
    assert_eq!(r.findings[0].pointer, "/spec/podTemplate/spec/containers/0/livenessProbe");
    let r = lint_object(&fleet(), &Batch::default(), &declared).expect("reads").expect("a workload");
    // Each item of the list is a pod spec inline; both groups are judged.
    let pointers: Vec<&str> = r.findings.iter().map(|f| f.pointer.as_str()).collect();
    assert_eq!(
        pointers,
        ["/spec/groups/0/pod/containers/0/livenessProbe", "/spec/groups/1/pod/containers/0/livenessProbe"]
    );
    // The same kind in another group is not the one declared.
    let mut other = sandbox();
    other["apiVersion"] = json!("other.example.com/v1");
    assert!(lint_object(&other, &Batch::default(), &declared).expect("reads").is_none());
    // The declaration survives the policy's round trip through its file.
    let again = Policy::from_file(declared.to_file(), "again").expect("valid");
    assert_eq!(again.declared_pod_kinds(), declared.declared_pod_kinds());
    assert!(!again.declared_pod_kinds()[1].long_running, "runToCompletion");
}

#[test]
fn a_declaration_that_cannot_be_right_is_refused_at_its_place() {
    let refused =
        |body: &str| match Policy::load(&format!("apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\n{body}"), "p.yaml")
        {
            Ok(_) => panic!("accepted: {body}"),
            Err(e) => e.to_string(),
        };
    let e = refused("podTemplates:\n- {kind: Deployment, group: apps, templates: [/spec/template]}\n");
    assert!(e.contains("p.yaml:4:4: podTemplates[0].kind") && e.contains("built-in kind"), "{e}");
    let e = refused("podTemplates:\n- {kind: X, group: a.b, templates: []}\n");
    assert!(e.contains("podTemplates[0].templates:") && e.contains("at least one"), "{e}");
    let e = refused("podTemplates:\n- {kind: X, group: a.b, templates: [spec/pod]}\n");
    assert!(e.contains("podTemplates[0].templates[0]") && e.contains("JSON pointer under /spec"), "{e}");
    let e = refused(
        "podTemplates:\n- {kind: X, group: a.b, templates: [/spec/a]}\n- {kind: X, group: a.b, templates: [/spec/b]}\n",
    );
    assert!(e.contains("podTemplates[1]") && e.contains("declared twice"), "{e}");
    let e = refused("podTemplates:\n- {kind: X, templates: [/spec/a]}\n");
    assert!(e.contains("group"), "{e}");
    // The resource is an admission rule's: a lowercase plural, or the export's apply fails.
    for bad in ["Sandboxes", "sandbox_templates", "-x", "sandboxtemplates/status"] {
        let e =
            refused(&format!("podTemplates:\n- {{kind: X, group: a.b, resource: {bad:?}, templates: [/spec/a]}}\n"));
        assert!(e.contains("podTemplates[0].resource") && e.contains("plural"), "{bad}: {e}");
    }
    let ok = "apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\npodTemplates:\n- {kind: X, group: a.b, resource: xs, templates: [/spec/a]}\n";
    let policy = Policy::load(ok, "p.yaml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(policy.declared_pod_kinds()[0].resource.as_deref(), Some("xs"));
}
