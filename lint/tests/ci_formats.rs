//! The CI formats (`sarif`, `junit`, `github`) beside `text` and `json`, on
//! one fixture with several files, every severity and a Helm-rendered stream
//! (`tests/fixtures/formats`): snapshots of each report, the same summary
//! line and exit code in every format, stdout holding only the report, Helm
//! templates named (from a file and from stdin, with `--helm-chart-root`),
//! input errors, and `--fail-on` in JUnit.
//!
//! Runs happen in `tests/fixtures/formats` with relative paths, so the
//! snapshots do not depend on where the repository is checked out.

mod support;

use std::path::PathBuf;

use support::Run;

use serde_json::Value;

const FORMATS: [&str; 5] = ["text", "json", "sarif", "junit", "github"];
const SUMMARY: &str = "5 findings (2 errors, 2 warnings, 1 info) in 5 objects across 4 files";

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/formats")
}

fn lifeguard(args: &[&str], stdin: Option<&str>, dir: &std::path::Path) -> Run {
    support::lifeguard(dir, args, stdin, &[("NO_COLOR", Some("1"))])
}

/// The SARIF log with each rule's help (the `lifeguard explain` text, long
/// and tested elsewhere) checked and then shortened, so the snapshot shows
/// the structure.
fn sarif_for_snapshot(stdout: &str) -> Value {
    let mut log: Value = serde_json::from_str(stdout).expect("SARIF is JSON");
    let rules =
        log.pointer_mut("/runs/0/tool/driver/rules").and_then(Value::as_array_mut).expect("the driver lists rules");
    for rule in rules {
        let id = rule["id"].as_str().expect("rule id").to_owned();
        // The same link as the cluster reports' `docs` property and the HTML report's.
        assert_eq!(rule["helpUri"], policies::rules::docs_url(&id), "{id}");
        for format in ["text", "markdown"] {
            let help = rule["help"][format].as_str().expect("rule help");
            assert!(help.starts_with(&format!("# {id}\n")), "{id}: {help}");
            assert!(help.contains("## Example"), "{id}: help holds the rule's doc");
            rule["help"][format] = Value::String(format!("<lifeguard explain {id}>"));
        }
    }
    log
}

fn snapshot(name: &str, format: &str, stdout: &str) {
    if format == "sarif" {
        insta::assert_json_snapshot!(name, sarif_for_snapshot(stdout));
    } else {
        insta::assert_snapshot!(name, stdout);
    }
}

#[test]
fn every_format_reports_the_fixture_with_the_same_summary_and_exit_code() {
    for format in FORMATS {
        let run = lifeguard(&["lint", "--format", format, "."], None, &fixtures());
        assert_eq!(run.code, 1, "{format}: errors exit 1\n{}", run.stderr);
        if format == "text" {
            assert!(run.stdout.ends_with(&format!("\n{SUMMARY}\n")), "{}", run.stdout);
            assert_eq!(run.stderr, "");
        } else {
            // stdout is only the report; the summary goes to stderr.
            assert_eq!(run.stderr, format!("{SUMMARY}\n"), "{format}");
            assert!(!run.stdout.contains(SUMMARY), "{format}");
        }
        snapshot(&format!("fixture_{format}"), format, &run.stdout);
    }
}

#[test]
fn machine_formats_parse_and_name_the_helm_template_and_the_rendered_line() {
    let sarif = lifeguard(&["lint", "--format", "sarif", "."], None, &fixtures());
    let log: Value = serde_json::from_str(&sarif.stdout).expect("SARIF is JSON");
    let results = log["runs"][0]["results"].as_array().expect("results");
    assert_eq!(results.len(), 5);
    let api =
        results.iter().find(|r| r["ruleId"] == "prestop-sleep-only").expect("the Helm-rendered Deployment's finding");
    // The templates are not on disk beside this committed output: the finding
    // stays at the rendered line, and the template is a related location.
    let at = &api["locations"][0]["physicalLocation"];
    assert_eq!(at["artifactLocation"]["uri"], "helm-rendered.yaml");
    assert_eq!(at["region"]["startLine"], 62);
    let related = &api["relatedLocations"][0];
    assert_eq!(related["physicalLocation"]["artifactLocation"]["uri"], "shop/templates/api.yaml");
    assert_eq!(related["physicalLocation"]["region"], Value::Null, "no line of a file that is not there");
    assert_eq!(related["message"]["text"], "Helm template (not on disk)");
    assert_eq!(api["properties"]["rendered"], "./helm-rendered.yaml:62:17");
    assert!(api["properties"]["fix"].as_str().is_some_and(|f| !f.is_empty()), "{api}");
    let levels: Vec<&str> = results.iter().filter_map(|r| r["level"].as_str()).collect();
    assert_eq!(levels, ["warning", "error", "error", "warning", "note"]);

    let json = lifeguard(&["lint", "--format", "json", "."], None, &fixtures());
    let items: Vec<Value> = serde_json::from_str(&json.stdout).expect("JSON array");
    let cache = items.iter().find(|f| f["rule"] == "readiness-port-only").expect("cache finding");
    assert_eq!(cache["file"], "./helm-rendered.yaml");
    assert_eq!(cache["line"], 34);
    assert_eq!(
        cache["template"],
        serde_json::json!({"path": "shop/charts/cache/templates/statefulset.yaml", "line": null, "exists": false})
    );
    let web = items.iter().find(|f| f["rule"] == "probe-endpoint-reused").expect("web finding");
    assert_eq!(web["template"], Value::Null);
}

