//! The pipeline's first step: every discovered input read, in order, with
//! its context (see [`crate::input::context`]); what could not be read is
//! kept with its place, so errors come out in input order.

use policies::Batch;

use crate::input::{Contexts, Discovered, Input, InputName, Limits, contexts, read_input};
use crate::outcome::InputError;
use crate::outcome::unchecked::settle_templated;

/// The inputs read, and what could not be.
#[derive(Debug, Default)]
pub struct Read {
    /// Each input read: its name as shown and its text, in order.
    pub sources: Vec<(String, String)>,
    /// The context of each source, an index into `seeds`.
    pub context_of: Vec<usize>,
    /// Whether each source is a file a walk met (rather than one named).
    pub walked: Vec<bool>,
    /// Per context, the Services of its files that were not named.
    pub seeds: Vec<Batch>,
    /// Paths discovery could not read, first.
    pub discovery: Vec<InputError>,
    /// Each input that could not be read, with the index of the source
    /// that followed it.
    pub unread: Vec<(usize, InputError)>,
}

/// Reads every input of `found`, with its context.
pub fn read(found: &Discovered, limits: &Limits) -> Read {
    let Contexts { of_input, seeds, .. } = contexts(&found.inputs, limits);
    let mut out = Read { seeds, ..Read::default() };
    out.discovery = discovery_errors(found);
    for (input, context) in found.inputs.iter().zip(of_input) {
        let file = input.display_name();
        match read_input(input, limits, found.allow_empty_stdin) {
            Ok(text) => {
                out.sources.push((file, text));
                out.context_of.push(context);
                out.walked.push(matches!(input, Input::File(p) if found.walked.contains(p)));
            }
            Err(e) => out.unread.push((out.sources.len(), InputError::unread(file, &e))),
        }
    }
    out
}

/// The paths discovery could not read, as input errors.
pub(super) fn discovery_errors(found: &Discovered) -> Vec<InputError> {
    found
        .errors
        .iter()
        .map(|(file, e)| InputError { file: file.clone(), line: None, column: None, message: e.to_string() })
        .collect()
}

impl Read {
    /// Takes out of `syntax` the errors of files a walk met that are
    /// another tool's templates (Jinja, Terraform): their notes, in input
    /// order. A file named directly keeps its error, with a hint.
    pub fn templated(&self, syntax: &mut Vec<(usize, InputError)>) -> Vec<InputError> {
        let mut notes = Vec::new();
        syntax.retain_mut(|(i, e)| {
            let Some((_, text)) = self.sources.get(*i) else { return true };
            let walked = self.walked.get(*i).copied().unwrap_or(false);
            let note = settle_templated(e, text, walked);
            let kept = note.is_none();
            notes.extend(note);
            kept
        });
        notes
    }

    /// Every input error in input order: discovery's, then each input's
    /// read error or syntax error (`syntax`, by source index) where it came.
    pub fn errors(&mut self, syntax: Vec<(usize, InputError)>) -> Vec<InputError> {
        let mut errors = std::mem::take(&mut self.discovery);
        let mut by_source = std::mem::take(&mut self.unread);
        // Read errors sit before the source that followed them, as in input order.
        by_source.extend(syntax);
        by_source.sort_by_key(|(i, _)| *i);
        errors.extend(by_source.into_iter().map(|(_, e)| e));
        errors
    }
}
