//! Parse and lint at once: one thread parses the inputs and hands over each
//! document as soon as it is complete; the calling thread lints it
//! meanwhile. Linting costs less than parsing, so a whole lint takes little
//! more than the parse.
//!
//! Services inform the rules, and a Service can come after the workload it
//! selects. Each source belongs to a context (its directory, see
//! [`crate::input::context`]) whose batch starts with the Services of the
//! files that were not named; each document is linted with its context's
//! Services seen so far, and once the input is read, the engine says which
//! objects a later Service could change ([`Batch::differs_for`]); only those
//! are linted again.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::sync_channel;

use policies::{Batch, BatchMark, Policy, objects_in};

use crate::input::{Document, Limits, Template, TemplateScanner, parse_stream_each};
use crate::lint::{InputError, Outcome, Parsed, lint_document, syntax_error};

/// Documents go to the linter in batches of this many: one hand-over per
/// document costs a thread wake-up each, more than linting a small object.
const BATCH: usize = 32;

/// Batches in flight between the parser and the linter; bounds memory if
/// the linter falls behind.
const IN_FLIGHT: usize = 8;

enum Piece {
    Document { source: usize, document: Document, template: Option<Template> },
    Failed { source: usize, error: InputError },
}

struct Done {
    source: usize,
    context: usize,
    document: Document,
    template: Option<Template>,
    mark: BatchMark,
    outcome: Outcome,
}

/// What [`lint_sources`] read and found.
#[derive(Debug)]
pub struct Linted {
    /// Findings in input order, and the errors found while linting objects.
    pub outcome: Outcome,
    /// Each source's syntax error, by source index.
    pub syntax_errors: Vec<(usize, InputError)>,
    /// The documents read, per source (freed by the caller, off the hot path).
    pub parsed: Vec<Parsed>,
}

/// Parses and lints `(name, text)` sources that share one context (the
/// Services of any of them inform all).
pub fn lint_sources(sources: &[(String, String)], policy: &Policy, limits: &Limits) -> Linted {
    lint_sources_in(sources, &vec![0; sources.len()], vec![Batch::default()], policy, limits)
}

