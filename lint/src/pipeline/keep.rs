//! What becomes of each linted document's outcome on its way to the report.

use crate::input::TemplateFinder;
use crate::outcome::Outcome;
use crate::report::stream::Render;

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
}

impl Keep {
    /// Shapes one document's outcome (its templates already set) before it is kept.
    pub(crate) fn document(&mut self, outcome: &mut Outcome) {
        if let Some(render) = &mut self.render {
            render.document(outcome);
        }
    }
}
