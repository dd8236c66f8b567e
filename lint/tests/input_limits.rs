//! Every limit of the README's "Limits" table, proven on the real binary at
//! its documented value (just over fails with the documented message, naming
//! the file and line, fast; the other file is still linted), with the exact
//! boundaries checked through the library where files of that size would
//! make the test slow.

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use lifeguard::input::{Input, Limits, ReadError, parse_stream, read_text};
use support::Run;

/// A Deployment with one known finding, linted after every oversized file.
const GOOD: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
        - name: web
          livenessProbe:
            httpGet: {path: /actuator/health, port: 8080}
          readinessProbe:
            httpGet: {path: /actuator/health, port: 8080}
";
const GOOD_FINDING: &str = "good.yaml:10:11 error[probe-endpoint-reused] Deployment/web";

/// The messages the README documents, built from the defaults.
fn documented() -> [String; 4] {
    let d = Limits::default();
    [
        format!("larger than the {}-byte limit", d.max_file_bytes),
        format!("document larger than {} characters", d.max_document_chars),
        format!("nesting deeper than {} levels", d.max_depth),
        format!("aliases expand to more than {} nodes in one document (an alias bomb?)", d.max_alias_nodes),
    ]
}

#[test]
fn readme_documents_the_default_limits() {
    let d = Limits::default();
    assert_eq!(
        (d.max_file_bytes, d.max_document_chars, d.max_depth, d.max_alias_nodes),
        (256 << 20, 32 << 20, 100, 100_000)
    );
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/lint.md")).expect("docs/lint.md");
    for message in documented() {
        assert!(readme.contains(&format!("`{message}`")), "docs/lint.md Limits table lacks {message:?}");
    }
}

/// Lints `name` and then the good file in `dir`; returns the run and its duration.
fn lint_beside_good(dir: &Path, name: &str) -> (Run, Duration) {
    std::fs::write(dir.join("good.yaml"), GOOD).expect("write good file");
    let start = Instant::now();
    let r = support::lifeguard(dir, &["lint", name, "good.yaml"], None, &[("NO_COLOR", Some("1"))]);
    r.assert_no_panic();
    (r, start.elapsed())
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).expect("write file");
}

/// Exit 2, one error `at`... containing `what`, and the good file's finding.
fn assert_refused(r: &Run, at: &str, what: &str) {
    assert_eq!(r.code, 2, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    assert_eq!(r.stderr, format!("{at} input error: {what}\n"));
    assert!(r.stdout.contains(GOOD_FINDING), "{}", r.stdout);
}

/// Exit 1 (the good file's finding) and nothing on stderr but the note
/// that the accepted file holds no object to check.
fn assert_accepted(r: &Run) {
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stderr.lines().all(|l| l.contains(" input note: no object checked")), "{}", r.stderr);
    assert!(r.stdout.contains(GOOD_FINDING), "{}", r.stdout);
}

#[test]
fn file_size_over_256_mib_is_refused_before_reading() {
    let dir = tempfile::tempdir().expect("temp dir");
    // Sparse: 256 MiB + 1 byte on disk costs nothing to create.
    let file = std::fs::File::create(dir.path().join("huge.yaml")).expect("create");
    file.set_len(Limits::default().max_file_bytes + 1).expect("set_len");
    let (r, took) = lint_beside_good(dir.path(), "huge.yaml");
    assert_refused(&r, "huge.yaml", &documented()[0]);
    assert!(took < Duration::from_secs(5), "took {took:?}");
}

#[test]
fn file_size_limit_is_exact() {
    let dir = tempfile::tempdir().expect("temp dir");
    let limits = Limits { max_file_bytes: 64, ..Limits::default() };
    let path = dir.path().join("f.yaml");
    std::fs::write(&path, "#".repeat(64)).expect("write");
    assert!(read_text(&Input::File(path.clone()), &limits).is_ok());
    std::fs::write(&path, "#".repeat(65)).expect("write");
    assert!(matches!(read_text(&Input::File(path), &limits), Err(ReadError::TooLarge(64))));
}

#[test]
fn a_100_mb_document_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    // One document: a ConfigMap whose data is a 100 MB block scalar.
    let line = format!("    {}\n", "x".repeat(95));
    let mut text = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: huge\ndata:\n  blob: |\n");
    text.push_str(&line.repeat(100 * 1024 * 1024 / line.len()));
    write(dir.path(), "huge.yaml", &text);
    let (r, took) = lint_beside_good(dir.path(), "huge.yaml");
    assert_refused(&r, "huge.yaml:1:1", &documented()[1]);
    // About 1 s in a debug build (reading and checking 100 MB), 0.2 s in
    // release: the document is measured before the parser reads it.
    eprintln!("100 MB document refused in {took:?}");
    assert!(took < Duration::from_secs(30), "took {took:?}");
}

