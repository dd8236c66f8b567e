//! `lifeguard fix` through the real binary on real files: a snapshot of the
//! diff for every fixable rule, and the file kinds, modes and exit codes.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use policies::rules::{FixAvailability, RULES};

/// A fixable rule's folder (its fix fixture is `fixtures/fix.yaml`, its
/// diff's snapshot in `snapshots/`).
fn rule_dir(rule: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../policies/src/rules").join(rule.replace('-', "_"))
}

/// The fixture `name`: `RULE.yaml` is a rule's fix fixture, in the rule's
/// folder; the others (file kinds, layouts) are in `tests/fix_fixtures/`.
fn fixture(name: &str) -> PathBuf {
    match name.strip_suffix(".yaml").filter(|rule| RULES.iter().any(|r| r.name == *rule)) {
        Some(rule) => rule_dir(rule).join("fixtures/fix.yaml"),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fix_fixtures").join(name),
    }
}

fn read_fixture(name: &str) -> String {
    std::fs::read_to_string(fixture(name)).expect("read fixture")
}

/// A temporary directory holding copies of these fixtures, each under its
/// name (a rule's fix fixture as `RULE.yaml`, which its diff names).
fn copies(names: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for name in names {
        std::fs::copy(fixture(name), dir.path().join(name)).expect("copy fixture");
    }
    dir
}

fn lifeguard(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lifeguard"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("run lifeguard")
}

fn with_stdin(dir: &Path, args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lifeguard"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run lifeguard");
    child.stdin.take().expect("stdin").write_all(input).expect("write stdin");
    child.wait_with_output().expect("wait")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).expect("read")
}

/// Findings `lifeguard lint --format json` still marks fixable.
fn fixable_left(dir: &Path, name: &str) -> Vec<String> {
    let out = lifeguard(dir, &["lint", "--format", "json", name]);
    let findings: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json findings");
    findings.as_array().expect("array").iter().filter(|f| f["fixable"] == true).map(|f| f["rule"].to_string()).collect()
}

#[test]
fn every_fixable_rule_has_a_fixture_and_a_checked_diff() {
    for rule in RULES.iter().filter(|r| matches!(r.fix, FixAvailability::Fix(_))) {
        let name = format!("{}.yaml", rule.name);
        assert!(fixture(&name).is_file(), "no fix fixture for {}", rule.name);
        let dir = copies(&[&name]);
        // An opt-in rule's fixture comes with the policy that turns it on.
        let policy = rule_dir(rule.name).join("fixtures/fix.policy.yaml");
        if policy.is_file() {
            std::fs::copy(&policy, dir.path().join(".lifeguard.yaml")).expect("copy policy");
        }
        let before = read(dir.path(), &name);
        let diff = lifeguard(dir.path(), &["fix", "--diff", "--rule", rule.name, &name]);
        assert_eq!(diff.status.code(), Some(1), "{}: {}", rule.name, stderr(&diff));
        assert!(stderr(&diff).contains(&format!("[{}]", rule.name)), "{}", stderr(&diff));
        assert_eq!(read(dir.path(), &name), before, "--diff must not write");
        let mut snapshots = insta::Settings::clone_current();
        snapshots.set_snapshot_path(rule_dir(rule.name).join("snapshots"));
        snapshots.bind(|| insta::assert_snapshot!(rule.name, stdout(&diff)));

        // In place, with every rule: nothing fixable is left, and a second run changes nothing.
        let fixed = lifeguard(dir.path(), &["fix", &name]);
        assert_ne!(fixed.status.code(), Some(2), "{}", stderr(&fixed));
        assert!(stdout(&fixed).is_empty());
        let after = read(dir.path(), &name);
        assert_ne!(after, before);
        assert_eq!(fixable_left(dir.path(), &name), Vec::<String>::new(), "{}", rule.name);
        let again = lifeguard(dir.path(), &["fix", &name]);
        assert_eq!(read(dir.path(), &name), after, "{}: second run changed the file", rule.name);
        assert!(stderr(&again).contains("nothing to fix"), "{}", stderr(&again));
    }
}

