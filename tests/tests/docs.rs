//! The documentation is true: every link between the README, the
//! changelog and `docs/` resolves (to a file, and to a heading when it
//! names one), and every block of output is what the current binaries
//! print. A block of output (```text or ```diff) either starts with
//! `$ COMMAND` lines, which this test runs from the repository root and
//! compares with what follows each (stdout and stderr, as a terminal shows
//! them), or sits between `<!-- NAME` and `<!-- /NAME -->` markers that a
//! named test reads (the cluster's sessions, which need the real API
//! server). `LIFEGUARD_BLESS=1` rewrites the runnable blocks with what the
//! binaries print.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use lifeguard_e2e::cluster::process::{Supervised, free_port, wait_for};
use lifeguard_e2e::cluster::webhook::workspace_binary;
use lifeguard_e2e::docs::{page, pages};
use lifeguard_e2e::repo_root;

/// The address the docs give the local webhook; the test's own replaces it.
const DOCUMENTED_WEBHOOK: &str = "127.0.0.1:8443";

/// A fenced block of a page.
struct Block {
    page: PathBuf,
    /// 1-based line of the opening fence.
    line: usize,
    /// The info string (`text`, `diff`, `sh`, ...).
    lang: String,
    /// The lines between the fences.
    body: Vec<String>,
    /// The marker just before the fence (`audit-output`), if any.
    marker: Option<String>,
}

fn blocks(page_name: &Path) -> Vec<Block> {
    let text = page(&page_name.to_string_lossy());
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(lang) = lines[i].strip_prefix("```") else {
            i += 1;
            continue;
        };
        let start = i;
        let end = (i + 1..lines.len()).find(|&j| lines[j].starts_with("```")).unwrap_or(lines.len());
        let marker = start
            .checked_sub(1)
            .and_then(|p| lines[p].strip_prefix("<!-- "))
            .filter(|m| !m.starts_with('/'))
            .map(|m| m.split([':', ' ']).next().unwrap_or_default().to_owned());
        out.push(Block {
            page: page_name.to_path_buf(),
            line: start + 1,
            lang: lang.trim().to_owned(),
            body: lines[start + 1..end].iter().map(|l| (*l).to_owned()).collect(),
            marker,
        });
        i = end + 1;
    }
    out
}

/// GitHub's anchor of a heading.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | ' ' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a page's headings (outside code blocks).
fn anchors(page_name: &Path) -> BTreeSet<String> {
    let text = page(&page_name.to_string_lossy());
    let mut fenced = false;
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        }
        if !fenced && line.starts_with('#') {
            out.insert(slug(line.trim_start_matches('#')));
        }
        // Explicit anchors (`<a id="probe-endpoint-reused"></a>` in the rules table).
        let mut rest = line;
        while let Some(at) = rest.find("<a id=\"") {
            let after = &rest[at + 7..];
            let Some(end) = after.find('"') else { break };
            out.insert(after[..end].to_owned());
            rest = &after[end..];
        }
    }
    out
}

/// The `[text](target)` links of a page outside code, with their lines.
fn links(page_name: &Path) -> Vec<(usize, String)> {
    let text = page(&page_name.to_string_lossy());
    let mut fenced = false;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(close) = after.find(')') else { break };
            out.push((n + 1, after[..close].to_owned()));
            rest = &after[close..];
        }
    }
    out
}

#[test]
fn every_link_between_the_pages_resolves() {
    let pages = pages();
    assert!(pages.len() >= 10, "the README, the changelog and docs/: {pages:?}");
    let mut broken = Vec::new();
    for page_name in &pages {
        let dir = page_name.parent().unwrap_or(Path::new(""));
        for (line, target) in links(page_name) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let file = if path.is_empty() { page_name.clone() } else { normalize(&dir.join(path)) };
            let here = format!("{}:{line}: {target}", page_name.display());
            if !repo_root().join(&file).exists() {
                broken.push(format!("{here}: no {}", file.display()));
                continue;
            }
            if !anchor.is_empty() && file.extension().is_some_and(|e| e == "md") && !anchors(&file).contains(anchor) {
                broken.push(format!("{here}: {} has no heading #{anchor}", file.display()));
            }
        }
    }
    assert!(broken.is_empty(), "{broken:#?}");
}

/// `docs/../lint/x` as `lint/x`.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The test sources that read marked blocks.
fn test_sources() -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push((path.clone(), std::fs::read_to_string(&path).unwrap_or_default()));
            }
        }
    }
    let mut out = Vec::new();
    for dir in ["tests/tests", "tests/src", "lint/tests", "webhook/tests"] {
        walk(&repo_root().join(dir), &mut out);
    }
    out
}

/// A command of a runnable block and what the docs say it prints.
struct Step {
    command: String,
    shown: Vec<String>,
}

fn steps(block: &Block) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::new();
    for line in &block.body {
        match line.strip_prefix("$ ") {
            Some(command) => out.push(Step { command: command.to_owned(), shown: Vec::new() }),
            None => {
                if let Some(step) = out.last_mut() {
                    step.shown.push(line.clone());
                }
            }
        }
    }
    out
}

/// What a runnable step needs beyond the workspace's binaries, if absent.
fn missing_tool(command: &str, path: &str) -> Option<&'static str> {
    ["helm", "curl", "jq"].into_iter().find(|tool| {
        command.split(['|', ' ']).any(|word| word == *tool)
            && !path.split(':').any(|dir| Path::new(dir).join(tool).is_file())
    })
}

/// The local webhook the docs' `curl` lines talk to.
struct LocalWebhook {
    address: String,
    _child: Supervised,
    _dir: tempfile::TempDir,
}

