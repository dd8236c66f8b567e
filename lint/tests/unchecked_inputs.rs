//! Never silent: an input that gave no object to check is named, with why,
//! in every format (text on stderr, JSON, SARIF as a notification, GitHub
//! as a notice, HTML), and never changes the exit code. Another tool's
//! template met in a walk is one of them; named directly, it is an error
//! that says what it looks like.

mod support;

use serde_json::Value;
use support::{Run, lifeguard};

const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        livenessProbe: {httpGet: {path: /ready, port: 80}}\n        readinessProbe: {httpGet: {path: /ready, port: 80}}\n";
const SERVICE: &str = "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n";
/// Jinja (Ansible's `template`): `{{ }}` as a value is a flow mapping key.
const JINJA: &str =
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ app_name }}\nspec:\n  replicas: {{ replicas }}\n";
/// Terraform's `templatefile`: a `%{ }` directive starts a line.
const TERRAFORM: &str = "image:\n  repository: ${repository}\n%{ if enabled ~}\nenabled: true\n%{ endif ~}\n";

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in
        [("deploy.yaml", DEPLOYMENT), ("svc.yaml", SERVICE), ("app.yaml", JINJA), ("values.tf.yaml", TERRAFORM)]
    {
        std::fs::write(dir.path().join(name), text).expect("write");
    }
    dir
}

fn lint(dir: &tempfile::TempDir, args: &[&str]) -> Run {
    let mut all = vec!["lint"];
    all.extend_from_slice(args);
    let r = lifeguard(dir.path(), &all, None, &[("NO_COLOR", Some("1"))]);
    r.assert_no_panic();
    r
}

const JINJA_NOTE: &str = "not linted: templated text (Go or Jinja template: `{{` at line 4), not YAML until rendered; lint what it renders to";
const TERRAFORM_NOTE: &str =
    "not linted: templated text (Terraform template: `%{` at line 3), not YAML until rendered; lint what it renders to";
const SERVICE_NOTE: &str = "no object checked: its kinds (Service) hold no pod template lifeguard reads";

#[test]
fn a_walk_names_every_input_it_checked_nothing_of_and_exits_on_the_findings_alone() {
    let dir = tree();
    let r = lint(&dir, &["."]);
    assert_eq!(r.code, 1, "the Deployment's error decides, no input error: {}", r.stderr);
    assert_eq!(
        r.stderr,
        format!(
            "./app.yaml:4 input note: {JINJA_NOTE}\n./values.tf.yaml:3 input note: {TERRAFORM_NOTE}\n./svc.yaml input note: {SERVICE_NOTE}\n"
        )
    );
    assert!(r.stdout.ends_with("in 1 object across 4 files; 3 inputs with no object checked\n"), "{}", r.stdout);
    // --quiet keeps the findings alone.
    assert_eq!(lint(&dir, &["--quiet", "."]).stderr, "");
}

