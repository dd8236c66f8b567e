//! The real `lifeguard` binary on real files: output formats (snapshots),
//! exit codes and `--fail-on`, stdin, the JSON contract the README documents,
//! `explain`, and colour.
//!
//! Runs happen in `tests/fixtures/cli` with relative paths, so the file names
//! in the snapshots do not depend on where the repository is checked out.

mod support;

use std::path::PathBuf;

use policies::rules::RULES;
use serde_json::Value;
use support::Run;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cli")
}

/// Runs `lifeguard` in the CLI fixtures with `NO_COLOR=1`, stdout and stderr piped.
fn lifeguard(args: &[&str]) -> Run {
    run(args, None, &[("NO_COLOR", Some("1"))])
}

/// Runs `lifeguard` in the CLI fixtures; `env` sets (`Some`) or removes (`None`) variables.
fn run(args: &[&str], stdin: Option<&str>, env: &[(&str, Option<&str>)]) -> Run {
    let r = support::lifeguard(&fixtures(), args, stdin, env);
    r.assert_no_panic();
    r
}

fn json(stdout: &str) -> Vec<Value> {
    match serde_json::from_str(stdout) {
        Ok(Value::Array(items)) => items,
        other => panic!("stdout is not a JSON array: {other:?}\n{stdout}"),
    }
}

#[test]
fn text_output_on_a_directory() {
    let r = lifeguard(&["lint", "."]);
    assert_eq!(r.code, 1, "errors are found: {}", r.stderr);
    // `.hidden/broken.yaml` would be an input error and `nested/notes.txt`
    // is not YAML: the walk skips hidden directories and other extensions.
    assert_eq!(r.stderr, "", "no input error, and the summary is part of stdout");
    insta::assert_snapshot!("text", r.stdout);
}

#[test]
fn helps_first_line_names_what_every_command_does() {
    let help = lifeguard(&["--help"]);
    assert_eq!(help.code, 0, "{}", help.stderr);
    let about = help.stdout.lines().next().unwrap_or_default();
    // One line where clap wraps a pipe's help (100 columns).
    assert!(about.len() <= 100, "{about:?} is {} characters", about.len());
    assert_eq!(help.stdout.lines().nth(1), Some(""), "the first line wraps:\n{}", help.stdout);
    // The commands that do the work, each by its name or what it does.
    for (command, said) in [
        ("lint", "lint"),
        ("fix", "fix"),
        ("simulate", "simulate"),
        ("audit", "audit"),
        ("export", "export"),
        ("lsp", "LSP"),
    ] {
        assert!(about.contains(said), "the first line of `lifeguard --help` does not name {command}: {about:?}");
        assert!(help.stdout.contains(&format!("\n  {command} ")), "no {command} command in:\n{}", help.stdout);
    }
}

#[test]
fn no_path_means_the_current_directory() {
    assert_eq!(lifeguard(&["lint"]).stdout, lifeguard(&["lint", "."]).stdout);
}

#[test]
fn json_output_on_a_directory() {
    let r = lifeguard(&["lint", "--format", "json", "."]);
    assert_eq!(r.code, 1);
    // stdout holds only the array; the summary goes to stderr.
    assert_eq!(json(&r.stdout).len(), 8);
    assert_eq!(r.stderr, "8 findings (1 error, 4 warnings, 3 info) in 6 objects across 6 files\n");
    insta::assert_snapshot!("json", r.stdout);
}

/// The field names of the README's `--format json` table.
fn documented_fields() -> Vec<String> {
    let readme = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/lint.md"))
        .expect("docs/lint.md");
    let table = readme
        .split("| field | meaning |")
        .nth(1)
        .expect("docs/lint.md documents the JSON fields in a `| field | meaning |` table");
    let mut fields = Vec::new();
    for row in table.lines().skip(2) {
        let row = row.trim();
        if !row.starts_with('|') {
            break;
        }
        let first_cell = row.split('|').nth(1).unwrap_or_default();
        fields.extend(first_cell.split('`').skip(1).step_by(2).map(str::to_owned));
    }
    fields
}

