//! `lifeguard fix` minus the command line: read every input, fix each file
//! against its context's batch (its own Services and those of the other
//! manifests of its directory, as in `lint`), and write the results in
//! place, as diffs, or to stdout.

use std::io::Read;

use policies::{Policy, Severity, objects_in};

use super::diff;
use super::file::{FileFix, fix_text};
use crate::input::{Contexts, Discovered, Input, InputName, Limits, contexts, discover, read_text};
use crate::lint::{InputError, parse_text};
use crate::policy_discovery::Resolved;

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

    /// 2 on any error; 1 when a file changed (or would) or a finding at or
    /// above `fail_on` remains; else 0.
    pub fn exit_code(&self, fail_on: Option<Severity>) -> u8 {
        self.exit_code_by(|_| fail_on)
    }

    /// [`FixOutcome::exit_code`] with each file's own threshold (its policy's `denySeverity`).
    pub fn exit_code_by(&self, fail_on: impl Fn(&str) -> Option<Severity>) -> u8 {
        let remaining = self
            .inputs
            .iter()
            .flat_map(|i| &i.fix.remaining)
            .any(|l| fail_on(&l.file).is_some_and(|min| l.finding.severity >= min));
        if self.all_errors().next().is_some() {
            2
        } else if remaining || self.inputs.iter().any(|i| i.fix.changed()) {
            1
        } else {
            0
        }
    }
}

/// Reads, parses and fixes every input; writes nothing.
pub fn fix_paths(paths: &[String], policy: &Policy, only: Option<&[String]>, limits: &Limits) -> FixOutcome {
    fix_found(discover(paths), policy, only, limits)
}

/// Fixes each run of inputs with its own policy (see
/// [`crate::policy_discovery`]), in input order; writes nothing.
pub fn fix_resolved(resolved: &mut Resolved, only: Option<&[String]>, limits: &Limits) -> FixOutcome {
    let mut out = FixOutcome { policy: resolved.summary_note(), ..FixOutcome::default() };
    out.errors.append(&mut resolved.errors);
    for (index, found) in std::mem::take(&mut resolved.runs) {
        let Some(in_force) = resolved.policies.get(index) else { continue };
        let mut part = fix_found(found, &in_force.policy, only, limits);
        out.inputs.append(&mut part.inputs);
        out.errors.append(&mut part.errors);
    }
    out
}

/// [`fix_paths`] on inputs already discovered (with `--exclude`, say).
pub fn fix_found(found: Discovered, policy: &Policy, only: Option<&[String]>, limits: &Limits) -> FixOutcome {
    // Skipped chart templates are never edited: they are not YAML.
    let (inputs, discover_errors) = (found.inputs, found.errors);
    let mut out = FixOutcome::default();
    out.errors.extend(discover_errors.into_iter().map(|(file, e)| InputError {
        file,
        line: None,
        column: None,
        message: e.to_string(),
    }));
    let Contexts { of_input, mut seeds, .. } = contexts(&inputs, limits);
    let mut texts = Vec::with_capacity(inputs.len());
    for (input, context) in inputs.into_iter().zip(of_input) {
        match read_text(&input, limits) {
            Ok(text) => {
                let bom = starts_with_bom(&input);
                texts.push((input, bom, text, context));
            }
            Err(e) => out.errors.push(InputError {
                file: input.display_name(),
                line: None,
                column: None,
                message: e.to_string(),
            }),
        }
    }
    // Each text is parsed once: all of them first (on every core), since
    // Services in any file of a context inform the rules, then each one is
    // fixed from its parse (on every core too; a fix re-reads what it writes).
    let threads = crate::pipeline::threads();
    let parse = |i: usize| {
        let (input, _, text, _) = &texts[i];
        parse_text(&input.display_name(), text, limits)
    };
    let parsed: Vec<_> = crate::pipeline::run_tasks(texts.len(), threads, parse)
        .into_iter()
        .enumerate()
        // A task whose thread died is done again here, so it is never lost.
        .map(|(i, p)| p.unwrap_or_else(|| parse(i)))
        .collect();
    for ((_, _, _, context), (docs, _)) in texts.iter().zip(&parsed) {
        if let Some(batch) = seeds.get_mut(*context) {
            for (_, object) in docs.iter().flat_map(|d| objects_in(&d.value)) {
                batch.add(object);
            }
        }
    }
    let alone = policies::Batch::default();
    let parsed: Vec<std::sync::Mutex<Option<_>>> = parsed.into_iter().map(|p| std::sync::Mutex::new(Some(p))).collect();
    let fix = |i: usize| {
        let (input, _, text, context) = &texts[i];
        let batch = seeds.get(*context).unwrap_or(&alone);
        let parse = parsed.get(i).and_then(|p| p.lock().ok()?.take()).unwrap_or_else(|| parse(i));
        fix_text(&input.display_name(), text, parse, batch, policy, only, limits)
    };
    let fixes = crate::pipeline::run_tasks(texts.len(), threads, fix);
    for (i, ((input, bom, _, _), fixed)) in texts.iter().zip(fixes).enumerate() {
        let fix = fixed.unwrap_or_else(|| fix(i));
        out.inputs.push(FixedInput { input: input.clone(), bom: *bom, fix });
    }
    out
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
                let mut bytes = Vec::with_capacity(fix.fixed.len() + 3);
                if i.bom {
                    bytes.extend_from_slice(b"\xEF\xBB\xBF");
                }
                bytes.extend_from_slice(fix.fixed.as_bytes());
                if let Err(e) = std::fs::write(path, bytes) {
                    errors.push(InputError {
                        file: fix.file.clone(),
                        line: None,
                        column: None,
                        message: format!("cannot write the fixed file: {e}"),
                    });
                }
            }
            (Output::InPlace, Input::File(_)) => {}
        }
    }
    stdout.flush()?;
    out.errors.extend(errors);
    Ok(())
}
