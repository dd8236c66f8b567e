//! The GitHub Action's lint step (`action/lint.sh`, run by `action.yml`)
//! with this build of lifeguard: paths and a chart rendered by the real
//! `helm` go into one SARIF run, annotations go to stdout, and the exit code
//! follows `fail-on`. Needs `jq` (on every GitHub runner) and, for the
//! chart, the `helm` that `.ci/install-helm.sh` installs; without them the
//! test says why and skips (`LIFEGUARD_NO_SKIP=1`, set by CI, fails instead).

use std::path::Path;
use std::process::Command;

use lifeguard_e2e::repo_root;
use serde_json::Value;

fn skip(reason: &str) {
    let strict = std::env::var_os("LIFEGUARD_NO_SKIP").is_some_and(|v| v != "0");
    assert!(!strict, "{reason}, and LIFEGUARD_NO_SKIP forbids skipping");
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "skipped: {reason}");
}

fn on_path(tool: &str) -> bool {
    Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success())
}

struct Step {
    code: i32,
    stdout: String,
    sarif: Value,
    outputs: String,
}

/// Runs the script from the repository root, as the action runs it from
/// the workspace, with lifeguard (and helm, when given) first on PATH.
fn step(env: &[(&str, &str)], helm: Option<&Path>) -> Step {
    let dir = tempfile::tempdir().expect("tempdir");
    let sarif = dir.path().join("out.sarif");
    let outputs = dir.path().join("github-output");
    let bin = Path::new(env!("CARGO_BIN_EXE_lifeguard")).parent().expect("bin dir").to_path_buf();
    let mut path = vec![bin];
    path.extend(helm.and_then(Path::parent).map(Path::to_path_buf));
    path.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    let out = Command::new("bash")
        .arg(repo_root().join("action/lint.sh"))
        .current_dir(repo_root())
        .env("PATH", std::env::join_paths(path).expect("PATH"))
        .env("LG_SARIF", &sarif)
        .env("GITHUB_OUTPUT", &outputs)
        .env("NO_COLOR", "1")
        .env_remove("LIFEGUARD_POLICY")
        .envs(env.iter().copied())
        .output()
        .expect("run action/lint.sh");
    let text = std::fs::read_to_string(&sarif).unwrap_or_default();
    Step {
        code: out.status.code().expect("exit code"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        sarif: serde_json::from_str(&text).unwrap_or(Value::Null),
        outputs: std::fs::read_to_string(&outputs).unwrap_or_default(),
    }
}

fn results(sarif: &Value) -> Vec<(String, String)> {
    sarif["runs"][0]["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str().unwrap_or_default();
            (uri.to_owned(), r["ruleId"].as_str().unwrap_or_default().to_owned())
        })
        .collect()
}

