//! The parallel path gives, byte for byte, what the single-threaded path
//! (`LIFEGUARD_THREADS=1`) gives: every format of `lint` and `simulate` (both
//! steps of the one pipeline), the input errors and warnings on stderr, and
//! the exit code, on the shared corpus and on the bench's generated stream
//! with broken documents mixed in.

mod support;

#[path = "../benches/stream.rs"]
mod stream;

use std::path::Path;

use lifeguard_e2e::corpus_dir;
use support::Run;

const FORMATS: [&str; 6] = ["text", "json", "sarif", "github", "junit", "html"];

/// Thread counts compared with the single-threaded path: two cuts the work
/// as the default does on this project's 2-core target; three, which cuts it
/// unevenly, runs with the text format only (the formats render the same
/// outcome, and each run of the debug binary costs seconds).
fn threads(format: &str) -> &'static [&'static str] {
    if format == "text" { &["2", "3"] } else { &["2"] }
}

fn run(dir: &Path, args: &[&str], stdin: Option<&str>, threads: &str) -> Run {
    let env = [("NO_COLOR", Some("1")), ("LIFEGUARD_THREADS", Some(threads))];
    let r = support::lifeguard(dir, args, stdin, &env);
    r.assert_no_panic();
    r
}

/// Runs `lint` in each format single-threaded and on each thread count,
/// and fails at the first byte that differs. Returns the single-threaded
/// run of the first format.
fn assert_same(dir: &Path, formats: &[&str], paths: &[&str], stdin: Option<&str>) -> Run {
    assert_same_of(dir, &["lint", "--fail-on", "info"], formats, paths, stdin)
}

/// [`assert_same`] for any command that takes `--format`.
fn assert_same_of(dir: &Path, command: &[&str], formats: &[&str], paths: &[&str], stdin: Option<&str>) -> Run {
    let mut text = None;
    for &format in formats {
        let mut args = command.to_vec();
        args.extend(["--format", format]);
        args.extend_from_slice(paths);
        let one = run(dir, &args, stdin, "1");
        for &threads in threads(format) {
            let many = run(dir, &args, stdin, threads);
            let what = format!("{format} on {paths:?} with {threads} threads");
            assert_eq!(many.code, one.code, "exit code of {what}");
            similar_asserts(&one.stderr, &many.stderr, &format!("stderr of {what}"));
            similar_asserts(&one.stdout, &many.stdout, &format!("stdout of {what}"));
        }
        if text.is_none() {
            text = Some(one);
        }
    }
    text.expect("a format ran")
}

fn similar_asserts(expected: &str, actual: &str, what: &str) {
    if expected != actual {
        let diff = similar::TextDiff::from_lines(expected, actual);
        let shown: String = diff.unified_diff().context_radius(2).to_string().chars().take(4000).collect();
        panic!("{what} differs from the single-threaded path:\n{shown}");
    }
}

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// The bench stream, with what the parallel path must treat with care.
fn generated(count: usize) -> String {
    // A workload whose verdict a Service at the end of the stream changes.
    let mut text = String::from(
        "---\nkind: Deployment\nmetadata: {name: web, namespace: team-5}\nspec:\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: web\n        ports: [{containerPort: 80}]\n",
    );
    text.extend((0..count).map(stream::deployment));
    // A List, a repeated key, and a Service after the workloads it selects.
    text.push_str("---\napiVersion: v1\nkind: List\nitems:\n- kind: Deployment\n  metadata: {name: listed}\n  spec: {template: {spec: {containers: [{name: a, image: a}]}}}\n");
    text.push_str("---\nkind: ConfigMap\nmetadata: {name: twice}\ndata: {a: '1', a: '2'}\n");
    text.push_str("---\napiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: team-5}\nspec: {selector: {app: web}, ports: [{port: 80}]}\n");
    text
}

#[test]
fn the_generated_stream_and_broken_documents_lint_the_same_on_every_thread_count() {
    let dir = tempfile::tempdir().expect("tempdir");
    let stream = generated(200);
    write(dir.path(), "stream/stream.yaml", &stream);
    // A syntax error mid-stream: the documents before it are linted, those after it not.
    let (head, tail) = ((0..40).map(stream::deployment).collect::<String>(), generated(40));
    write(dir.path(), "broken/broken.yaml", &format!("{head}---\nkind: Deployment\nspec: [1, 2\n{tail}"));
    // A directive applies to the next document: not cut.
    write(dir.path(), "directive/directive.yaml", &format!("%YAML 1.2\n{}", generated(30)));
    // A `---` line inside a quoted scalar is no cut (and YAML refuses it).
    let quoted = "---\nkind: ConfigMap\nmetadata: {name: q}\ndata:\n  a: \"x\n---\n  y\"\n";
    write(dir.path(), "quoted/quoted.yaml", &format!("{}{quoted}{}", generated(20), generated(20)));
    // Windows line ends.
    write(dir.path(), "crlf/crlf.yaml", &generated(30).replace('\n', "\r\n"));
    let names = [
        "stream/stream.yaml",
        "broken/broken.yaml",
        "directive/directive.yaml",
        "quoted/quoted.yaml",
        "crlf/crlf.yaml",
    ];
    let text = assert_same(dir.path(), &FORMATS, &names, None);
    // The comparison is of real output: findings, errors with positions, a repeated key.
    assert_eq!(text.code, 2, "{}", text.stderr);
    assert!(text.stdout.contains("stream/stream.yaml:"), "{}", text.stdout);
    assert!(text.stderr.contains("broken/broken.yaml:2368:1 input error"), "{}", text.stderr);
    assert!(text.stderr.contains("quoted/quoted.yaml:"), "{}", text.stderr);
    assert!(text.stderr.contains("duplicate key \"a\""), "{}", text.stderr);
    assert!(text.stdout.contains("Service/web sends traffic to port 80"), "{}", text.stdout);
    // stdin: its own stream is its whole context.
    assert_same(dir.path(), &["text", "sarif"], &["-"], Some(&stream));
}

#[test]
fn the_corpus_lints_the_same_on_every_thread_count() {
    let Some(corpus) = corpus_dir() else { return };
    // The corpus is large for the debug binary: the formats that place
    // findings differently (text, SARIF's regions); the generated stream
    // above runs them all.
    let text = assert_same(&corpus, &["text", "sarif"], &["files"], None);
    assert!(text.stdout.lines().count() > 100, "{}", text.stdout);
}

#[test]
fn simulate_gives_the_same_on_every_thread_count() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "stream/stream.yaml", &generated(40));
    let head = (0..10).map(stream::deployment).collect::<String>();
    write(dir.path(), "broken/broken.yaml", &format!("{head}---\nkind: Deployment\nspec: [1, 2\n{}", generated(10)));
    write(dir.path(), "crlf/crlf.yaml", &generated(10).replace('\n', "\r\n"));
    let names = ["stream/stream.yaml", "broken/broken.yaml", "crlf/crlf.yaml"];
    let simulate = ["simulate", "--scenario", "boot", "--scenario", "delete"];
    let text = assert_same_of(dir.path(), &simulate, &["text", "json"], &names, None);
    assert_eq!(text.code, 2, "{}", text.stderr);
    assert!(text.stdout.contains("stream/stream.yaml:"), "{}", text.stdout);
    assert!(text.stderr.contains("broken/broken.yaml:"), "{}", text.stderr);
    let Some(corpus) = corpus_dir() else { return };
    let json = assert_same_of(&corpus, &["simulate"], &["json"], &["files"], None);
    assert!(json.stdout.len() > 10_000, "{}", json.stderr);
}
