//! `lint`'s step: each document linted, and what becomes of its outcome on
//! its way to the report.

use policies::Batch;

use super::source::Source;
use super::step::{Keeper, Step};
use crate::baseline::{Baseline, Recorder};
use crate::documents::lint_document;
use crate::input::{Document, Template, TemplateFinder};
use crate::outcome::Outcome;
use crate::report::stream::Render;

/// `lint` a document: every object judged by the engine, each finding placed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Lint;

impl Step for Lint {
    type Out = Outcome;

    fn document(&self, source: &Source<'_>, document: &Document, batch: &Batch) -> Outcome {
        let mut outcome = Outcome::default();
        lint_document(source.name, document, None, batch, source.policy, &mut outcome);
        outcome
    }

    fn join(into: &mut Outcome, part: Outcome) {
        into.absorb(part);
    }
}

/// How each linted document's outcome is kept for the report, on the
/// calling thread in input order: its Helm template put on disk and, for a
/// report printed finding by finding, its findings rendered at once and
/// dropped ([`Render`]): memory then holds the report's text, not the
/// findings, which take several times as much.
#[derive(Debug, Default)]
pub struct Keep {
    /// Puts each document's Helm template on disk (by default, it does not look).
    pub templates: TemplateFinder,
    /// Renders each document's findings as it comes (by default, they are kept).
    pub render: Option<Render>,
    /// The findings accepted for now (`--baseline`): each one it accepts
    /// moves to the outcome's `baselined`, in input order.
    pub baseline: Option<Baseline>,
    /// Records every finding for a baseline file (`--write-baseline`).
    pub record: Option<Recorder>,
}

impl Keeper<Outcome> for Keep {
    fn templates(&mut self) -> &mut TemplateFinder {
        &mut self.templates
    }

    fn document(&mut self, outcome: &mut Outcome, template: Option<Template>) {
        if let Some(template) = template {
            for f in &mut outcome.findings {
                f.template = Some(template.clone());
            }
            for s in &mut outcome.suppressed {
                s.located.template = Some(template.clone());
            }
            for o in &mut outcome.linted {
                o.template = Some(template.clone());
            }
            // A warning about a rendered line (a repeated key, containers
            // nothing reads) moves to the template or source line that made
            // it, where that is known: no one can open the rendered stream.
            for w in &mut outcome.warnings {
                if let Some((file, line, column)) = w.line.and_then(|l| template.place(l)) {
                    (w.file, w.line, w.column) = (file.to_owned(), Some(line), column);
                }
            }
        }
        if let Some(record) = &mut self.record {
            outcome.findings.iter().for_each(|l| record.record(l));
        }
        if let Some(baseline) = &mut self.baseline {
            let (accepted, new) = std::mem::take(&mut outcome.findings).into_iter().partition(|l| baseline.claim(l));
            (outcome.baselined, outcome.findings) = (accepted, new);
        }
        if let Some(render) = &mut self.render {
            render.document(outcome);
        }
    }
}
