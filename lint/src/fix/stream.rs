//! `lifeguard fix` as it runs: each file's result is written (in place, as
//! a diff, or stdin's stream to stdout) as soon as it and every file before
//! it are fixed, and its texts are dropped; only what the report on stderr
//! and the exit code need is kept. The single-threaded path
//! (`LIFEGUARD_THREADS=1`) holds every file until the end and is reported
//! the same way.

use std::io::Write;
use std::path::PathBuf;

use policies::Severity;

use super::SourceFix;
use super::diff;
use super::run::{FixedInput, Output, fix_each, with_bom, write_fixed};
use super::summary::{Tally, file_block, file_block_mapped, line_of, tail};
use crate::input::{Input, Limits};
use crate::outcome::InputError;
use crate::policy_discovery::Resolved;

/// What is kept of one file once it is written.
#[derive(Debug, Clone)]
pub struct FileReport {
    /// Its lines of the report (fixes, stale comments, fixes left out, findings shown).
    pub block: String,
    /// Its counts for the summary line.
    pub tally: Tally,
    /// Its syntax error and the fixes that failed verification.
    pub errors: Vec<InputError>,
    /// Why nothing of it was fixed, when that is no error.
    pub notes: Vec<InputError>,
    /// Whether a finding at or above its threshold remains.
    pub failing: bool,
}

/// What a streamed fix run keeps for the report and the exit code.
#[derive(Debug, Default)]
pub struct Streamed {
    /// Invalid policy files, inputs that could not be found or read, and
    /// files that could not be written, in that order.
    pub errors: Vec<InputError>,
    /// Each file fixed, in input order.
    pub files: Vec<FileReport>,
    /// The policy in force, as the summary names it.
    pub policy: Option<String>,
    /// Whether `--fail-on never` was given: then nothing but an error fails
    /// the run, not even a change made (or, with `--diff`, to make).
    pub never_fail: bool,
    /// The user's files the Kustomize builds' fixes change, each once.
    pub source_files: usize,
}

impl Streamed {
    /// Every error, in the order the report lists them.
    pub fn all_errors(&self) -> impl Iterator<Item = &InputError> {
        self.errors.iter().chain(self.files.iter().flat_map(|f| &f.errors))
    }

    /// 2 on any error; 1 when a file changed (or would) or a finding at or
    /// above its file's threshold remains; else 0. Under `--fail-on never`
    /// a change alone is not a failure: it is there to stop a pre-commit
    /// hook, and `never` asks that findings, fixed or not, stop nothing.
    pub fn exit_code(&self) -> u8 {
        if self.all_errors().next().is_some() {
            2
        } else if self.files.iter().any(|f| f.failing || (f.tally.files > 0 && !self.never_fail))
            || (self.source_files > 0 && !self.never_fail)
        {
            1
        } else {
            0
        }
    }

    /// The report on stderr: each file's lines, the errors, the summary line.
    pub fn render(&self, mode: Output) -> String {
        let mut tally = Tally { files: self.source_files, ..Tally::default() };
        let mut s = String::new();
        for f in &self.files {
            s.push_str(&f.block);
            tally.add(f.tally);
        }
        let line = line_of(&tally, self.all_errors().count(), self.policy.as_deref(), mode);
        let notes = self.files.iter().flat_map(|f| &f.notes);
        s.push_str(&tail(self.all_errors(), notes, &line));
        s
    }
}

/// What to write for one file.
enum Written {
    Nothing,
    Stdout(String),
    File {
        path: PathBuf,
        file: String,
        bytes: Vec<u8>,
    },
    /// A build's fixes in the user's files: written once every build is
    /// done, whichever builds read the file.
    Sources {
        build: String,
        files: Vec<SourceFix>,
    },
}

