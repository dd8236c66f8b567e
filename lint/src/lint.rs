//! The lint pipeline: read every input, parse it with positions, let the
//! engine judge each object, and locate each finding in its file.

use std::panic::{AssertUnwindSafe, catch_unwind};

use policies::{Batch, Finding, Policy, Severity, lint_object, objects_in};
use serde_json::Value;

use crate::input::{Document, InputName, Limits, discover, parse_stream, read_text};

/// A finding placed in its file.
#[derive(Debug, Clone)]
pub struct Located {
    /// The engine's finding; its pointer is relative to the object.
    pub finding: Finding,
    /// File name as shown.
    pub file: String,
    /// Line, 1-based.
    pub line: u32,
    /// Column, 1-based.
    pub column: u32,
    /// Object kind.
    pub kind: String,
    /// Object namespace.
    pub namespace: Option<String>,
    /// Object name.
    pub name: Option<String>,
    /// Pointer from the document root (differs from the finding's for `List` items).
    pub pointer: String,
}

impl Located {
    /// `Kind/namespace/name`, with `<unnamed>` for a missing name.
    pub fn object(&self) -> String {
        let kind = if self.kind.is_empty() { "<no kind>" } else { &self.kind };
        let name = self.name.as_deref().unwrap_or("<unnamed>");
        match &self.namespace {
            Some(ns) => format!("{kind}/{ns}/{name}"),
            None => format!("{kind}/{name}"),
        }
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
}

/// Everything a lint run found.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Findings, in file order, then by position.
    pub findings: Vec<Located>,
    /// Input errors, in file order.
    pub errors: Vec<InputError>,
    /// Files (and stdin) read.
    pub files: usize,
    /// Pod-bearing objects linted.
    pub objects: usize,
}

impl Outcome {
    /// Count of findings at a severity.
    pub fn count(&self, severity: Severity) -> usize {
        self.findings.iter().filter(|f| f.finding.severity == severity).count()
    }

    /// Process exit code: 2 on input errors, 1 on findings at or above `fail_on`, else 0.
    pub fn exit_code(&self, fail_on: Option<Severity>) -> u8 {
        if !self.errors.is_empty() {
            2
        } else if fail_on.is_some_and(|min| self.findings.iter().any(|f| f.finding.severity >= min)) {
            1
        } else {
            0
        }
    }
}

/// Reads and parses every input; read and syntax errors are collected, and
/// the documents before a syntax error are kept.
pub fn load(paths: &[String], limits: &Limits) -> (Vec<Parsed>, Vec<InputError>) {
    let (inputs, discover_errors) = discover(paths);
    let mut errors: Vec<InputError> = discover_errors
        .into_iter()
        .map(|(file, e)| InputError {
            file,
            line: None,
            column: None,
            message: e.to_string(),
        })
        .collect();
    let mut parsed = Vec::with_capacity(inputs.len());
    for input in &inputs {
        let file = input.display_name();
        let text = match read_text(input, limits) {
            Ok(t) => t,
            Err(e) => {
                errors.push(InputError {
                    file,
                    line: None,
                    column: None,
                    message: e.to_string(),
                });
                continue;
            }
        };
        let (documents, error) = parse_text(&file, &text, limits);
        errors.extend(error);
        parsed.push(Parsed { file, documents });
    }
    (parsed, errors)
}

/// Parses one text; a panic in the parser (never expected) becomes an input
/// error for this file instead of losing every other file's output.
pub fn parse_text(file: &str, text: &str, limits: &Limits) -> (Vec<Document>, Option<InputError>) {
    match catch_unwind(AssertUnwindSafe(|| parse_stream(text, limits))) {
        Ok((docs, err)) => (
            docs,
            err.map(|e| InputError {
                file: file.to_owned(),
                line: Some(e.line),
                column: Some(e.column),
                message: e.message,
            }),
        ),
        Err(_) => (
            Vec::new(),
            Some(InputError {
                file: file.to_owned(),
                line: None,
                column: None,
                message: "internal error while parsing (please report)".into(),
            }),
        ),
    }
}