#[test]
fn helm_output_on_stdin_names_repo_relative_templates_with_helm_chart_root() {
    let rendered = std::fs::read_to_string(fixtures().join("helm-rendered.yaml")).expect("fixture");
    // `charts/shop` holds the chart's templates, which add and drop lines
    // (`if`, `with`) around what they render.
    let dir = fixtures().join("..");
    for format in FORMATS {
        let args = ["lint", "--format", format, "--helm-chart-root", "./charts/shop/", "-"];
        let run = lifeguard(&args, Some(&rendered), &dir);
        assert_eq!(run.code, 1, "{format}\n{}", run.stderr);
        assert!(run.stdout.contains("charts/shop/templates/api.yaml"), "{format}: {}", run.stdout);
        assert!(run.stdout.contains("charts/shop/charts/cache/templates/statefulset.yaml"), "{format}: {}", run.stdout);
        assert!(!run.stdout.contains("shop/shop"), "{format}: the chart name is replaced, not kept");
        snapshot(&format!("helm_stdin_{format}"), format, &run.stdout);
    }
    let json = lifeguard(&["lint", "--format", "json", "--helm-chart-root", "charts/shop", "-"], Some(&rendered), &dir);
    let items: Vec<Value> = serde_json::from_str(&json.stdout).expect("JSON array");
    for item in &items {
        let template = &item["template"];
        let line = template["line"].as_u64().expect("every finding's key is a line of its template") as usize;
        let path = dir.join(template["path"].as_str().expect("path"));
        let source = std::fs::read_to_string(&path).expect("the template exists");
        let key = |l: &str| l.trim().split(':').next().map(str::to_owned);
        let held = source.lines().nth(line - 1).and_then(key);
        let shown = rendered.lines().nth(item["line"].as_u64().expect("line") as usize - 1).and_then(key);
        assert_eq!(held, shown, "{item}");
    }
}

#[test]
fn a_helm_chart_root_that_is_not_a_directory_is_a_usage_error() {
    let run = lifeguard(&["lint", "--helm-chart-root", "deploy/nope", "-"], Some("kind: A\n"), &fixtures());
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--helm-chart-root \"deploy/nope\" is not a directory"), "{}", run.stderr);
    assert_eq!(run.stdout, "");
}

#[test]
fn input_errors_are_in_every_report_and_on_stderr_but_said_once_with_github() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::copy(fixtures().join("worker.yaml"), dir.path().join("worker.yaml")).expect("copy");
    std::fs::write(dir.path().join("broken.yaml"), "kind: Deployment\nmetadata: {name: [\n").expect("write");
    for format in FORMATS {
        let run = lifeguard(&["lint", "--format", format, "."], None, dir.path());
        assert_eq!(run.code, 2, "{format}: input errors exit 2");
        if format != "github" {
            assert!(run.stderr.contains("./broken.yaml:"), "{format}: {}", run.stderr);
        }
        // The summary counts the error, on stdout for text and on stderr for the rest.
        let summary = if format == "text" { &run.stdout } else { &run.stderr };
        assert!(summary.contains("; 1 input error"), "{format}: {summary}");
        match format {
            "sarif" => {
                let log: Value = serde_json::from_str(&run.stdout).expect("SARIF is JSON");
                let invocation = &log["runs"][0]["invocations"][0];
                assert_eq!(invocation["executionSuccessful"], false);
                let note = &invocation["toolExecutionNotifications"][0];
                assert_eq!(note["level"], "error");
                assert_eq!(note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "broken.yaml");
                assert_eq!(log["runs"][0]["results"][0]["ruleId"], "exec-probe");
            }
            "junit" => {
                assert!(run.stdout.contains("<testsuite name=\"lifeguard input errors\""), "{}", run.stdout);
                assert!(run.stdout.contains("<error message="), "{}", run.stdout);
            }
            "github" => {
                let line = run.stdout.lines().last().expect("an annotation per error");
                assert!(line.starts_with("::error file=broken.yaml,line="), "{line}");
                assert!(line.contains(",title=lifeguard input error::"), "{line}");
                // An Actions log shows both streams: the error is not repeated on stderr.
                assert!(!run.stderr.contains("broken.yaml"), "said once, as the annotation: {}", run.stderr);
                // With --output-file the annotations are in the file: stderr says it.
                let to_file =
                    lifeguard(&["lint", "--format", format, "--output-file", "out.txt", "."], None, dir.path());
                assert!(to_file.stderr.contains("./broken.yaml:"), "{}", to_file.stderr);
                assert!(run.stderr.contains("1 input error"), "the summary line stays: {}", run.stderr);
            }
            _ => {}
        }
    }
}

