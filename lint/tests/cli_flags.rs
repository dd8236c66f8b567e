//! The flags people reach for in a real repository: `--format json` with
//! input errors, `--quiet`, `--color`, `--output-file`, `--select` and
//! `--ignore`, `--exclude`, `.gitignore`, globs, a file named twice, "did
//! you mean" and completion of rule and pack names.

mod support;

use std::path::{Path, PathBuf};

use serde_json::Value;
use support::Run;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cli")
}

fn lifeguard_in(dir: &Path, args: &[&str], env: &[(&str, Option<&str>)]) -> Run {
    let r = support::lifeguard(dir, args, None, env);
    r.assert_no_panic();
    r
}

/// Runs in the CLI fixtures with colour off.
fn lifeguard(args: &[&str]) -> Run {
    lifeguard_in(&fixtures(), args, &[("NO_COLOR", Some("1"))])
}

const NO_COLOR_ENV: [(&str, Option<&str>); 4] =
    [("NO_COLOR", None), ("CLICOLOR_FORCE", None), ("CLICOLOR", None), ("FORCE_COLOR", None)];

fn with(extra: &[(&'static str, Option<&'static str>)]) -> Vec<(&'static str, Option<&'static str>)> {
    let mut env: Vec<_> = NO_COLOR_ENV.iter().filter(|(k, _)| !extra.iter().any(|(e, _)| e == k)).copied().collect();
    env.extend_from_slice(extra);
    env
}

/// A Deployment whose liveness and readiness share an endpoint (an error) and
/// that has no startup probe.
const SHARED: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      containers:
        - name: api
          image: ghcr.io/acme/api:1.4.2
          ports: [{containerPort: 8080}]
          livenessProbe: {httpGet: {path: /health, port: 8080}}
          readinessProbe: {httpGet: {path: /health, port: 8080}}
";

fn write(dir: &Path, file: &str, text: &str) {
    let path = dir.join(file);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(path, text).expect("write");
}

fn files_linted(r: &Run) -> Vec<String> {
    let mut files: Vec<String> = r
        .stdout
        .lines()
        .filter(|l| l.contains("error[") || l.contains("warning[") || l.contains("info["))
        .filter_map(|l| l.split(':').next().map(str::to_owned))
        .collect();
    files.dedup();
    files
}

#[test]
fn json_carries_input_errors_as_entries_without_a_rule() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "api.yaml", SHARED);
    write(dir.path(), "broken.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: [x\n");
    let r = lifeguard_in(dir.path(), &["lint", "--format", "json", "api.yaml", "broken.yaml", "missing.yaml"], &[]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let items: Vec<Value> = serde_json::from_str(&r.stdout).expect("still a JSON array");
    let (findings, errors): (Vec<&Value>, Vec<&Value>) = items.iter().partition(|i| i["rule"].is_string());
    assert!(!findings.is_empty(), "the good file is still reported");
    assert_eq!(errors.len(), 2, "{}", r.stdout);
    // The same keys as a finding, so a consumer of findings keeps parsing.
    let keys = |v: &Value| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()).unwrap_or_default();
    assert_eq!(keys(errors[0]), keys(findings[0]));
    assert!(errors.iter().all(|e| e["rule"].is_null() && e["severity"] == "error"), "{errors:?}");
    insta::assert_json_snapshot!("json_input_errors", errors);
}

#[test]
fn json_without_input_errors_is_unchanged() {
    let r = lifeguard(&["lint", "--format", "json", "."]);
    let items: Vec<Value> = serde_json::from_str(&r.stdout).expect("JSON array");
    assert!(items.iter().all(|i| i["rule"].is_string()), "{}", r.stdout);
}

#[test]
fn quiet_prints_the_findings_alone() {
    let r = lifeguard(&["lint", "--quiet", "."]);
    let full = lifeguard(&["lint", "."]);
    assert_eq!(r.code, full.code);
    let summary = full.stdout.lines().last().expect("a summary");
    assert!(!r.stdout.contains(summary), "{}", r.stdout);
    assert!(full.stdout.starts_with(&r.stdout), "the same findings, then nothing");
    assert_eq!(r.stderr, "");
    let json = lifeguard(&["lint", "-q", "--format", "json", "."]);
    assert_eq!(json.stderr, "", "no summary on stderr either");
}

