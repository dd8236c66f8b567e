//! The single-threaded path: each source parsed in order on the calling
//! thread, each document done with its context's Services seen so far,
//! and, once everything is read, the few objects a later Service could
//! change done again ([`Batch::differs_for`]). It keeps every document
//! until the end, so it is the reference the parallel path is checked
//! against (`LIFEGUARD_THREADS=1`), and the fallback for what that path
//! cannot cut safely.

use std::panic::{AssertUnwindSafe, catch_unwind};

use policies::{Batch, BatchMark, objects_in};

use super::source::{Source, SourceResult};
use super::step::{Keeper, Step};
use crate::documents::syntax_error;
use crate::input::{Document, Limits, Template, TemplateScanner, parse_stream_each};

struct Done<Out> {
    source: usize,
    document: Document,
    template: Option<Template>,
    mark: BatchMark,
    out: Out,
}

/// Does `step` on every document of `sources`, each with the batch
/// `batches[source.context]` starts from; one result per source, in order.
pub(super) fn run<S: Step, K: Keeper<S::Out>>(
    sources: &[Source<'_>],
    mut batches: Vec<Batch>,
    limits: &Limits,
    step: &S,
    keep: &mut K,
) -> Vec<SourceResult<S::Out>> {
    let mut done: Vec<Done<S::Out>> = Vec::new();
    let mut results: Vec<SourceResult<S::Out>> =
        sources.iter().map(|_| SourceResult { serial: true, ..SourceResult::default() }).collect();
    for (i, source) in sources.iter().enumerate() {
        let mut scanner = TemplateScanner::new(source.text);
        let parsed = catch_unwind(AssertUnwindSafe(|| {
            parse_stream_each(source.text, limits, |document| {
                let template = scanner
                    .next(&document)
                    .map(|(t, span)| keep.templates().find(source.name, t, || scanner.rendered(span)));
                let Some(batch) = batches.get_mut(source.context) else { return };
                batch.add_documents([&document.value]);
                let mark = batch.mark();
                let out = step.document(source, &document, batch);
                done.push(Done { source: i, document, template, mark, out });
            })
        }));
        if let Some(result) = results.get_mut(i) {
            result.syntax = syntax_error(source.name, parsed);
        }
    }
    for mut d in done {
        let source = &sources[d.source];
        // Most documents were done with every Service of their context already seen.
        if let Some(batch) = batches.get(source.context) {
            let stale = d.mark != batch.mark();
            if stale && objects_in(&d.document.value).into_iter().any(|(_, o)| batch.differs_for(d.mark, o)) {
                d.out = step.document(source, &d.document, batch);
            }
        }
        if let Some(result) = results.get_mut(d.source) {
            keep.document(&mut d.out, d.template);
            S::join(&mut result.out, d.out);
        }
    }
    results
}
