//! The reports rendered as the input is linted (text, JSON, SARIF, GitHub
//! commands, HTML: `lifeguard lint` keeps their text, not the findings) are byte
//! for byte what the renderers of the whole outcome give, with the counts,
//! exit codes and input errors they end with: on the shared corpus, on the
//! bench stream with broken documents, on rendered Helm output and on the
//! rule fixtures (suppressed findings, custom severities).

#[path = "../benches/stream.rs"]
mod stream;

use std::path::{Path, PathBuf};

use lifeguard::input::{Limits, discover};
use lifeguard::lint::{lint_found_with, lint_paths};
use lifeguard::outcome::Outcome;
use lifeguard::pipeline::Keep;
use lifeguard::report::stream::Render;
use lifeguard::report::{Format, github, html, json, sarif, text};
use lifeguard_e2e::corpus_dir;
use policies::{Policy, Severity};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn whole(out: &Outcome, format: Format, quiet: bool) -> String {
    match format {
        Format::Text if quiet => text::findings(out),
        Format::Text => text::render(out),
        Format::Json => json::render(out),
        Format::Sarif => sarif::render(out),
        Format::Html => html::render(out),
        _ => github::render(out),
    }
}

/// Lints `paths` both ways in every streamed format and compares.
fn assert_same(paths: &[String]) {
    let policy = Policy::default();
    let limits = Limits::default();
    let kept = lint_paths(paths, &policy, &limits);
    let formats = [
        (Format::Text, false),
        (Format::Text, true),
        (Format::Json, false),
        (Format::Sarif, false),
        (Format::Github, false),
        (Format::Html, false),
    ];
    for (format, quiet) in formats {
        let keep = &mut Keep { render: Render::new(format), ..Keep::default() };
        let streamed = lint_found_with(discover(paths), &policy, &limits, keep);
        assert!(streamed.findings.is_empty(), "the findings were rendered and dropped");
        let mut bytes = Vec::new();
        let render = keep.render.take().expect("a streamed format");
        render.write(&streamed, quiet, &mut bytes).expect("write to memory");
        let got = String::from_utf8(bytes).expect("UTF-8");
        let want = whole(&kept, format, quiet);
        if got != want {
            let diff = similar::TextDiff::from_lines(&want, &got);
            let shown: String = diff.unified_diff().context_radius(2).to_string().chars().take(4000).collect();
            panic!("{format:?} (quiet {quiet}) on {paths:?} differs from the whole-outcome renderer:\n{shown}");
        }
        for severity in [Severity::Error, Severity::Warning, Severity::Info] {
            assert_eq!(streamed.count(severity), kept.count(severity), "{severity:?} count");
            assert_eq!(streamed.exit_code(Some(severity)), kept.exit_code(Some(severity)), "exit code at {severity:?}");
        }
        assert_eq!(streamed.suppressed_count(), kept.suppressed.len());
        assert_eq!(streamed.errors, kept.errors);
    }
}

#[test]
fn streamed_reports_match_on_the_fixtures() {
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("../policies/src/rules");
    let formats = fixtures().join("formats");
    let cli = fixtures().join("cli");
    let paths = [rules, formats, cli].map(|p| p.display().to_string());
    assert_same(&paths);
    // Nothing found: the empty report of each format.
    assert_same(&[fixtures().join("formats/good.yaml").display().to_string()]);
}

#[test]
fn streamed_reports_match_on_the_bench_stream_with_broken_documents() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut stream_text: String = (0..300).map(stream::deployment).collect();
    // A Service after the workloads, then a syntax error: what the parallel
    // path hands back to the single-threaded one.
    stream_text
        .push_str("---\nkind: Service\nmetadata: {name: api-3, namespace: team-3}\nspec: {selector: {app: api-3}}\n");
    std::fs::write(dir.path().join("a.yaml"), &stream_text).expect("write");
    let broken =
        format!("{}---\nkind: Deployment\nmetadata: [oops\n", (300..400).map(stream::deployment).collect::<String>());
    std::fs::write(dir.path().join("b.yaml"), broken).expect("write");
    assert_same(&[dir.path().display().to_string()]);
}

#[test]
fn streamed_reports_match_on_the_corpus() {
    let Some(corpus) = corpus_dir() else { return };
    assert_same(&[corpus.display().to_string()]);
}
