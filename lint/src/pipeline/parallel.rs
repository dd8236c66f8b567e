//! The parallel path: every source cut at its document markers
//! ([`crate::input::split`]), the parts parsed and done on all cores, and
//! each document dropped as soon as it is done.
//!
//! A document is done with the Services of its whole context, so nothing
//! has to be kept for a second look: a first pass reads only the parts
//! whose text may hold a Service ([`may_hold_context`], a textual check),
//! which are few and small, and keeps their documents for the second. The
//! second pass reads every other part once (a document of a kind no rule
//! reads without the parser, [`read_inert`]) and counts the Services it
//! meets; if it meets one the first pass did not (a
//! text the check misread), or any part fails to parse alone (a syntax
//! error, a cut that was not safe), or a task dies, the whole context is
//! done again by the single-threaded path, so the output is always what
//! that path gives.

use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};

use policies::Batch;

use super::source::{Source, SourceResult};
use super::step::{Keeper, Step};
use super::{pool, serial};
use crate::input::split::{Part, parts};
use crate::input::{Document, Limits, TemplateScanner, context_of, may_hold_context, parse_part_lean, read_inert};

/// Text handed to one task: large enough that a task's overhead (a parser,
/// a result) is small, small enough that the cores share a stream evenly.
const TASK_BYTES: usize = 64 * 1024;

/// How much text the first pass keeps the documents of for the second:
/// the parts that may hold a Service are few and small; past this bound
/// (a stream of many), the rest are read again rather than held.
const KEPT_BYTES: usize = 2 * 1024 * 1024;

/// One document done: the lines of its root node (for its Helm
/// template) and what it gave.
struct Done<Out> {
    first: u32,
    end: u32,
    out: Out,
}

struct Task {
    source: usize,
    parts: Range<usize>,
}

struct TaskResult<Out> {
    documents: Vec<Done<Out>>,
    services: usize,
    failed: bool,
}

impl<Out> Default for TaskResult<Out> {
    fn default() -> Self {
        TaskResult { documents: Vec::new(), services: 0, failed: false }
    }
}

