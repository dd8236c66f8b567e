//! Documents of kinds no rule reads (CRDs, ConfigMaps, RBAC) are taken
//! without the YAML parser when they read without error: still counted
//! and named as before, their errors and repeated keys still reported
//! where they are, the Services beside them still seen, and `fix` leaves
//! them byte for byte. On the shared corpus, every part taken that way is
//! checked against the parser's lean read.

mod support;

use std::path::Path;

use lifeguard::input::split::parts;
use lifeguard::input::{Document, Limits, parse_part_lean, read_inert};
use lifeguard_e2e::corpus_dir;
use policies::yaml::inert_kind;
use support::Run;

const CRD: &str = "\
# Source: widgets/templates/crd.yaml
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        description: |-
          A widget. Its pods are fronted by a
          kind: Service
        properties:
          containers:
            type: array
        type: object
";

const DEPLOYMENT: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        ports: [{containerPort: 8080}]
        livenessProbe:
          httpGet: {path: /live, port: 8080}
          periodSeconds: 2
          failureThreshold: 1
";

const SERVICE: &str = "\
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {selector: {app: web}, ports: [{port: 80}]}
";

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).expect("write");
}

/// `lint` on both paths (the parser reads every document on the
/// single-threaded one); the two must agree byte for byte.
fn lint(dir: &Path, args: &[&str]) -> Run {
    let run = |threads| {
        let env = [("NO_COLOR", Some("1")), ("LIFEGUARD_THREADS", Some(threads))];
        let r = support::lifeguard(dir, args, None, &env);
        r.assert_no_panic();
        r
    };
    let (one, two) = (run("1"), run("2"));
    assert_eq!((&one.stdout, &one.stderr, one.code), (&two.stdout, &two.stderr, two.code), "{args:?}");
    two
}

#[test]
fn an_inert_document_is_skipped_yet_counted_and_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: |\n    x\n";
    write(dir.path(), "crds.yaml", &format!("{CRD}{config}"));
    let run = lint(dir.path(), &["lint", "crds.yaml"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("no object checked: its kinds (CustomResourceDefinition, ConfigMap) hold no pod template"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_malformed_or_kindless_document_reports_as_before() {
    let dir = tempfile::tempdir().expect("tempdir");
    let repeated = "---\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  a: '1'\n  b: '2'\n  a: '3'\n";
    let broken = "---\nkind: ConfigMap\ndata:\n  a: x\n   b: y\n";
    write(dir.path(), "repeated.yaml", &format!("{CRD}{repeated}---\n{DEPLOYMENT}"));
    write(dir.path(), "broken.yaml", &format!("{CRD}{broken}---\n{DEPLOYMENT}"));
    write(dir.path(), "kindless.yaml", "metadata:\n  name: x\ndata:\n  a: 1\n");
    let run = lint(dir.path(), &["lint", "--fail-on", "never", "repeated.yaml", "broken.yaml", "kindless.yaml"]);
    let stderr = &run.stderr;
    assert!(
        stderr
            .contains("repeated.yaml:25:3 input warning: duplicate key \"a\": this value replaces the one at line 23"),
        "{stderr}"
    );
    assert!(
        stderr.contains("broken.yaml:23:5 input error: mapping values are not allowed in this context"),
        "{stderr}"
    );
    assert!(stderr.contains("kindless.yaml input note: no object checked: no document in it has a `kind`"), "{stderr}");
    // The Deployment after the repeated key is linted; the one after the syntax error is not.
    assert!(run.stdout.contains("repeated.yaml:"), "{}", run.stdout);
    assert!(!run.stdout.contains("broken.yaml:"), "{}", run.stdout);
}

#[test]
fn a_service_beside_inert_documents_still_informs_the_rules() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "app.yaml", &format!("{CRD}---\n{DEPLOYMENT}---\n{CRD}---\n{SERVICE}"));
    let run = lint(dir.path(), &["lint", "--fail-on", "never", "--format", "json", "app.yaml"]);
    assert!(run.stdout.contains("Service/web"), "{}", run.stdout);
}

#[test]
fn fix_leaves_inert_documents_byte_for_byte() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Odd but valid spacing and comments, which a rewrite would lose.
    let crd = CRD.replace("  group: example.com", "  group:   example.com    # the group\n\n   # aside");
    let text = format!("{crd}---\n{DEPLOYMENT}---\n{crd}");
    write(dir.path(), "app.yaml", &text);
    let run =
        support::lifeguard(dir.path(), &["fix", "--fail-on", "never", "app.yaml"], None, &[("NO_COLOR", Some("1"))]);
    run.assert_no_panic();
    let fixed = std::fs::read_to_string(dir.path().join("app.yaml")).expect("read");
    assert_ne!(fixed, text, "the Deployment was fixed: {}", run.stderr);
    assert!(fixed.starts_with(&format!("{crd}---\n")), "{fixed}");
    assert!(fixed.ends_with(&format!("---\n{crd}")), "{fixed}");
}

#[test]
fn every_corpus_part_taken_without_the_parser_reads_so_with_it() {
    let Some(corpus) = corpus_dir() else { return };
    let limits = Limits::default();
    let (mut taken, mut total) = (0usize, 0usize);
    for path in files(&corpus) {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        total += text.len();
        for part in parts(&text) {
            let part_text = &text[part.start..part.end];
            let Some(fast) = read_inert(part_text, part.origin, &limits, inert_kind) else { continue };
            taken += part_text.len();
            let mut docs: Vec<Document> = Vec::new();
            let error = parse_part_lean(part_text, part.origin, &limits, |d| docs.push(d));
            let at = format!("{} line {}", path.display(), part.origin.line + 1);
            assert_eq!(error, None, "{at}");
            assert_eq!(docs.len(), 1, "{at}");
            let lean = &docs[0];
            assert!(lean.duplicate_keys.is_empty(), "{at}");
            assert_eq!(lean.value.get("kind"), fast.value.get("kind"), "{at}");
            assert_eq!(
                (lean.start, lean.root.start, lean.root.end),
                (fast.start, fast.root.start, fast.root.end),
                "{at}"
            );
        }
    }
    // Most of the corpus's bytes are CRDs: what this is for.
    assert!(taken * 2 > total, "{taken} of {total} bytes");
}

fn files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml" || e == "json") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}
