//! `lifeguard fix` on every core gives, byte for byte, what it gives on one
//! (`LIFEGUARD_THREADS=1`), so the order of the files' results never
//! depends on which finished first: the diff or the fixed
//! stream on stdout, the report on stderr, the exit code and the files
//! written in place, on the bench's generated stream (with a broken
//! document, Services in other files of the directory, a directive) and on
//! the shared corpus.

mod support;

#[path = "../benches/stream.rs"]
mod stream;

use std::path::Path;

use lifeguard_e2e::corpus_dir;
use support::Run;

fn run(dir: &Path, args: &[&str], stdin: Option<&str>, threads: &str) -> Run {
    let env = [("NO_COLOR", Some("1")), ("LIFEGUARD_THREADS", Some(threads))];
    let r = support::lifeguard(dir, args, stdin, &env);
    r.assert_no_panic();
    r
}

fn same_text(expected: &str, actual: &str, what: &str) {
    if expected != actual {
        let diff = similar::TextDiff::from_lines(expected, actual);
        let shown: String = diff.unified_diff().context_radius(2).to_string().chars().take(4000).collect();
        panic!("{what} differs from the single-threaded path:\n{shown}");
    }
}

fn same_run(one: &Run, many: &Run, what: &str) {
    assert_eq!(many.code, one.code, "exit code of {what}");
    same_text(&one.stderr, &many.stderr, &format!("stderr of {what}"));
    same_text(&one.stdout, &many.stdout, &format!("stdout of {what}"));
}

/// Every file under `dir`, relative path and bytes, sorted.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(at) = todo.pop() {
        for entry in std::fs::read_dir(&at).expect("read dir") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                todo.push(path);
            } else {
                let name = path.strip_prefix(dir).expect("under dir").display().to_string();
                out.push((name, std::fs::read(&path).expect("read")));
            }
        }
    }
    out.sort();
    out
}

fn copy(from: &Path, to: &Path) {
    for (name, bytes) in files(from) {
        let path = to.join(name);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, bytes).expect("write");
    }
}

/// `fix --diff` on every thread count, then `fix` in place on a copy per
/// thread count; fails at the first byte that differs. Returns the
/// single-threaded `--diff` run.
fn assert_same(dir: &Path, paths: &[&str]) -> Run {
    let mut args = vec!["fix", "--diff", "--fail-on", "info"];
    args.extend_from_slice(paths);
    let one = run(dir, &args, None, "1");
    for threads in ["2", "3"] {
        same_run(&one, &run(dir, &args, None, threads), &format!("fix --diff on {threads} threads"));
    }
    let reference = tempfile::tempdir().expect("tempdir");
    copy(dir, reference.path());
    let args = &args[..1].iter().chain(&args[2..]).copied().collect::<Vec<_>>();
    let in_place = run(reference.path(), args, None, "1");
    let fixed = files(reference.path());
    assert_ne!(fixed, files(dir), "fix in place changed nothing");
    let many = tempfile::tempdir().expect("tempdir");
    copy(dir, many.path());
    same_run(&in_place, &run(many.path(), args, None, "2"), "fix in place on 2 threads");
    let differs = files(many.path()).into_iter().zip(&fixed).find(|(a, b)| a != *b).map(|(a, _)| a.0);
    assert_eq!(differs, None, "a file fixed in place on 2 threads differs from the single-threaded path");
    one
}

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

const WORKLOAD: &str = "---\nkind: Deployment\nmetadata: {name: web, namespace: team-5}\nspec:\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: web\n        ports: [{containerPort: 80}]\n";
const SERVICE: &str = "---\napiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: team-5}\nspec: {selector: {app: web}, ports: [{port: 80}]}\n";

#[test]
fn the_generated_stream_and_broken_documents_fix_the_same_on_every_thread_count() {
    let dir = tempfile::tempdir().expect("tempdir");
    let deployments = |range: std::ops::Range<usize>| range.map(stream::deployment).collect::<String>();
    // One directory: a Service in the last file changes the first's verdict.
    write(dir.path(), "apps/a-stream.yaml", &format!("{WORKLOAD}{}", deployments(0..150)));
    write(dir.path(), "apps/b-more.yaml", &deployments(150..200));
    // A syntax error mid-stream: the file is not fixed; its Services before the error count.
    write(
        dir.path(),
        "apps/c-broken.yaml",
        &format!("{}---\nkind: Deployment\nspec: [1, 2\n{SERVICE}", deployments(0..5)),
    );
    write(dir.path(), "apps/d-service.yaml", SERVICE);
    // A directive applies to the next document; CRLF line ends.
    write(dir.path(), "other/directive.yaml", &format!("%YAML 1.2\n{}", deployments(0..20)));
    write(dir.path(), "other/crlf.yaml", &deployments(20..40).replace('\n', "\r\n"));
    let one = assert_same(dir.path(), &["apps", "other"]);
    // The comparison is of real output: fixes, errors with positions, Services across files.
    assert_eq!(one.code, 2, "{}", one.stderr);
    assert!(one.stdout.contains("+++ b/apps/a-stream.yaml"), "{}", one.stdout);
    assert!(one.stderr.contains("apps/c-broken.yaml:300:1 error: while parsing a flow sequence"), "{}", one.stderr);
    assert!(one.stderr.contains("Service/web sends traffic to port 80"), "{}", one.stderr);
    // stdin: its own stream is its whole context, fixed to stdout.
    let stdin = format!("{WORKLOAD}{}{SERVICE}", deployments(0..100));
    let one = run(dir.path(), &["fix", "-"], Some(&stdin), "1");
    assert!(one.stdout.len() > stdin.len(), "{}", one.stderr);
    same_run(&one, &run(dir.path(), &["fix", "-"], Some(&stdin), "2"), "fix - on 2 threads");
}

#[test]
fn the_corpus_fixes_the_same_on_every_thread_count() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    copy(&corpus.join("files"), &dir.path().join("files"));
    // A broken document among the real ones.
    write(dir.path(), "files/zz-broken.yaml", &format!("{WORKLOAD}---\nkind: Service\nspec: {{a: [1\n"));
    let one = assert_same(dir.path(), &["files"]);
    assert!(one.stdout.lines().count() > 100, "{}", one.stdout);
    assert!(one.stderr.contains("files/zz-broken.yaml:"), "{}", one.stderr);
}
