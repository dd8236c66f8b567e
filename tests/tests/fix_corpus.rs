//! `lifeguard fix` on every real manifest of the shared corpus, in a temporary
//! copy: only lines inside fixed objects change, and few of them; the result
//! lints without a fixable finding; a second run changes nothing; and no
//! fix makes the kubelet restart a boot earlier than before.

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

use std::collections::BTreeMap;
use std::path::Path;

use lifeguard::fix::{FixOutcome, Output, fix_paths, write};
use lifeguard::input::source::Node;
use lifeguard::input::{Limits, parse_stream};
use lifeguard::lint::lint_paths;
use lifeguard_e2e::corpus_dir;
use policies::{Policy, objects_in};
use similar::{ChangeTag, TextDiff};

/// Copies the corpus's files into `to`; `None` (the test skips) without the corpus.
fn copy_corpus(to: &Path) -> Option<usize> {
    let corpus = corpus_dir()?;
    let mut n = 0;
    for entry in std::fs::read_dir(corpus.join("files")).expect("the corpus's files") {
        let path = entry.expect("dir entry").path();
        if path.is_file() {
            std::fs::copy(&path, to.join(path.file_name().expect("file name"))).expect("copy");
            n += 1;
        }
    }
    Some(n)
}

fn fix_dir(dir: &Path) -> FixOutcome {
    let mut out = fix_paths(&[dir.display().to_string()], &Policy::default(), None, &Limits::default());
    write(&mut out, Output::InPlace, &mut std::io::sink()).expect("write");
    out
}

/// The node a pointer leads to (objects are mappings; List items are sequence items).
fn node_at<'d>(root: &'d Node, value: &'d serde_json::Value, pointer: &str) -> Option<&'d Node> {
    let (mut node, mut value) = (root, value);
    for token in pointer.split('/').skip(1) {
        let i = match value {
            serde_json::Value::Object(m) => m.keys().position(|k| k == token)?,
            serde_json::Value::Array(_) => token.parse().ok()?,
            _ => return None,
        };
        value = match value {
            serde_json::Value::Object(m) => m.values().nth(i)?,
            serde_json::Value::Array(a) => a.get(i)?,
            _ => return None,
        };
        node = node.kids.get(i)?;
    }
    Some(node)
}

/// `Kind/namespace/name` -> the 0-based line ranges of the objects so named.
fn object_lines(text: &str) -> BTreeMap<String, Vec<(usize, usize)>> {
    let (docs, err) = parse_stream(text, &Limits::default());
    assert_eq!(err, None);
    let mut out: BTreeMap<String, Vec<(usize, usize)>> = BTreeMap::new();
    for d in &docs {
        for (prefix, object) in objects_in(&d.value) {
            let Some(node) = node_at(&d.root, &d.value, &prefix) else {
                continue;
            };
            let s = |p: &str| object.pointer(p).and_then(|v| v.as_str());
            let kind = s("/kind").filter(|k| !k.is_empty()).unwrap_or("<no kind>");
            let name = s("/metadata/name").unwrap_or("<unnamed>");
            let key = match s("/metadata/namespace") {
                Some(ns) => format!("{kind}/{ns}/{name}"),
                None => format!("{kind}/{name}"),
            };
            let start = node.key.unwrap_or(node.start).line as usize - 1;
            out.entry(key).or_default().push((start, node.end.line as usize));
        }
    }
    out
}

/// The pod spec of an object, wherever its kind keeps it.
fn pod_spec(object: &serde_json::Value) -> Option<&serde_json::Value> {
    ["/spec/template/spec", "/spec/jobTemplate/spec/template/spec", "/template/spec", "/spec"]
        .iter()
        .filter_map(|p| object.pointer(p))
        .find(|spec| spec.get("containers").is_some())
}

/// Per container, when the kubelet restarts a boot that never answers, at
/// the earliest: the startup probe decides when there is one, else liveness;
/// the `failureThreshold`-th failure restarts, at `initialDelaySeconds +
/// (failureThreshold - 1) x periodSeconds`. `None`: nothing restarts it.
fn earliest_restarts(object: &serde_json::Value) -> Vec<(String, Option<i64>)> {
    let Some(spec) = pod_spec(object) else {
        return Vec::new();
    };
    ["containers", "initContainers"]
        .iter()
        .filter_map(|k| spec.get(*k).and_then(serde_json::Value::as_array))
        .flatten()
        .map(|c| {
            let probe = c.get("startupProbe").or_else(|| c.get("livenessProbe"));
            let restart = probe.map(|p| {
                let field = |k: &str, d: i64| p.get(k).and_then(serde_json::Value::as_i64).unwrap_or(d);
                field("initialDelaySeconds", 0) + (field("failureThreshold", 3) - 1) * field("periodSeconds", 10)
            });
            (c.get("name").and_then(serde_json::Value::as_str).unwrap_or("?").to_owned(), restart)
        })
        .collect()
}

