//! Parity with the linter on the shared corpus of real manifests: for every
//! pod-bearing object of every corpus file, the webhook (the real binary,
//! over TLS and HTTP/2) reaches what `lifeguard` reaches on that object
//! written alone to a file:
//!
//! - `/validate/warn` reports the rules, severities, containers and JSON
//!   pointers that `lifeguard lint --format json` reports, as many times, in
//!   the engine's order (lint then sorts each object's findings by their
//!   place in the file, which the webhook, having no file, does not);
//! - `/mutate`'s patch gives the object `lifeguard fix` writes (less the
//!   `lifeguard.dev/mutated` annotation only the webhook adds), for the same
//!   rules; only objects with a fixable finding get a patch; a second call
//!   on the patched object patches nothing, and `/validate/warn` on it
//!   reports what `lifeguard fix` says remains.
//!
//! Each object is linted alone because that is what the webhook sees: one
//! object and no Services (in a whole file, a Service beside a Deployment
//! informs the rules, which admission cannot know).
//!
//! Over 400 lines: one test and what it needs to compare two binaries object by
//! object: the corpus split into one-object files, lint's and the webhook's
//! findings as comparable rows, `lifeguard fix`'s object beside the patched
//! one, and the tally of differences; each piece serves only this comparison.

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use common::{Clients, Server, Start, patch_of, post, review};
use lifeguard::fix::{Output, fix_paths, write};
use lifeguard::input::Limits;
use lifeguard::lint::{Located, lint_paths};
use lifeguard::report::json;
use lifeguard_e2e::repo_root;
use policies::model::{Workload, object_label_of};
use policies::yaml::parse_stream;
use policies::{Policy, objects_in};
use serde_json::Value;

/// The annotation `/mutate` adds to list the rules it fixed.
const MUTATED: &str = "lifeguard.dev/mutated";

/// One finding as both sides state it: (rule, severity, container, pointer).
type Row = (String, String, Option<String>, String);

/// The shared corpus (beside the repository, read-only).
fn corpus_dir() -> PathBuf {
    repo_root().join("../shared/corpus")
}

/// A row of SOURCES.tsv: a corpus file and its count of pod-bearing objects.
struct Source {
    file: String,
    pod_objects: usize,
}

fn sources() -> Vec<Source> {
    let path = corpus_dir().join("SOURCES.tsv");
    let tsv = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("the shared corpus ({}, beside the repository) is needed for this test: {e}", path.display())
    });
    let mut lines = tsv.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split('\t').collect();
    let col =
        |name: &str| header.iter().position(|h| *h == name).expect("SOURCES.tsv has a file and a pod_objects column");
    let (file, pods) = (col("file"), col("pod_objects"));
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let cells: Vec<&str> = l.split('\t').collect();
            let cell = |i: usize| *cells.get(i).unwrap_or_else(|| panic!("SOURCES.tsv row is short: {l:?}"));
            Source {
                file: cell(file).to_owned(),
                pod_objects: cell(pods).parse().unwrap_or_else(|_| panic!("pod_objects is a number in {l:?}")),
            }
        })
        .collect()
}

/// A pod-bearing object of a corpus file.
struct Object {
    /// `file, document N[, /items/i]`, to name it in failures.
    place: String,
    /// `Kind/namespace/name`.
    label: String,
    value: Value,
}

/// One corpus file split into objects.
#[derive(Default)]
struct Split {
    /// The pod-bearing objects the webhook judges.
    objects: Vec<Object>,
    /// Pod-bearing objects the webhook leaves alone by design.
    skipped: Vec<String>,
    /// Why the file does not split as SOURCES.tsv says.
    problems: Vec<String>,
}

