//! `--write-baseline` and `--baseline` on the shared corpus: a baseline
//! written today makes the rerun pass, one new finding fails it (and only
//! it is reported), lines moving churn nothing, a fixed finding is said so
//! the file shrinks, SARIF marks each result's `baselineState`, and a bad
//! file is an error naming its line.

mod support;

use std::path::Path;

use lifeguard_e2e::corpus_dir;
use serde_json::Value;
use support::Run;

fn lifeguard(dir: &Path, args: &[&str]) -> Run {
    let r = support::lifeguard(dir, args, None, &[("NO_COLOR", Some("1")), ("LIFEGUARD_POLICY", None)]);
    r.assert_no_panic();
    r
}

/// The corpus copied into a new directory (`corpus/`), and the directory.
fn corpus_copy() -> Option<tempfile::TempDir> {
    let corpus = corpus_dir()?.join("files");
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("corpus")).expect("mkdir");
    for entry in std::fs::read_dir(&corpus).expect("the corpus reads").flatten() {
        std::fs::copy(entry.path(), dir.path().join("corpus").join(entry.file_name())).expect("copy");
    }
    Some(dir)
}

const NEW: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: new-one\nspec:\n  containers:\n  - name: app\n    image: example/app:1\n    ports: [{containerPort: 8080}]\n    livenessProbe:\n      httpGet: {path: /health, port: 8080}\n    readinessProbe:\n      httpGet: {path: /health, port: 8080}\n";

#[test]
fn a_baseline_of_the_corpus_passes_the_rerun_and_fails_on_one_new_finding() {
    let Some(dir) = corpus_copy() else { return };
    let root = dir.path();
    let before = lifeguard(root, &["lint", "--format", "json", "--fail-on", "info", "corpus"]);
    assert_eq!(before.code, 1, "the corpus has findings");
    let count = serde_json::from_str::<Vec<Value>>(&before.stdout)
        .expect("JSON")
        .iter()
        .filter(|f| !f["rule"].is_null())
        .count();

    let written = lifeguard(root, &["lint", "--fail-on", "info", "--write-baseline", "baseline.json", "corpus"]);
    assert_eq!(written.code, 0, "{}", written.stderr);
    let file: Value = serde_json::from_str(&std::fs::read_to_string(root.join("baseline.json")).expect("written"))
        .expect("a JSON baseline");
    let accepted: u64 = file["findings"].as_array().expect("findings").iter().filter_map(|e| e["count"].as_u64()).sum();
    assert_eq!(usize::try_from(accepted).ok(), Some(count), "every finding is in the baseline");

    let rerun = lifeguard(root, &["lint", "--fail-on", "info", "--baseline", "baseline.json", "corpus"]);
    assert_eq!(rerun.code, 0, "{}", rerun.stdout);
    assert!(rerun.stdout.starts_with("0 findings "), "{}", rerun.stdout);
    assert!(rerun.stdout.contains(&format!("; {count} accepted by the baseline")), "{}", rerun.stdout);

    // Lines move (a comment on top of every YAML file): nothing churns.
    let yaml = |p: &Path| p.extension().is_some_and(|e| e == "yaml" || e == "yml");
    for entry in std::fs::read_dir(root.join("corpus")).expect("read").flatten().filter(|e| yaml(&e.path())) {
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        std::fs::write(entry.path(), format!("# moved\n# down\n{text}")).expect("write");
    }
    let moved = lifeguard(root, &["lint", "--fail-on", "info", "--baseline", "baseline.json", "corpus"]);
    assert_eq!(moved.code, 0, "{}", moved.stdout);
    assert!(moved.stdout.contains(&format!("; {count} accepted by the baseline")), "{}", moved.stdout);

    // One new finding: it alone is reported, and it fails the run.
    std::fs::write(root.join("corpus/zz-new.yaml"), NEW).expect("write");
    let json =
        lifeguard(root, &["lint", "--format", "json", "--fail-on", "info", "--baseline", "baseline.json", "corpus"]);
    assert_eq!(json.code, 1, "{}", json.stderr);
    let findings: Vec<Value> = serde_json::from_str(&json.stdout).expect("JSON");
    let rules: Vec<(&str, &str)> = findings
        .iter()
        .filter(|f| !f["rule"].is_null())
        .map(|f| (f["file"].as_str().unwrap_or(""), f["rule"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(rules, [("corpus/zz-new.yaml", "probe-endpoint-reused")], "{}", json.stdout);

    // SARIF: the new result `new`, every accepted one `unchanged`.
    let sarif = lifeguard(root, &["lint", "--format", "sarif", "--baseline", "baseline.json", "corpus"]);
    let report: Value = serde_json::from_str(&sarif.stdout).expect("SARIF");
    let states: Vec<&str> = report["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|r| r["baselineState"].as_str())
        .collect();
    assert_eq!(states.iter().filter(|s| **s == "new").count(), 1);
    assert_eq!(states.iter().filter(|s| **s == "unchanged").count(), count);
    assert_eq!(states.len(), count + 1, "every result has its state");

    // A file fixed: its accepted findings are said, so the baseline shrinks.
    let gone = "corpus/stefanprodan__podinfo__deploy__bases__backend__deployment.yaml";
    std::fs::remove_file(root.join(gone)).expect("remove");
    let shrunk = lifeguard(root, &["lint", "--fail-on", "never", "--baseline", "baseline.json", "corpus"]);
    let said = "baseline.json input warning: 2 accepted findings are no longer found (fixed, or the object renamed): \
                exec-probe Deployment/backend container \"backend\"; `--write-baseline baseline.json` drops them";
    assert!(shrunk.stderr.contains(said), "{}", shrunk.stderr);
}

#[test]
fn a_baseline_that_does_not_read_is_an_error_naming_its_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("pod.yaml"), NEW).expect("write");
    std::fs::write(dir.path().join("bad.json"), "{\"version\": 1,\n \"findings\": [{\"rule\": 3}]}\n").expect("write");
    let bad = lifeguard(dir.path(), &["lint", "--baseline", "bad.json", "pod.yaml"]);
    assert_eq!(bad.code, 2);
    assert_eq!(bad.stdout, "");
    assert!(
        bad.stderr.starts_with("lifeguard: bad.json:2:24: not a lifeguard baseline: invalid type: integer"),
        "{}",
        bad.stderr
    );
    std::fs::write(dir.path().join("old.json"), "{\"version\": 9, \"findings\": []}").expect("write");
    let old = lifeguard(dir.path(), &["lint", "--baseline", "old.json", "pod.yaml"]);
    assert_eq!(
        (old.code, old.stderr.as_str()),
        (2, "lifeguard: old.json: baseline version 9 (this lifeguard reads 1)\n")
    );
    let missing = lifeguard(dir.path(), &["lint", "--baseline", "none.json", "pod.yaml"]);
    assert_eq!(missing.code, 2);
    assert!(missing.stderr.starts_with("lifeguard: none.json: cannot read the baseline: "), "{}", missing.stderr);
}