/// Fixes each run of `resolved` with its policy and writes each file's
/// result as soon as it is ready. `fail_on` is `--fail-on` when given. The
/// `Err` is stdout's: nothing more is written after it, as with
/// [`super::write`].
pub fn fix_and_write(
    resolved: &mut Resolved,
    only: Option<&[String]>,
    limits: &Limits,
    mode: Output,
    fail_on: Option<Option<Severity>>,
    stdout: &mut impl Write,
) -> (Streamed, std::io::Result<()>) {
    let never_fail = fail_on == Some(None);
    let mut out = Streamed { policy: resolved.summary_note(), never_fail, ..Streamed::default() };
    out.errors.append(&mut resolved.errors);
    let runs = std::mem::take(&mut resolved.runs);
    let resolved = &*resolved;
    let threshold = |file: &str| resolved.fail_on(fail_on, file);
    let keep = |fixed: FixedInput| keep(fixed, mode, &threshold);
    let mut stdout_error = None;
    let mut write_errors = Vec::new();
    let mut sources = super::kustomize::Sources::default();
    let threads = crate::pipeline::threads();
    for (index, found) in runs {
        let Some(in_force) = resolved.policies.get(index) else { continue };
        let mut errors = fix_each(found, &in_force.policy, only, limits, threads, keep, |(written, report)| {
            if stdout_error.is_none() {
                match written {
                    Written::Nothing => {}
                    Written::Stdout(text) => stdout_error = stdout.write_all(text.as_bytes()).err(),
                    Written::File { path, file, bytes } => write_errors.extend(write_fixed(&path, &file, &bytes).err()),
                    // Written once every build is done: the others read these files as they were.
                    Written::Sources { build, files } => {
                        write_errors.extend(files.into_iter().filter_map(|f| sources.claim(&build, f, limits).err()));
                    }
                }
            }
            out.files.push(report);
        });
        out.errors.append(&mut errors);
    }
    out.source_files = sources.len();
    // A diff is not printed after stdout failed; files are written still.
    if stdout_error.is_none() || mode == Output::InPlace {
        match sources.write(mode, stdout) {
            Ok(errors) => write_errors.extend(errors),
            Err(e) => stdout_error = Some(e),
        }
    }
    let written = match stdout_error {
        Some(e) => Err(e),
        None => stdout.flush(),
    };
    // As with `write`: the errors of writing files count only when stdout took everything.
    if written.is_ok() {
        out.errors.append(&mut write_errors);
    }
    (out, written)
}

/// Turns a fixed file into what to write and what to keep, on the thread
/// that fixed it.
fn keep(fixed: FixedInput, mode: Output, fail_on: &impl Fn(&str) -> Option<Severity>) -> (Written, FileReport) {
    let FixedInput { input, bom, mut fix } = fixed;
    if mode == Output::InPlace {
        super::kustomize::lines_as_fixed(&mut fix);
    }
    // `--diff` prints the diff and names lines as read: one diff gives both.
    let diff = (mode == Output::Diff).then(|| diff::unified_and_map(&fix.file, &fix.original, &fix.fixed));
    let failing = fix.remaining.iter().any(|l| fail_on(&l.file).is_some_and(|min| l.finding.severity >= min));
    let mut report = FileReport {
        block: match &diff {
            Some((_, map)) => file_block_mapped(&fix, map.as_ref(), mode, fail_on),
            None => file_block(&fix, mode, fail_on),
        },
        tally: Tally::of(&fix, fail_on),
        errors: std::mem::take(&mut fix.errors),
        notes: std::mem::take(&mut fix.notes),
        failing,
    };
    let written = match (mode, input) {
        (_, Input::Rendered(r)) if !fix.sources.is_empty() => {
            Written::Sources { build: r.name.clone(), files: std::mem::take(&mut fix.sources) }
        }
        (Output::Diff, _) => Written::Stdout(diff.map(|(text, _)| text).unwrap_or_default()),
        (Output::InPlace, Input::Stdin) => Written::Stdout(std::mem::take(&mut fix.fixed)),
        (Output::InPlace, Input::File(path)) if fix.changed() => {
            Written::File { path, file: fix.file.clone(), bytes: with_bom(&fix.fixed, bom) }
        }
        (Output::InPlace, Input::File(_)) => Written::Nothing,
        (Output::InPlace, Input::Rendered(r)) => {
            if fix.fixed != fix.original {
                report.errors.push(crate::fix::run::not_written(&r));
            }
            Written::Nothing
        }
    };
    (written, report)
}
