//! The lint pipeline: read every input, parse it with positions, let the
//! engine judge each object, and locate each finding in its file.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use policies::model::{ObjectLabel, object_label, object_label_of};
use policies::{Batch, Finding, Policy, Severity, lint_object, objects_in};
use serde_json::Value;

use crate::input::Template;
use crate::input::{
    Contexts, Discovered, Document, InputName, Limits, Location, ParseError, contexts, discover, parse_stream_each,
    read_input,
};
use crate::pipeline::Keep;
use crate::policy_discovery::Resolved;
use crate::report::stream::Rendered;

/// How stdin is named (see [`InputName`]): no viewer can open it.
const STDIN_NAME: &str = "<stdin>";

/// A finding placed in its file.
#[derive(Debug, Clone)]
pub struct Located {
    /// The engine's finding; its pointer is relative to the object.
    pub finding: Finding,
    /// File name as shown.
    pub file: Arc<str>,
    /// Line, 1-based.
    pub line: u32,
    /// Column, 1-based.
    pub column: u32,
    /// Object kind.
    pub kind: Arc<str>,
    /// Object namespace.
    pub namespace: Option<Arc<str>>,
    /// Object name.
    pub name: Option<Arc<str>>,
    /// Pointer from the document root (differs from the finding's for `List` items).
    pub pointer: String,
    /// Where the object starts in the file (tells apart objects with the same name).
    pub object_at: Location,
    /// The Helm template the object was rendered from, for `helm template` output.
    pub template: Option<Template>,
    /// Read from a file, or from a cluster (no line: the pointer locates it).
    pub origin: Origin,
}

/// Where findings were read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Origin {
    /// A file (or stdin): findings have a line and column.
    #[default]
    File,
    /// A cluster's API (`lifeguard audit`): `file` is the object's
    /// namespace, and the object and pointer locate a finding.
    Cluster,
}

impl Located {
    /// `Kind/namespace/name`, with `<unnamed>` for a missing name.
    pub fn object(&self) -> String {
        self.label().to_string()
    }

    /// [`Located::object`], to write where it is shown.
    pub fn label(&self) -> ObjectLabel<'_> {
        ObjectLabel { kind: &self.kind, namespace: self.namespace.as_deref(), name: self.name.as_deref() }
    }

    /// The file and line to show a person: the Helm template and its own
    /// line when the template is on disk and the line is matched, else the
    /// input file and line (the rendered position).
    pub fn shown_at(&self) -> (&str, u32) {
        match self.template_line() {
            Some((path, line)) => (path, line),
            None => (&self.file, self.line),
        }
    }

    /// The Helm template on disk and its line holding the finding's key,
    /// when both are known.
    pub fn template_line(&self) -> Option<(&str, u32)> {
        let t = self.template.as_ref()?;
        Some((&t.path, t.line(self.line)?))
    }

    /// The location for tools that open files (SARIF, GitHub annotations):
    /// a file that exists. The template and its line when matched; else the
    /// input file and line; for stdin, which no viewer can open, the
    /// template's file (or its subchart's archive) with no line when that
    /// exists. `(file, line and column)`.
    pub fn primary(&self) -> (&str, Option<(u32, u32)>) {
        if let Some((path, line)) = self.template_line() {
            return (path, Some((line, self.column)));
        }
        match &self.template {
            Some(t) if self.file.as_ref() == STDIN_NAME && t.exists() => (&t.path, None),
            _ => (&self.file, Some((self.line, self.column))),
        }
    }
}

/// A pod-bearing object that was linted, with or without findings.
#[derive(Debug, Clone)]
pub struct Linted {
    /// File name as shown.
    pub file: Arc<str>,
    /// Where the object starts in the file.
    pub at: Location,
    /// Object kind.
    pub kind: Arc<str>,
    /// Object namespace.
    pub namespace: Option<Arc<str>>,
    /// Object name.
    pub name: Option<Arc<str>>,
    /// The Helm template the object was rendered from.
    pub template: Option<Template>,
}

impl Linted {
    /// `Kind/namespace/name`, with `<unnamed>` for a missing name.
    pub fn object(&self) -> String {
        object_label(&self.kind, self.namespace.as_deref(), self.name.as_deref())
    }
}

/// An input that could not be read, parsed or understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// File name as shown.
    pub file: String,
    /// Line, when known.
    pub line: Option<u32>,
    /// Column, when known.
    pub column: Option<u32>,
    /// What is wrong.
    pub message: String,
}

