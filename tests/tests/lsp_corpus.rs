//! `lifeguard lsp` on every file of the shared corpus, opened one by one in
//! place (so each has its directory's Services, as `lint` reads them): its
//! diagnostics are exactly the findings `lifeguard lint --format json`
//! reports on that file (rule and position), and its "apply every fix"
//! action writes exactly what `lifeguard fix` writes.

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use lifeguard_e2e::cluster::webhook::workspace_binary;
use lifeguard_e2e::lsp_client::{Client, Random, apply_edits, file_uri, logged, random_edits};
use lifeguard_e2e::{corpus_dir, files_under};
use serde_json::{Value, json};

/// A 1-based character column of `line` (1-based) as a UTF-16 offset.
fn utf16(text: &str, line: u64, column: u64) -> u64 {
    let Some(l) = text.lines().nth(line.saturating_sub(1) as usize) else { return 0 };
    l.chars().take(column.saturating_sub(1) as usize).map(|c| c.len_utf16() as u64).sum()
}

#[test]
fn every_corpus_file_gets_lints_findings_and_fixs_result() {
    let Some(corpus) = corpus_dir() else { return };
    let binary = workspace_binary("lifeguard", "lifeguard").expect("the lifeguard binary");
    let files = files_under(&corpus, lifeguard::input::is_manifest);
    assert!(files.len() >= 150, "{} files", files.len());

    // lint, every file at once (a file's findings do not depend on which others are named).
    let out = Command::new(&binary)
        .args(["lint", "--format", "json", "--fail-on", "never"])
        .args(&files)
        .env_remove("LIFEGUARD_POLICY")
        .output()
        .expect("lint");
    let entries: Vec<Value> = serde_json::from_slice(&out.stdout).expect("lint's JSON");
    let mut expected: BTreeMap<String, Vec<(String, u64, u64)>> = BTreeMap::new();
    for e in entries.iter().filter(|e| e["rule"].is_string()) {
        let file = e["file"].as_str().unwrap_or_default().to_owned();
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let (line, column) = (e["line"].as_u64().unwrap_or(0), e["column"].as_u64().unwrap_or(0));
        expected.entry(file).or_default().push((
            e["rule"].as_str().unwrap_or_default().to_owned(),
            line - 1,
            utf16(&text, line, column),
        ));
    }

    // lifeguard fix on a copy of the corpus: what each file becomes.
    let copy = tempfile::tempdir().expect("tempdir");
    let status = Command::new("cp").arg("-r").arg(&corpus).arg(copy.path().join("corpus")).status().expect("cp");
    assert!(status.success());
    Command::new(&binary)
        .arg("fix")
        .arg(copy.path().join("corpus"))
        .env_remove("LIFEGUARD_POLICY")
        .output()
        .expect("fix");

    let mut client = Client::start(&binary, &corpus, &corpus);
    let (mut findings, mut fixed_files, mut mismatches) = (0, 0, Vec::new());
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read");
        let uri = file_uri(file);
        client.open(&uri, &text);
        let diagnostics = client.diagnostics(&uri);
        let mut got: Vec<(String, u64, u64)> = diagnostics
            .iter()
            .filter(|d| d["code"].is_string())
            .map(|d| {
                let s = &d["range"]["start"];
                (
                    d["code"].as_str().unwrap_or_default().to_owned(),
                    s["line"].as_u64().unwrap_or(0),
                    s["character"].as_u64().unwrap_or(0),
                )
            })
            .collect();
        got.sort();
        let mut want = expected.remove(&file.display().to_string()).unwrap_or_default();
        want.sort();
        if got != want {
            mismatches.push(format!("{}: lsp {got:?}\n  lint {want:?}", file.display()));
        }
        findings += got.len();
        let fixed_by_cli = std::fs::read_to_string(
            copy.path().join("corpus").join(file.strip_prefix(&corpus).expect("under the corpus")),
        )
        .expect("the fixed copy");
        let actions = client.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                   "context": {"diagnostics": [], "only": ["source.fixAll"]}}),
        );
        let fixed = actions
            .as_array()
            .and_then(|a| a.first())
            .map_or_else(|| text.clone(), |action| apply_edits(&text, &action["edit"], &uri));
        if fixed != fixed_by_cli {
            mismatches.push(format!("{}: fix all differs from lifeguard fix", file.display()));
        }
        fixed_files += usize::from(fixed != text);
        client.notify("textDocument/didClose", json!({"textDocument": {"uri": uri}}));
        let _ = client.diagnostics(&uri);
    }
    eprintln!(
        "{} files, {findings} diagnostics as lint reports them, {fixed_files} files fixed as lifeguard fix fixes them",
        files.len()
    );
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    assert!(findings >= 200, "{findings} findings");
    assert!(fixed_files >= 10, "{fixed_files} files fixed");
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn random_edits_on_corpus_files_never_stop_the_server() {
    let Some(corpus) = corpus_dir() else { return };
    let binary = workspace_binary("lifeguard", "lifeguard").expect("the lifeguard binary");
    let files = files_under(&corpus, lifeguard::input::is_manifest);
    // Every 10th file: 20 of the corpus's kinds of manifest, its largest
    // multi-document streams among them.
    let chosen: Vec<&PathBuf> = files.iter().step_by(10).take(20).collect();
    assert!(chosen.len() >= 15, "{} files", chosen.len());
    // Edits in memory only: the corpus on disk is never written.
    let mut client = Client::start(&binary, &corpus, &corpus);
    let mut random = Random(0x2545_f491_4f6c_dd1d);
    let mut edits = 0;
    for file in &chosen {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        // 1 s a file at most, 300 edits a file at most: 20 s in all.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        let sent = random_edits(&mut client, &file_uri(file), text, &mut random, deadline, 300);
        assert!(sent > 0, "no edit sent to {}", file.display());
        edits += sent;
    }
    eprintln!("{edits} random edits over {} corpus files", chosen.len());
    assert!(logged(&client).is_empty(), "{:#?}", logged(&client));
    assert_eq!(client.shutdown(), Some(0), "after {edits} random edits");
}