#[test]
fn json_findings_have_exactly_the_documented_fields() {
    let mut documented = documented_fields();
    documented.sort();
    assert!(documented.len() >= 12, "README table parsed: {documented:?}");
    let items = json(&lifeguard(&["lint", "--format", "json", "."]).stdout);
    let nullable = ["namespace", "name", "container", "fix"];
    for item in &items {
        let object = item.as_object().expect("each finding is an object");
        let mut keys: Vec<&String> = object.keys().collect();
        keys.sort();
        assert_eq!(keys, documented.iter().collect::<Vec<_>>(), "{item}");
        for (key, value) in object {
            match key.as_str() {
                "line" | "column" => assert!(value.as_u64().is_some_and(|n| n >= 1), "{key}: {value}"),
                "severity" => assert!(matches!(value.as_str(), Some("error" | "warning" | "info")), "{value}"),
                "path" => assert!(value.as_str().is_some_and(|p| p.starts_with('/')), "{value}"),
                "fixable" => assert!(value.is_boolean(), "{value}"),
                "template" => assert!(value.is_object() || value.is_null(), "{value}"),
                "assumptions" => {
                    for a in value.as_array().unwrap_or_else(|| panic!("assumptions is a list: {value}")) {
                        let mut fields: Vec<&String> =
                            a.as_object().expect("an assumption is an object").keys().collect();
                        fields.sort();
                        assert_eq!(fields, ["about", "declare", "from", "source", "value"], "{a}");
                        let sources = ["command-line", "annotation", "env", "spec", "known-image", "policy", "default"];
                        assert!(sources.contains(&a["source"].as_str().unwrap_or_default()), "{a}");
                    }
                }
                k if nullable.contains(&k) => assert!(value.is_string() || value.is_null(), "{k}: {value}"),
                k => assert!(value.as_str().is_some_and(|s| !s.is_empty()), "{k}: {value}"),
            }
        }
    }
    // An object without namespace (null) and a container without a name
    // (named, not null: null is for pod-level findings).
    let cron = items.iter().find(|i| i["name"] == "nightly-report").expect("a finding on the CronJob");
    assert_eq!((&cron["namespace"], &cron["container"]), (&Value::Null, &Value::from("<unnamed>")));
    // A fixable finding says what its fix does; the others have none.
    for item in &items {
        assert_eq!(item["fixable"] == true, item["fix"].is_string(), "{item}");
    }
    assert!(items.iter().any(|i| i["fixable"] == true), "the fixtures hold a fixable finding");
    // A slow boot's finding names the boot it assumes, and where it came from.
    let boot = items
        .iter()
        .filter(|i| i["rule"] == "startup-probe-missing")
        .flat_map(|i| i["assumptions"].as_array().cloned().unwrap_or_default())
        .find(|a| a["about"] == "boot")
        .expect("a startup-probe-missing finding assumes a boot");
    assert!(boot["value"].as_str().is_some_and(|v| v.ends_with('s')), "{boot}");
}

#[test]
fn exit_codes_follow_fail_on() {
    // (file, --fail-on, exit code); the files hold findings up to this severity:
    // clean none, info.yaml info, warnings.yaml warning, errors.yaml error.
    let cases = [
        ("clean.yaml", None, 0),
        ("clean.yaml", Some("info"), 0),
        ("info.yaml", None, 0),
        ("info.yaml", Some("warning"), 0),
        ("info.yaml", Some("info"), 1),
        ("warnings.yaml", None, 0),
        ("warnings.yaml", Some("error"), 0),
        ("warnings.yaml", Some("warning"), 1),
        ("warnings.yaml", Some("info"), 1),
        ("warnings.yaml", Some("never"), 0),
        ("errors.yaml", None, 1),
        ("errors.yaml", Some("warning"), 1),
        ("errors.yaml", Some("never"), 0),
    ];
    for (file, fail_on, code) in cases {
        let mut args = vec!["lint", file];
        if let Some(level) = fail_on {
            args.extend(["--fail-on", level]);
        }
        let r = lifeguard(&args);
        assert_eq!(r.code, code, "lifeguard {}\n{}{}", args.join(" "), r.stdout, r.stderr);
    }
}