#[test]
fn junit_failures_follow_fail_on_and_findings_below_it_pass_with_their_text() {
    let count = |stdout: &str, what: &str| stdout.matches(what).count();
    let default = lifeguard(&["lint", "--format", "junit", "."], None, &fixtures());
    assert_eq!(count(&default.stdout, "<failure "), 2, "{}", default.stdout);
    assert_eq!(count(&default.stdout, "<system-out>"), 3, "{}", default.stdout);
    // One case per object and rule: 5 objects x every rule.
    let cases = 5 * policies::rules::RULES.len();
    assert!(default.stdout.contains(&format!("<testsuites name=\"lifeguard\" tests=\"{cases}\"")));

    let warning = lifeguard(&["lint", "--format", "junit", "--fail-on", "warning", "."], None, &fixtures());
    assert_eq!(count(&warning.stdout, "<failure "), 4, "{}", warning.stdout);
    let never = lifeguard(&["lint", "--format", "junit", "--fail-on", "never", "."], None, &fixtures());
    assert_eq!(never.code, 0);
    assert_eq!(count(&never.stdout, "<failure "), 0, "{}", never.stdout);
    assert_eq!(count(&never.stdout, "<system-out>"), 5, "{}", never.stdout);
}

#[test]
fn github_annotations_use_the_severity_as_the_command() {
    let run = lifeguard(&["lint", "--format", "github", "."], None, &fixtures());
    let commands: Vec<&str> = run.stdout.lines().map(|l| l.split_once(' ').map_or(l, |(c, _)| c)).collect();
    assert_eq!(commands, ["::warning", "::error", "::error", "::warning", "::notice"]);
    for line in run.stdout.lines() {
        // One line per annotation: newlines in the message are escaped.
        assert!(line.contains(",line=") && line.contains(",col=") && line.contains(",title="), "{line}");
    }
}

#[test]
fn custom_and_disabled_rules_of_the_policy_show_in_sarif_and_junit() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::copy(fixtures().join("worker.yaml"), dir.path().join("worker.yaml")).expect("copy");
    std::fs::write(
        dir.path().join(".lifeguard.yaml"),
        "apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\nrules:\n  exec-probe: {enabled: false}\n\
         customRules:\n- name: memory-limit-missing\n  severity: warning\n  message: \"container {container} has no memory limit\"\n  \
         help: set resources.limits.memory\n  path: $.resources.limits.memory\n  when: absent\n",
    )
    .expect("write policy");

    let sarif = lifeguard(&["lint", "--format", "sarif", "."], None, dir.path());
    assert_eq!(sarif.code, 0, "{}", sarif.stderr);
    let log: Value = serde_json::from_str(&sarif.stdout).expect("SARIF is JSON");
    let rules = log["runs"][0]["tool"]["driver"]["rules"].as_array().expect("rules");
    let results = log["runs"][0]["results"].as_array().expect("results");
    assert_eq!(results.len(), 1, "{results:?}");
    let index = results[0]["ruleIndex"].as_u64().expect("ruleIndex") as usize;
    assert_eq!(results[0]["ruleId"], "memory-limit-missing");
    assert_eq!(rules[index]["id"], "memory-limit-missing");
    assert_eq!(rules[index]["defaultConfiguration"]["level"], "warning");
    assert_eq!(rules[index]["help"]["text"], "set resources.limits.memory");
    // A policy's own rule has no documentation page to link to.
    assert!(rules[index].get("helpUri").is_none(), "{}", rules[index]);

    let junit = lifeguard(&["lint", "--format", "junit", "."], None, dir.path());
    let cases = policies::rules::RULES.len(); // one built-in rule off, one custom rule on
    assert!(junit.stdout.contains(&format!("<testsuites name=\"lifeguard\" tests=\"{cases}\"")), "{}", junit.stdout);
    assert!(!junit.stdout.contains("name=\"exec-probe\""), "{}", junit.stdout);
    assert!(junit.stdout.contains("<testcase name=\"memory-limit-missing\" classname=\"Deployment/worker\">"));
}
