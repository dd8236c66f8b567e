//! `--policy FILE|PACK`, `.lifeguard.yaml` discovery, `lifeguard policy
//! check|show`, and what a policy changes in `lint` and `fix` output.

use std::path::Path;
use std::process::{Command, Output};

const MANIFEST: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: prod
spec:
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: example/web:1.2
        livenessProbe:
          httpGet: {path: /livez, port: 8080}
          failureThreshold: 1
      - name: istio-proxy
        image: istio/proxyv2:1.22
        livenessProbe:
          httpGet: {path: /healthz/live, port: 15021}
          failureThreshold: 1
";

const HEAD: &str = "apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\n";

fn lifeguard(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lifeguard"))
        .args(args)
        .current_dir(dir)
        .env_remove("LIFEGUARD_POLICY")
        .env("NO_COLOR", "1")
        .output()
        .expect("run lifeguard")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn setup(policy: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("web.yaml"), MANIFEST).expect("write manifest");
    if let Some(p) = policy {
        std::fs::write(dir.path().join("policy.yaml"), format!("{HEAD}{p}")).expect("write policy");
    }
    dir
}

#[test]
fn default_policy_exit_codes_follow_deny_severity() {
    let dir = setup(None);
    // Two warnings (liveness-too-aggressive): the default denies errors only.
    let out = lifeguard(dir.path(), &["lint", "web.yaml"]);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("warning[liveness-too-aggressive]"), "{stdout}");
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    // strict denies warnings...
    let out = lifeguard(dir.path(), &["lint", "--policy", "strict", "web.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    // ... unless --fail-on says otherwise.
    let out = lifeguard(dir.path(), &["lint", "--policy", "strict", "--fail-on", "never", "web.yaml"]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn exemptions_are_counted_in_the_summary_and_left_out_of_json() {
    let dir = setup(Some("exemptions:\n- reason: mesh sidecar\n  containers: [istio-proxy]\n"));
    let out = lifeguard(dir.path(), &["lint", "--policy", "policy.yaml", "web.yaml"]);
    let stdout = text(&out.stdout);
    assert!(!stdout.contains("istio-proxy"), "{stdout}");
    assert!(
        stdout.contains("1 finding (0 errors, 1 warning, 0 info) in 1 object across 1 file; 1 suppressed"),
        "{stdout}"
    );
    let out = lifeguard(dir.path(), &["lint", "--policy", "policy.yaml", "--format", "json", "web.yaml"]);
    let findings: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(findings.as_array().map(Vec::len), Some(1));
    assert!(text(&out.stderr).contains("; 1 suppressed"), "{}", text(&out.stderr));
}

#[test]
fn policy_file_is_discovered_from_the_current_directory_upward() {
    let dir = setup(None);
    std::fs::write(dir.path().join(".lifeguard.yaml"), format!("{HEAD}denySeverity: warning\n")).expect("write");
    let sub = dir.path().join("deploy/prod");
    std::fs::create_dir_all(&sub).expect("mkdir");
    let out = lifeguard(&sub, &["lint", "../../web.yaml"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    // --policy wins over discovery.
    let out = lifeguard(&sub, &["lint", "--policy", "default", "../../web.yaml"]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn custom_rule_findings_have_file_line_and_json_fields() {
    let dir = setup(Some(
        "customRules:\n- name: image-from-corp-registry\n  severity: error\n  message: \"container {container}: image {value} is not from registry.corp\"\n  help: mirror the image\n  path: $.image\n  when: {matches: '^(example|istio)/'}\n",
    ));
    let out = lifeguard(dir.path(), &["lint", "--policy", "policy.yaml", "web.yaml"]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("web.yaml:13:9 error[image-from-corp-registry] Deployment/prod/web\n  container app: image example/web:1.2 is not from registry.corp\n  help: mirror the image"),
        "{stdout}"
    );
    assert_eq!(out.status.code(), Some(1));
    let out = lifeguard(dir.path(), &["lint", "--policy", "policy.yaml", "--format", "json", "web.yaml"]);
    let findings: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let custom = findings
        .as_array()
        .into_iter()
        .flatten()
        .find(|f| f["rule"] == "image-from-corp-registry")
        .expect("custom finding");
    assert_eq!(custom["line"], 13);
    assert_eq!(custom["path"], "/spec/template/spec/containers/0/image");
    assert_eq!(custom["container"], "app");
}

#[test]
fn a_bad_policy_stops_lint_with_file_line_and_key() {
    let dir = setup(Some("parameters:\n  gpuBotSeconds: 900\n"));
    for args in [&["lint", "--policy", "policy.yaml", "web.yaml"][..], &["policy", "check", "policy.yaml"]] {
        let out = lifeguard(dir.path(), args);
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(
            text(&out.stderr),
            "lifeguard: invalid policy: policy.yaml:4:3: parameters.gpuBotSeconds: unknown key `gpuBotSeconds`; did you mean `gpuBootSeconds`?\n"
        );
        assert!(out.stdout.is_empty());
    }
    let out = lifeguard(dir.path(), &["lint", "--policy", "nope", "web.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("nope: "), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("not a built-in pack: default, strict, gpu-serving"));
}

#[test]
fn a_mistyped_pack_gets_the_pack_meant() {
    let dir = setup(None);
    for (args, meant) in [
        (&["lint", "--policy", "stric", "web.yaml"][..], "strict"),
        (&["fix", "--diff", "--policy", "defualt", "web.yaml"], "default"),
        (&["simulate", "--policy", "gpu-servin", "web.yaml"], "gpu-serving"),
        (&["policy", "show", "--policy", "stric"], "strict"),
    ] {
        let out = lifeguard(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = text(&out.stderr);
        assert!(stderr.contains("not a built-in pack: default, strict, gpu-serving"), "{stderr}");
        assert!(stderr.ends_with(&format!("; did you mean {meant:?}?\n")), "{args:?}: {stderr}");
    }
    // A path is a file that is missing, not a pack misspelt.
    for policy in ["strict.yaml", "./stric"] {
        let out = lifeguard(dir.path(), &["lint", "--policy", policy, "web.yaml"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(!text(&out.stderr).contains("did you mean"), "{policy}: {}", text(&out.stderr));
    }
}

#[test]
fn policy_check_summarises_a_valid_policy() {
    let dir = setup(Some(
        "metadata: {name: web-fleet}\nextends: strict\nrules:\n  exec-probe: {enabled: false}\nexemptions:\n- reason: r\n  namespaces: [kube-system]\n",
    ));
    let out = lifeguard(dir.path(), &["policy", "check", "policy.yaml"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stdout),
        "policy.yaml: valid (policy \"web-fleet\", deny at warning, 1 rule off, 5 severity overrides, 1 exemption, 0 custom rules)\n"
    );
}

#[test]
fn policy_show_prints_a_policy_that_loads_back_the_same() {
    let dir = setup(Some("extends: gpu-serving\nparameters:\n  gpuBootSeconds: 1200\n"));
    let shown = lifeguard(dir.path(), &["policy", "show", "--policy", "policy.yaml"]);
    assert_eq!(shown.status.code(), Some(0));
    let yaml = text(&shown.stdout);
    assert!(
        yaml.starts_with("# The effective policy (file policy.yaml).\napiVersion: lifeguard.dev/v1alpha1\n"),
        "{yaml}"
    );
    assert!(yaml.contains("  gpuBootSeconds: 1200\n"), "{yaml}");
    assert!(yaml.contains("  modelServerDrainSeconds: 120\n"), "{yaml}");
    std::fs::write(dir.path().join("shown.yaml"), &yaml).expect("write");
    let json = |file: &str| {
        let out = lifeguard(dir.path(), &["policy", "show", "--policy", file, "--format", "json"]);
        serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("JSON")
    };
    assert_eq!(json("shown.yaml"), json("policy.yaml"));
}

#[test]
fn fix_leaves_suppressed_findings_alone() {
    let dir = setup(Some("exemptions:\n- reason: mesh sidecar\n  containers: [istio-proxy]\n"));
    let out = lifeguard(dir.path(), &["fix", "--diff", "--policy", "policy.yaml", "web.yaml"]);
    let diff = text(&out.stdout);
    assert!(diff.contains("/livez"), "{diff}");
    assert_eq!(diff.matches("failureThreshold").count(), 2, "only app's probe changes:\n{diff}");
}
