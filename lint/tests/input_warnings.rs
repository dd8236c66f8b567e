//! Repeated keys are read (last value wins, as real manifests need) but
//! warned about on stderr: files concatenated without `---` look like this.
//! A warning never changes the exit code or the report on stdout.

mod support;

use support::lifeguard;

const CLEAN: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: \"1\"\n";

#[test]
fn a_repeated_key_is_a_warning_with_both_lines_and_exit_zero() {
    let dir = tempfile::tempdir().expect("temp dir");
    let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n";
    std::fs::write(dir.path().join("dup.yaml"), text).expect("write");
    let run = lifeguard(dir.path(), &["lint", "dup.yaml"], None, &[("NO_COLOR", Some("1"))]);
    run.assert_no_panic();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stderr.trim_end(),
        "dup.yaml:5:3 input warning: duplicate key \"name\": this value replaces the one at line 4\n\
         dup.yaml input note: no object checked: its kinds (ConfigMap) hold no pod template lifeguard reads"
    );
}

#[test]
fn concatenated_manifests_without_separator_are_flagged_and_findings_still_reported() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bad = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    livenessProbe: {httpGet: {path: /ready, port: 80}}\n    readinessProbe: {httpGet: {path: /ready, port: 80}}\n";
    std::fs::write(dir.path().join("both.yaml"), format!("{CLEAN}{bad}")).expect("write");
    let run = lifeguard(dir.path(), &["lint", "both.yaml"], None, &[("NO_COLOR", Some("1"))]);
    run.assert_no_panic();
    assert_eq!(run.code, 1, "the Pod's error finding still fails the run");
    assert!(run.stdout.contains("probe-endpoint-reused"), "{}", run.stdout);
    for key in ["apiVersion", "kind", "metadata"] {
        assert!(run.stderr.contains(&format!("input warning: duplicate key \"{key}\"")), "{}", run.stderr);
    }
    assert!(!run.stderr.contains("input error"), "{}", run.stderr);
}

#[test]
fn separate_documents_may_repeat_keys() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("two.yaml"), format!("{CLEAN}---\n{CLEAN}")).expect("write");
    let run = lifeguard(dir.path(), &["lint", "two.yaml"], None, &[]);
    assert_eq!(run.code, 0);
    assert!(!run.stderr.contains("input warning"), "{}", run.stderr);
}
