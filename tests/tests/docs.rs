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
//!
//! Over 400 lines: seven tests of one claim, that the docs are true: the links,
//! the runnable output blocks, the documented flags against each `--help`, the
//! pinned refs and two worked examples, sharing the page and block readers at
//! the top.

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use lifeguard_e2e::cluster::webhook::workspace_binary;
use lifeguard_e2e::docs::{page, pages};
use lifeguard_e2e::repo_root;
use lifeguard_e2e::support::webhook::{Server, Start};

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

/// The local webhook the docs' `curl` lines talk to: plain HTTP, as the
/// docs start it.
fn local_webhook() -> Server {
    Server::start(Start { insecure: true, quick: false, ..Start::default() })
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
    let mut webhook: Option<Server> = None;
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
                    command = command.replace(DOCUMENTED_WEBHOOK, &local.admission.to_string());
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

/// The binaries whose documented flags are checked against their `--help`.
const BINARIES: [&str; 2] = ["lifeguard", "lifeguard-webhook"];

/// Every command line of a page that runs one of [`BINARIES`]: in a code
/// block (a `$ ` prompt or not, `\` continuations joined, after a pipe or
/// `run:`) or a code span of the prose; with its 1-based line and the words
/// from the binary's name on. (A flag spanned alone in the prose, `--diff`,
/// is not checked: which command it belongs to is the sentence's to say.)
fn documented_commands(text: &str) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    let mut fenced = false;
    let mut pending: Option<(usize, String)> = None;
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            let (start, mut joined) = pending.take().unwrap_or((n + 1, String::new()));
            joined.push_str(line.trim_end_matches('\\'));
            joined.push(' ');
            if line.ends_with('\\') {
                pending = Some((start, joined));
            } else {
                out.extend(commands_of(&joined).into_iter().map(|c| (start, c)));
            }
        } else {
            // `code spans` of the prose.
            for (i, span) in line.split('`').enumerate() {
                if i % 2 == 1 {
                    out.extend(commands_of(span).into_iter().map(|c| (n + 1, c)));
                }
            }
        }
    }
    out
}

/// The commands of one shell line that run one of [`BINARIES`] (a comment cut off).
fn commands_of(line: &str) -> Vec<Vec<String>> {
    let line = line.split(" #").next().unwrap_or_default();
    let mut out = Vec::new();
    for segment in line.split(['|', ';', '&', '(', ')', '`']) {
        let words: Vec<&str> = segment.split_whitespace().collect();
        // Before the binary: a prompt, a YAML `run:` or list dash, env assignments.
        let start = words.iter().position(|w| {
            !(matches!(*w, "$" | "-" | "run:" | "exec" | "time") || w.contains('=') && !w.starts_with('-'))
        });
        let Some(start) = start else { continue };
        let binary = words[start].rsplit('/').next().unwrap_or_default();
        if BINARIES.contains(&binary) {
            let mut command = vec![binary.to_owned()];
            command.extend(words[start + 1..].iter().map(|w| (*w).to_owned()));
            out.push(command);
        } else if words[start] == "cargo" && words.get(start + 1) == Some(&"run") {
            // `cargo run -q -p lifeguard -- lint ...`
            let package = words.iter().position(|w| *w == "-p").and_then(|i| words.get(i + 1));
            let rest = words.iter().position(|w| *w == "--");
            if let (Some(package), Some(rest)) = (package, rest)
                && BINARIES.contains(package)
            {
                let mut command = vec![(*package).to_owned()];
                command.extend(words[rest + 1..].iter().map(|w| (*w).to_owned()));
                out.push(command);
            }
        }
    }
    out
}

/// The subcommands a `--help` lists under `Commands:`.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect()
}

/// Whether `help` names `flag` as a whole word (`--fail-on` is not `--fail`).
fn names_flag(help: &str, flag: &str) -> bool {
    help.match_indices(flag).any(|(at, _)| {
        let before = help[..at].chars().next_back();
        let after = help[at + flag.len()..].chars().next();
        before.is_none_or(|c| c.is_whitespace() || matches!(c, ',' | '[' | '(' | '`'))
            && after.is_none_or(|c| !(c.is_alphanumeric() || c == '-' || c == '_'))
    })
}