#[test]
fn color_follows_the_flag_then_no_color_then_the_forcing_variables() {
    let escapes = |args: &[&str], env: &[(&'static str, Option<&'static str>)]| {
        let mut all = vec!["lint"];
        all.extend_from_slice(args);
        all.push("errors.yaml");
        lifeguard_in(&fixtures(), &all, &with(env)).stdout.contains("\x1b[")
    };
    assert!(!escapes(&[], &[]), "piped: no colour");
    assert!(escapes(&["--color", "always"], &[("NO_COLOR", Some("1"))]), "the flag wins");
    assert!(!escapes(&["--color", "never"], &[("CLICOLOR_FORCE", Some("1"))]), "the flag wins");
    assert!(escapes(&[], &[("FORCE_COLOR", Some("1"))]));
    assert!(escapes(&[], &[("CLICOLOR_FORCE", Some("1"))]));
    assert!(!escapes(&[], &[("FORCE_COLOR", Some("1")), ("NO_COLOR", Some("1"))]), "NO_COLOR wins");
}

#[test]
fn output_file_holds_the_report_and_stderr_the_summary() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("report.json");
    let out_arg = out.display().to_string();
    let r = lifeguard(&["lint", "--format", "json", "--output-file", &out_arg, "."]);
    assert_eq!(r.code, 1);
    assert_eq!(r.stdout, "");
    assert_eq!(std::fs::read_to_string(&out).expect("written"), lifeguard(&["lint", "--format", "json", "."]).stdout);
    assert!(r.stderr.starts_with("8 findings"), "{}", r.stderr);
    let text = dir.path().join("report.txt");
    let text_arg = text.display().to_string();
    let forced = lifeguard_in(
        &fixtures(),
        &["lint", "--output-file", &text_arg, "errors.yaml"],
        &with(&[("FORCE_COLOR", None)]),
    );
    assert_eq!(forced.stdout, "");
    assert!(!std::fs::read_to_string(&text).expect("written").contains('\x1b'), "a file gets no colour by default");
}

#[test]
fn select_and_ignore_choose_rules_for_one_run() {
    let selected = lifeguard(&["lint", "--select", "probe-endpoint-reused", "."]);
    insta::assert_snapshot!("select", selected.stdout);
    let ignored = lifeguard(&["lint", "--ignore", "probe-endpoint-reused,startup-probe-missing", "."]);
    assert!(!ignored.stdout.contains("[probe-endpoint-reused]"), "{}", ignored.stdout);
    assert!(!ignored.stdout.contains("[startup-probe-missing]"), "{}", ignored.stdout);
    let both = lifeguard(&["lint", "--select", "probe-endpoint-reused", "--ignore", "probe-endpoint-reused", "."]);
    assert_eq!(both.code, 0, "ignore wins: {}", both.stdout);
    let typo = lifeguard(&["lint", "--select", "probe-endpoint-reuse", "."]);
    assert_eq!(typo.code, 2);
    assert_eq!(typo.stdout, "");
    assert_eq!(
        typo.stderr,
        "lifeguard: --select: unknown rule \"probe-endpoint-reuse\"; did you mean \"probe-endpoint-reused\"?\n"
    );
}

#[test]
fn fix_takes_select_ignore_and_exclude() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Liveness restarts the container after one missed 2-second check.
    let hasty = "apiVersion: v1\nkind: Pod\nmetadata: {name: api}\nspec:\n  containers:\n    - name: api\n      image: ghcr.io/acme/api:1.4.2\n      livenessProbe: {httpGet: {path: /livez, port: 8080}, periodSeconds: 2, failureThreshold: 1}\n      readinessProbe: {httpGet: {path: /readyz, port: 8080}}\n";
    write(dir.path(), "api.yaml", hasty);
    let diff = |args: &[&str]| {
        let mut all = vec!["fix", "--diff"];
        all.extend_from_slice(args);
        all.push(".");
        lifeguard_in(dir.path(), &all, &[("NO_COLOR", Some("1"))])
    };
    let all = diff(&[]);
    assert!(all.stdout.contains("failureThreshold: 5"), "{}{}", all.stdout, all.stderr);
    assert_eq!(diff(&["--ignore", "liveness-too-aggressive"]).stdout, "");
    assert_eq!(diff(&["--select", "liveness-too-aggressive"]).stdout, all.stdout);
    assert_eq!(diff(&["--exclude", "api.yaml"]).stdout, "");
    let quiet = diff(&["--quiet"]);
    assert_eq!(quiet.stdout, all.stdout);
    assert_eq!(quiet.stderr, "");
}