/// Containers of the fixed text whose boot is restarted earlier than in the original.
fn boots_restarted_earlier(file: &str, original: &str, fixed: &str) -> Vec<String> {
    let (before, _) = parse_stream(original, &Limits::default());
    let (after, _) = parse_stream(fixed, &Limits::default());
    let mut out = Vec::new();
    for (b, a) in before.iter().zip(&after) {
        for ((prefix, ob), (_, oa)) in objects_in(&b.value).into_iter().zip(objects_in(&a.value)) {
            for ((name, was), (_, now)) in earliest_restarts(ob).into_iter().zip(earliest_restarts(oa)) {
                let earlier = match (was, now) {
                    (_, None) => false,
                    (None, Some(_)) => true,
                    (Some(w), Some(n)) => n < w,
                };
                if earlier {
                    out.push(format!("{file} {prefix} {name}: restart at {now:?}s, was {was:?}s"));
                }
            }
        }
    }
    out
}

#[test]
fn fixing_the_corpus_touches_only_fixed_objects_and_converges() {
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(files) = copy_corpus(dir.path()) else { return };
    assert!(files >= 190, "corpus has {files} files");
    let out = fix_dir(dir.path());
    let errors: Vec<String> = out.all_errors().map(ToString::to_string).collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));

    let mut problems = Vec::new();
    let (mut changed_files, mut fixes, mut changed_lines) = (0, 0, 0);
    for i in &out.inputs {
        let f = &i.fix;
        let on_disk = std::fs::read_to_string(dir.path().join(Path::new(&f.file).file_name().expect("name")))
            .expect("read fixed file");
        assert_eq!(on_disk, f.fixed, "{}: the file on disk is not the fixed text", f.file);
        if !f.changed() {
            assert!(f.objects.is_empty(), "{}", f.file);
            continue;
        }
        changed_files += 1;
        fixes += f.fix_count();
        problems.extend(boots_restarted_earlier(&f.file, &f.original, &f.fixed));
        let ranges = object_lines(&f.original);
        let fixed_ranges: Vec<(usize, usize)> =
            f.objects.iter().flat_map(|o| ranges.get(&o.object).cloned().unwrap_or_default()).collect();
        let diff = TextDiff::from_lines(&f.original, &f.fixed);
        let (mut deleted, mut inserted) = (0, 0);
        // The original line a change sits at: a deleted line itself, or the
        // line an inserted one follows.
        let mut last_old = 0;
        for change in diff.iter_all_changes() {
            let at = match change.tag() {
                ChangeTag::Equal => {
                    last_old = change.old_index().unwrap_or(last_old);
                    continue;
                }
                ChangeTag::Delete => {
                    deleted += 1;
                    last_old = change.old_index().unwrap_or(last_old);
                    last_old
                }
                ChangeTag::Insert => {
                    inserted += 1;
                    last_old
                }
            };
            if !fixed_ranges.iter().any(|(s, e)| (*s..*e).contains(&at)) {
                problems.push(format!("{}: line {} changed outside every fixed object", f.file, at + 1));
            }
        }
        changed_lines += deleted + inserted;
        let n = f.fix_count();
        if deleted > 4 * n || inserted > 15 * n {
            problems.push(format!("{}: {deleted} lines deleted, {inserted} inserted for {n} fixes", f.file));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    eprintln!("corpus: {fixes} fixes in {changed_files} of {files} files, {changed_lines} changed lines");
    // A 30 s liveness delay alone is no longer fixed (the tutorial default, not a slow boot).
    assert!(changed_files >= 15 && fixes >= 25, "{changed_files} files, {fixes} fixes");

    // What is left has no automatic fix.
    let linted = lint_paths(&[dir.path().display().to_string()], &Policy::default(), &Limits::default());
    assert!(linted.errors.is_empty());
    let fixable: Vec<String> = linted
        .findings
        .iter()
        .filter(|l| l.finding.automatic_fix().is_some())
        .map(|l| format!("{}:{} {}", l.file, l.line, l.finding.rule))
        .collect();
    assert!(fixable.is_empty(), "{}", fixable.join("\n"));

    // A second run changes nothing.
    let again = fix_dir(dir.path());
    let changed: Vec<&str> = again.inputs.iter().filter(|i| i.fix.changed()).map(|i| i.fix.file.as_str()).collect();
    assert!(changed.is_empty(), "changed again: {changed:?}");
    assert_eq!(again.all_errors().count(), 0);
}

/// Trimmed comment lines of a text, counted (a text's comments say why its
/// values are what they are).
fn comment_lines(text: &str) -> BTreeMap<&str, usize> {
    let mut out = BTreeMap::new();
    for line in text.lines().map(str::trim).filter(|l| l.starts_with('#')) {
        *out.entry(line).or_default() += 1;
    }
    out
}

#[test]
fn fixing_the_corpus_keeps_every_comment_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    if copy_corpus(dir.path()).is_none() {
        return;
    }
    let out = fix_dir(dir.path());
    let mut lost = Vec::new();
    let mut checked = 0;
    for f in out.inputs.iter().map(|i| &i.fix).filter(|f| f.changed()) {
        let kept = comment_lines(&f.fixed);
        for (line, n) in comment_lines(&f.original) {
            checked += n;
            if kept.get(line).copied().unwrap_or(0) < n {
                lost.push(format!("{}: {line}", f.file));
            }
        }
    }
    assert!(lost.is_empty(), "comment lines lost:\n{}", lost.join("\n"));
    eprintln!("corpus: {checked} comment lines of fixed files kept");
}
