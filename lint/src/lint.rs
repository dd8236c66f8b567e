//! The lint pipeline: read every input, parse it with positions, let the
//! engine judge each object, and locate each finding in its file.

use policies::{Batch, Policy};

use crate::documents::lint_document;
use crate::input::{Discovered, Document, Limits, Template, discover};
use crate::outcome::{InputError, Outcome};
use crate::pipeline::{Keep, read};
use crate::policy_discovery::Resolved;

// Other crates (the webhook's parity test) read findings from here.
pub use crate::outcome::Located;

/// One input's parsed documents.
#[derive(Debug)]
pub struct Parsed {
    /// File name as shown.
    pub file: String,
    /// The documents read (all of them, up to a syntax error).
    pub documents: Vec<Document>,
    /// The Helm template of each document (aligned with `documents`; may be
    /// empty when nothing was rendered by Helm).
    pub templates: Vec<Option<Template>>,
}

/// Lints already-parsed inputs together (Services in any of them inform
/// the rules), on the calling thread. `lint_paths` overlaps this work with
/// parsing instead (see `pipeline`); this is the engine's cost alone.
pub fn lint_parsed(parsed: &[Parsed], policy: &Policy) -> Outcome {
    let mut batch = Batch::default();
    batch.add_documents(parsed.iter().flat_map(|p| &p.documents).map(|d| &d.value));
    let mut out = Outcome { files: parsed.len(), ..Outcome::default() };
    for p in parsed {
        for (i, doc) in p.documents.iter().enumerate() {
            let template = p.templates.get(i).and_then(Option::as_ref);
            lint_document(&p.file, doc, template, &batch, policy, &mut out);
        }
    }
    out
}

/// Reads, parses and lints paths: the whole `lifeguard lint` minus output.
/// Errors come in input order (discovery, then each input's read or syntax
/// error), then the errors found while linting objects.
///
/// A file's findings do not depend on which other files are named: the
/// Services that inform them are its own and those of the other manifest
/// files of its directory, read for context (see [`crate::input::context`]).
pub fn lint_paths(paths: &[String], policy: &Policy, limits: &Limits) -> Outcome {
    lint_found(discover(paths), policy, limits)
}

/// [`lint_paths`] on inputs already discovered (with `--exclude`, say).
pub fn lint_found(found: Discovered, policy: &Policy, limits: &Limits) -> Outcome {
    lint_found_with(found, policy, limits, &mut Keep::default())
}

/// [`lint_found`], with each document's outcome kept as `keep` says (its
/// Helm template put on disk, its findings rendered as they come).
pub fn lint_found_with(found: Discovered, policy: &Policy, limits: &Limits, keep: &mut Keep) -> Outcome {
    keep.templates = std::mem::take(&mut keep.templates).knowing(&found.inputs);
    let mut read = read(&found, limits);
    let seeds = std::mem::take(&mut read.seeds);
    let linted = crate::pipeline::lint_sources_in(&read.sources, &read.context_of, seeds, policy, limits, keep);
    let mut out = linted.outcome;
    let mut syntax = linted.syntax_errors;
    let templated = read.templated(&mut syntax);
    let mut errors = read.errors(syntax);
    errors.append(&mut out.errors);
    out.errors = errors;
    let whole_file = |(file, message): &(String, String)| InputError {
        file: file.clone(),
        line: None,
        column: None,
        message: message.clone(),
    };
    out.warnings.splice(0..0, found.warnings.iter().map(whole_file));
    // Notes by what they are: the files builds read, the templates
    // skipped, then the inputs that held no object (each in input order).
    out.notes.splice(0..0, found.notes.iter().map(whole_file).chain(templated));
    out
}

/// Lints each run of inputs with its own policy (see
/// [`crate::policy_discovery`]) and puts the outcomes together in input
/// order; `keep` says how each document's outcome is kept.
pub fn lint_resolved(resolved: &mut Resolved, limits: &Limits, keep: &mut Keep) -> Outcome {
    let mut out = Outcome { policy: resolved.summary_note(), ..Outcome::default() };
    out.errors.append(&mut resolved.errors);
    for (index, found) in std::mem::take(&mut resolved.runs) {
        let Some(in_force) = resolved.policies.get(index) else { continue };
        let part = lint_found_with(found, &in_force.policy, limits, keep);
        out.files += part.files;
        out.absorb(part);
    }
    out
}
