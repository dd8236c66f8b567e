//! `lifeguard fix` minus the command line: read every input, fix each file
//! against its context's batch (its own Services and those of the other
//! manifests of its directory, as in `lint`), and write the results in
//! place, as diffs, or to stdout.

use std::io::Read;

use policies::Policy;

use super::diff;
use super::file::{FileFix, fix_text};
use crate::input::{Discovered, Input, Limits, discover};
use crate::outcome::InputError;
use crate::outcome::unchecked::settle_templated;
use crate::pipeline::Text;

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

/// Fixes the inputs of `found` on `threads` threads (the pipeline's
/// per-text path, [`crate::pipeline::each_text`]) and hands each one's
/// result, turned into what the caller keeps by `keep` (on the thread that
/// fixed it), to `sink` in input order as soon as it and all before it are
/// done. Returns the inputs that could not be found or read, as errors.
/// Skipped chart templates are never edited: they are not YAML.
pub fn fix_each<T: Send>(
    found: Discovered,
    policy: &Policy,
    only: Option<&[String]>,
    limits: &Limits,
    threads: usize,
    keep: impl Fn(FixedInput) -> T + Sync,
    sink: impl FnMut(T),
) -> Vec<InputError> {
    let walked = std::sync::Arc::clone(&found.walked);
    let step = |t: Text<'_>| {
        let (documents, mut syntax) = t.parse;
        let is_walked = matches!(t.input, Input::File(p) if walked.contains(p));
        let note = syntax.as_mut().and_then(|e| settle_templated(e, t.text, is_walked));
        if note.is_some() {
            syntax = None;
        }
        let mut fix = fix_text(&t.name, t.text, (documents, syntax), t.batch, policy, only, limits);
        let planner = super::kustomize::Planner { batch: t.batch, policy, only };
        super::kustomize::to_sources(t.input, &mut fix, &planner, limits);
        fix.notes.extend(note);
        fix.errors.extend(t.error);
        keep(FixedInput { input: t.input.clone(), bom: starts_with_bom(t.input), fix })
    };
    crate::pipeline::each_text(found, limits, threads, step, sink)
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
    let mut sources = super::kustomize::Sources::default();
    for i in &out.inputs {
        let fix = &i.fix;
        errors.extend(fix.sources.iter().filter_map(|f| sources.claim(&fix.file, f.clone(), &Limits::default()).err()));
        match (mode, &i.input) {
            (Output::Diff, _) => stdout.write_all(diff::unified(&fix.file, &fix.original, &fix.fixed).as_bytes())?,
            (Output::InPlace, Input::Stdin) => stdout.write_all(fix.fixed.as_bytes())?,
            (Output::InPlace, Input::File(path)) if fix.changed() => {
                errors.extend(write_fixed(path, &fix.file, &with_bom(&fix.fixed, i.bom)).err());
            }
            (Output::InPlace, Input::File(_)) => {}
            (Output::InPlace, Input::Rendered(r)) => {
                if fix.fixed != fix.original {
                    errors.push(not_written(r));
                }
            }
        }
    }
    errors.extend(sources.write(mode, stdout)?);
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

/// Why the fixes of a rendered chart were not written: they are edits of
/// `helm template`'s output, and its templates are not YAML to edit. (A
/// Kustomize build's are written in the user's files: `super::kustomize`.)
pub fn not_written(rendered: &crate::input::render::Rendered) -> InputError {
    let pipe = format!("helm template RELEASE {}", rendered.dir.display());
    InputError {
        file: rendered.name.clone(),
        line: None,
        column: None,
        message: format!(
            "not fixed: `fix` does not edit a Helm chart's templates; `lifeguard lint` names the template line of \
             each finding, and `{pipe} | lifeguard fix --diff -` shows the fixes on the output"
        ),
    }
}