/// The pod-bearing objects of one corpus file, as `lifeguard lint` splits
/// it (documents, then the items of a `List`).
fn pod_objects(source: &Source) -> Split {
    let path = corpus_dir().join("files").join(&source.file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let (docs, error) = parse_stream(&text, &Limits::default());
    let mut split = Split::default();
    let Split { objects, skipped, problems } = &mut split;
    if let Some(e) = error {
        problems.push(format!("{}: does not parse: {e:?}", source.file));
    }
    for (d, doc) in docs.iter().enumerate() {
        for (prefix, object) in objects_in(&doc.value) {
            let place =
                format!("{}, document {}{}{prefix}", source.file, d + 1, if prefix.is_empty() { "" } else { " " });
            match Workload::from_object(object) {
                Ok(Some(_)) => {}
                Ok(None) => continue,
                Err(e) => {
                    problems.push(format!("{place}: does not read as its kind: {}: {}", e.pointer, e.message));
                    continue;
                }
            }
            let label = object_label_of(object);
            // The webhook does not judge these (their controller's template is
            // judged where it is written; a deleted object is on its way out),
            // so there is nothing to compare. The corpus has none today.
            let controlled = object
                .pointer("/metadata/ownerReferences")
                .and_then(Value::as_array)
                .is_some_and(|o| o.iter().any(|r| r.get("controller").and_then(Value::as_bool) == Some(true)));
            let deleted = object.pointer("/metadata/deletionTimestamp").is_some_and(|t| !t.is_null());
            if controlled || deleted {
                skipped.push(format!("{place} {label}"));
                continue;
            }
            objects.push(Object { place, label, value: object.clone() });
        }
    }
    let found = objects.len() + skipped.len();
    if found != source.pod_objects {
        problems.push(format!("{}: {found} pod objects found, SOURCES.tsv says {}", source.file, source.pod_objects));
    }
    split
}

/// Splits every corpus file, in order, on one thread per core: the corpus is
/// 19 MB of YAML (mostly CRDs), and reading it is a good part of this test.
fn split_corpus(sources: &[Source]) -> Vec<Split> {
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(2, usize::from);
    let mut done: Vec<(usize, Split)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(source) = sources.get(i) else { return mine };
                        mine.push((i, pod_objects(source)));
                    }
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("splitting a corpus file panicked")).collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, split)| split).collect()
}

fn text_of(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or_default().to_owned()
}

/// The rows of `lifeguard lint --format json` output, each with the
/// `(line, column)` lint placed it at.
fn lint_rows(rendered: &[Value]) -> Vec<(Row, (u64, u64))> {
    rendered
        .iter()
        .map(|f| {
            let container = f.get("container").and_then(Value::as_str).map(str::to_owned);
            let number = |key: &str| f.get(key).and_then(Value::as_u64).unwrap_or_default();
            (
                (text_of(f, "rule"), text_of(f, "severity"), container, text_of(f, "path")),
                (number("line"), number("column")),
            )
        })
        .collect()
}

/// The webhook's rows in the order lint shows findings. The engine gives an
/// object's findings in rule order, then container order, and so does the
/// webhook (it has no lines to go by); lint sorts each object's findings by
/// where they are in the file, keeping the engine's order on ties. So the
/// webhook's list, stably sorted by the place lint gives each finding, must
/// be lint's list exactly: same findings, same count, same tie order. (A
/// finding lint does not have sorts last, and fails the comparison.)
fn in_lint_order(by_webhook: &[Row], by_lint: &[(Row, (u64, u64))]) -> Vec<Row> {
    let place = |row: &Row| by_lint.iter().find(|(r, _)| r == row).map_or((u64::MAX, u64::MAX), |(_, at)| *at);
    let mut rows = by_webhook.to_vec();
    rows.sort_by_key(place);
    rows
}

/// The rows of a `/validate` answer's `findings` audit annotation (absent
/// when there is no finding).
fn review_rows(out: &Value) -> Result<Vec<Row>, String> {
    let Some(annotation) = out.pointer("/response/auditAnnotations/findings") else {
        return Ok(Vec::new());
    };
    let text = annotation.as_str().ok_or_else(|| format!("the findings annotation is not a string: {annotation}"))?;
    let findings: Vec<Value> =
        serde_json::from_str(text).map_err(|e| format!("the findings annotation is not a JSON array ({e}): {text}"))?;
    Ok(findings
        .iter()
        .map(|f| {
            let container = f.get("container").and_then(Value::as_str).map(str::to_owned);
            (text_of(f, "rule"), text_of(f, "severity"), container, text_of(f, "pointer"))
        })
        .collect())
}

/// The rows of the findings `lifeguard fix` leaves.
fn located_rows(remaining: &[Located]) -> Vec<Row> {
    remaining
        .iter()
        .map(|l| {
            let f = &l.finding;
            (f.rule.clone(), f.severity.as_str().to_owned(), f.container.clone(), f.pointer.clone())
        })
        .collect()
}

