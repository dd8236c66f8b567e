//! `--format html` in a real browser: Debian's Chromium, headless, opens
//! the reports of `lifeguard lint` on every example and of `lifeguard
//! simulate` on the GPU model server from `file://` (never the network),
//! and the test checks that each renders with no console error, that the
//! DOM holds as many findings (verdicts) as `--format json` reports, that
//! the filters' script ran, and that every SVG timeline is well-formed. Screenshots
//! of both are written to `target/html-report/` as the test's artifacts.
//!
//! Chromium is installed by `.ci/install-browser.sh`; without it the test
//! skips (a failure under `LIFEGUARD_NO_SKIP=1`).

mod browser;

use std::path::Path;
use std::process::Command;

use browser::{browse, chromium, rendered, svg_panels};
use lifeguard_e2e::cluster::webhook::workspace_binary;
use lifeguard_e2e::repo_root;
use serde_json::Value;

fn lifeguard(binary: &Path, args: &[&str]) -> std::process::Output {
    let out = Command::new(binary)
        .args(args)
        .current_dir(repo_root())
        .env_remove("LIFEGUARD_POLICY")
        .env("NO_COLOR", "1")
        .output()
        .expect("lifeguard runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    out
}

fn json_entries(binary: &Path, args: &[&str]) -> Vec<Value> {
    let out = lifeguard(binary, args);
    match serde_json::from_slice(&out.stdout) {
        Ok(Value::Array(items)) => items,
        other => panic!("not a JSON array: {other:?}"),
    }
}

#[test]
fn html_reports_render_in_a_browser_as_json_counts_them() {
    let Some(chromium) = chromium() else { return };
    let binary = workspace_binary("lifeguard", "lifeguard").expect("the lifeguard binary");
    let dir = repo_root().join("target/html-report");
    std::fs::create_dir_all(&dir).expect("target/html-report");
    let dir = dir.canonicalize().expect("an absolute path");

    // The check of the console sees an error: a page with one fails it.
    let deliberate = dir.join("deliberate-error.html");
    std::fs::write(&deliberate, "<!DOCTYPE html><p>x</p><script>undefinedFunction();</script>\n").expect("write");
    let seen = browse(&chromium, &deliberate, &["--dump-dom"]);
    assert!(
        seen.console().iter().any(|l| l.contains("undefinedFunction")),
        "the deliberate error is not seen on stderr:\n{}",
        seen.stderr
    );

    // `lint` on every example.
    let page = dir.join("lint-examples.html");
    let out =
        lifeguard(&binary, &["lint", "--format", "html", "--output-file", &page.to_string_lossy(), "lint/examples"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let findings = json_entries(&binary, &["lint", "--format", "json", "lint/examples"]);
    let findings = findings.iter().filter(|e| !e["rule"].is_null()).count();
    assert!(findings > 10, "the examples hold findings");
    let dom = rendered(&chromium, &page, &dir.join("lint-examples.png"));
    assert_eq!(dom.matches("<article class=\"item finding ").count(), findings, "findings in the DOM");
    assert!(dom.contains("<h2>Summary</h2>"), "{dom}");

    // `simulate` on the GPU model server: a row per verdict, a timeline panel per verdict.
    let gpu = "lint/examples/gpu-model-server.yaml";
    let page = dir.join("simulate-gpu-model-server.html");
    let out = lifeguard(&binary, &["simulate", "--format", "html", "--output-file", &page.to_string_lossy(), gpu]);
    assert!(out.status.code().is_some_and(|c| c < 2), "{}", String::from_utf8_lossy(&out.stderr));
    let verdicts = json_entries(&binary, &["simulate", "--format", "json", gpu]);
    let containers: std::collections::BTreeSet<String> =
        verdicts.iter().map(|v| format!("{}/{}", v["name"], v["container"])).collect();
    let dom = rendered(&chromium, &page, &dir.join("simulate-gpu-model-server.png"));
    assert_eq!(dom.matches("<tr class=\"verdict\"").count(), verdicts.len(), "verdicts in the DOM");
    let panels = svg_panels(&dom);
    assert_eq!(panels.len(), containers.len(), "one timeline per container");
    assert_eq!(panels.iter().sum::<usize>(), verdicts.len(), "a panel per verdict");
}