#[test]
fn a_template_named_directly_is_an_error_that_says_what_it_looks_like() {
    let dir = tree();
    let r = lint(&dir, &["app.yaml", "deploy.yaml"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(
        r.stderr,
        "app.yaml:4:10 input error: a mapping key must be a scalar (it looks like templated text, Go or Jinja template: `{{` at line 4; lint what it renders to)\n"
    );
    assert!(r.stdout.contains("deploy.yaml:9:"), "the other file is still linted: {}", r.stdout);
}

#[test]
fn every_format_carries_the_notes() {
    let dir = tree();
    // JSON: entries whose rule is null, `info` for a note.
    let json: Vec<Value> = serde_json::from_str(&lint(&dir, &["--format", "json", "."]).stdout).expect("JSON");
    let notes: Vec<(&str, Option<u64>, &str)> = json
        .iter()
        .filter(|e| e["rule"].is_null())
        .map(|e| {
            assert_eq!(e["severity"], "info", "{e}");
            (e["file"].as_str().unwrap_or_default(), e["line"].as_u64(), e["message"].as_str().unwrap_or_default())
        })
        .collect();
    assert_eq!(
        notes,
        [
            ("./app.yaml", Some(4), JINJA_NOTE),
            ("./values.tf.yaml", Some(3), TERRAFORM_NOTE),
            ("./svc.yaml", None, SERVICE_NOTE)
        ]
    );

    // SARIF: notifications of level `note`; the run still succeeded.
    let sarif: Value = serde_json::from_str(&lint(&dir, &["--format", "sarif", "."]).stdout).expect("SARIF");
    let invocation = &sarif["runs"][0]["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], true);
    let notifications = invocation["toolExecutionNotifications"].as_array().expect("notifications");
    assert_eq!(notifications.len(), 3, "{notifications:#?}");
    assert!(notifications.iter().all(|n| n["level"] == "note"), "{notifications:#?}");
    assert_eq!(notifications[2]["message"]["text"], format!("input note: {SERVICE_NOTE}"));
    assert_eq!(notifications[2]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "svc.yaml");

    // GitHub: notices, with the line where there is one.
    let github = lint(&dir, &["--format", "github", "."]);
    assert!(!github.stderr.contains("input note"), "annotations say it once: {}", github.stderr);
    assert!(
        github.stdout.contains("::notice file=app.yaml,line=4,title=lifeguard input note::not linted: templated text"),
        "{}",
        github.stdout
    );
    assert!(github.stdout.contains(&format!("::notice file=svc.yaml,title=lifeguard input note::{SERVICE_NOTE}")));

    // HTML: a section of its own.
    let html = lint(&dir, &["--format", "html", "."]).stdout;
    let section = html.split("id=\"input-notes\"").nth(1).expect("a notes section");
    for file in ["./app.yaml:4", "./values.tf.yaml:3", "./svc.yaml"] {
        assert!(section.contains(file), "{file} in {section}");
    }
}

#[test]
fn fix_skips_a_template_met_in_a_walk_with_a_note_and_edits_nothing_of_it() {
    let dir = tree();
    let r = lifeguard(dir.path(), &["fix", "--diff", "."], None, &[("NO_COLOR", Some("1"))]);
    r.assert_no_panic();
    assert_ne!(r.code, 2, "a template met in a walk is no error: {}", r.stderr);
    assert!(r.stderr.contains(&format!("./app.yaml:4 note: {JINJA_NOTE}\n")), "{}", r.stderr);
    assert!(r.stderr.contains(&format!("./values.tf.yaml:3 note: {TERRAFORM_NOTE}\n")), "{}", r.stderr);
    assert!(!r.stdout.contains("app.yaml"), "no diff of a template: {}", r.stdout);
    // Named directly, it is an error.
    let r = lifeguard(dir.path(), &["fix", "--diff", "app.yaml"], None, &[("NO_COLOR", Some("1"))]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("it looks like templated text"), "{}", r.stderr);
}

const SANDBOX: &str = "apiVersion: extensions.agents.x-k8s.io/v1beta1\nkind: SandboxTemplate\nmetadata:\n  name: py\nspec:\n  podTemplate:\n    spec:\n      containers:\n      - name: runtime\n        livenessProbe: {httpGet: {path: /ready, port: 8888}}\n        readinessProbe: {httpGet: {path: /ready, port: 8888}}\n";

#[test]
fn containers_nothing_reads_are_a_warning_with_the_declaration_that_has_them_checked() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("sandbox.yaml"), SANDBOX).expect("write");
    let r = lifeguard(dir.path(), &["lint", "sandbox.yaml"], None, &[("NO_COLOR", Some("1"))]);
    assert_eq!(r.code, 0, "a warning never fails the run: {}", r.stderr);
    let declaration =
        "podTemplates: [{kind: SandboxTemplate, group: extensions.agents.x-k8s.io, templates: [/spec/podTemplate]}]";
    assert!(
        r.stderr.starts_with(&format!(
            "sandbox.yaml:8:7 input warning: SandboxTemplate/py holds containers at /spec/podTemplate/spec/containers, in a pod template lifeguard does not read, so they are not checked: declare it in the policy: `{declaration}`\n"
        )),
        "{}",
        r.stderr
    );
    let json: Vec<Value> =
        serde_json::from_str(&lifeguard(dir.path(), &["lint", "--format", "json", "sandbox.yaml"], None, &[]).stdout)
            .expect("JSON");
    assert!(json.iter().any(|e| e["severity"] == "warning" && e["line"] == 8), "{json:#?}");

    // Declared as the warning says, its pod is judged: no warning, a finding.
    let policy = format!("apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\n{declaration}\n");
    std::fs::write(dir.path().join("policy.yaml"), policy).expect("write");
    let r =
        lifeguard(dir.path(), &["lint", "--policy", "policy.yaml", "sandbox.yaml"], None, &[("NO_COLOR", Some("1"))]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stderr, "");
    assert!(r.stdout.starts_with("sandbox.yaml:10:9 error[probe-endpoint-reused] SandboxTemplate/py"), "{}", r.stdout);
    // simulate reads it the same way.
    let r = lifeguard(
        dir.path(),
        &["simulate", "--policy", "policy.yaml", "sandbox.yaml"],
        None,
        &[("NO_COLOR", Some("1"))],
    );
    assert!(r.stdout.contains("SandboxTemplate/py"), "{}\n{}", r.stdout, r.stderr);
}
