//! `lifeguard lsp`: how long after the last change of a 1,000-line
//! multi-document file its diagnostics arrive, with the server on one core
//! (`taskset -c 0`), over its real stdio. Each round changes one value (as
//! a keystroke does) and waits for the diagnostics of that version; the
//! time includes the server's 15 ms quiet period before it lints.
//!
//! `cargo bench -p lifeguard --bench lsp_latency` (`-- --rounds N`).

// A benchmark's edge: what it measured is its report on the terminal.
#![allow(clippy::print_stdout)]

use std::path::PathBuf;
use std::time::Instant;

use lifeguard_e2e::lsp_client::{Client, file_uri};

/// About 1,000 lines: the examples' Deployments, renamed, one after another.
fn manifest() -> String {
    let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut parts = Vec::new();
    for name in ["web-api.yaml", "gpu-model-server.yaml", "postgres.yaml", "good-web.yaml"] {
        parts.push(std::fs::read_to_string(examples.join(name)).unwrap_or_default());
    }
    let mut out = String::new();
    let mut copy = 0;
    while out.lines().count() < 1000 {
        for part in &parts {
            out.push_str("---\n");
            out.push_str(&part.replace("name: ", &format!("name: c{copy}-")));
            copy += 1;
        }
    }
    out
}

fn main() {
    let rounds =
        std::env::args().skip_while(|a| a != "--rounds").nth(1).and_then(|n| n.parse::<usize>().ok()).unwrap_or(200);
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("stream.yaml");
    let text = manifest();
    std::fs::write(&file, &text).expect("write");
    let uri = file_uri(&file);
    // One core: a wrapper that pins the server, when taskset is there.
    let pinned = dir.path().join("lifeguard-on-one-core");
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_lifeguard"));
    let taskset = std::process::Command::new("taskset").arg("--version").output().is_ok();
    let script = if taskset {
        format!("#!/bin/sh\nexec taskset -c 0 {} \"$@\"\n", binary.display())
    } else {
        format!("#!/bin/sh\nexec {} \"$@\"\n", binary.display())
    };
    std::fs::write(&pinned, script).expect("write the wrapper");
    std::process::Command::new("chmod").arg("+x").arg(&pinned).status().expect("chmod");
    let mut client = Client::start(&pinned, dir.path(), dir.path());
    client.open(&uri, &text);
    let first = client.diagnostics(&uri);
    let mut times = Vec::with_capacity(rounds);
    for round in 0..rounds {
        // A keystroke: one digit of a value changes.
        let changed = text.replacen("periodSeconds: 10", &format!("periodSeconds: 1{}", round % 10), 1);
        let version = round as i64 + 2;
        let sent = Instant::now();
        client.change(&uri, version, &changed);
        let diagnostics = client.diagnostics_at(&uri, version);
        times.push(sent.elapsed().as_secs_f64() * 1000.0);
        assert!(!diagnostics.is_empty());
    }
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    println!(
        "{} lines, {} documents, {} diagnostics; server {}; {rounds} changes",
        text.lines().count(),
        text.matches("---\n").count(),
        first.len(),
        if taskset { "on one core (taskset -c 0)" } else { "unpinned (no taskset)" }
    );
    println!("last change to diagnostics: p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms", at(0.5), at(0.95), at(1.0));
    let _ = client.shutdown();
}
