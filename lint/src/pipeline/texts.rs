//! The pipeline for a step that works on whole texts (`fix`, which edits a
//! file and reads it back): every context's Services read first (the one
//! reader, [`crate::input::context_objects`]), then each input read again, parsed,
//! handed to the step and dropped on a worker, so no parse waits for the
//! others and no text is held longer than its step: only stdin's text is
//! kept from the first look, as it cannot be read twice.

use std::borrow::Cow;

use policies::Batch;

use super::pool;
use super::read::discovery_errors;
use crate::documents::parse_text;
use crate::input::{Contexts, Discovered, Document, Input, InputName, Limits, contexts, read_input, read_text};
use crate::input::{context_in, context_of};
use crate::outcome::InputError;

/// One input as a per-text step gets it.
#[derive(Debug)]
pub struct Text<'a> {
    /// Where it came from.
    pub input: &'a Input,
    /// Its name as shown.
    pub name: String,
    /// Its text (empty when it went away between the two reads).
    pub text: &'a str,
    /// Its documents, and its syntax error if any.
    pub parse: (Vec<Document>, Option<InputError>),
    /// Every Service of its context.
    pub batch: &'a Batch,
    /// An error of the input beyond its parse, for the step's output: the
    /// file went away between the two reads, or the second read met other
    /// Services than the first (never expected).
    pub error: Option<InputError>,
}

/// An input read by the first pass.
struct FirstLook<'a> {
    input: &'a Input,
    context: usize,
    /// The Services the first pass found in it.
    services: usize,
    /// Its text, for stdin only.
    text: Option<String>,
}

/// Does `step` on every input of `found` on `threads` threads and hands
/// each result to `sink` in input order as soon as it and all before it
/// are done. Returns the inputs that could not be found or read, as errors.
pub fn each_text<T: Send>(
    found: Discovered,
    limits: &Limits,
    threads: usize,
    step: impl Fn(Text<'_>) -> T + Sync,
    mut sink: impl FnMut(T),
) -> Vec<InputError> {
    let mut errors = discovery_errors(&found);
    let (inputs, allow_empty) = (found.inputs, found.allow_empty_stdin);
    let Contexts { of_input, mut seeds, .. } = contexts(&inputs, limits);
    // First pass: each file's Services.
    let first = |i: usize| {
        let input = &inputs[i];
        read_input(input, limits, allow_empty).map(|text| {
            let services = context_in(&text, limits);
            (services, matches!(input, Input::Stdin).then_some(text))
        })
    };
    let mut read: Vec<FirstLook<'_>> = Vec::with_capacity(inputs.len());
    let firsts = pool::run(inputs.len(), threads, first);
    for (i, ((input, context), result)) in inputs.iter().zip(&of_input).zip(firsts).enumerate() {
        match result.unwrap_or_else(|| first(i)) {
            Ok((services, text)) => {
                if let Some(batch) = seeds.get_mut(*context) {
                    services.iter().for_each(|service| batch.add(service));
                }
                read.push(FirstLook { input, context: *context, services: services.len(), text });
            }
            Err(e) => errors.push(InputError::unread(input.display_name(), &e)),
        }
    }
    let alone = Batch::default();
    let sharing = |context: usize| read.iter().filter(|r| r.context == context).count();
    // Second pass: each file read again, parsed, handed to the step, dropped.
    let second = |i: usize| {
        let r = &read[i];
        let name = r.input.display_name();
        let text = match &r.text {
            Some(text) => Ok(Cow::Borrowed(text.as_str())),
            None => read_text(r.input, limits).map(Cow::Owned),
        };
        let batch = seeds.get(r.context).unwrap_or(&alone);
        match text {
            Ok(text) => {
                let parse = parse_text(&name, &text, limits);
                let met: usize = parse.0.iter().map(|d| context_of(d).count()).sum();
                if met == r.services {
                    step(Text { input: r.input, name, text: &text, parse, batch, error: None })
                } else if sharing(r.context) == 1 {
                    // Its context is this file and the Services of files not
                    // named: the Services it holds are known now.
                    let mut own = batch.clone();
                    own.add_documents(parse.0.iter().map(|d| &d.value));
                    step(Text { input: r.input, name, text: &text, parse, batch: &own, error: None })
                } else {
                    let error = InputError {
                        file: name.clone(),
                        line: None,
                        column: None,
                        message: format!(
                            "internal error: {met} Services read where the first look found {} (please report); \
                             the findings of the files beside it may be incomplete",
                            r.services
                        ),
                    };
                    step(Text { input: r.input, name, text: &text, parse, batch, error: Some(error) })
                }
            }
            // The file went away between the two reads.
            Err(e) => {
                let error = Some(InputError::unread(name.clone(), &e));
                step(Text { input: r.input, name, text: "", parse: (Vec::new(), None), batch: &alone, error })
            }
        }
    };
    // A task that panicked is done again here, so a panic it repeats is the
    // caller's, as when the work is done without threads.
    pool::run_ordered(read.len(), threads, second, |i, kept| sink(kept.unwrap_or_else(|| second(i))));
    errors
}