/// Parses and lints `(name, text)` sources, each in its context:
/// `context_of[i]` indexes `seeds`, the batch its context starts from. A
/// source whose context is out of range gets one of its own.
pub fn lint_sources_in(
    sources: &[(String, String)],
    context_of: &[usize],
    seeds: Vec<Batch>,
    policy: &Policy,
    limits: &Limits,
) -> Linted {
    let mut batches = seeds;
    let context_of: Vec<usize> = (0..sources.len())
        .map(|i| match context_of.get(i) {
            Some(&c) if c < batches.len() => c,
            _ => {
                batches.push(Batch::default());
                batches.len() - 1
            }
        })
        .collect();
    let context_of = &context_of;
    let (tx, rx) = sync_channel::<Vec<Piece>>(IN_FLIGHT);
    // The calling thread parses (its allocator arena is the warm one that a
    // plain parse would use); a helper thread lints what has been parsed.
    let (done, syntax, batches) = std::thread::scope(|scope| {
        let linter = scope.spawn(move || {
            let mut done: Vec<Done> = Vec::new();
            let mut syntax: Vec<(usize, InputError)> = Vec::new();
            for piece in rx.into_iter().flatten() {
                match piece {
                    Piece::Document { source, document, template } => {
                        let context = context_of[source];
                        let Some(batch) = batches.get_mut(context) else { continue };
                        for (_, object) in objects_in(&document.value) {
                            batch.add(object);
                        }
                        let mark = batch.mark();
                        let mut outcome = Outcome::default();
                        lint_document(&sources[source].0, &document, template.as_ref(), batch, policy, &mut outcome);
                        done.push(Done { source, context, document, template, mark, outcome });
                    }
                    Piece::Failed { source, error } => syntax.push((source, error)),
                }
            }
            (done, syntax, batches)
        });
        let mut pending: Vec<Piece> = Vec::with_capacity(BATCH);
        // A closed channel means the linter is gone; its join below says why.
        let flush = |pending: &mut Vec<Piece>| {
            let _ = tx.send(std::mem::replace(pending, Vec::with_capacity(BATCH)));
        };
        for (source, (name, text)) in sources.iter().enumerate() {
            let mut scanner = TemplateScanner::new(text);
            let parsed = catch_unwind(AssertUnwindSafe(|| {
                parse_stream_each(text, limits, |document| {
                    let template = scanner.next(&document);
                    pending.push(Piece::Document { source, document, template });
                    if pending.len() == BATCH {
                        flush(&mut pending);
                    }
                })
            }));
            if let Some(error) = syntax_error(name, parsed) {
                pending.push(Piece::Failed { source, error });
            }
        }
        flush(&mut pending);
        drop(tx);
        // lint_document catches panics per object, so the linter itself does not panic.
        linter.join().unwrap_or_default()
    });
    let mut out = Outcome { files: sources.len(), ..Outcome::default() };
    let mut parsed: Vec<Parsed> = sources
        .iter()
        .map(|(name, _)| Parsed { file: name.clone(), documents: Vec::new(), templates: Vec::new() })
        .collect();
    for mut d in done {
        // Most documents were linted with every Service of their context already seen.
        if let Some(batch) = batches.get(d.context) {
            let stale = d.mark != batch.mark();
            if stale && objects_in(&d.document.value).into_iter().any(|(_, o)| batch.differs_for(d.mark, o)) {
                d.outcome = Outcome::default();
                lint_document(&sources[d.source].0, &d.document, d.template.as_ref(), batch, policy, &mut d.outcome);
            }
        }
        out.absorb(d.outcome);
        if let Some(p) = parsed.get_mut(d.source) {
            p.documents.push(d.document);
            p.templates.push(d.template);
        }
    }
    Linted { outcome: out, syntax_errors: syntax, parsed }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lint(sources: &[(&str, &str)]) -> Outcome {
        let owned: Vec<(String, String)> = sources.iter().map(|(n, t)| ((*n).to_owned(), (*t).to_owned())).collect();
        lint_sources(&owned, &Policy::default(), &Limits::default()).outcome
    }

    const WORKLOAD: &str = "kind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: web\n        ports: [{containerPort: 80}]\n";
    const SELECTING: &str = "kind: Service\nmetadata: {name: web}\nspec: {selector: {app: web}}\n";
    const OTHER: &str = "kind: Service\nmetadata: {name: other}\nspec: {selector: {app: other}}\n";

    fn readiness_messages(out: &Outcome) -> Vec<String> {
        out.findings
            .iter()
            .filter(|f| f.finding.rule == "readiness-probe-missing")
            .map(|f| f.finding.message.clone())
            .collect()
    }

    #[test]
    fn a_service_after_its_workload_gives_the_same_verdict_as_before_it() {
        let before = lint(&[("a.yaml", &format!("{SELECTING}---\n{WORKLOAD}"))]);
        let after = lint(&[("a.yaml", &format!("{WORKLOAD}---\n{SELECTING}"))]);
        let across = lint(&[("a.yaml", WORKLOAD), ("b.yaml", SELECTING)]);
        assert_eq!(readiness_messages(&before).len(), 1);
        assert!(readiness_messages(&before)[0].contains("Service/web"), "{:?}", readiness_messages(&before));
        assert_eq!(readiness_messages(&after), readiness_messages(&before));
        assert_eq!(readiness_messages(&across), readiness_messages(&before));
    }

    #[test]
    fn a_later_service_that_selects_nothing_removes_the_ports_only_finding() {
        let alone = lint(&[("a.yaml", WORKLOAD)]);
        let with_other = lint(&[("a.yaml", &format!("{WORKLOAD}---\n{OTHER}"))]);
        assert_eq!(readiness_messages(&alone).len(), 1);
        assert!(readiness_messages(&with_other).is_empty());
    }

    #[test]
    fn syntax_errors_are_returned_by_source_and_documents_before_them_linted() {
        let owned = vec![
            ("a.yaml".to_owned(), format!("{WORKLOAD}---\nx: [1, 2\n")),
            ("b.yaml".to_owned(), WORKLOAD.to_owned()),
        ];
        let linted = lint_sources(&owned, &Policy::default(), &Limits::default());
        let (out, syntax) = (linted.outcome, linted.syntax_errors);
        assert_eq!(out.objects, 2);
        assert_eq!(syntax.len(), 1);
        assert_eq!(syntax[0].0, 0);
        assert_eq!(out.files, 2);
    }
}
