//! The parallel path: every source cut at its document markers
//! ([`crate::input::split`]), the parts parsed and linted on all cores, and
//! each document dropped as soon as it is linted.
//!
//! A document is linted with the Services of its whole context, so nothing
//! has to be kept for a second look: a first pass parses only the parts
//! whose text may hold a Service ([`may_hold_a_service`], a textual check),
//! which are few and small. The second pass parses everything once and
//! counts the Services it meets; if it meets one the first pass did not (a
//! text the check misread), or any part fails to parse alone (a syntax
//! error, a cut that was not safe), or a task dies, the whole context is
//! linted again by the single-threaded path, so the output is always what
//! that path gives.

use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};

use policies::model::ServiceView;
use policies::{Batch, objects_in};
use serde_json::Value;

use super::keep::Keep;
use super::source::{Source, SourceResult};
use super::{pool, serial};
use crate::engine::lint_document;
use crate::input::split::{Part, parts};
use crate::input::{Document, Limits, Template, TemplateScanner, may_hold_a_service, parse_part_lean};
use crate::outcome::Outcome;

/// Text handed to one task: large enough that a task's overhead (a parser,
/// a result) is small, small enough that the cores share a stream evenly.
const TASK_BYTES: usize = 64 * 1024;

/// One document linted: the lines of its root node (for its Helm
/// template) and what it gave.
struct Linted {
    first: u32,
    end: u32,
    outcome: Outcome,
}

struct Task {
    source: usize,
    parts: Range<usize>,
}

#[derive(Default)]
struct TaskResult {
    documents: Vec<Linted>,
    services: usize,
    failed: bool,
}

/// Lints `sources`; one result per source, in order. `seeds[c]` is the
/// batch context `c` starts from (every source's context is in range).
pub(super) fn lint(
    sources: &[Source<'_>],
    seeds: Vec<Batch>,
    limits: &Limits,
    threads: usize,
    keep: &mut Keep,
) -> Vec<SourceResult> {
    let mut failed = vec![false; seeds.len()];
    let fail = |failed: &mut Vec<bool>, context: usize| {
        if let Some(f) = failed.get_mut(context) {
            *f = true;
        }
    };
    let split: Vec<Vec<(Part, bool)>> = pool::run(sources.len(), threads, |i| {
        let text = sources[i].text;
        parts(text).into_iter().map(|p| (p, may_hold_a_service(&text[p.start..p.end]))).collect()
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

    // First pass: the Services, from the parts that may hold one.
    let candidates: Vec<(usize, usize)> = split
        .iter()
        .enumerate()
        .flat_map(|(s, parts)| parts.iter().enumerate().filter(|(_, (_, may))| *may).map(move |(k, _)| (s, k)))
        .collect();
    let scanned = pool::run(candidates.len(), threads, |i| {
        let (s, k) = candidates[i];
        let (part, _) = split[s][k];
        services_in(&sources[s].text[part.start..part.end], part, limits)
    });
    let mut batches = seeds.clone();
    let mut expected: Vec<Vec<usize>> = split.iter().map(|parts| vec![0; parts.len()]).collect();
    for (&(s, k), scan) in candidates.iter().zip(scanned) {
        let context = sources[s].context;
        match scan {
            Some(Some(services)) => {
                expected[s][k] = services.len();
                if let Some(batch) = batches.get_mut(context) {
                    services.iter().for_each(|service| batch.add(service));
                }
            }
            _ => fail(&mut failed, context),
        }
    }

    // Second pass: every part, linted with its context's Services.
    let tasks = tasks(sources, &split, |context| failed.get(context).is_some_and(|f| !f));
    let mut out: Vec<SourceResult> = sources.iter().map(|_| SourceResult::default()).collect();
    // Each result is kept as soon as it and those before it are done, so
    // the documents' outcomes never wait for the whole input.
    let mut scanning: Option<(usize, TemplateScanner<'_>)> = None;
    let lint_task = |i: usize| {
        let task = &tasks[i];
        let source = &sources[task.source];
        let (first, _) = split[task.source][task.parts.start];
        let (last, _) = split[task.source][task.parts.end - 1];
        match batches.get(source.context) {
            Some(batch) => lint_part(source, &source.text[first.start..last.end], first, batch, limits),
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
        // A context that failed is linted again below; what it gave here is dropped.
        if failed.get(source.context) != Some(&false) {
            return;
        }
        if scanning.as_ref().is_none_or(|(s, _)| *s != task.source) {
            scanning = Some((task.source, TemplateScanner::new(source.text)));
        }
        let (Some((_, scanner)), Some(kept)) = (&mut scanning, out.get_mut(task.source)) else { return };
        for document in result.documents {
            let mut outcome = document.outcome;
            let template = scanner.next_at(document.first, document.end);
            set_template(&mut outcome, template.map(|(t, span)| keep.templates.find(t, || scanner.rendered(span))));
            keep.document(&mut outcome);
            kept.outcome.absorb(outcome);
        }
    });

    // What could not be done here is done by the single-threaded path, a
    // context at a time, so a context's output always comes from one path.
    let fallback: Vec<usize> = (0..sources.len()).filter(|&i| failed.get(sources[i].context) != Some(&false)).collect();
    if !fallback.is_empty() {
        let subset: Vec<Source<'_>> = fallback.iter().map(|&i| sources[i]).collect();
        for (i, result) in fallback.into_iter().zip(serial::lint(&subset, seeds, limits, keep)) {
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

/// The Service objects of a part; `None` when it does not parse alone.
fn services_in(text: &str, part: Part, limits: &Limits) -> Option<Vec<Value>> {
    let mut services = Vec::new();
    let parsed = catch_unwind(AssertUnwindSafe(|| {
        parse_part_lean(text, part.origin, limits, |document| {
            services.extend(services_of(&document).cloned());
        })
    }));
    matches!(parsed, Ok(None)).then_some(services)
}

fn services_of(document: &Document) -> impl Iterator<Item = &Value> {
    objects_in(&document.value).into_iter().map(|(_, o)| o).filter(|o| ServiceView::from_object(o).is_some())
}

/// Parses and lints consecutive parts of a source, starting with `first`.
fn lint_part(source: &Source<'_>, text: &str, first: Part, batch: &Batch, limits: &Limits) -> TaskResult {
    let mut result = TaskResult::default();
    let parsed = catch_unwind(AssertUnwindSafe(|| {
        parse_part_lean(text, first.origin, limits, |document| {
            result.services += services_of(&document).count();
            let mut outcome = Outcome::default();
            lint_document(source.name, &document, None, batch, source.policy, &mut outcome);
            result.documents.push(Linted { first: document.root.start.line, end: document.root.end.line, outcome });
        })
    }));
    result.failed = !matches!(parsed, Ok(None));
    result
}

/// Gives a document's findings and objects the Helm template it was
/// rendered from, as the single-threaded path does while linting.
fn set_template(outcome: &mut Outcome, template: Option<Template>) {
    let Some(template) = template else { return };
    for f in &mut outcome.findings {
        f.template = Some(template.clone());
    }
    for s in &mut outcome.suppressed {
        s.located.template = Some(template.clone());
    }
    for o in &mut outcome.linted {
        o.template = Some(template.clone());
    }
}
