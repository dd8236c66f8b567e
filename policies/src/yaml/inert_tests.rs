//! The read of inert documents without the parser: whatever it takes, the
//! lean read takes too, with no error and no repeated key, the same kind and
//! the same root span; whatever could read otherwise it leaves to the parser.

use super::inert::read_inert;
use super::limits::Limits;
use super::parse::parse_part_lean;
use super::skim::inert_kind;
use super::source::{Document, Mark};

/// Reads `text` both ways at `origin`; returns whether the read without
/// the parser took it, having checked it against the lean read.
fn agrees_at(text: &str, origin: Mark, limits: &Limits) -> bool {
    let Some(fast) = read_inert(text, origin, limits, inert_kind) else { return false };
    let mut docs: Vec<Document> = Vec::new();
    let error = parse_part_lean(text, origin, limits, |d| docs.push(d));
    assert_eq!(error, None, "taken without the parser, yet an error:\n{text}");
    assert_eq!(docs.len(), 1, "one document:\n{text}");
    let lean = &docs[0];
    assert!(lean.duplicate_keys.is_empty(), "taken with a repeated key:\n{text}");
    assert_eq!(lean.value.get("kind"), fast.value.get("kind"), "{text}");
    assert_eq!(fast.value.as_object().map(|o| o.len()), Some(1), "{text}");
    assert_eq!((lean.start, lean.root.start, lean.root.end), (fast.start, fast.root.start, fast.root.end), "{text}");
    assert!(crate::model::unread_templates(&lean.value).is_none(), "{text}");
    true
}

fn agrees(text: &str) -> bool {
    agrees_at(text, Mark::default(), &Limits::default())
}

const CRD: &str = "\
---
# Source: chart/templates/crd.yaml
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
  annotations:
    controller-gen.kubebuilder.io/version: v0.16.1
spec:
  group: example.com
  names:
    kind: Widget
    plural: widgets
  versions:
  - name: v1
    served: true
    schema:
      openAPIV3Schema:
        description: \"A widget: what it \\\"is\\\".\"
        properties:
          containers:
            description: |-
              The containers.

              kind: Service
            type: array
            items:
              type: object
          count: {}
          ports:
            - 80
            - '443'
            - \"it's\"
          empty: []
        type: object
  scope: Namespaced
";

#[test]
fn the_shapes_of_real_inert_documents_are_read_without_the_parser() {
    let texts = [
        CRD.to_owned(),
        CRD.replace("names:\n    kind: Widget\n    plural: widgets", "names: {kind: Widget, plural: widgets}"),
        CRD.trim_end().to_owned(),
        format!("{CRD}\n# trailing\n\n   \n"),
        "apiVersion: v1\nkind: ConfigMap\ndata:\n  a.conf: >+\n    x\n\n  b: \"1\"\n".to_owned(),
        "kind: ClusterRole\nrules:\n- apiGroups: [\"\", apps]\n  resources: [ pods,'x' ] # c\n".to_owned(),
        "kind: ClusterRole\nrules:\n- apiGroups:\n  - \"\"\n  verbs:\n  - get\n  -\n  - - nested\n".to_owned(),
        "--- # the role\nkind: 'Role' # a comment\nmetadata: {}\n".to_owned(),
        "# Source: x\n\nkind: Secret\ntype: Opaque\nstringData:\n  k: v # c\n  url: http://a:8080/x\n".to_owned(),
        // Scalars over several lines, as controller-gen and kubectl wrap them.
        "kind: ConfigMap\ndata:\n  a: the first line\n    and `the second`, 'quoted'\n\n    after a blank\n  b: 1\n".to_owned(),
        "kind: ConfigMap\ndata:\n  cfg: \"defaults\\n  mode tcp\\n\\\n    \\ timeout\n    \\\"x\\\"\"\n  b: '1\n    it''s'\n".to_owned(),
        "kind: CRD\nspec:\n- message: must be either 'a',\n    'b' or 'c'\n  rule: self == oldSelf\n".to_owned(),
    ];
    for text in &texts {
        let taken = agrees(text);
        // Flow mappings with entries are for the parser; the rest reads here.
        assert_eq!(taken, !text.contains("{kind"), "{text}");
    }
    // Positions in a larger stream.
    let origin = Mark { line: 40, col: 0, index: 1234 };
    assert!(agrees_at(&texts[0], origin, &Limits::default()));
    assert!(agrees_at(&texts[10], origin, &Limits::default()));
}

