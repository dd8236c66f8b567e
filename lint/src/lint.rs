//! The lint pipeline: read every input, parse it with positions, let the
//! engine judge each object, and locate each finding in its file.

use policies::{Batch, Policy, objects_in};

use crate::engine::lint_document;
use crate::input::{Contexts, Discovered, Document, InputName, Limits, Template, contexts, discover, read_input};
use crate::outcome::{InputError, Outcome};
use crate::pipeline::Keep;
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
    let batch = Batch::from_objects(
        parsed.iter().flat_map(|p| &p.documents).flat_map(|d| objects_in(&d.value)).map(|(_, v)| v),
    );
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
    let allow_empty = found.allow_empty_stdin;
    let (inputs, discover_errors) = (found.inputs, found.errors);
    let Contexts { of_input, seeds, .. } = contexts(&inputs, limits);
    let mut context_of = Vec::with_capacity(inputs.len());
    let mut errors: Vec<InputError> = discover_errors
        .into_iter()
        .map(|(file, e)| InputError { file, line: None, column: None, message: e.to_string() })
        .collect();
    let mut sources = Vec::with_capacity(inputs.len());
    let mut read_errors: Vec<(usize, InputError)> = Vec::new();
    for (input, context) in inputs.iter().zip(of_input) {
        let file = input.display_name();
        match read_input(input, limits, allow_empty) {
            Ok(text) => {
                sources.push((file, text));
                context_of.push(context);
            }
            Err(e) => read_errors.push((sources.len(), InputError::unread(file, &e))),
        }
    }
    let linted = crate::pipeline::lint_sources_in(&sources, &context_of, seeds, policy, limits, keep);
    let (mut out, parse_errors) = (linted.outcome, linted.syntax_errors);
    // Read errors sit before the source that followed them, as in input order.
    let mut by_source: Vec<(usize, InputError)> = read_errors;
    by_source.extend(parse_errors);
    by_source.sort_by_key(|(i, _)| *i);
    errors.extend(by_source.into_iter().map(|(_, e)| e));
    errors.append(&mut out.errors);
    out.errors = errors;
    let charts = found.skipped_charts.iter().map(|chart| InputError {
        file: chart.join("templates").display().to_string(),
        line: None,
        column: None,
        message: format!(
            "Helm chart templates skipped (not YAML until rendered); lint the chart with `helm template RELEASE {} | lifeguard lint -`",
            chart.display()
        ),
    });
    out.warnings.splice(0..0, charts);
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
