//! What a command plugs into the pipeline: its work on one document (on any
//! thread), and what becomes of each document's output on the calling
//! thread, in input order. `lint` lints a document, `simulate` simulates
//! its pod-bearing objects; both are scheduled, fed their context's
//! Services and placed in their Helm templates by the same code.

use policies::Batch;

use super::source::Source;
use crate::input::{Document, Template, TemplateFinder};

/// One command's work on one document.
pub trait Step: Sync {
    /// What one document gives; a source's outputs are joined in order.
    type Out: Send + Default;
    /// Works on one parsed document of `source`, with every Service of its
    /// context in `batch`. Called on any thread, possibly twice for the
    /// same document (the single-threaded path redoes a document a later
    /// Service changes): it must not depend on anything but its arguments.
    fn document(&self, source: &Source<'_>, document: &Document, batch: &Batch) -> Self::Out;
    /// Appends a document's output to its source's.
    fn join(into: &mut Self::Out, part: Self::Out);
}

/// What is done with each document's output before it is joined, on the
/// calling thread in input order.
pub trait Keeper<Out> {
    /// Where a rendered document's Helm template is looked up.
    fn templates(&mut self) -> &mut TemplateFinder;
    /// Shapes one document's output, given the Helm template it was
    /// rendered from (as found on disk), if any.
    fn document(&mut self, out: &mut Out, template: Option<Template>);
}
