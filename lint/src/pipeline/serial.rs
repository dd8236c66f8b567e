//! The single-threaded path: each source parsed in order on the calling
//! thread, each document linted with its context's Services seen so far,
//! and, once everything is read, the few objects a later Service could
//! change linted again ([`Batch::differs_for`]). It keeps every document
//! until the end, so it is the reference the parallel path is checked
//! against (`LIFEGUARD_THREADS=1`), and the fallback for what that path
//! cannot cut safely.

use std::panic::{AssertUnwindSafe, catch_unwind};

use policies::{Batch, BatchMark, objects_in};

use super::keep::Keep;
use super::source::{Source, SourceResult};
use crate::engine::{lint_document, syntax_error};
use crate::input::{Document, Limits, Template, TemplateScanner, parse_stream_each};
use crate::outcome::Outcome;

struct Done {
    source: usize,
    document: Document,
    template: Option<Template>,
    mark: BatchMark,
    outcome: Outcome,
}

/// Lints `sources`, each with the batch `batches[source.context]` starts
/// from; one result per source, in order.
pub(super) fn lint(
    sources: &[Source<'_>],
    mut batches: Vec<Batch>,
    limits: &Limits,
    keep: &mut Keep,
) -> Vec<SourceResult> {
    let mut done: Vec<Done> = Vec::new();
    let mut results: Vec<SourceResult> =
        sources.iter().map(|_| SourceResult { serial: true, ..SourceResult::default() }).collect();
    for (i, source) in sources.iter().enumerate() {
        let mut scanner = TemplateScanner::new(source.text);
        let parsed = catch_unwind(AssertUnwindSafe(|| {
            parse_stream_each(source.text, limits, |document| {
                let template =
                    scanner.next(&document).map(|(t, span)| keep.templates.find(t, || scanner.rendered(span)));
                let Some(batch) = batches.get_mut(source.context) else { return };
                for (_, object) in objects_in(&document.value) {
                    batch.add(object);
                }
                let mark = batch.mark();
                let mut outcome = Outcome::default();
                lint_document(source.name, &document, template.as_ref(), batch, source.policy, &mut outcome);
                done.push(Done { source: i, document, template, mark, outcome });
            })
        }));
        if let Some(result) = results.get_mut(i) {
            result.syntax = syntax_error(source.name, parsed);
        }
    }
    for mut d in done {
        let source = &sources[d.source];
        // Most documents were linted with every Service of their context already seen.
        if let Some(batch) = batches.get(source.context) {
            let stale = d.mark != batch.mark();
            if stale && objects_in(&d.document.value).into_iter().any(|(_, o)| batch.differs_for(d.mark, o)) {
                d.outcome = Outcome::default();
                lint_document(source.name, &d.document, d.template.as_ref(), batch, source.policy, &mut d.outcome);
            }
        }
        if let Some(result) = results.get_mut(d.source) {
            keep.document(&mut d.outcome);
            result.outcome.absorb(d.outcome);
        }
    }
    results
}