#[test]
fn explain_suggests_the_rule_meant() {
    let r = lifeguard(&["explain", "liveness-to-aggressive"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "lifeguard: unknown rule \"liveness-to-aggressive\"; did you mean \"liveness-too-aggressive\"?\n"
    );
    let r = lifeguard(&["explain", "simulat"]);
    assert_eq!((r.code, r.stderr.as_str()), (2, "lifeguard: unknown rule \"simulat\"; did you mean \"simulate\"?\n"));
}

#[test]
fn explain_without_a_rule_points_at_rules() {
    let r = lifeguard(&["explain"]);
    assert_eq!(r.code, 2);
    assert_eq!(r.stdout, "");
    assert!(r.stderr.contains("`lifeguard rules` lists them all"), "{}", r.stderr);
    assert!(r.stderr.contains("`simulate`"), "{}", r.stderr);
    let help = lifeguard(&["explain", "--help"]);
    assert_eq!(help.code, 0);
    assert!(help.stdout.contains("`lifeguard rules` lists every rule."), "{}", help.stdout);
}

#[test]
fn fix_rule_suggests_the_rule_meant() {
    let fixable = "rules with a fix: probe-invalid, startup-probe-missing, startup-budget-too-short, \
                   liveness-too-aggressive, probe-window-too-long, progress-deadline-too-short, grace-period-too-short, prestop-sleep-only, \
                   prestop-bridge-missing\n";
    let r = lifeguard(&["fix", "--diff", "--rule", "liveness-to-aggressive", "."]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        format!(
            "lifeguard: --rule \"liveness-to-aggressive\": unknown rule (did you mean \"liveness-too-aggressive\"?); {fixable}"
        )
    );
    // The rule meant has no fix: said at once, not after a second try.
    let r = lifeguard(&["fix", "--diff", "--rule", "exec-prob", "."]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        format!(
            "lifeguard: --rule \"exec-prob\": unknown rule (did you mean \"exec-probe\"? it has no automatic fix); {fixable}"
        )
    );
    let r = lifeguard(&["fix", "--diff", "--rule", "zzz", "."]);
    assert_eq!((r.code, r.stderr), (2, format!("lifeguard: --rule \"zzz\": unknown rule; {fixable}")));
    // --select and --ignore suggest as they do for lint.
    let r = lifeguard(&["fix", "--diff", "--ignore", "exec-prob", "."]);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (2, "lifeguard: --ignore: unknown rule \"exec-prob\"; did you mean \"exec-probe\"?\n")
    );
}

#[test]
fn audit_refuses_an_unknown_rule_before_reading_the_cluster() {
    // A cluster nothing listens for: the usage error must come first.
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        "kubeconfig",
        "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:9\"}}]\n\
         users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n\
         current-context: x\n",
    );
    let audit = |flag: &str, rule: &str| {
        let args = ["audit", "--kubeconfig", "kubeconfig", "--policy", "default", flag, rule];
        lifeguard_in(dir.path(), &args, &[("NO_COLOR", Some("1"))])
    };
    let r = audit("--select", "exec-prob");
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (2, "lifeguard: --select: unknown rule \"exec-prob\"; did you mean \"exec-probe\"?\n")
    );
    let r = audit("--ignore", "zzz");
    assert_eq!(r.code, 2);
    assert!(r.stderr.starts_with("lifeguard: --ignore: unknown rule \"zzz\"; `lifeguard rules`"), "{}", r.stderr);
}