#[test]
fn diff_has_git_headers_and_stdin_fixes_to_stdout() {
    let dir = copies(&["liveness-too-aggressive.yaml"]);
    let diff = lifeguard(dir.path(), &["fix", "--diff", "liveness-too-aggressive.yaml"]);
    let text = stdout(&diff);
    assert!(text.starts_with("--- a/liveness-too-aggressive.yaml\n+++ b/liveness-too-aggressive.yaml\n@@ "), "{text}");

    let input = read(dir.path(), "liveness-too-aggressive.yaml");
    let fixed = with_stdin(dir.path(), &["fix", "-"], input.as_bytes());
    assert_eq!(fixed.status.code(), Some(1), "{}", stderr(&fixed));
    let out = stdout(&fixed);
    assert!(out.contains("periodSeconds: 2, failureThreshold: 5, timeoutSeconds: 5}  # flow style"), "{out}");
    assert_eq!(out.lines().count(), input.lines().count());
    assert!(stderr(&fixed).contains("1 fix applied to 1 object in 1 file"), "{}", stderr(&fixed));
    // The fixed stream passes through unchanged, and there is nothing left to do.
    let again = with_stdin(dir.path(), &["fix", "-"], out.as_bytes());
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(stdout(&again), out);
    let stdin_diff = with_stdin(dir.path(), &["fix", "--diff", "-"], input.as_bytes());
    assert!(stdout(&stdin_diff).starts_with("--- a/<stdin>\n+++ b/<stdin>\n"), "{}", stdout(&stdin_diff));
}