/// The flags of `text`'s documented commands that the command's `--help`
/// does not name: `PAGE:LINE: ...` each. `help(binary, subcommands)` is
/// `BINARY SUBCOMMAND... --help`'s output.
fn unknown_flags(page_name: &str, text: &str, help: &mut dyn FnMut(&str, &[String]) -> String) -> Vec<String> {
    let mut problems = Vec::new();
    for (line, command) in documented_commands(text) {
        let (binary, args) = (&command[0], &command[1..]);
        let mut path: Vec<String> = Vec::new();
        let mut text = help(binary, &path);
        let mut rest = args;
        while let Some(word) = rest.first() {
            if !subcommands(&text).contains(word) || word == "help" {
                break;
            }
            path.push(word.clone());
            text = help(binary, &path);
            rest = &rest[1..];
        }
        for word in rest.iter().take_while(|w| *w != "--") {
            let word = word.trim_matches(|c| matches!(c, '"' | '\'' | ',' | '.' | ':'));
            let flag = word.split('=').next().unwrap_or_default();
            let long =
                flag.len() > 2 && flag.starts_with("--") && flag[2..].starts_with(|c: char| c.is_ascii_alphabetic());
            let short =
                flag.len() == 2 && flag.starts_with('-') && flag[1..].starts_with(|c: char| c.is_ascii_alphabetic());
            if (long || short) && !names_flag(&text, flag) {
                let shown = std::iter::once(binary.as_str()).chain(path.iter().map(String::as_str)).collect::<Vec<_>>();
                problems.push(format!(
                    "{page_name}:{line}: `{}` has no {flag} (`{} --help` does not name it)",
                    command.join(" "),
                    shown.join(" ")
                ));
            }
        }
    }
    problems
}

/// `BINARY SUBCOMMAND... --help` of the workspace's binaries, each run once.
fn real_help() -> impl FnMut(&str, &[String]) -> String {
    let mut cache: std::collections::HashMap<(String, Vec<String>), String> = std::collections::HashMap::new();
    move |binary: &str, path: &[String]| {
        cache
            .entry((binary.to_owned(), path.to_vec()))
            .or_insert_with(|| {
                let exe = workspace_binary(binary, binary).unwrap_or_else(|| panic!("the {binary} binary"));
                let out = Command::new(exe).args(path).arg("--help").output().expect("run --help");
                assert!(
                    out.status.success(),
                    "{binary} {} --help: {}",
                    path.join(" "),
                    String::from_utf8_lossy(&out.stderr)
                );
                String::from_utf8_lossy(&out.stdout).into_owned()
            })
            .clone()
    }
}