/// Does `step` on every document of `sources`; one result per source, in
/// order. `seeds[c]` is the batch context `c` starts from (every source's
/// context is in range).
pub(super) fn run<S: Step, K: Keeper<S::Out>>(
    sources: &[Source<'_>],
    seeds: Vec<Batch>,
    limits: &Limits,
    threads: usize,
    step: &S,
    keep: &mut K,
) -> Vec<SourceResult<S::Out>> {
    let mut failed = vec![false; seeds.len()];
    let fail = |failed: &mut Vec<bool>, context: usize| {
        if let Some(f) = failed.get_mut(context) {
            *f = true;
        }
    };
    let split: Vec<Vec<(Part, bool)>> = pool::run(sources.len(), threads, |i| {
        let text = sources[i].text;
        parts(text).into_iter().map(|p| (p, may_hold_context(&text[p.start..p.end]))).collect()
    })
    .into_iter()
    .enumerate()
    .map(|(i, parts)| {
        parts.unwrap_or_else(|| {
            fail(&mut failed, sources[i].context);
            Vec::new()
        })
    })
    .collect();

    // First pass: the Services, from the parts that may hold one. Their
    // documents are kept for the second pass (up to a bound), so no part
    // is read twice.
    let candidates: Vec<(usize, usize)> = split
        .iter()
        .enumerate()
        .flat_map(|(s, parts)| parts.iter().enumerate().filter(|(_, (_, may))| *may).map(move |(k, _)| (s, k)))
        .collect();
    let scanned = pool::run(candidates.len(), threads, |i| {
        let (s, k) = candidates[i];
        let (part, _) = split[s][k];
        first_look(&sources[s], part, limits)
    });
    let mut batches = seeds.clone();
    let mut expected: Vec<Vec<usize>> = split.iter().map(|parts| vec![0; parts.len()]).collect();
    let mut kept: Vec<Vec<Option<Vec<Document>>>> =
        split.iter().map(|parts| parts.iter().map(|_| None).collect()).collect();
    let mut room = KEPT_BYTES;
    for (&(s, k), scan) in candidates.iter().zip(scanned) {
        let context = sources[s].context;
        match scan {
            Some(Some(documents)) => {
                if let Some(batch) = batches.get_mut(context) {
                    documents.iter().flat_map(context_of).for_each(|service| batch.add(service));
                }
                expected[s][k] = documents.iter().map(|d| context_of(d).count()).sum();
                let (part, _) = split[s][k];
                if let Some(left) = room.checked_sub(part.end - part.start) {
                    room = left;
                    kept[s][k] = Some(documents);
                }
            }
            _ => fail(&mut failed, context),
        }
    }

    // Second pass: every part, done with its context's Services.
    let tasks = tasks(sources, &split, |context| failed.get(context).is_some_and(|f| !f));
    let mut out: Vec<SourceResult<S::Out>> = sources.iter().map(|_| SourceResult::default()).collect();
    // Each result is kept as soon as it and those before it are done, so
    // the documents' outcomes never wait for the whole input.
    let mut scanning: Option<(usize, TemplateScanner<'_>)> = None;
    let lint_task = |i: usize| {
        let task = &tasks[i];
        let source = &sources[task.source];
        let parts = &split[task.source][task.parts.clone()];
        let kept = &kept[task.source][task.parts.clone()];
        match batches.get(source.context) {
            Some(batch) => do_part(step, source, parts, kept, batch, limits),
            None => TaskResult { failed: true, ..TaskResult::default() },
        }
    };
    pool::run_ordered(tasks.len(), threads, lint_task, |i, result| {
        let task = &tasks[i];
        let source = &sources[task.source];
        let Some(result) = result else {
            fail(&mut failed, source.context);
            return;
        };
        let expected: usize = expected[task.source][task.parts.clone()].iter().sum();
        if result.failed || result.services != expected {
            fail(&mut failed, source.context);
        }
        // A context that failed is done again below; what it gave here is dropped.
        if failed.get(source.context) != Some(&false) {
            return;
        }
        if scanning.as_ref().is_none_or(|(s, _)| *s != task.source) {
            scanning = Some((task.source, TemplateScanner::new(source.text)));
        }
        let (Some((_, scanner)), Some(kept)) = (&mut scanning, out.get_mut(task.source)) else { return };
        for document in result.documents {
            let mut out = document.out;
            let template = scanner.next_at(document.first, document.end);
            let template = template.map(|(t, span)| keep.templates().find(source.name, t, || scanner.rendered(span)));
            keep.document(&mut out, template);
            S::join(&mut kept.out, out);
        }
    });

    // What could not be done here is done by the single-threaded path, a
    // context at a time, so a context's output always comes from one path.
    let fallback: Vec<usize> = (0..sources.len()).filter(|&i| failed.get(sources[i].context) != Some(&false)).collect();
    if !fallback.is_empty() {
        let subset: Vec<Source<'_>> = fallback.iter().map(|&i| sources[i]).collect();
        for (i, result) in fallback.into_iter().zip(serial::run(&subset, seeds, limits, step, keep)) {
            if let Some(slot) = out.get_mut(i) {
                *slot = result;
            }
        }
    }
    out
}

/// The parts of each source whose context is `usable`, grouped into tasks
/// of about [`TASK_BYTES`] of consecutive text.
fn tasks(sources: &[Source<'_>], split: &[Vec<(Part, bool)>], usable: impl Fn(usize) -> bool) -> Vec<Task> {
    let mut tasks = Vec::new();
    for (s, parts) in split.iter().enumerate() {
        if !usable(sources[s].context) {
            continue;
        }
        let mut from = 0;
        let mut size = 0;
        for (k, (part, _)) in parts.iter().enumerate() {
            size += part.end - part.start;
            if size >= TASK_BYTES || k + 1 == parts.len() {
                tasks.push(Task { source: s, parts: from..k + 1 });
                (from, size) = (k + 1, 0);
            }
        }
    }
    tasks
}

/// The documents of a part that may hold a Service, as the second pass
/// would read them (a document no rule reads, without the parser); `None`
/// when it does not read alone.
fn first_look(source: &Source<'_>, part: Part, limits: &Limits) -> Option<Vec<Document>> {
    let text = &source.text[part.start..part.end];
    let inert = |kind: &str| source.policy.reads_nothing_of(kind);
    let mut documents = Vec::new();
    let parsed = catch_unwind(AssertUnwindSafe(|| match read_inert(text, part.origin, limits, inert) {
        Some(document) => {
            documents.push(document);
            None
        }
        None => parse_part_lean(text, part.origin, limits, |d| documents.push(d)),
    }));
    matches!(parsed, Ok(None)).then_some(documents)
}

/// Reads consecutive parts of a source and does `step` on each document:
/// `kept[k]` holds the documents of `parts[k]` the first pass read, if it
/// kept them. A part whose kind no rule of the source's policy reads is
/// taken without the parser when it reads without error ([`read_inert`]);
/// the others are parsed, each run of them in one piece.
fn do_part<S: Step>(
    step: &S,
    source: &Source<'_>,
    parts: &[(Part, bool)],
    kept: &[Option<Vec<Document>>],
    batch: &Batch,
    limits: &Limits,
) -> TaskResult<S::Out> {
    let mut result = TaskResult::default();
    let inert = |kind: &str| source.policy.reads_nothing_of(kind);
    let parsed = catch_unwind(AssertUnwindSafe(|| {
        let mut on_document = |document: &Document| {
            result.services += context_of(document).count();
            let out = step.document(source, document, batch);
            result.documents.push(Done { first: document.root.start.line, end: document.root.end.line, out });
        };
        // The parts not yet parsed: from the start of the first to the end of the last.
        let mut run: Option<(Part, usize)> = None;
        let parse = |run: &mut Option<(Part, usize)>, on_document: &mut dyn FnMut(&Document)| {
            let (first, end) = run.take()?;
            parse_part_lean(&source.text[first.start..end], first.origin, limits, |d| on_document(&d))
        };
        for ((part, _), kept) in parts.iter().zip(kept) {
            let text = &source.text[part.start..part.end];
            let inert_document = if kept.is_some() { None } else { read_inert(text, part.origin, limits, inert) };
            if kept.is_none() && inert_document.is_none() {
                run = Some((run.map_or(*part, |(first, _)| first), part.end));
                continue;
            }
            if let Some(error) = parse(&mut run, &mut on_document) {
                return Some(error);
            }
            kept.iter().flatten().chain(&inert_document).for_each(&mut on_document);
        }
        parse(&mut run, &mut on_document)
    }));
    result.failed = !matches!(parsed, Ok(None));
    result
}