/// Lints parsed inputs together (Services in any of them inform the rules).
pub fn lint_parsed(parsed: &[Parsed], policy: &Policy) -> Outcome {
    let batch = Batch::from_objects(
        parsed
            .iter()
            .flat_map(|p| &p.documents)
            .flat_map(|d| objects_in(&d.value))
            .map(|(_, v)| v),
    );
    let docs: Vec<(&str, &Document)> = parsed
        .iter()
        .flat_map(|p| p.documents.iter().map(move |d| (p.file.as_str(), d)))
        .collect();
    // Objects are independent once the batch is known: lint contiguous chunks
    // on every core and concatenate in input order, so output is deterministic.
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(docs.len().div_ceil(64))
        .max(1);
    let chunk = docs.len().div_ceil(threads).max(1);
    let lint_chunk = |part: &[(&str, &Document)]| {
        let mut out = Outcome::default();
        for (file, doc) in part {
            lint_document(file, doc, &batch, policy, &mut out);
        }
        out
    };
    let parts: Vec<Outcome> = if threads == 1 {
        vec![lint_chunk(&docs)]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = docs
                .chunks(chunk)
                .map(|part| scope.spawn(move || lint_chunk(part)))
                .collect();
            // A panicking worker is caught inside lint_document; join only fails if that fails.
            handles.into_iter().map(|h| h.join().unwrap_or_default()).collect()
        })
    };
    let mut out = Outcome {
        files: parsed.len(),
        ..Outcome::default()
    };
    for mut part in parts {
        out.findings.append(&mut part.findings);
        out.errors.append(&mut part.errors);
        out.objects += part.objects;
    }
    out
}

fn lint_document(file: &str, doc: &Document, batch: &Batch, policy: &Policy, out: &mut Outcome) {
    for (prefix, object) in objects_in(&doc.value) {
        if !object.is_object() {
            continue;
        }
        let result = catch_unwind(AssertUnwindSafe(|| lint_object(object, batch, policy)));
        match result {
            Ok(Ok(None)) => {}
            Ok(Ok(Some(report))) => {
                out.objects += 1;
                let mut located: Vec<Located> = report
                    .findings
                    .into_iter()
                    .map(|finding| {
                        let pointer = format!("{prefix}{}", finding.pointer);
                        let at = doc.locate(&pointer);
                        Located {
                            file: file.to_owned(),
                            line: at.line,
                            column: at.column,
                            kind: report.kind.clone(),
                            namespace: report.namespace.clone(),
                            name: report.name.clone(),
                            pointer,
                            finding,
                        }
                    })
                    .collect();
                located.sort_by_key(|l| (l.line, l.column));
                out.findings.extend(located);
            }
            Ok(Err(e)) => {
                let pointer = format!("{prefix}{}", e.pointer);
                let at = doc.locate(&pointer);
                let what = describe_object(object);
                out.errors.push(InputError {
                    file: file.to_owned(),
                    line: Some(at.line),
                    column: Some(at.column),
                    message: format!("{what}: {pointer}: {}", e.message),
                });
            }
            Err(_) => out.errors.push(InputError {
                file: file.to_owned(),
                line: Some(doc.start.line),
                column: None,
                message: format!(
                    "{}: internal error in the rule engine (please report)",
                    describe_object(object)
                ),
            }),
        }
    }
}

fn describe_object(object: &Value) -> String {
    let text = |p: &str| object.pointer(p).and_then(Value::as_str);
    let kind = text("/kind").unwrap_or("<no kind>");
    match (
        text("/metadata/namespace"),
        text("/metadata/name").unwrap_or("<unnamed>"),
    ) {
        (Some(ns), name) => format!("{kind}/{ns}/{name}"),
        (None, name) => format!("{kind}/{name}"),
    }
}

/// Reads, parses and lints paths: the whole `lifeguard lint` minus output.
pub fn lint_paths(paths: &[String], policy: &Policy, limits: &Limits) -> Outcome {
    let (parsed, mut errors) = load(paths, limits);
    let mut out = lint_parsed(&parsed, policy);
    errors.append(&mut out.errors);
    out.errors = errors;
    out
}