#[test]
fn input_and_usage_errors_exit_2_whatever_fail_on_says() {
    let r = lifeguard(&["lint", "--fail-on", "never", "clean.yaml", "missing.yaml"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.starts_with("missing.yaml input error: "), "{}", r.stderr);
    assert!(r.stdout.ends_with("across 1 file; 1 input error\n"), "{}", r.stdout);
    let r = lifeguard(&["lint", "--fail-on", "sometimes", "clean.yaml"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stdout, "");
}

#[test]
fn stdin_is_linted_as_stdin() {
    let text = std::fs::read_to_string(fixtures().join("errors.yaml")).expect("read fixture");
    let env = [("NO_COLOR", Some("1"))];
    let from_stdin = run(&["lint", "-"], Some(&text), &env);
    let from_file = lifeguard(&["lint", "errors.yaml"]);
    assert_eq!(from_stdin.code, 1);
    assert_eq!(from_stdin.stdout, from_file.stdout.replace("errors.yaml", "<stdin>"));
    assert!(from_stdin.stdout.starts_with("<stdin>:21:11 error[probe-endpoint-reused]"));

    let items = json(&run(&["lint", "--format", "json", "-"], Some(&text), &env).stdout);
    assert_eq!(items.len(), 2);
    assert!(items.iter().all(|i| i["file"] == "<stdin>"), "{items:?}");
}

#[test]
fn explain_prints_the_doc_of_every_rule() {
    for rule in RULES {
        let r = lifeguard(&["explain", rule.name]);
        assert_eq!(r.code, 0, "{}: {}", rule.name, r.stderr);
        assert!(r.stdout.starts_with(&format!("# {}\n", rule.name)), "{}", r.stdout);
        assert!(r.stdout.contains(rule.summary), "{}: summary", rule.name);
        assert!(r.stdout.contains(rule.doc.trim_end()), "{}: the whole doc", rule.name);
        for heading in ["## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix"] {
            assert!(r.stdout.contains(heading), "{}: no {heading:?}", rule.name);
        }
    }
}

#[test]
fn explain_an_unknown_rule_exits_2() {
    let r = lifeguard(&["explain", "nope"]);
    assert_eq!(r.code, 2);
    assert_eq!(r.stdout, "");
    assert!(r.stderr.contains("unknown rule \"nope\""), "{}", r.stderr);
}

/// A run with findings on stdout and an input error on stderr, both styled on a terminal.
fn styled_run(env: &[(&str, Option<&str>)]) -> Run {
    run(&["lint", "errors.yaml", "missing.yaml"], None, env)
}

#[test]
fn piped_output_has_no_colour_even_without_no_color() {
    let env = [("NO_COLOR", None), ("CLICOLOR_FORCE", None), ("CLICOLOR", None)];
    let r = styled_run(&env);
    assert_eq!(r.code, 2);
    assert!(r.stdout.contains("error[probe-endpoint-reused]"), "{}", r.stdout);
    assert!(!r.stdout.contains('\x1b'), "ANSI escape on piped stdout: {:?}", r.stdout);
    assert!(!r.stderr.contains('\x1b'), "ANSI escape on piped stderr: {:?}", r.stderr);
}

#[test]
fn colour_is_there_to_strip() {
    // Guards the test above: forced colour does produce escapes, so their
    // absence when piped is the stripping, not a renderer without colour.
    let r = styled_run(&[("NO_COLOR", None), ("CLICOLOR_FORCE", Some("1"))]);
    assert!(r.stdout.contains("\x1b["), "{:?}", r.stdout);
    assert!(r.stderr.contains("\x1b["), "{:?}", r.stderr);
}

#[test]
fn a_directory_walk_renders_a_chart_and_says_why_when_it_cannot() {
    let dir = tempfile::tempdir().expect("tempdir");
    let chart = dir.path().join("charts/api");
    std::fs::create_dir_all(chart.join("templates")).expect("mkdir");
    std::fs::write(chart.join("Chart.yaml"), "apiVersion: v2\nname: api\nversion: 0.1.0\n").expect("write");
    std::fs::write(chart.join("values.yaml"), "replicas: 2\n").expect("write");
    let template =
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n{{- if .Values.x }}\n";
    std::fs::write(chart.join("templates/deployment.yaml"), template).expect("write");
    // A `templates/` directory that is not a chart's is linted as usual.
    std::fs::create_dir_all(dir.path().join("k8s/templates")).expect("mkdir");
    std::fs::write(dir.path().join("k8s/templates/cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
        .expect("write");
    // No helm on PATH: the chart is one input error saying so, never a
    // clean run that checked nothing (tests/tests/kustomize.rs renders
    // charts with the real helm).
    let empty = tempfile::tempdir().expect("tempdir");
    let path = empty.path().to_str().expect("a UTF-8 path");
    let r = support::lifeguard(dir.path(), &["lint", "."], None, &[("NO_COLOR", Some("1")), ("PATH", Some(path))]);
    r.assert_no_panic();
    assert_eq!(r.code, 2, "a chart not rendered is an input error: {}", r.stderr);
    let errors: Vec<&str> = r.stderr.lines().filter(|l| l.contains("input error")).collect();
    assert_eq!(errors.len(), 1, "said once: {}", r.stderr);
    assert!(errors[0].starts_with("./charts/api input error: a Helm chart needs `helm` on PATH"), "{}", errors[0]);
    assert!(
        errors[0].contains("`helm template RELEASE ./charts/api | lifeguard lint --helm-chart-root ./charts/api -`"),
        "{}",
        errors[0]
    );
    assert!(r.stdout.contains("across 1 file"), "k8s/templates/cm.yaml, not values.yaml or Chart.yaml: {}", r.stdout);
    // Named explicitly, a template is still read (and is not YAML).
    let named = support::lifeguard(dir.path(), &["lint", "charts/api/templates/deployment.yaml"], None, &[]);
    assert_eq!(named.code, 2, "{}", named.stderr);
    // The templates directory named: one error, naming the chart to render,
    // not a parser error per template.
    for (cwd, given, chart) in
        [(dir.path().to_owned(), "charts/api/templates", "charts/api"), (chart.join("templates"), ".", "")]
    {
        let r = support::lifeguard(&cwd, &["lint", given], None, &[("NO_COLOR", Some("1"))]);
        r.assert_no_panic();
        assert_eq!(r.code, 2, "{}", r.stderr);
        let errors: Vec<&str> = r.stderr.lines().filter(|l| l.contains("input error")).collect();
        assert_eq!(errors.len(), 1, "{}", r.stderr);
        assert!(
            errors[0].contains("a Helm chart's templates are not YAML until the chart renders them"),
            "{}",
            errors[0]
        );
        assert!(errors[0].contains("| lifeguard lint -`"), "{}", errors[0]);
        assert!(errors[0].contains(&format!("helm template RELEASE {chart}")), "{}", errors[0]);
    }
}

#[test]
fn a_walk_lists_a_directorys_files_before_its_subdirectories() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pod = |name: &str| {
        format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n  containers: [{{name: c, image: x}}]\n")
    };
    for path in ["x.yaml", "z.yaml", "team/x.yaml", "team/a.yaml", "team/sub/b.yaml", "apps/y.yaml"] {
        let file = dir.path().join(path);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(&file, pod(&path.replace(['/', '.'], "-"))).expect("write");
    }
    let r = support::lifeguard(dir.path(), &["lint", ".", "-v"], None, &[("NO_COLOR", Some("1"))]);
    let order: Vec<&str> = r.stderr.lines().filter_map(|l| l.strip_prefix("lifeguard: ")?.split(':').next()).collect();
    assert_eq!(
        order,
        ["./x.yaml", "./z.yaml", "./apps/y.yaml", "./team/a.yaml", "./team/x.yaml", "./team/sub/b.yaml"],
        "as `ls -R` lists them: {}",
        r.stderr
    );
}

/// YAML other tools read is never reported as anything, walked or named,
/// even when it would not parse as a manifest stream.
#[test]
fn other_tools_yaml_is_never_reported_walked_or_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Each would be an input error if read: a tab where YAML forbids it.
    let broken = "key:\n\t- value\n";
    // A chart's `Chart.yaml` and a `kustomization.yaml` make their
    // directories a chart to render and a build (tests/tests/kustomize.rs);
    // named, they are not read either.
    let tools_own = ["chart/Chart.yaml", "chart/values.yaml", "sub/kustomization.yaml"];
    let others = [
        ".pre-commit-config.yaml",
        ".github/workflows/ci.yaml",
        ".github/dependabot.yml",
        "docker-compose.yml",
        ".gitlab-ci.yml",
    ];
    for path in others {
        let file = dir.path().join(path);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(&file, broken).expect("write");
    }
    std::fs::write(dir.path().join("broken.yaml"), broken).expect("write");
    let walked = support::lifeguard(dir.path(), &["lint", "."], None, &[("NO_COLOR", Some("1"))]);
    assert_eq!(walked.code, 2, "the one manifest that does not parse is an error: {}", walked.stderr);
    assert_eq!(walked.stderr.lines().filter(|l| l.contains("input error")).count(), 1, "{}", walked.stderr);
    assert!(walked.stderr.starts_with("./broken.yaml:"), "{}", walked.stderr);
    let mut named = vec!["lint"];
    named.extend(others);
    for path in tools_own {
        let file = dir.path().join(path);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(&file, broken).expect("write");
    }
    named.extend(tools_own);
    let named = support::lifeguard(dir.path(), &named, None, &[("NO_COLOR", Some("1"))]);
    assert_eq!(named.code, 0, "named, they are not read either: {}", named.stderr);
    assert!(!named.stderr.contains("input error") && !named.stdout.contains("input error"), "{}", named.stderr);
}