fn local_webhook() -> LocalWebhook {
    let binary = workspace_binary("lifeguard-webhook", "lifeguard-webhook").expect("the webhook binary");
    let dir = tempfile::tempdir().expect("tempdir");
    let (port, health) = (free_port(), free_port());
    let address = format!("127.0.0.1:{port}");
    let mut command = Command::new(binary);
    command
        .args(["--insecure-http", "--listen", &address, "--health-listen", &format!("127.0.0.1:{health}")])
        .env_remove("LIFEGUARD_POLICY")
        .current_dir(repo_root());
    let child = Supervised::spawn("lifeguard-webhook", command, &dir.path().join("webhook.log"));
    wait_for("the local webhook ready", Duration::from_secs(20), || {
        std::net::TcpStream::connect(&address).map(|_| ()).map_err(|e| e.to_string())
    });
    LocalWebhook { address, _child: child, _dir: dir }
}

/// Runs a documented command as a shell on a terminal would, from the
/// repository root, with the workspace's binaries first on `PATH`.
fn run(command: &str, path: &str) -> Vec<String> {
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("{{ {command} ; }} 2>&1"))
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .env_remove("LIFEGUARD_POLICY")
        .current_dir(repo_root())
        .stdin(Stdio::null())
        .output()
        .expect("run sh");
    String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect()
}

#[test]
fn every_block_of_output_is_what_the_binaries_print() {
    let lifeguard = workspace_binary("lifeguard", "lifeguard").expect("the lifeguard binary");
    let bin_dir = lifeguard.parent().expect("the binaries' directory").to_path_buf();
    let tools = repo_root().join("target/tools");
    let path = format!("{}:{}:{}", bin_dir.display(), tools.display(), std::env::var("PATH").unwrap_or_default());
    let sources = test_sources();
    let bless = std::env::var_os("LIFEGUARD_BLESS").is_some();
    let mut webhook: Option<LocalWebhook> = None;
    let (mut problems, mut ran, mut marked) = (Vec::new(), 0, 0);
    for page_name in pages() {
        let mut rewritten = page(&page_name.to_string_lossy());
        for block in blocks(&page_name).into_iter().filter(|b| b.lang == "text" || b.lang == "diff") {
            let here = format!("{}:{}", block.page.display(), block.line);
            if let Some(marker) = &block.marker {
                let page_text = block.page.to_string_lossy();
                let reader = sources.iter().find(|(_, s)| {
                    s.contains(&*page_text)
                        && (s.contains(&format!("\"{marker}\"")) || s.contains(&format!("<!-- {marker}")))
                });
                match reader {
                    Some(_) => marked += 1,
                    None => problems.push(format!("{here}: no test reads the {marker} block of {page_text}")),
                }
                continue;
            }
            let steps = steps(&block);
            if steps.is_empty() {
                problems.push(format!("{here}: a block of output that no test checks (start it with `$ COMMAND`, or mark it for the test that reads it)"));
                continue;
            }
            // A session with the API server cannot be replayed here: the
            // cluster test that holds the server compares it (a marker).
            if let Some(step) = steps.iter().find(|s| s.command.split_whitespace().next() == Some("kubectl")) {
                problems.push(format!(
                    "{here}: `$ {}` needs the real API server: mark the block for the cluster test that reads it",
                    step.command
                ));
                continue;
            }
            let mut printed = Vec::new();
            let mut skipped = false;
            for step in &steps {
                if let Some(tool) = missing_tool(&step.command, &path) {
                    lifeguard_e2e::skip(&format!("{here}: `{tool}` is not on PATH"));
                    skipped = true;
                    break;
                }
                let mut command = step.command.clone();
                if command.contains(DOCUMENTED_WEBHOOK) {
                    let local = webhook.get_or_insert_with(local_webhook);
                    command = command.replace(DOCUMENTED_WEBHOOK, &local.address);
                }
                printed.push(format!("$ {}", step.command));
                printed.extend(run(&command, &path));
            }
            if skipped {
                continue;
            }
            ran += 1;
            if printed != block.body {
                if bless {
                    rewritten = rewritten.replacen(&block.body.join("\n"), &printed.join("\n"), 1);
                } else {
                    let diff = similar::TextDiff::from_lines(&block.body.join("\n"), &printed.join("\n"))
                        .unified_diff()
                        .header("documented", "printed")
                        .to_string();
                    problems.push(format!("{here}: the output differs (LIFEGUARD_BLESS=1 rewrites it):\n{diff}"));
                }
            }
        }
        if bless {
            std::fs::write(repo_root().join(&page_name), rewritten).expect("write the page");
        }
    }
    eprintln!("{ran} blocks run, {marked} checked by the tests that read them");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(marked >= 5, "{marked} marked blocks");
}

#[test]
fn the_webhooks_example_review_is_the_readmes_example_deployment() {
    let review: serde_json::Value =
        serde_json::from_str(&page("webhook/examples/review-web-api.json")).expect("the example review is JSON");
    let text = page("lint/examples/web-api.yaml");
    let (documents, error) = lifeguard::input::parse_stream(&text, &lifeguard::input::Limits::default());
    assert!(error.is_none(), "{error:?}");
    let deployment = documents.iter().map(|d| &d.value).find(|v| v["kind"] == "Deployment").expect("a Deployment");
    assert_eq!(&review["request"]["object"], deployment, "regenerate the review from lint/examples/web-api.yaml");
    assert_eq!(review["request"]["operation"], "CREATE");
    assert_eq!(review["request"]["namespace"], deployment["metadata"]["namespace"]);
}