fn show(rows: &[Row]) -> String {
    if rows.is_empty() {
        return "    (none)".to_owned();
    }
    rows.iter()
        .map(|(rule, severity, container, pointer)| format!("    {rule} {severity} {container:?} {pointer}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The webhook's patched object without what only the webhook adds: the
/// `lifeguard.dev/mutated` annotation, and `metadata.annotations` (or
/// `metadata`) when the patch created it for that annotation alone.
fn without_mutated_annotation(mut patched: Value, original: &Value) -> Value {
    let had_annotations = original.pointer("/metadata/annotations").is_some();
    let had_metadata = original.get("metadata").is_some();
    if let Some(meta) = patched.get_mut("metadata").and_then(Value::as_object_mut) {
        if let Some(annotations) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
            annotations.remove(MUTATED);
            if annotations.is_empty() && !had_annotations {
                meta.remove("annotations");
            }
        }
        if meta.is_empty() && !had_metadata {
            patched.as_object_mut().map(|o| o.remove("metadata"));
        }
    }
    patched
}

/// Where two values differ, as JSON pointers (at most `limit`).
fn differences(a: &Value, b: &Value, at: &str, out: &mut Vec<String>, limit: usize) {
    if out.len() >= limit || a == b {
        return;
    }
    let escape = |k: &str| k.replace('~', "~0").replace('/', "~1");
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                match y.get(k) {
                    Some(w) => differences(v, w, &format!("{at}/{}", escape(k)), out, limit),
                    None => out.push(format!("{at}/{}: only in the webhook's: {v}", escape(k))),
                }
            }
            for (k, w) in y.iter().filter(|(k, _)| !x.contains_key(*k)) {
                out.push(format!("{at}/{}: only in lifeguard fix's: {w}", escape(k)));
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                differences(v, w, &format!("{at}/{i}"), out, limit);
            }
        }
        _ => out.push(format!("{at}: webhook {a}, lifeguard fix {b}")),
    }
}

/// What `lifeguard fix` does to one file (in place), read back.
struct Fixed {
    /// The file as `lifeguard fix` left it, parsed.
    object: Value,
    /// Rules fixed, in order.
    applied: Vec<String>,
    /// Findings left.
    remaining: Vec<Row>,
    /// Fixes planned but not written (alias, block scalar, ...), and errors.
    notes: Vec<String>,
}

fn lifeguard_fix(path: &Path, policy: &Policy) -> Fixed {
    let paths = [path.display().to_string()];
    let mut outcome = fix_paths(&paths, policy, None, &Limits::default());
    write(&mut outcome, Output::InPlace, &mut std::io::sink()).expect("lifeguard fix writes nothing to stdout here");
    let mut notes: Vec<String> = outcome.all_errors().map(|e| format!("fix error: {e:?}")).collect();
    let inputs = &outcome.inputs;
    notes.extend(inputs.iter().flat_map(|i| &i.fix.skipped).map(|s| format!("fix skipped {}: {}", s.rule, s.reason)));
    let applied = inputs.iter().flat_map(|i| &i.fix.objects).flat_map(|o| &o.applied).map(|a| a.rule.clone()).collect();
    let remaining: Vec<Located> = inputs.iter().flat_map(|i| i.fix.remaining.iter().cloned()).collect();
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read back {}: {e}", path.display()));
    let object = serde_json::from_str(&text).unwrap_or_else(|e| {
        // `fix` keeps a JSON file JSON; should it ever not, read it as YAML.
        let (docs, error) = parse_stream(&text, &Limits::default());
        match (docs.into_iter().next(), error) {
            (Some(doc), None) => doc.value,
            _ => panic!("{} after lifeguard fix is neither JSON ({e}) nor YAML:\n{text}", path.display()),
        }
    });
    Fixed { object, applied, remaining: located_rows(&remaining), notes }
}

/// What every comparison needs.
struct Ctx {
    client: reqwest::Client,
    validate: String,
    mutate: String,
    policy: Policy,
    dir: PathBuf,
}

/// What comparing one object found.
#[derive(Default)]
struct Tally {
    with_findings: usize,
    /// Objects whose findings lint lists in another order (by place in the file).
    reordered: usize,
    patched: usize,
    /// (object index, what differs).
    mismatches: Vec<(usize, String)>,
}

impl Tally {
    fn absorb(&mut self, other: Tally) {
        self.with_findings += other.with_findings;
        self.reordered += other.reordered;
        self.patched += other.patched;
        self.mismatches.extend(other.mismatches);
    }
}