#[test]
fn a_document_that_may_read_otherwise_is_left_to_the_parser() {
    let texts = [
        // Errors and warnings: a repeated key, a bad indentation, a plain
        // scalar with `: `, an unclosed quote, a bad escape, a tab.
        "kind: ConfigMap\ndata:\n  a: 1\n  a: 2\n",
        "kind: ConfigMap\nkind: Secret\n",
        "kind: ConfigMap\ndata:\n  a: 1\n   b: 2\n",
        "kind: ConfigMap\ndata:\n  a: b: c\n",
        "kind: ConfigMap\ndata:\n  a: \"open\n",
        "kind: ConfigMap\ndata:\n  a: \"\\q\"\n",
        "kind: ConfigMap\ndata:\n\ta: 1\n",
        "kind: ConfigMap\ndata:\n  a: x # c\n    more\n",
        "kind: ConfigMap\ndata: |\n      \n   x\n",
        // What the loader builds whatever the kind, or cannot skip.
        "kind: Widget\nspec:\n  template:\n    spec:\n      containers:\n      - name: a\n",
        "kind: Widget\nspec:\n  pods:\n    containers:\n    - name: a\n",
        "kind: Widget\nspec:\n  containers: []\n",
        "kind: ConfigMap\nbase: &b {a: 1}\ndata: *b\n",
        "kind: ConfigMap\ndata:\n  <<: {a: 1}\n",
        "kind: ConfigMap\ndata: !!map {}\n",
        "kind: ConfigMap\ndata: {a: 1}\n",
        "kind: ConfigMap\ndata: [a, [b]]\n",
        "kind: ConfigMap\ndata: [a, ]\n",
        "kind: ConfigMap\ndata: [a: b]\n",
        "kind: ConfigMap\ndata: [a\n",
        // The root's kind over two lines; a comment inside a plain scalar;
        // a quoted scalar's line not indented; one never closed.
        "kind: Config\n  Map\n",
        "kind: ConfigMap\ndata:\n  a: x\n    # c\n    y\n",
        "kind: ConfigMap\ndata:\n  a: \"x\n  y\"\n",
        "kind: ConfigMap\ndata:\n  a: \"x\n",
        "kind: ConfigMap\ndata:\n  a: x\n    b: y\n",
        // Kinds a rule reads, no kind, a kind that is no string, a templated one.
        "kind: Deployment\nspec: {}\n",
        "kind: Service\nspec: {}\n",
        "kind: List\nitems: []\n",
        "metadata: {}\n",
        "kind: 12\n",
        "kind: {{ .Values.kind }}\n",
        "kind: \"Config\\x4dap\"\n",
        // Not one plain block document.
        "%YAML 1.2\n---\nkind: ConfigMap\n",
        "kind: ConfigMap\n...\n",
        "kind: ConfigMap\r\ndata: {}\r\n",
        "\u{feff}kind: ConfigMap\n",
        "  kind: ConfigMap\n",
        "--- !tag\nkind: ConfigMap\n",
    ];
    for text in texts {
        assert!(read_inert(text, Mark::default(), &Limits::default(), inert_kind).is_none(), "{text}");
    }
}

#[test]
fn nesting_near_the_limit_is_left_to_the_parser() {
    let deep = |levels: usize| {
        let mut text = String::from("kind: ConfigMap\n");
        for i in 0..levels {
            text.push_str(&format!("{}k{i}:\n", "  ".repeat(i)));
        }
        text
    };
    let limits = Limits { max_depth: 10, ..Limits::default() };
    assert!(agrees_at(&deep(3), Mark::default(), &limits));
    assert!(read_inert(&deep(9), Mark::default(), &limits, inert_kind).is_none());
}

#[test]
fn a_kind_the_caller_reads_is_left_to_the_parser() {
    let text = "kind: SandboxTemplate\nspec: {}\n";
    assert!(read_inert(text, Mark::default(), &Limits::default(), inert_kind).is_some());
    assert!(read_inert(text, Mark::default(), &Limits::default(), |k| k != "SandboxTemplate").is_none());
}
