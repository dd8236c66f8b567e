//! `--format html` of `lint` and `simulate`: the page of a small report
//! (insta snapshots), the same findings as `--format json`, the manifest's
//! strings escaped, and nothing fetched from elsewhere. A real browser
//! renders the pages in `tests/tests/html_report.rs`.

mod support;

use std::path::PathBuf;

use serde_json::Value;
use support::Run;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cli")
}

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples")
}

fn run(dir: &std::path::Path, args: &[&str], stdin: Option<&str>) -> Run {
    let r = support::lifeguard(dir, args, stdin, &[("NO_COLOR", Some("1"))]);
    r.assert_no_panic();
    r
}

/// A Deployment whose names and commands carry markup, as an attacker's manifest could.
const HOSTILE: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: "x<script>alert(1)</script>"
  namespace: "ns\"><img src=x onerror=alert(2)>"
spec:
  replicas: 3
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec:
      containers:
        - name: "c<script>alert(3)</script>"
          image: example/x:1
          livenessProbe:
            exec:
              command: ["sh", "-c", "curl http://db.x.svc/<script>alert(4)</script> && echo '<b>'"]
            periodSeconds: 1
            failureThreshold: 1
"#;

/// Every `<script` of a page: the page's own one, and nothing else.
fn assert_only_own_script(page: &str) {
    assert_eq!(page.matches("<script").count(), 1, "one script element, the page's own:\n{page}");
    assert!(!page.contains("<img"), "markup from the manifest is escaped:\n{page}");
    assert!(page.contains("&lt;script&gt;alert("), "the manifest's text is shown, escaped:\n{page}");
}

fn assert_self_contained(page: &str) {
    assert!(page.starts_with("<!DOCTYPE html>\n"), "{page}");
    assert!(page.ends_with("</html>\n"), "{page}");
    // Nothing to fetch: no external script, style, font or image.
    for fetch in ["src=\"http", "<link", "@import", "url("] {
        assert!(!page.contains(fetch), "{fetch:?} in the page");
    }
}

#[test]
fn lint_html_of_a_small_report() {
    let r = run(&fixtures(), &["lint", "--format", "html", "errors.yaml", "warnings.yaml"], None);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_self_contained(&r.stdout);
    // As for every format but text, the summary line goes to stderr.
    assert!(r.stderr.contains(" findings ("), "{}", r.stderr);
    insta::assert_snapshot!("lint_html", r.stdout);
}

#[test]
fn simulate_html_of_a_small_report() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/simulate");
    let r = run(&dir, &["simulate", "--format", "html", "--scenario", "stall:2s", "stall-shared-handler.yaml"], None);
    assert_eq!(r.code, 1, "a restart storm fails the run: {}", r.stderr);
    assert_self_contained(&r.stdout);
    assert_eq!(r.stdout.matches("<svg ").count(), 1, "one timeline per container");
    insta::assert_snapshot!("simulate_html", r.stdout);
}

fn json_findings(stdout: &str) -> Vec<Value> {
    match serde_json::from_str(stdout) {
        Ok(Value::Array(items)) => items.into_iter().filter(|e| !e["rule"].is_null()).collect(),
        other => panic!("stdout is not a JSON array: {other:?}\n{stdout}"),
    }
}

#[test]
fn html_holds_the_findings_json_holds() {
    let dir = examples();
    let json = run(&dir, &["lint", "--format", "json", "."], None);
    let html = run(&dir, &["lint", "--format", "html", "."], None);
    assert_eq!(html.code, json.code, "{}", html.stderr);
    let findings = json_findings(&json.stdout);
    assert!(findings.len() > 10, "the examples hold findings");
    assert_eq!(html.stdout.matches("<article class=\"item finding ").count(), findings.len());
    for f in &findings {
        let rule = f["rule"].as_str().unwrap_or_default();
        let at = format!("{}:{}:{}", f["file"].as_str().unwrap_or_default(), f["line"], f["column"]);
        assert!(html.stdout.contains(&format!("<code>{at}</code>")), "{at} missing");
        assert!(html.stdout.contains(&format!("docs/rules.md#{rule}\"")), "{rule}'s docs link missing");
    }
    assert_eq!(html.stderr, json.stderr, "the same summary line on stderr");
}

#[test]
fn html_goes_to_the_output_file() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let file = dir.path().join("report.html");
    let path = file.to_string_lossy().into_owned();
    let r = run(&examples(), &["lint", "--format", "html", "--output-file", &path, "web-api.yaml"], None);
    assert_eq!((r.code, r.stdout.as_str()), (1, ""), "{}", r.stderr);
    let page = std::fs::read_to_string(&file).expect("the report");
    assert_self_contained(&page);
    let file = dir.path().join("simulate.html");
    let path = file.to_string_lossy().into_owned();
    let r = run(&examples(), &["simulate", "--format", "html", "--output-file", &path, "web-api.yaml"], None);
    assert_eq!(r.stdout, "", "{}", r.stderr);
    assert!(std::fs::read_to_string(&file).expect("the report").contains("<svg "));
}

#[test]
fn a_manifests_markup_is_escaped() {
    let lint = run(&fixtures(), &["lint", "--format", "html", "-"], Some(HOSTILE));
    assert_eq!(lint.code, 1, "{}", lint.stderr);
    assert_only_own_script(&lint.stdout);
    let simulate = run(&fixtures(), &["simulate", "--format", "html", "--scenario", "stall:5s", "-"], Some(HOSTILE));
    assert!(!simulate.stderr.contains("input error"), "{}", simulate.stderr);
    assert_only_own_script(&simulate.stdout);
    assert!(simulate.stdout.contains("<svg "), "{}", simulate.stdout);
}

#[test]
fn input_errors_are_on_the_page_and_on_stderr() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::copy(fixtures().join("errors.yaml"), dir.path().join("errors.yaml")).expect("copy");
    std::fs::write(dir.path().join("broken.yaml"), "kind: Deployment\nmetadata: {name: [\n").expect("write");
    let r = run(dir.path(), &["lint", "--format", "html", "."], None);
    assert_eq!(r.code, 2, "input errors exit 2: {}", r.stderr);
    assert!(r.stderr.contains("./broken.yaml:") && r.stderr.contains("; 1 input error"), "{}", r.stderr);
    assert_eq!(r.stdout.matches("<article class=\"item input-error ").count(), 1, "{}", r.stdout);
    assert!(r.stdout.contains("<code>./broken.yaml:"), "{}", r.stdout);
}

/// What the text report prints on stderr as input warnings (a duplicate
/// key here) the page shows too, in a section of its own.
#[test]
fn lint_html_carries_the_input_warnings() {
    let dir = tempfile::tempdir().expect("temp dir");
    let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nmetadata: {name: q}\nspec:\n  containers:\n  - {name: c, image: x}\n";
    std::fs::write(dir.path().join("dup.yaml"), text).expect("write");
    let r = run(dir.path(), &["lint", "--format", "html", "dup.yaml"], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_self_contained(&r.stdout);
    assert!(r.stdout.contains("<section class=\"errors\" id=\"input-warnings\">"), "{}", r.stdout);
    assert!(r.stdout.contains("input warning \u{b7} <code>dup.yaml:4:1</code>"), "{}", r.stdout);
    assert!(
        r.stdout.contains("duplicate key &quot;metadata&quot;") || r.stdout.contains("duplicate key \"metadata\""),
        "{}",
        r.stdout
    );
}