#[test]
fn paths_and_a_chart_give_one_sarif_run_annotations_and_the_fail_on_exit_code() {
    if !on_path("jq") {
        return skip("jq is not on PATH (the action merges SARIF reports with it; every GitHub runner has it)");
    }
    let helm = repo_root().join("target/tools/helm");
    if !helm.is_file() {
        return skip("target/tools/helm is not installed (run .ci/install-helm.sh, as .ci/run does)");
    }
    let chart = "tests/fixtures/charts/demo";
    let both = step(&[("LG_PATHS", "lint/examples"), ("LG_CHARTS", chart), ("LG_FAIL_ON", "error")], Some(&helm));
    assert_eq!(both.code, 1, "errors in the examples: {}", both.stdout);
    assert!(both.outputs.contains("exit-code=1\n") && both.outputs.contains("sarif-file="), "{}", both.outputs);
    let runs = both.sarif["runs"].as_array().expect("SARIF runs");
    assert_eq!(runs.len(), 1, "one run per tool and category, as code scanning requires");
    let found = results(&both.sarif);
    // Each target alone, with lifeguard itself: the merged run holds exactly their results.
    let alone = |args: &[&str], stdin: Option<&str>| -> Vec<(String, String)> {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_lifeguard"));
        cmd.args(["lint", "--format", "sarif", "--fail-on", "never"]).args(args).current_dir(repo_root());
        let out = match stdin {
            Some(text) => {
                use std::io::Write as _;
                let mut child = cmd
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .expect("lifeguard");
                child.stdin.take().expect("stdin").write_all(text.as_bytes()).expect("write");
                child.wait_with_output().expect("wait").stdout
            }
            None => cmd.stderr(std::process::Stdio::null()).output().expect("lifeguard").stdout,
        };
        results(&serde_json::from_slice(&out).expect("SARIF"))
    };
    let rendered =
        Command::new(&helm).args(["template", "release", chart]).current_dir(repo_root()).output().expect("helm");
    let mut expected = alone(&["lint/examples"], None);
    expected.extend(alone(&["--helm-chart-root", chart, "-"], Some(&String::from_utf8_lossy(&rendered.stdout))));
    assert_eq!(found, expected);
    assert!(found.iter().any(|(uri, _)| uri == "tests/fixtures/charts/demo/templates/deployment.yaml"), "{found:?}");
    // Every result names a rule of the run (ruleIndex, which pointed into one report, is gone).
    let rules: Vec<&str> =
        runs[0]["tool"]["driver"]["rules"].as_array().expect("rules").iter().filter_map(|r| r["id"].as_str()).collect();
    for (_, rule) in &found {
        assert!(rules.contains(&rule.as_str()), "{rule} not among the run's rules");
    }
    assert!(runs[0]["results"].as_array().expect("results").iter().all(|r| r.get("ruleIndex").is_none()));
    // One annotation per finding, at the severity the SARIF level says.
    for level in ["error", "warning", "note"] {
        let command = if level == "note" { "::notice file=" } else { &format!("::{level} file=") };
        let annotations = both.stdout.lines().filter(|l| l.starts_with(command)).count();
        let in_sarif = runs[0]["results"].as_array().expect("results").iter().filter(|r| r["level"] == level).count();
        assert_eq!(annotations, in_sarif, "{level}: {}", both.stdout);
    }
}

#[test]
fn fail_on_never_passes_and_no_target_is_an_error() {
    if !on_path("jq") {
        return skip("jq is not on PATH (the action merges SARIF reports with it; every GitHub runner has it)");
    }
    let never = step(&[("LG_PATHS", "lint/examples"), ("LG_FAIL_ON", "never"), ("LG_ANNOTATIONS", "false")], None);
    assert_eq!(never.code, 0, "{}", never.stdout);
    assert!(never.stdout.contains("lint/examples/web-api.yaml:24:11 error[probe-endpoint-reused]"), "text in the log");
    assert!(!results(&never.sarif).is_empty(), "the SARIF report is written whatever fail-on says");
    let nothing = step(&[], None);
    assert_eq!(nothing.code, 2);
    assert!(nothing.stdout.contains("::error title=lifeguard::give the action `paths`"), "{}", nothing.stdout);
}

#[test]
fn a_baseline_accepts_todays_findings_and_sarif_marks_them() {
    if !on_path("jq") {
        return skip("jq is not on PATH (the action merges SARIF reports with it; every GitHub runner has it)");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let baseline = dir.path().join("baseline.json");
    let baseline = baseline.to_str().expect("UTF-8");
    let lifeguard = Command::new(env!("CARGO_BIN_EXE_lifeguard"))
        .args(["lint", "--write-baseline", baseline, "lint/examples"])
        .current_dir(repo_root())
        .env_remove("LIFEGUARD_POLICY")
        .output()
        .expect("lifeguard runs");
    assert!(lifeguard.status.success(), "{}", String::from_utf8_lossy(&lifeguard.stderr));
    let with = step(&[("LG_PATHS", "lint/examples"), ("LG_BASELINE", baseline), ("LG_FAIL_ON", "info")], None);
    assert_eq!(with.code, 0, "{}", with.stdout);
    let all = with.sarif["runs"][0]["results"].as_array().cloned().unwrap_or_default();
    let states: Vec<&str> = all.iter().filter_map(|r| r["baselineState"].as_str()).collect();
    assert_eq!(states.len(), all.len(), "every result has its state");
    assert!(!states.is_empty() && states.iter().all(|s| *s == "unchanged"), "{states:?}");
    let without = step(&[("LG_PATHS", "lint/examples"), ("LG_FAIL_ON", "info")], None);
    assert_eq!(without.code, 1, "the same findings fail without it");
}
