//! `lifeguard fix` minus the command line: read every input, fix each file
//! against its context's batch (its own Services and those of the other
//! manifests of its directory, as in `lint`), and write the results in
//! place, as diffs, or to stdout.

use std::io::Read;

use policies::Policy;

use super::diff;
use super::file::{FileFix, fix_text};
use crate::engine::parse_text;
use crate::input::{
    Contexts, Discovered, Input, InputName, Limits, contexts, discover, read_input, read_text, services_in, services_of,
};
use crate::outcome::InputError;

/// One input and its fixes.
#[derive(Debug, Clone)]
pub struct FixedInput {
    /// Where it came from.
    pub input: Input,
    /// Whether the file started with a UTF-8 byte order mark (kept on write).
    pub bom: bool,
    /// What was fixed.
    pub fix: FileFix,
}

/// Everything a fix run did.
#[derive(Debug, Default)]
pub struct FixOutcome {
    /// Inputs that were read and parsed, in order.
    pub inputs: Vec<FixedInput>,
    /// Inputs that could not be read, and files that could not be written.
    pub errors: Vec<InputError>,
    /// The policy in force, as the summary names it; `None` for the
    /// `default` pack nothing chose.
    pub policy: Option<String>,
}

impl FixOutcome {
    /// Every error: unreadable inputs, syntax errors, fixes that failed verification, writes.
    pub fn all_errors(&self) -> impl Iterator<Item = &InputError> {
        self.errors.iter().chain(self.inputs.iter().flat_map(|i| &i.fix.errors))
    }
}

/// Reads, parses and fixes every input; writes nothing.
pub fn fix_paths(paths: &[String], policy: &Policy, only: Option<&[String]>, limits: &Limits) -> FixOutcome {
    fix_found(discover(paths), policy, only, limits)
}

/// [`fix_paths`] on inputs already discovered (with `--exclude`, say).
pub fn fix_found(found: Discovered, policy: &Policy, only: Option<&[String]>, limits: &Limits) -> FixOutcome {
    let mut out = FixOutcome::default();
    let threads = crate::pipeline::threads();
    out.errors = fix_each(found, policy, only, limits, threads, |fixed| fixed, |fixed| out.inputs.push(fixed));
    out
}