/// Compares the webhook with `lifeguard lint` and `lifeguard fix` on one
/// object, written alone to its own file.
async fn compare(n: usize, object: &Object, ctx: &Ctx, tally: &mut Tally) {
    let name = format!("{} ({})", object.place, object.label);
    let mut mismatch = |what: String| tally.mismatches.push((n, format!("{name}: {what}")));
    let path = ctx.dir.join(format!("object-{n:03}.json"));
    let json_text = serde_json::to_string_pretty(&object.value).expect("a parsed object serializes");
    std::fs::write(&path, json_text).expect("write the object's file");

    // `lifeguard lint --format json` on that file alone.
    let linted = lint_paths(&[path.display().to_string()], &ctx.policy, &Limits::default());
    if !linted.errors.is_empty() || linted.objects != 1 {
        return mismatch(format!("lint read {} objects, errors {:?}", linted.objects, linted.errors));
    }
    let rendered: Vec<Value> = serde_json::from_str(&json::render(&linted)).expect("lint's JSON is an array");
    let placed = lint_rows(&rendered);
    let by_lint: Vec<Row> = placed.iter().map(|(row, _)| row.clone()).collect();
    let fixable = rendered.iter().any(|f| f.get("fixable") == Some(&Value::Bool(true)));

    // `/validate/warn` on the object.
    let body = review(&format!("parity-{n}"), "CREATE", Some(&object.value), None);
    let (status, out) = post(&ctx.client, &ctx.validate, &body).await;
    if status != 200 || out.pointer("/response/allowed") != Some(&Value::Bool(true)) {
        return mismatch(format!("/validate/warn answered {status}: {out}"));
    }
    match review_rows(&out) {
        Ok(by_webhook) if in_lint_order(&by_webhook, &placed) == by_lint => {
            tally.reordered += usize::from(by_webhook != by_lint);
        }
        Ok(by_webhook) => mismatch(format!(
            "findings differ\n  lifeguard lint --format json:\n{}\n  /validate/warn:\n{}",
            show(&by_lint),
            show(&by_webhook)
        )),
        Err(why) => mismatch(why),
    }
    tally.with_findings += usize::from(!by_lint.is_empty());

    // `lifeguard fix` on the file, and `/mutate` on the object.
    let fixed = lifeguard_fix(&path, &ctx.policy);
    let (status, out) = post(&ctx.client, &ctx.mutate, &body).await;
    if status != 200 || out.pointer("/response/allowed") != Some(&Value::Bool(true)) {
        return mismatch(format!("/mutate answered {status}: {out}"));
    }
    let Some(patch) = patch_of(&out) else {
        if fixable || !fixed.applied.is_empty() {
            mismatch(format!(
                "no patch, but lint reports a fixable finding and lifeguard fix applied {:?} ({:?})",
                fixed.applied, fixed.notes
            ));
        } else if fixed.object != object.value {
            mismatch("no patch, but lifeguard fix changed the object".to_owned());
        }
        return;
    };
    tally.patched += 1;
    if !fixable {
        mismatch(format!("patched, but lint reports no fixable finding\n{}", show(&by_lint)));
    }
    let mut by_webhook = object.value.clone();
    if let Err(e) = json_patch::patch(&mut by_webhook, &patch) {
        return mismatch(format!("the patch does not apply: {e}"));
    }
    // The annotation names each rule once; the audit annotation lists every fix.
    let rules = fixed.applied.join(",");
    let mut distinct: Vec<&str> = Vec::new();
    for rule in &fixed.applied {
        if !distinct.contains(&rule.as_str()) {
            distinct.push(rule);
        }
    }
    let distinct = distinct.join(",");
    let annotation = by_webhook.pointer("/metadata/annotations/lifeguard.dev~1mutated").and_then(Value::as_str);
    let audit = out.pointer("/response/auditAnnotations/fixed").and_then(Value::as_str);
    if annotation != Some(distinct.as_str()) || audit != Some(rules.as_str()) {
        mismatch(format!(
            "lifeguard fix applied {rules:?}; the webhook's {MUTATED} annotation is {annotation:?}, \
             its `fixed` audit annotation {audit:?}"
        ));
    }
    let stripped = without_mutated_annotation(by_webhook.clone(), &object.value);
    if stripped != fixed.object {
        let mut diff = Vec::new();
        differences(&stripped, &fixed.object, "", &mut diff, 20);
        mismatch(format!(
            "the patched object differs from what lifeguard fix writes ({:?}):\n    {}",
            fixed.notes,
            diff.join("\n    ")
        ));
    }

    // Converged: the patched object needs no second patch, and what is left
    // on it is what `lifeguard fix` says is left.
    let again = review(&format!("parity-{n}-again"), "CREATE", Some(&by_webhook), None);
    let (_, second) = post(&ctx.client, &ctx.mutate, &again).await;
    if patch_of(&second).is_some() {
        mismatch(format!("a second /mutate patches again: {second}"));
    }
    let (_, judged) = post(&ctx.client, &ctx.validate, &again).await;
    match review_rows(&judged) {
        // `fix` keeps the engine's order for what remains, as the webhook does.
        Ok(left) if left == fixed.remaining => {}
        Ok(left) => mismatch(format!(
            "findings left after fixing differ\n  lifeguard fix:\n{}\n  /validate/warn on the patched object:\n{}",
            show(&fixed.remaining),
            show(&left)
        )),
        Err(why) => mismatch(format!("after the patch: {why}")),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn webhook_and_lifeguard_agree_on_every_corpus_object() {
    // Without the corpus (a fresh clone) the test skips, unless CI forbids it.
    if !corpus_dir().join("SOURCES.tsv").is_file() {
        let reason = "the shared corpus of real manifests (shared/corpus beside the repository) is not there";
        assert!(
            std::env::var_os("LIFEGUARD_NO_SKIP").is_none_or(|v| v == "0"),
            "{reason}, and LIFEGUARD_NO_SKIP forbids skipping"
        );
        // Straight to stderr: the test harness captures `eprintln!`.
        let _ = std::io::Write::write_all(&mut std::io::stderr(), format!("skipped: {reason}\n").as_bytes());
        return;
    }
    let started = Instant::now();
    let server = Server::start(Start::default());
    let sources = sources();
    let on_disk = std::fs::read_dir(corpus_dir().join("files")).expect("corpus files").count();
    assert_eq!(sources.len(), on_disk, "SOURCES.tsv lists every corpus file");
    assert!(sources.len() >= 190, "the corpus has {} files", sources.len());
    let expected: usize = sources.iter().map(|s| s.pod_objects).sum();
    assert_eq!(expected, 282, "SOURCES.tsv counts 282 pod-bearing objects, as the corpus README says");

    let (mut objects, mut skipped, mut problems) = (Vec::new(), Vec::new(), Vec::new());
    for split in split_corpus(&sources) {
        objects.extend(split.objects);
        skipped.extend(split.skipped);
        problems.extend(split.problems);
    }
    assert!(problems.is_empty(), "the corpus does not split as SOURCES.tsv says:\n{}", problems.join("\n"));
    assert_eq!(objects.len() + skipped.len(), expected, "pod objects found vs SOURCES.tsv's pod_objects sum");
    assert_eq!(objects.len(), expected - skipped.len(), "compared: all but those the webhook leaves alone");
    let split_at = started.elapsed();

    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = Arc::new(Ctx {
        client: server.client(true),
        validate: server.url("/validate/warn"),
        mutate: server.url("/mutate"),
        policy: Policy::pack("default").expect("the default pack, as lint and the webhook use without --policy"),
        dir: dir.path().to_path_buf(),
    });
    let objects = Arc::new(objects);
    // A few objects in flight at once, over one HTTP/2 connection: lint and
    // fix run here while the webhook (another process) answers.
    let lanes = std::thread::available_parallelism().map_or(2, usize::from).clamp(2, 4) * 2;
    let mut tasks = tokio::task::JoinSet::new();
    for lane in 0..lanes {
        let (ctx, objects) = (ctx.clone(), objects.clone());
        tasks.spawn(async move {
            let mut tally = Tally::default();
            for n in (lane..objects.len()).step_by(lanes) {
                compare(n, &objects[n], &ctx, &mut tally).await;
            }
            tally
        });
    }
    let mut tally = Tally::default();
    while let Some(lane) = tasks.join_next().await {
        tally.absorb(lane.expect("a comparison lane panicked"));
    }
    tally.mismatches.sort_by_key(|(n, _)| *n);

    eprintln!(
        "parity: {} objects compared ({} with findings, {} of them listed by lint in another order, {} patched), \
         {} left alone; corpus split in {split_at:.2?}, all in {:.2?}",
        objects.len(),
        tally.with_findings,
        tally.reordered,
        tally.patched,
        skipped.len(),
        started.elapsed()
    );
    let mismatches: Vec<&str> = tally.mismatches.iter().map(|(_, m)| m.as_str()).collect();
    assert!(
        mismatches.is_empty(),
        "{} mismatches between the webhook and lifeguard on the corpus:\n\n{}",
        mismatches.len(),
        mismatches.join("\n\n")
    );
    // Not vacuous: the corpus has findings, fixes, and findings lint lists
    // in another order.
    assert!(tally.with_findings > 100, "{} objects with findings", tally.with_findings);
    assert!(tally.patched > 10, "{} objects patched", tally.patched);
}
