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

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lifeguard_e2e::cluster::webhook::workspace_binary;
use lifeguard_e2e::{repo_root, skip};
use serde_json::Value;

/// How long one page may take to load and dump or shoot.
const LIMIT: Duration = Duration::from_secs(90);

fn chromium() -> Option<PathBuf> {
    let found = std::env::var_os("PATH")
        .and_then(|path| std::env::split_paths(&path).map(|dir| dir.join("chromium")).find(|p| p.is_file()));
    if found.is_none() {
        skip("chromium is not installed (run .ci/install-browser.sh, as .ci/run does)");
    }
    found
}

/// What the browser printed, and its stdout (the DOM, with `--dump-dom`).
struct Browsed {
    stdout: String,
    stderr: String,
}

impl Browsed {
    /// The page's console messages (an uncaught error is one): Chromium
    /// logs them to stderr as `INFO:CONSOLE...] "message", source: ...`.
    fn console(&self) -> Vec<&str> {
        self.stderr.lines().filter(|l| l.contains(":CONSOLE")).collect()
    }
}

/// Opens `page` in headless Chromium with `what` (`--dump-dom`, or
/// `--screenshot=...`): a profile of its own, removed after; everything
/// that would reach the network off; killed, with the processes it
/// started, after [`LIMIT`].
fn browse(chromium: &Path, page: &Path, what: &[&str]) -> Browsed {
    let profile = tempfile::tempdir().expect("a profile directory");
    let outputs = tempfile::tempdir().expect("a directory for the browser's output");
    let (stdout_path, stderr_path) = (outputs.path().join("stdout"), outputs.path().join("stderr"));
    let mut command = Command::new(chromium);
    // `--no-sandbox`: Chromium will not start as root without it, and CI runs as root.
    command
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check"])
        .args(["--disable-background-networking", "--disable-sync", "--disable-component-update"])
        .args(["--disable-default-apps", "--disable-extensions", "--disable-breakpad", "--metrics-recording-only"])
        .args(["--disable-domain-reliability", "--disable-client-side-phishing-detection"])
        // Should anything still try a host name, it resolves to nothing.
        .arg("--host-resolver-rules=MAP * ~NOTFOUND")
        .args(["--enable-logging=stderr", "--v=0", "--window-size=1200,2000"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(what)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout_path).expect("stdout file"))
        .stderr(std::fs::File::create(&stderr_path).expect("stderr file"));
    // Its own process group, so a timeout ends the renderers it started too.
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.spawn().expect("chromium starts");
    let start = Instant::now();
    let status = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break status;
        }
        if start.elapsed() > LIMIT {
            let group = format!("-{}", child.id());
            let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
            let _ = child.wait();
            panic!("chromium did not finish {what:?} on {} within {LIMIT:?}", page.display());
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let browsed = Browsed {
        stdout: std::fs::read_to_string(&stdout_path).unwrap_or_default(),
        stderr: std::fs::read_to_string(&stderr_path).unwrap_or_default(),
    };
    assert!(status.success(), "chromium {what:?} on {}: {status}\n{}", page.display(), browsed.stderr);
    browsed
}

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

/// Renders `page`, checks that no console message came and the filters'
/// script ran, writes `shot`, and gives the DOM.
fn rendered(chromium: &Path, page: &Path, shot: &Path) -> String {
    let dom = browse(chromium, page, &["--dump-dom"]);
    assert_eq!(dom.console(), Vec::<&str>::new(), "console messages on {}", page.display());
    assert!(dom.stdout.contains("<input type=\"checkbox\""), "the filters' script ran:\n{}", dom.stdout);
    let _ = std::fs::remove_file(shot);
    let shooting = browse(chromium, page, &[&format!("--screenshot={}", shot.display())]);
    assert_eq!(shooting.console(), Vec::<&str>::new());
    let png = std::fs::read(shot).expect("the screenshot");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000, "{} is a picture", shot.display());
    dom.stdout
}

/// Every `<svg>...</svg>` of a DOM, each parsed as XML: well-formed, with
/// its `<title>`; the number of timeline panels of each.
fn svg_panels(dom: &str) -> Vec<usize> {
    let mut panels = Vec::new();
    let mut rest = dom;
    while let Some(start) = rest.find("<svg") {
        let end = rest[start..].find("</svg>").map(|e| start + e + "</svg>".len()).expect("a closed <svg>");
        let svg = &rest[start..end];
        let mut reader = quick_xml::Reader::from_str(svg);
        let (mut depth, mut count, mut titled) = (0usize, 0usize, false);
        loop {
            match reader.read_event() {
                Ok(quick_xml::events::Event::Start(e)) => {
                    depth += 1;
                    titled |= e.name().as_ref() == b"title";
                    let panel =
                        e.try_get_attribute("class").ok().flatten().is_some_and(|a| a.value.as_ref() == b"panel");
                    count += usize::from(panel);
                }
                Ok(quick_xml::events::Event::End(_)) => depth -= 1,
                Ok(quick_xml::events::Event::Eof) => break,
                Ok(_) => {}
                Err(e) => panic!("an SVG is not well-formed XML: {e}\n{svg}"),
            }
        }
        assert_eq!(depth, 0, "every element closed:\n{svg}");
        assert!(titled, "the timeline has its <title>:\n{svg}");
        panels.push(count);
        rest = &rest[end..];
    }
    panels
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