#[test]
fn every_documented_flag_is_one_the_commands_help_names() {
    let mut help = real_help();
    let mut problems = Vec::new();
    let mut checked = 0;
    for page_name in pages() {
        let name = page_name.to_string_lossy().into_owned();
        let text = page(&name);
        checked += documented_commands(&text).len();
        problems.extend(unknown_flags(&name, &text, &mut help));
    }
    eprintln!("{checked} documented commands checked");
    assert!(checked >= 50, "only {checked} documented commands found");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_documented_flag_that_does_not_exist_fails_the_check() {
    let mut help = real_help();
    let page_text = "`lifeguard fix --dry-run` lists the fixes.\n\n```sh\n$ lifeguard fix --diff k8s/   # fine\n\
                     helm template . | lifeguard lint --fail-on warning --formatt json -\n\
                     lifeguard export vap --mode warn \\\n    --no-such-flag | kubectl apply -f -\n\
                     cargo run -q -p lifeguard -- simulate --scenario stall:2s -Z app.yaml\n\
                     lifeguard-webhook --insecure-http --listen 127.0.0.1:8443 --tls-everything\n```\n";
    let problems = unknown_flags("fake.md", page_text, &mut help);
    let flags: Vec<&str> = problems.iter().filter_map(|p| p.split(" has no ").nth(1)?.split(' ').next()).collect();
    assert_eq!(flags, ["--dry-run", "--formatt", "--no-such-flag", "-Z", "--tls-everything"], "{problems:#?}");
    assert!(problems[0].starts_with("fake.md:1: `lifeguard fix --dry-run`"), "{problems:#?}");
    assert!(problems[2].starts_with("fake.md:6: "), "{problems:#?}");
    assert!(problems[2].contains("(`lifeguard export vap --help` does not name it)"), "{problems:#?}");
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

/// A ref the docs give for this repository: a `uses:
/// lifeguard-dev/lifeguard@REF` (which needs `action.yml` there) or the
/// `rev:` of a pre-commit `repo: https://github.com/lifeguard-dev/lifeguard`
/// entry (which needs `.pre-commit-hooks.yaml`).
struct Pin {
    here: String,
    reference: String,
    needs: &'static str,
    /// The line says, in a `# comment`, what the ref is or what to write there.
    commented: bool,
}

fn pins() -> Vec<Pin> {
    let mut out = Vec::new();
    for page_name in pages() {
        let text = page(&page_name.to_string_lossy());
        let lines: Vec<&str> = text.lines().collect();
        let here = |n: usize| format!("{}:{}", page_name.display(), n + 1);
        let pin = |n: usize, value: &str, needs| {
            let reference = value.split_whitespace().next().unwrap_or_default().trim_matches(['"', '\'']).to_owned();
            Pin { here: here(n), reference, needs, commented: value.contains(" #") }
        };
        for (n, line) in lines.iter().enumerate() {
            if let Some((_, value)) = line.split_once("uses: lifeguard-dev/lifeguard@") {
                out.push(pin(n, value, "action.yml"));
            }
            let entry = line.trim_start().trim_start_matches("- ").trim();
            if entry != "repo: https://github.com/lifeguard-dev/lifeguard" {
                continue;
            }
            // Its `rev:`, before the next repository or the end of the block.
            let rev = lines[n + 1..]
                .iter()
                .take_while(|l| !l.contains("repo:") && !l.starts_with("```"))
                .position(|l| l.trim_start().starts_with("rev:"))
                .map(|i| n + 1 + i);
            match rev {
                Some(r) => {
                    out.push(pin(r, lines[r].split_once("rev:").map_or("", |(_, v)| v), ".pre-commit-hooks.yaml"))
                }
                None => out.push(Pin {
                    here: here(n),
                    reference: String::new(),
                    needs: ".pre-commit-hooks.yaml",
                    commented: false,
                }),
            }
        }
    }
    out
}

/// `git ARGS` in the repository: whether it succeeded, and its stdout.
fn git(args: &[&str]) -> Option<(bool, String)> {
    let out = Command::new("git").args(args).current_dir(repo_root()).stderr(Stdio::null()).output().ok()?;
    Some((out.status.success(), String::from_utf8_lossy(&out.stdout).trim().to_owned()))
}

/// Every ref the docs (the README, the changelog, docs/*.md) give for this
/// repository, in a workflow's `uses: lifeguard-dev/lifeguard@REF` or a
/// pre-commit `rev:` under `repo: https://github.com/lifeguard-dev/lifeguard`,
/// is one a user can copy:
///
/// - a full 40-hex commit SHA must be a commit of this repository's history
///   (an ancestor of HEAD) that has the file the user needs there:
///   `action.yml` for `uses:`, `.pre-commit-hooks.yaml` for `rev:`;
/// - a release tag `vX.Y.Z` (digits) must be a tag of this repository whose
///   commit has that file;
/// - a placeholder, an upper-case word with hyphens (`FULL-COMMIT-SHA`) or
///   the literal `vX.Y.Z`, is allowed only on a line whose `# comment` says
///   what to write there;
/// - anything else (a branch, a short SHA) is wrong: it moves, or it does
///   not say which commit.
///
/// It needs git and the history: without them (a source tarball, a shallow
/// clone that lacks a pinned commit) it skips, which `LIFEGUARD_NO_SKIP=1`
/// (CI, on a full clone) turns into a failure.
#[test]
fn every_pinned_ref_of_this_repository_in_the_docs_has_what_it_is_pinned_for() {
    let pins = pins();
    assert!(pins.iter().any(|p| p.needs == "action.yml"), "the docs' workflow uses the action");
    assert!(
        pins.iter().any(|p| p.needs == ".pre-commit-hooks.yaml"),
        "the docs' pre-commit config names the repository"
    );
    let top = git(&["rev-parse", "--show-toplevel"]).filter(|(ok, _)| *ok).map(|(_, dir)| PathBuf::from(dir));
    let canonical = |p: &Path| p.canonicalize().ok();
    if top.as_deref().and_then(canonical).is_none() || top.as_deref().and_then(canonical) != canonical(&repo_root()) {
        return lifeguard_e2e::skip("the repository is not a git checkout (git or its history is missing)");
    }
    let shallow = git(&["rev-parse", "--is-shallow-repository"]).is_some_and(|(_, out)| out == "true");
    let has = |args: &[&str]| git(args).is_some_and(|(ok, _)| ok);
    let is_placeholder = |r: &str| {
        r == "vX.Y.Z"
            || (r.contains('-')
                && r.split('-')
                    .all(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())))
    };
    let is_tag = |r: &str| {
        r.strip_prefix('v').is_some_and(|v| {
            v.split('.').count() == 3 && v.split('.').all(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        })
    };
    let mut problems = Vec::new();
    for pin in &pins {
        let (here, r, needs) = (&pin.here, pin.reference.as_str(), pin.needs);
        if r.len() == 40 && r.chars().all(|c| c.is_ascii_hexdigit()) {
            if !has(&["cat-file", "-e", &format!("{r}^{{commit}}")]) {
                if shallow {
                    return lifeguard_e2e::skip(&format!("{here}: {r} is not in this shallow clone"));
                }
                problems.push(format!("{here}: {r} is not a commit of this repository"));
            } else if !has(&["merge-base", "--is-ancestor", r, "HEAD"]) {
                problems.push(format!("{here}: {r} is not in HEAD's history"));
            } else if !has(&["cat-file", "-e", &format!("{r}:{needs}")]) {
                problems.push(format!("{here}: {r} has no {needs}"));
            }
        } else if is_placeholder(r) {
            if !pin.commented {
                problems.push(format!("{here}: the placeholder {r} needs a `# comment` saying what to write there"));
            }
        } else if is_tag(r) {
            if !has(&["cat-file", "-e", &format!("refs/tags/{r}:{needs}")]) {
                problems.push(format!("{here}: {r} is not a tag of this repository with {needs}"));
            }
        } else {
            problems
                .push(format!("{here}: `{r}` is neither a full commit SHA, a release tag nor a commented placeholder"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_vap_pages_example_is_the_probe_port_unknown_fixtures_deployment() {
    // docs/vap.md creates lint/examples/renamed-port.yaml in a namespace of
    // its choosing; the cluster test that checks its output creates that file.
    let parse = |path: &str| {
        let (documents, error) = lifeguard::input::parse_stream(&page(path), &lifeguard::input::Limits::default());
        assert!(error.is_none(), "{path}: {error:?}");
        documents.into_iter().map(|d| d.value).find(|v| v["kind"] == "Deployment").expect("a Deployment")
    };
    let example = parse("lint/examples/renamed-port.yaml");
    let mut fixture = parse("policies/src/rules/probe_port_unknown/fixtures/bad.yaml");
    fixture["metadata"].as_object_mut().expect("metadata").remove("namespace");
    assert_eq!(example, fixture, "lint/examples/renamed-port.yaml is the fixture's Deployment without a namespace");
    assert!(page("docs/vap.md").contains("kubectl -n demo create -f lint/examples/renamed-port.yaml"));
}