/// Fixes the inputs of `found` on `threads` threads and hands each one's
/// result, turned into what the caller keeps by `keep` (on the thread that
/// fixed it), to `sink` in input order as soon as it and all before it are
/// done. Returns the inputs that could not be found or read, as errors.
///
/// Every context's Services are read first (see
/// [`crate::input::services`]); then each file is read, parsed, fixed and
/// dropped on a worker, so no parse waits for the others. `threads == 1`
/// does the same on one thread.
pub fn fix_each<T: Send>(
    found: Discovered,
    policy: &Policy,
    only: Option<&[String]>,
    limits: &Limits,
    threads: usize,
    keep: impl Fn(FixedInput) -> T + Sync,
    mut sink: impl FnMut(T),
) -> Vec<InputError> {
    // Skipped chart templates are never edited: they are not YAML.
    let allow_empty = found.allow_empty_stdin;
    let (inputs, discover_errors) = (found.inputs, found.errors);
    let mut errors: Vec<InputError> = discover_errors
        .into_iter()
        .map(|(file, e)| InputError { file, line: None, column: None, message: e.to_string() })
        .collect();
    let Contexts { of_input, mut seeds, .. } = contexts(&inputs, limits);
    // First pass: each file's Services; only stdin's text is kept (it cannot be read twice).
    let first = |i: usize| {
        let input = &inputs[i];
        read_input(input, limits, allow_empty).map(|text| {
            let services = services_in(&text, limits);
            (services, matches!(input, Input::Stdin).then_some(text))
        })
    };
    let mut read: Vec<FirstLook<'_>> = Vec::with_capacity(inputs.len());
    let firsts = crate::pipeline::run_tasks(inputs.len(), threads, first);
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
    let alone = policies::Batch::default();
    let sharing = |context: usize| read.iter().filter(|r| r.context == context).count();
    // Second pass: each file read again, parsed, fixed, handed over, dropped.
    let second = |i: usize| {
        let r = &read[i];
        let name = r.input.display_name();
        let text = match &r.text {
            Some(text) => Ok(std::borrow::Cow::Borrowed(text.as_str())),
            None => read_text(r.input, limits).map(std::borrow::Cow::Owned),
        };
        let fix = match text {
            Ok(text) => {
                let parse = parse_text(&name, &text, limits);
                let met: usize = parse.0.iter().map(|d| services_of(d).count()).sum();
                let batch = seeds.get(r.context).unwrap_or(&alone);
                if met == r.services {
                    fix_text(&name, &text, parse, batch, policy, only, limits)
                } else if sharing(r.context) == 1 {
                    // Its context is this file and the Services of files not
                    // named: the Services it holds are known now.
                    let mut own = batch.clone();
                    own.add_documents(&parse.0);
                    fix_text(&name, &text, parse, &own, policy, only, limits)
                } else {
                    let mut fix = fix_text(&name, &text, parse, batch, policy, only, limits);
                    fix.errors.push(InputError {
                        file: name.clone(),
                        line: None,
                        column: None,
                        message: format!(
                            "internal error: {met} Services read where the first look found {} (please report); \
                             the findings of the files beside it may be incomplete",
                            r.services
                        ),
                    });
                    fix
                }
            }
            // The file went away between the two reads.
            Err(e) => {
                let mut fix = fix_text(&name, "", (Vec::new(), None), &alone, policy, only, limits);
                fix.errors.push(InputError::unread(name, &e));
                fix
            }
        };
        keep(FixedInput { input: r.input.clone(), bom: starts_with_bom(r.input), fix })
    };
    // A task that panicked is done again here, so a panic it repeats is the
    // caller's, as when the work is done without threads.
    crate::pipeline::run_ordered(read.len(), threads, second, |i, kept| sink(kept.unwrap_or_else(|| second(i))));
    errors
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

fn starts_with_bom(input: &Input) -> bool {
    let Input::File(path) = input else { return false };
    let mut head = [0u8; 3];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head)).is_ok_and(|()| head == *b"\xEF\xBB\xBF")
}

/// What to do with the fixed text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// Rewrite changed files; stdin's fixed stream goes to stdout.
    InPlace,
    /// Print a unified diff per changed input; write nothing.
    Diff,
}

/// Writes the outcome: changed files in place (or diffs), stdin's stream to
/// `stdout`. Failed writes become errors of the outcome.
pub fn write(out: &mut FixOutcome, mode: Output, stdout: &mut impl std::io::Write) -> std::io::Result<()> {
    let mut errors = Vec::new();
    for i in &out.inputs {
        let fix = &i.fix;
        match (mode, &i.input) {
            (Output::Diff, _) => stdout.write_all(diff::unified(&fix.file, &fix.original, &fix.fixed).as_bytes())?,
            (Output::InPlace, Input::Stdin) => stdout.write_all(fix.fixed.as_bytes())?,
            (Output::InPlace, Input::File(path)) if fix.changed() => {
                errors.extend(write_fixed(path, &fix.file, &with_bom(&fix.fixed, i.bom)).err());
            }
            (Output::InPlace, Input::File(_)) => {}
        }
    }
    stdout.flush()?;
    out.errors.extend(errors);
    Ok(())
}

/// The bytes to write for a fixed text: with the byte order mark the file
/// was read with.
pub(super) fn with_bom(fixed: &str, bom: bool) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(fixed.len() + 3);
    if bom {
        bytes.extend_from_slice(b"\xEF\xBB\xBF");
    }
    bytes.extend_from_slice(fixed.as_bytes());
    bytes
}

/// Writes a fixed file in place; the error names `file` as shown.
pub(super) fn write_fixed(path: &std::path::Path, file: &str, bytes: &[u8]) -> Result<(), InputError> {
    std::fs::write(path, bytes).map_err(|e| InputError {
        file: file.to_owned(),
        line: None,
        column: None,
        message: format!("cannot write the fixed file: {e}"),
    })
}
