//! `fix` reports positions of the file as it is once the run is over: as
//! read for `--diff` (nothing is written), as fixed in place otherwise. A
//! multi-document file where a fix in the first document adds a line moves
//! every later line of the fixed text by one; `--diff` used to name those
//! lines, so a remaining finding could point at the `---` between documents.

mod support;

use support::{Run, lifeguard};

/// Two documents, as in the real multi-document manifests of the corpus: the
/// first gets a fix that adds `timeoutSeconds`, the second has findings
/// without an automatic fix.
const TWO: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: a
spec:
  template:
    spec:
      containers:
      - name: app
        image: example/web:1.2
        livenessProbe:
          httpGet: {path: /livez, port: 8080}
          failureThreshold: 1   # restart after 1 failed check
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: b
spec:
  template:
    spec:
      containers:
      - name: app
        image: example/web:1.2
        livenessProbe:
          exec: {command: [cat, /tmp/ok]}
        readinessProbe:
          exec: {command: [cat, /tmp/ok]}
";

fn run(dir: &std::path::Path, args: &[&str]) -> Run {
    let r = lifeguard(dir, args, None, &[("LIFEGUARD_POLICY", None), ("NO_COLOR", Some("1"))]);
    r.assert_no_panic();
    r
}

/// `file:line:col severity[rule]` of each line of a report that has one.
fn positions(report: &str) -> Vec<(u32, String)> {
    report
        .lines()
        .filter_map(|l| {
            let (at, rest) = l.split_once(' ')?;
            let mut parts = at.strip_prefix("two.yaml:")?.split(':');
            let line: u32 = parts.next()?.parse().ok()?;
            let rule = rest.split_once('[')?.1.split_once(']')?.0;
            Some((line, rule.to_owned()))
        })
        .collect()
}

fn line_of(text: &str, line: u32) -> &str {
    text.lines().nth(line as usize - 1).unwrap_or_default()
}

#[test]
fn fix_diff_names_lines_of_the_file_on_disk() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("two.yaml"), TWO).expect("write");
    let diff = run(dir.path(), &["fix", "--diff", "--fail-on", "info", "two.yaml"]);
    assert_eq!(diff.code, 1, "{}", diff.stderr);
    insta::assert_snapshot!("diff_report", diff.stderr);
    let reported = positions(&diff.stderr);
    assert_eq!(reported.len(), 3, "{}", diff.stderr);
    // lint of the same unchanged file names the same lines for those findings.
    let lint = run(dir.path(), &["lint", "two.yaml"]);
    let linted = positions(&lint.stdout);
    for (line, rule) in &reported {
        assert!(linted.contains(&(*line, rule.clone())), "{rule} at line {line}: lint says {linted:?}");
        assert_ne!(line_of(TWO, *line).trim(), "---", "{rule} at line {line}");
    }
    // The hunk header too counts the file on disk: its first context line is there.
    let hunk = diff.stdout.lines().find(|l| l.starts_with("@@ -")).expect("a hunk");
    let start: u32 = hunk[4..].split([',', ' ']).next().and_then(|n| n.parse().ok()).expect("hunk start");
    let first_context = diff.stdout.lines().skip_while(|l| !l.starts_with("@@")).nth(1).expect("context");
    assert_eq!(line_of(TWO, start), &first_context[1..]);
    let stale = diff.stderr.lines().find(|l| l.contains("comment may now be stale")).expect("stale comment");
    assert!(stale.starts_with("two.yaml:13: "), "the comment's line on disk: {stale}");
}

#[test]
fn fix_in_place_names_lines_of_the_fixed_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("two.yaml"), TWO).expect("write");
    let fixed = run(dir.path(), &["fix", "--fail-on", "info", "two.yaml"]);
    assert_eq!(fixed.code, 1, "{}", fixed.stderr);
    let text = std::fs::read_to_string(dir.path().join("two.yaml")).expect("read");
    let reported = positions(&fixed.stderr);
    assert_eq!(reported.len(), 3, "{}", fixed.stderr);
    let lint = run(dir.path(), &["lint", "two.yaml"]);
    for (line, rule) in &reported {
        assert!(positions(&lint.stdout).contains(&(*line, rule.clone())), "{rule} at {line}: {}", lint.stdout);
    }
    // The comment that may be stale is named at its line in the file now on disk.
    let stale = fixed.stderr.lines().find(|l| l.contains("comment may now be stale")).expect("stale comment");
    let line: u32 = stale["two.yaml:".len()..].split(':').next().and_then(|n| n.parse().ok()).expect("line");
    assert!(line_of(&text, line).contains("# restart after 1 failed check"), "{stale}");
}

#[test]
fn a_fix_left_out_is_named_once_on_its_findings_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let anchors = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fix_fixtures/anchors.yaml");
    std::fs::copy(anchors, dir.path().join("anchors.yaml")).expect("copy");
    // At --fail-on warning the anchored probe's finding is listed, with why its fix was left out.
    let shown = run(dir.path(), &["fix", "--diff", "--fail-on", "warning", "anchors.yaml"]);
    insta::assert_snapshot!("left_out_and_listed", shown.stderr);
    assert_eq!(shown.stderr.matches("anchors.yaml:11").count(), 1, "{}", shown.stderr);
    // Below --fail-on the finding is not listed, so the fix left out says so on its own line.
    let alone = run(dir.path(), &["fix", "--diff", "anchors.yaml"]);
    assert!(
        alone.stderr.contains("anchors.yaml:11: not fixed Pod/shared: [liveness-too-aggressive]"),
        "{}",
        alone.stderr
    );
}