impl InputError {
    /// An input that could not be read, at the error's position if it has one.
    pub fn unread(file: String, error: &crate::input::ReadError) -> InputError {
        let (line, column) = error.position();
        InputError { file, line, column, message: error.to_string() }
    }
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, "{}:{l}:{c}: {}", self.file, self.message),
            (Some(l), None) => write!(f, "{}:{l}: {}", self.file, self.message),
            _ => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

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

/// Everything a lint run found.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Findings, in file order, then by position.
    pub findings: Vec<Located>,
    /// Input errors, in file order.
    pub errors: Vec<InputError>,
    /// Input warnings (repeated keys): shown, never failing the run.
    pub warnings: Vec<InputError>,
    /// Files (and stdin) read.
    pub files: usize,
    /// Pod-bearing objects linted.
    pub objects: usize,
    /// The pod-bearing objects linted, in input order.
    pub linted: Vec<Linted>,
    /// Findings the policy suppressed (exemptions, ignore annotations):
    /// counted in the summary, never judged.
    pub suppressed: Vec<SuppressedAt>,
    /// The policy in force, as the summary names it (`policy .lifeguard.yaml`);
    /// `None` for the `default` pack nothing chose.
    pub policy: Option<String>,
    /// Findings already rendered and dropped (see [`crate::pipeline::Keep`]),
    /// which come before those in `findings`.
    pub rendered: Rendered,
    /// Files read, or a cluster (`files` then counts namespaces).
    pub origin: Origin,
}

/// A finding the policy suppressed, placed in its file.
#[derive(Debug, Clone)]
pub struct SuppressedAt {
    /// The finding and where it is.
    pub located: Located,
    /// The reason the exemption or annotation gives.
    pub reason: String,
    /// What suppressed it (`annotation lifeguard.dev/ignore`, `policy exemptions[0]`).
    pub by: String,
}

impl Outcome {
    /// Count of findings at a severity, rendered ones included.
    pub fn count(&self, severity: Severity) -> usize {
        self.findings.iter().filter(|f| f.finding.severity == severity).count() + self.rendered.count(severity)
    }

    /// Count of findings, rendered ones included.
    pub fn finding_count(&self) -> usize {
        self.findings.len() + self.rendered.total()
    }

    /// Count of suppressed findings, rendered ones' included.
    pub fn suppressed_count(&self) -> usize {
        self.suppressed.len() + self.rendered.suppressed
    }

    /// Whether a finding of a file for which `fails(file, severity)` holds was found.
    pub fn any_fails(&self, fails: impl Fn(&str, Severity) -> bool) -> bool {
        self.findings.iter().any(|f| fails(&f.file, f.finding.severity)) || self.rendered.any_fails(fails)
    }

    /// Process exit code: 2 on input errors, 1 on findings at or above `fail_on`, else 0.
    pub fn exit_code(&self, fail_on: Option<Severity>) -> u8 {
        if !self.errors.is_empty() {
            2
        } else if fail_on.is_some_and(|min| self.any_fails(|_, severity| severity >= min)) {
            1
        } else {
            0
        }
    }

    /// Appends what a part of the input (a document, a chunk) found; `files`
    /// stays the caller's count.
    pub fn absorb(&mut self, mut part: Outcome) {
        self.findings.append(&mut part.findings);
        self.errors.append(&mut part.errors);
        self.warnings.append(&mut part.warnings);
        self.objects += part.objects;
        self.linted.append(&mut part.linted);
        self.suppressed.append(&mut part.suppressed);
        self.rendered.absorb(part.rendered);
    }
}

/// Parses one text; a panic in the parser (never expected) becomes an input
/// error for this file instead of losing every other file's output.
pub fn parse_text(file: &str, text: &str, limits: &Limits) -> (Vec<Document>, Option<InputError>) {
    let mut docs = Vec::new();
    let parsed = catch_unwind(AssertUnwindSafe(|| parse_stream_each(text, limits, |d| docs.push(d))));
    (docs, syntax_error(file, parsed))
}

