//! What the tests that open `--format html` reports in a real browser share
//! (`html_report.rs`, `cluster_audit.rs`): Debian's Chromium, headless,
//! opening a page from `file://` with everything that would reach the
//! network off, its console read from its log, and the SVG timelines of a
//! page's DOM parsed as XML.
//!
//! Chromium is installed by `.ci/install-browser.sh`; without it a test
//! skips (a failure under `LIFEGUARD_NO_SKIP=1`).

// Each test binary uses a different part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lifeguard_e2e::skip;

/// How long one page may take to load and dump or shoot.
const LIMIT: Duration = Duration::from_secs(90);

/// Chromium on `PATH`, or `None` after saying why the test skips.
pub fn chromium() -> Option<PathBuf> {
    let found = std::env::var_os("PATH")
        .and_then(|path| std::env::split_paths(&path).map(|dir| dir.join("chromium")).find(|p| p.is_file()));
    if found.is_none() {
        skip("chromium is not installed (run .ci/install-browser.sh, as .ci/run does)");
    }
    found
}

/// What the browser printed.
pub struct Browsed {
    /// Its stdout (the DOM, with `--dump-dom`).
    pub stdout: String,
    /// Its stderr (its log, with the page's console).
    pub stderr: String,
}

impl Browsed {
    /// The page's console messages (an uncaught error is one): Chromium
    /// logs them to stderr as `INFO:CONSOLE...] "message", source: ...`.
    pub fn console(&self) -> Vec<&str> {
        self.stderr.lines().filter(|l| l.contains(":CONSOLE")).collect()
    }
}

/// Opens `page` in headless Chromium with `what` (`--dump-dom`, or
/// `--screenshot=...`): a profile of its own, removed after; everything
/// that would reach the network off; killed, with the processes it
/// started, after [`LIMIT`].
pub fn browse(chromium: &Path, page: &Path, what: &[&str]) -> Browsed {
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

/// Renders `page`, checks that no console message came and the filters'
/// script ran, writes `shot`, and gives the DOM.
pub fn rendered(chromium: &Path, page: &Path, shot: &Path) -> String {
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
pub fn svg_panels(dom: &str) -> Vec<usize> {
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