#[test]
fn the_document_size_limit_is_per_document_and_names_its_start() {
    let limits = Limits { max_document_chars: 1000, ..Limits::default() };
    let doc = |n: usize| format!("---\nkind: ConfigMap\ndata:\n  blob: |\n    {}\n", "z".repeat(n));
    // Three documents of about 900 characters: 2700 in the stream, each under the limit.
    let (docs, err) = parse_stream(&doc(900).repeat(3), &limits);
    assert_eq!((docs.len(), err), (3, None));
    // A block scalar over the limit in the second document: refused at its `---`.
    let (docs, err) = parse_stream(&format!("{}{}", doc(10), doc(1200)), &limits);
    let err = err.expect("the second document is too large");
    assert_eq!(docs.len(), 1);
    assert_eq!((err.line, err.column), (6, 1));
    assert_eq!(err.message, "document larger than 1000 characters");
}

#[test]
fn nesting_depth_limit_is_100_levels() {
    let dir = tempfile::tempdir().expect("temp dir");
    let nested = |n: usize| format!("{}{}\n", "[".repeat(n), "]".repeat(n));
    write(dir.path(), "deep.yaml", &nested(100));
    assert_accepted(&lint_beside_good(dir.path(), "deep.yaml").0);
    write(dir.path(), "deep.yaml", &nested(101));
    // The 101st bracket, on line 1.
    assert_refused(&lint_beside_good(dir.path(), "deep.yaml").0, "deep.yaml:1:101", &documented()[2]);
    // Far deeper input is refused the same way, without exhausting the stack
    // (the scanner looks ahead in flow context and stops at the 256th bracket).
    write(dir.path(), "deep.yaml", &format!("kind: Pod\nspec: {}", nested(100_000)));
    assert_refused(&lint_beside_good(dir.path(), "deep.yaml").0, "deep.yaml:2:262", &documented()[2]);
    // Block nesting is counted the same way: the 101st level is on line 101.
    let block: String = (0..101).map(|i| format!("{}k{i}:\n", "  ".repeat(i))).collect();
    write(dir.path(), "deep.yaml", &format!("{block}{}x\n", "  ".repeat(101)));
    assert_refused(&lint_beside_good(dir.path(), "deep.yaml").0, "deep.yaml:101:201", &documented()[2]);
}

#[test]
fn alias_expansion_limit_is_100000_nodes_per_document() {
    let dir = tempfile::tempdir().expect("temp dir");
    // `&a` is a list of 9 scalars: 10 nodes per alias.
    let aliases = |n: usize| format!("a: &a [x, x, x, x, x, x, x, x, x]\nb: [{}]\n", vec!["*a"; n].join(", "));
    write(dir.path(), "aliases.yaml", &aliases(10_000));
    assert_accepted(&lint_beside_good(dir.path(), "aliases.yaml").0);
    // The limit counts per document: two documents of 60,000 are fine.
    write(dir.path(), "aliases.yaml", &format!("{}---\n{}", aliases(6_000), aliases(6_000)));
    assert_accepted(&lint_beside_good(dir.path(), "aliases.yaml").0);
    // One alias more is refused, at that alias (line 2, its column).
    write(dir.path(), "aliases.yaml", &aliases(10_001));
    assert_refused(&lint_beside_good(dir.path(), "aliases.yaml").0, "aliases.yaml:2:40005", &documented()[3]);
}

#[test]
fn billion_laughs_is_refused_fast() {
    let dir = tempfile::tempdir().expect("temp dir");
    // Nine levels of ten aliases each: 10^9 nodes if expanded.
    let mut text = String::from("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..10 {
        text.push_str(&format!("a{i}: &a{i} [{}]\n", vec![format!("*a{}", i - 1); 10].join(", ")));
    }
    write(dir.path(), "lol.yaml", &text);
    let (r, took) = lint_beside_good(dir.path(), "lol.yaml");
    // Levels 1-4 add 12,330 nodes; the 8th alias of level 4 (11,111 each) crosses 100,000.
    assert_refused(&r, "lol.yaml:5:45", &documented()[3]);
    assert!(took < Duration::from_secs(5), "took {took:?}");
}