#[test]
fn completion_offers_rule_and_pack_names() {
    for shell in ["bash", "zsh", "fish"] {
        let r = lifeguard(&["completions", shell]);
        for word in ["select", "ignore", "exclude", "probe-endpoint-reused", "startup-budget-too-short", "gpu-serving"]
        {
            assert!(r.stdout.contains(word), "{shell}: no {word:?}");
        }
    }
    // `explain` offers its one topic that is not a rule, beside the rules.
    let bash = lifeguard(&["completions", "bash"]).stdout;
    let explain = bash.split("lifeguard__subcmd__explain)").nth(1).unwrap_or_default();
    let opts = explain.lines().find(|l| l.trim_start().starts_with("opts=")).unwrap_or_default();
    for word in ["probe-endpoint-reused", "simulate"] {
        assert!(opts.split(['"', ' ']).any(|w| w == word), "explain completes {word:?}: {opts}");
    }
}

/// A repository: a git-ignored directory, a vendored one, a file in both
/// `k8s/` and named again.
fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let git = std::process::Command::new("git").args(["init", "-q"]).current_dir(dir.path()).status();
    assert!(git.is_ok_and(|s| s.success()), "git init");
    write(dir.path(), ".gitignore", "rendered/\n");
    write(dir.path(), "k8s/api.yaml", SHARED);
    write(dir.path(), "k8s/vendor/upstream.yaml", SHARED);
    write(dir.path(), "rendered/api.yaml", SHARED);
    dir
}

#[test]
fn a_walk_honours_gitignore_and_exclude() {
    let dir = repository();
    let env = [("NO_COLOR", Some("1"))];
    let r = lifeguard_in(dir.path(), &["lint"], &env);
    assert_eq!(files_linted(&r), ["./k8s/api.yaml", "./k8s/vendor/upstream.yaml"], "{}", r.stdout);
    let r = lifeguard_in(dir.path(), &["lint", "--exclude", "vendor", "."], &env);
    assert_eq!(files_linted(&r), ["./k8s/api.yaml"]);
    let r = lifeguard_in(dir.path(), &["lint", "--exclude", "k8s/vendor/**", "k8s"], &env);
    assert_eq!(files_linted(&r), ["k8s/api.yaml"]);
    // Named on purpose, a git-ignored file is linted.
    let r = lifeguard_in(dir.path(), &["lint", "rendered/api.yaml"], &env);
    assert_eq!(files_linted(&r), ["rendered/api.yaml"]);
}

#[test]
fn quoted_globs_expand_and_a_file_named_twice_is_linted_once() {
    let dir = repository();
    let env = [("NO_COLOR", Some("1"))];
    let r = lifeguard_in(dir.path(), &["lint", "k8s/**/*.yaml"], &env);
    assert_eq!(files_linted(&r), ["k8s/api.yaml", "k8s/vendor/upstream.yaml"], "{}", r.stderr);
    let r = lifeguard_in(dir.path(), &["lint", "k8s", "k8s/api.yaml", "./k8s/api.yaml"], &env);
    assert!(r.stdout.ends_with("across 2 files\n"), "{}", r.stdout);
    let r = lifeguard_in(dir.path(), &["lint", "nothing/*.yaml"], &env);
    assert_eq!(r.code, 2);
    assert_eq!(r.stderr, "nothing/*.yaml input error: no manifest matches this glob\n");
}

#[test]
fn no_manifest_found_is_said_and_a_pipe_without_dash_gets_a_hint() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "README.md", "# nothing to lint\n");
    let r = lifeguard_in(dir.path(), &["lint"], &[("NO_COLOR", Some("1"))]);
    assert_eq!(r.code, 0);
    assert!(r.stderr.contains("lifeguard: note: no manifest found in ."), "{}", r.stderr);
    assert_eq!(lifeguard_in(dir.path(), &["lint", "-q"], &[]).stderr, "");
    let piped = support::lifeguard(dir.path(), &["lint"], Some(SHARED), &[("NO_COLOR", Some("1"))]);
    assert!(piped.stderr.contains("name it `-`"), "{}", piped.stderr);
    let named = support::lifeguard(dir.path(), &["lint", "-"], Some(SHARED), &[("NO_COLOR", Some("1"))]);
    assert!(!named.stderr.contains("name it"), "{}", named.stderr);
}
