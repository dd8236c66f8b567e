//! Where the linter hands objects to the engine: a text parsed with its
//! positions, each object of a document linted, and each finding (or the
//! engine's error) placed in its file. The pipeline schedules it;
//! `lifeguard audit` calls it on objects read from a cluster.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use policies::model::object_label_of;
use policies::{Batch, Finding, Policy, lint_object, objects_in};
use serde_json::Value;

use crate::input::{Document, Limits, Location, ParseError, Template, parse_stream_each};
use crate::outcome::{InputError, Linted, Located, Origin, Outcome, SuppressedAt};

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

/// Lints every object of a parsed document and adds what it found to `out`.
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
        Ok(Ok(None)) => {
            // Its kind names why its input gave nothing to check, if none of
            // the input's objects did.
            let kind = object.get("kind").and_then(Value::as_str).filter(|k| !k.is_empty());
            if let Some(kind) = kind
                && !out.other_kinds.iter().any(|k| k == kind)
            {
                out.other_kinds.push(kind.to_owned());
            }
            // Containers where no table or declaration reads a pod template:
            // said, with the declaration that has them checked.
            if let Some(unread) = policies::model::unread_templates(object) {
                let at = (seen.locate)(&format!("{prefix}{}", unread.first));
                out.warnings.push(InputError {
                    file: seen.file.to_string(),
                    line: at.map(|a| a.line),
                    column: at.map(|a| a.column),
                    message: unread.message(object),
                });
            }
        }
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
                for fix in finding.fix.iter_mut() {
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