/// The input error of a parse that failed or panicked, if any.
pub(crate) fn syntax_error(file: &str, parsed: std::thread::Result<Option<ParseError>>) -> Option<InputError> {
    match parsed {
        Ok(error) => error.map(|e| InputError {
            file: file.to_owned(),
            line: Some(e.line),
            column: Some(e.column),
            message: e.message,
        }),
        Err(_) => Some(InputError {
            file: file.to_owned(),
            line: None,
            column: None,
            message: "internal error while parsing (please report)".into(),
        }),
    }
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

pub(crate) fn lint_document(
    file: &str,
    doc: &Document,
    template: Option<&Template>,
    batch: &Batch,
    policy: &Policy,
    out: &mut Outcome,
) {
    let shared_file: Arc<str> = file.into();
    out.warnings.extend(doc.duplicate_keys.iter().map(|d| InputError {
        file: file.to_owned(),
        line: Some(d.at.line),
        column: Some(d.at.col + 1),
        message: format!("duplicate key {:?}: this value replaces the one at line {}", d.key, d.first.line),
    }));
    for (prefix, object) in objects_in(&doc.value) {
        let at = |pointer: &str| Some(doc.locate(pointer));
        let seen = Seen { file: &shared_file, template, origin: Origin::File, locate: &at };
        lint_one(&seen, &prefix, object, batch, policy, out);
    }
}

/// Where an object was read, for [`lint_one`].
pub(crate) struct Seen<'a> {
    /// The file (or, for a cluster, the namespace) as shown.
    pub file: &'a Arc<str>,
    /// The Helm template it was rendered from.
    pub template: Option<&'a Template>,
    /// A file or a cluster.
    pub origin: Origin,
    /// The position of a pointer from the document root, where there is one.
    pub locate: &'a dyn Fn(&str) -> Option<Location>,
}

/// Lints one object found at `prefix` in its document and adds what it
/// found to `out`; a panic in the engine (never expected) is an input error
/// of this object alone.
pub(crate) fn lint_one(
    seen: &Seen<'_>,
    prefix: &str,
    object: &Value,
    batch: &Batch,
    policy: &Policy,
    out: &mut Outcome,
) {
    if !object.is_object() {
        return;
    }
    let template = seen.template;
    let locate = |pointer: &str| (seen.locate)(pointer).unwrap_or(Location { line: 0, column: 0 });
    let result = catch_unwind(AssertUnwindSafe(|| lint_object(object, batch, policy)));
    match result {
        Ok(Ok(None)) => {}
        Ok(Ok(Some(report))) => {
            out.objects += 1;
            let object_at = locate(prefix);
            // Shared by the object's record and each of its findings: cloning an
            // Arc is cheaper than a string per finding on large inputs.
            let file: Arc<str> = Arc::clone(seen.file);
            let kind: Arc<str> = report.kind.as_str().into();
            let namespace: Option<Arc<str>> = report.namespace.as_deref().map(Into::into);
            let name: Option<Arc<str>> = report.name.as_deref().map(Into::into);
            out.linted.push(Linted {
                file: Arc::clone(&file),
                at: object_at,
                kind: Arc::clone(&kind),
                namespace: namespace.clone(),
                name: name.clone(),
                template: template.cloned(),
            });
            let place = |mut finding: Finding| {
                // A report names a fix by its description; the patch is
                // `lifeguard fix`'s, which plans its own. Kept, the
                // operations' JSON values were a third of a finding's memory.
                for fix in finding.fix.iter_mut().chain(finding.opt_in_fix.iter_mut()) {
                    fix.operations = Vec::new();
                }
                let pointer = format!("{prefix}{}", finding.pointer);
                let at = locate(&pointer);
                Located {
                    file: Arc::clone(&file),
                    line: at.line,
                    column: at.column,
                    kind: Arc::clone(&kind),
                    namespace: namespace.clone(),
                    name: name.clone(),
                    pointer,
                    object_at,
                    template: template.cloned(),
                    origin: seen.origin,
                    finding,
                }
            };
            let mut located: Vec<Located> = report.findings.into_iter().map(place).collect();
            located.sort_by_key(|l| (l.line, l.column));
            out.findings.extend(located);
            out.suppressed.extend(report.suppressed.into_iter().map(|s| SuppressedAt {
                reason: s.reason,
                by: s.by.to_string(),
                located: place(s.finding),
            }));
        }
        Ok(Err(e)) => {
            let pointer = format!("{prefix}{}", e.pointer);
            let at = (seen.locate)(&pointer);
            let what = object_label_of(object);
            out.errors.push(InputError {
                file: seen.file.to_string(),
                line: at.map(|a| a.line),
                column: at.map(|a| a.column),
                message: format!("{what}: {pointer}: {}", e.message),
            });
        }
        Err(_) => out.errors.push(InputError {
            file: seen.file.to_string(),
            line: (seen.locate)("").map(|a| a.line),
            column: None,
            message: format!("{}: internal error in the rule engine (please report)", object_label_of(object)),
        }),
    }
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