#[test]
fn crlf_files_keep_crlf() {
    let dir = tempfile::tempdir().expect("temp dir");
    let text = read_fixture("startup-budget-too-short.yaml").replace('\n', "\r\n");
    std::fs::write(dir.path().join("crlf.yaml"), &text).expect("write");
    let out = lifeguard(dir.path(), &["fix", "crlf.yaml"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let fixed = read(dir.path(), "crlf.yaml");
    assert_eq!(fixed, text.replace("failureThreshold: 30 ", "failureThreshold: 49 "));
    assert!(!fixed.replace("\r\n", "").contains('\n'), "a bare LF crept in");

    // Inserted lines get CRLF too, and a missing final line break stays missing.
    let text = read_fixture("grace-period-too-short.yaml")
        .replace("\n\n      # no terminationGracePeriodSeconds: 30 s by default\n", "")
        .replace('\n', "\r\n");
    std::fs::write(dir.path().join("crlf.yaml"), &text).expect("write");
    let out = lifeguard(dir.path(), &["fix", "crlf.yaml"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(read(dir.path(), "crlf.yaml"), format!("{text}\r\n      terminationGracePeriodSeconds: 40"));
}

#[test]
fn json_files_stay_json_and_keep_their_layout() {
    let dir = copies(&["api.json"]);
    let before = read(dir.path(), "api.json");
    let out = lifeguard(dir.path(), &["fix", "api.json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let after = read(dir.path(), "api.json");
    let value: serde_json::Value = serde_json::from_str(&after).expect("still JSON");
    let live = &value["spec"]["template"]["spec"]["containers"][0]["livenessProbe"];
    assert_eq!(live["failureThreshold"], 3);
    assert_eq!(live["timeoutSeconds"], 5);
    let expected = before.replace(
        "              \"failureThreshold\": 1\n",
        "              \"failureThreshold\": 3,\n              \"timeoutSeconds\": 5\n",
    );
    assert_eq!(after, expected);
}

#[test]
fn streams_lists_and_other_documents() {
    let dir = copies(&["stream.yaml"]);
    let before = read(dir.path(), "stream.yaml");
    let out = lifeguard(dir.path(), &["fix", "stream.yaml"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let after = read(dir.path(), "stream.yaml");
    let expected = before
        .replace("        failureThreshold: 1\n", "        failureThreshold: 3\n        timeoutSeconds: 5\n")
        .replace("terminationGracePeriodSeconds: 10", "terminationGracePeriodSeconds: 25");
    assert_eq!(after, expected);
    assert!(stderr(&out).contains("3 fixes applied to 2 objects in 1 file"), "{}", stderr(&out));
}

#[test]
fn shared_anchors_are_reported_not_edited() {
    let dir = copies(&["anchors.yaml"]);
    let before = read(dir.path(), "anchors.yaml");
    let out = lifeguard(dir.path(), &["fix", "anchors.yaml"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("not fixed Pod/shared: [liveness-too-aggressive]") && err.contains("anchored as &live"),
        "{err}"
    );
    assert!(err.contains("2 fixable findings not fixed"), "{err}");
    // The other fixes still apply; the anchored probe is left alone.
    let after = read(dir.path(), "anchors.yaml");
    assert_eq!(after, format!("{before}  terminationGracePeriodSeconds: 45\n"));
}

#[test]
fn rule_limits_the_fixes_and_unknown_rules_are_errors() {
    let dir = copies(&["stream.yaml"]);
    let before = read(dir.path(), "stream.yaml");
    let out = lifeguard(dir.path(), &["fix", "--rule", "grace-period-too-short", "stream.yaml"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let after = read(dir.path(), "stream.yaml");
    assert_eq!(after, before.replace("terminationGracePeriodSeconds: 10", "terminationGracePeriodSeconds: 20"));
    assert!(stderr(&out).contains("fixable findings not fixed"), "{}", stderr(&out));

    for (rule, why) in [("no-such-rule", "unknown rule"), ("probe-endpoint-reused", "has no automatic fix")] {
        let out = lifeguard(dir.path(), &["fix", "--rule", rule, "stream.yaml"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains(why) && stderr(&out).contains("startup-probe-missing"), "{}", stderr(&out));
        assert_eq!(read(dir.path(), "stream.yaml"), after);
    }
}

#[test]
fn exit_codes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let clean =
        "apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\nspec:\n  containers:\n  - name: a\n    image: nginx:1.27\n";
    // An error no fix can remove: one endpoint for liveness and readiness.
    let stuck = "apiVersion: v1\nkind: Pod\nmetadata: {name: stuck}\nspec:\n  containers:\n  - name: a\n    image: nginx:1.27\n    livenessProbe: {httpGet: {path: /ready, port: 80}}\n    readinessProbe: {httpGet: {path: /ready, port: 80}}\n";
    std::fs::write(dir.path().join("clean.yaml"), clean).expect("write");
    std::fs::write(dir.path().join("stuck.yaml"), stuck).expect("write");
    std::fs::write(dir.path().join("broken.yaml"), "a: [1, 2\n").expect("write");
    std::fs::copy(fixture("api.json"), dir.path().join("api.json")).expect("copy");

    assert_eq!(lifeguard(dir.path(), &["fix", "clean.yaml"]).status.code(), Some(0));
    let stuck_out = lifeguard(dir.path(), &["fix", "stuck.yaml"]);
    assert_eq!(stuck_out.status.code(), Some(1));
    assert!(stderr(&stuck_out).contains("no automatic fix"), "{}", stderr(&stuck_out));
    assert_eq!(read(dir.path(), "stuck.yaml"), stuck);
    assert_eq!(lifeguard(dir.path(), &["fix", "--fail-on", "never", "stuck.yaml"]).status.code(), Some(0));
    // A broken file is an error (2), and the other files are still fixed.
    let out = lifeguard(dir.path(), &["fix", "."]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("broken.yaml"), "{}", stderr(&out));
    assert!(read(dir.path(), "api.json").contains("\"timeoutSeconds\": 5"));
    assert_eq!(read(dir.path(), "broken.yaml"), "a: [1, 2\n");
    assert_eq!(read(dir.path(), "clean.yaml"), clean);
}

/// `--fail-on never` never fails because of findings, fixed or not: a fix
/// applied (or, with `--diff`, to apply) exits 0 in every form, as `--help`
/// and docs/lint.md say; errors still exit 2. Any other `--fail-on` keeps a
/// change failing, so a pre-commit hook shows it.
#[test]
fn fail_on_never_exits_0_after_fixing_in_every_form() {
    let name = "liveness-too-aggressive.yaml";
    let input = read_fixture(name);
    let code = |o: &Output| o.status.code();

    let dir = copies(&[name]);
    let diff = lifeguard(dir.path(), &["fix", "--diff", "--fail-on", "never", name]);
    assert_eq!(code(&diff), Some(0), "{}", stderr(&diff));
    assert!(stdout(&diff).starts_with(&format!("--- a/{name}\n")), "{}", stdout(&diff));
    assert_eq!(read(dir.path(), name), input, "--diff must not write");

    let in_place = lifeguard(dir.path(), &["fix", "--fail-on", "never", name]);
    assert_eq!(code(&in_place), Some(0), "{}", stderr(&in_place));
    assert!(stderr(&in_place).contains("1 fix applied to 1 object in 1 file"), "{}", stderr(&in_place));
    assert_ne!(read(dir.path(), name), input, "the fix is written");

    let stdin = with_stdin(dir.path(), &["fix", "-", "--fail-on", "never"], input.as_bytes());
    assert_eq!(code(&stdin), Some(0), "{}", stderr(&stdin));
    assert_eq!(stdout(&stdin), read(dir.path(), name), "stdin's fixed stream is the file fixed in place");
    let stdin_diff = with_stdin(dir.path(), &["fix", "--diff", "--fail-on", "never", "-"], input.as_bytes());
    assert_eq!(code(&stdin_diff), Some(0), "{}", stderr(&stdin_diff));
    assert!(stdout(&stdin_diff).starts_with("--- a/<stdin>\n"), "{}", stdout(&stdin_diff));

    // Any other threshold: a change still fails, even with no finding left at or above it.
    for level in ["error", "warning", "info"] {
        let fixed = with_stdin(dir.path(), &["fix", "-", "--fail-on", level], input.as_bytes());
        assert_eq!(code(&fixed), Some(1), "--fail-on {level}: {}", stderr(&fixed));
    }
    // An error is still 2.
    std::fs::write(dir.path().join("broken.yaml"), "a: [1, 2\n").expect("write");
    let broken = lifeguard(dir.path(), &["fix", "--fail-on", "never", "broken.yaml"]);
    assert_eq!(code(&broken), Some(2), "{}", stderr(&broken));
}

#[test]
fn byte_order_mark_and_untouched_files_are_kept() {
    let dir = tempfile::tempdir().expect("temp dir");
    let text = read_fixture("startup-budget-too-short.yaml");
    std::fs::write(dir.path().join("bom.yaml"), format!("\u{feff}{text}")).expect("write");
    let out = lifeguard(dir.path(), &["fix", "bom.yaml"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let bytes = std::fs::read(dir.path().join("bom.yaml")).expect("read");
    assert!(bytes.starts_with(b"\xEF\xBB\xBF"));
    assert!(String::from_utf8_lossy(&bytes).contains("failureThreshold: 49"));
}

#[test]
fn comments_next_to_changed_values_are_named_as_maybe_stale() {
    let dir = copies(&["stale-comment.yaml"]);
    let before = read(dir.path(), "stale-comment.yaml");
    let fixed = lifeguard(dir.path(), &["fix", "stale-comment.yaml"]);
    assert_eq!(fixed.status.code(), Some(1), "{}", stderr(&fixed));
    let err = stderr(&fixed);
    let after = read(dir.path(), "stale-comment.yaml");
    // The comment stays, and the summary names its line in the fixed file.
    let line = after.lines().position(|l| l.trim() == "# 60 s covers the model load").expect("comment kept") + 1;
    assert!(
        err.contains(&format!(
            "stale-comment.yaml:{line}: comment may now be stale: \"# 60 s covers the model load\" is next to failureThreshold, which the fix changed from 6 to "
        )),
        "{err}"
    );
    // A comment that names no number and not the field is not about the value.
    assert!(!err.contains("restarts are expensive"), "{err}");
    assert!(err.contains("; 1 comment may now be stale (see above)"), "{err}");
    assert_eq!(before.lines().filter(|l| l.trim_start().starts_with('#')).count(), 3);
    assert_eq!(after.lines().filter(|l| l.trim_start().starts_with('#')).count(), 3);
    // Nothing changes on a second run, so nothing is stale then.
    let again = lifeguard(dir.path(), &["fix", "stale-comment.yaml"]);
    assert!(!stderr(&again).contains("may now be stale"), "{}", stderr(&again));
}

/// The summary counts every remaining finding; those below `--fail-on` are
/// not listed, so it says how many of them there are.
#[test]
fn the_summary_says_how_many_remaining_findings_are_not_listed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/gpu-model-server.yaml");
    std::fs::copy(&example, dir.path().join("llm.yaml")).expect("copy");
    let listed = |stderr: &str| stderr.lines().filter(|l| l.contains(": no automatic fix: ")).count();

    let err = stderr(&lifeguard(dir.path(), &["fix", "--diff", "llm.yaml"]));
    let summary = err.lines().last().unwrap_or_default();
    assert!(summary.contains("2 findings remain without an automatic fix"), "{summary}");
    assert_eq!(listed(&err), 1, "the error is listed, the info is not: {err}");
    assert!(summary.contains("; 1 remaining finding is below --fail-on and not listed"), "{summary}");

    let err = stderr(&lifeguard(dir.path(), &["fix", "--diff", "--fail-on", "info", "llm.yaml"]));
    assert_eq!(listed(&err), 2, "{err}");
    assert!(!err.contains("not listed"), "{err}");
}

/// The startup probe a fix adds goes beside the container's other probes,
/// not after whatever key happens to be last, and never waits on a check
/// longer than its own period.
#[test]
fn an_added_startup_probe_sits_beside_the_probes_with_a_timeout_within_its_period() {
    let dir = tempfile::tempdir().expect("temp dir");
    let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm}\nspec:\n  template:\n    spec:\n      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.6.3\n        resources:\n          limits: {nvidia.com/gpu: \"1\"}\n        livenessProbe:\n          httpGet: {path: /health, port: 8000}\n          timeoutSeconds: 30\n        readinessProbe:\n          httpGet: {path: /ready, port: 8000}\n        volumeMounts:\n        - {name: cache, mountPath: /root/.cache}\n";
    std::fs::write(dir.path().join("vllm.yaml"), text).expect("write");
    let out = lifeguard(dir.path(), &["fix", "vllm.yaml"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let fixed = read(dir.path(), "vllm.yaml");
    let added = "          httpGet: {path: /ready, port: 8000}\n        startupProbe:\n          httpGet:\n            path: /health\n            port: 8000\n          timeoutSeconds: 10\n          periodSeconds: 10\n          failureThreshold: 67\n        volumeMounts:\n";
    assert!(fixed.contains(added), "{fixed}");
    // Fixed once, nothing left to fix.
    assert_eq!(lifeguard(dir.path(), &["fix", "vllm.yaml"]).status.code(), Some(0));
}
