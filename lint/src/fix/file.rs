//! Fixing one file: plan each object's fixes with the engine, write them
//! into the text (as applying them one operation at a time would), and keep
//! an object's edits only when the edited text reads back as exactly the
//! fixed object (and every other document as it was).

use std::borrow::Cow;
use std::panic::{AssertUnwindSafe, catch_unwind};

use policies::{AppliedFix, Batch, Finding, Policy, objects_in};
use serde_json::Value;

// A file's fixes list the ones left out, so they are named here too.
pub use super::object::Skipped;
use super::object::{Ctx, Fixed, Place, error_at, fix_object};
use super::readback::verify;
use super::stale::{Changed, StaleComment, stale_comments};
use super::text::{Offsets, line_start};
use crate::documents::parse_text;
use crate::input::{Document, Limits};
use crate::outcome::{InputError, Located};

/// The fixes applied to one object.
#[derive(Debug, Clone)]
pub struct ObjectFixes {
    /// `Kind/namespace/name`.
    pub object: String,
    /// The fixes, in the order they were applied.
    pub applied: Vec<AppliedFix>,
    /// Which document of the text the object is in.
    pub doc: usize,
    /// The object's pointer in its document (`""`; a `List` item's `/items/N`).
    pub prefix: String,
    /// The operations written, relative to the object.
    pub operations: Vec<json_patch::PatchOperation>,
    /// The files its fixes were written to, when not this text (a
    /// Kustomize build's base or patch).
    pub written_to: Vec<String>,
}

/// The outcome of fixing one file's text.
#[derive(Debug, Clone)]
pub struct FileFix {
    /// File name as shown.
    pub file: String,
    /// The text as read.
    pub original: String,
    /// The text with every verified fix (equal to `original` when none).
    pub fixed: String,
    /// Whether the text is a JSON document.
    pub json: bool,
    /// Objects that were changed.
    pub objects: Vec<ObjectFixes>,
    /// Findings left in the fixed text, located in it.
    pub remaining: Vec<Located>,
    /// Fixes left out (an alias, a block scalar, ...); their findings are in `remaining`.
    pub skipped: Vec<Skipped>,
    /// Input errors and fixes that failed verification.
    pub errors: Vec<InputError>,
    /// Why nothing of it was fixed when that is no error (another tool's
    /// template met in a walk).
    pub notes: Vec<InputError>,
    /// Comments on or right above a value a fix changed that mention a
    /// number or the field: they may no longer be true.
    pub stale_comments: Vec<StaleComment>,
    /// For a Kustomize build, the user's files its fixes are written to
    /// (its own text, the build's output, is never written).
    pub sources: Vec<super::SourceFix>,
}

impl FileFix {
    /// Whether the fixed text differs from the original, or files of a
    /// build are fixed.
    pub fn changed(&self) -> bool {
        self.fixed != self.original || !self.sources.is_empty()
    }

    /// Number of fixes applied.
    pub fn fix_count(&self) -> usize {
        self.objects.iter().map(|o| o.applied.len()).sum()
    }
}

/// Fixes every pod-bearing object in `text`, given its parse
/// ([`parse_text`]). A file with a syntax error is left alone (its error is
/// reported).
///
/// Edits work on one document's text at a time (documents do not share
/// anchors), so a large stream is not re-read whole after every operation;
/// the whole file is read back once at the end, before anything is kept.
pub fn fix_text(
    file: &str,
    text: &str,
    parse: (Vec<Document>, Option<InputError>),
    batch: &Batch,
    policy: &Policy,
    only: Option<&[String]>,
    limits: &Limits,
) -> FileFix {
    let json = serde_json::from_str::<Value>(text).is_ok();
    let mut out = FileFix {
        file: file.to_owned(),
        original: text.to_owned(),
        // Built document by document below; a file left alone is its text.
        fixed: String::new(),
        json,
        objects: Vec::new(),
        remaining: Vec::new(),
        skipped: Vec::new(),
        errors: Vec::new(),
        notes: Vec::new(),
        stale_comments: Vec::new(),
        sources: Vec::new(),
    };
    let (docs, error) = parse;
    if let Some(e) = error {
        out.errors.push(e);
        out.fixed = out.original.clone();
        return out;
    }
    let ranges = doc_ranges(text, &docs);
    let mut expected: Vec<Value> = docs.iter().map(|d| d.value.clone()).collect();
    // (document, prefix, finding) left after fixing, located at the end.
    let mut left: Vec<(usize, String, Finding)> = Vec::new();
    // (document, changed scalars) of the objects whose edits were kept.
    let mut changed: Vec<(usize, Vec<Changed>)> = Vec::new();
    // The fixed text is built document by document, in order: splicing each
    // edit into the whole text moved the rest of it every time (quadratic
    // on a large stream).
    let mut fixed = String::with_capacity(text.len());
    fixed.push_str(&text[..ranges.first().map_or(text.len(), |r| r.0)]);
    for (doc, d) in docs.iter().enumerate() {
        let (from, to) = ranges[doc];
        let mut doc_text: Cow<'_, str> = Cow::Borrowed(&text[from..to]);
        for (prefix, object) in objects_in(&d.value) {
            if !object.is_object() {
                continue;
            }
            let place = Place { name: policies::model::object_label_of(object), prefix, object };
            let ctx = Ctx { file, doc: d, json, batch, policy, only, limits };
            let done = catch_unwind(AssertUnwindSafe(|| fix_object(&ctx, &place, &doc_text, &mut expected[doc])));
            match done {
                Ok(Fixed { findings, edited, applied, skipped, errors, changed: scalars, operations }) => {
                    left.extend(findings.into_iter().map(|f| (doc, place.prefix.clone(), f)));
                    out.skipped.extend(skipped);
                    out.errors.extend(errors);
                    if let Some(edited) = edited {
                        doc_text = Cow::Owned(edited);
                        out.objects.push(ObjectFixes {
                            object: place.name.clone(),
                            applied,
                            doc,
                            prefix: place.prefix.clone(),
                            operations,
                            written_to: Vec::new(),
                        });
                        changed.push((doc, scalars));
                    }
                }
                Err(_) => out.errors.push(error_at(
                    file,
                    d,
                    &place.prefix,
                    format!("{}: internal error while fixing (please report); not fixed", place.name),
                )),
            }
        }
        fixed.push_str(&doc_text);
    }
    out.fixed = fixed;
    let fixed_docs = if out.changed() {
        // The text as read is parsed again in the rare case it is needed,
        // so a large stream is not held in two parses while it is checked.
        drop(docs);
        let verified = verify(file, &out.fixed, &expected, json, limits);
        drop(expected);
        match verified {
            Ok(docs) => docs,
            Err(why) => {
                out.errors.push(InputError {
                    file: file.to_owned(),
                    line: None,
                    column: None,
                    message: format!(
                        "internal error: the fixed file would not read back as the fixed objects ({why}); not written (please report)"
                    ),
                });
                out.fixed = out.original.clone();
                out.objects.clear();
                changed.clear();
                parse_text(file, text, limits).0
            }
        }
    } else {
        docs
    };
    let lines: Vec<&str> = if changed.is_empty() { Vec::new() } else { out.fixed.lines().collect() };
    for (doc, scalars) in &changed {
        if let Some(d) = fixed_docs.get(*doc) {
            out.stale_comments.extend(stale_comments(file, &lines, d, scalars));
        }
    }
    for (doc, prefix, finding) in left {
        out.remaining.push(located(file, fixed_docs.get(doc), &prefix, finding));
    }
    out
}

/// A finding of the object at `prefix` of `doc`, located in it.
pub(super) fn located(file: &str, doc: Option<&Document>, prefix: &str, finding: Finding) -> Located {
    let pointer = format!("{prefix}{}", finding.pointer);
    let at = doc.map(|d| d.locate(&pointer)).unwrap_or_default();
    let object = doc.and_then(|d| d.value.pointer(prefix));
    let text = |p: &str| object.and_then(|o| o.pointer(p)).and_then(Value::as_str).map(std::sync::Arc::<str>::from);
    Located {
        file: file.into(),
        line: at.line,
        column: at.column,
        kind: text("/kind").unwrap_or_else(|| "".into()),
        namespace: text("/metadata/namespace"),
        name: text("/metadata/name"),
        object_at: doc.map(|d| d.locate(prefix)).unwrap_or_default(),
        template: None,
        origin: crate::outcome::Origin::File,
        pointer,
        finding,
    }
}

/// Byte ranges of the documents: each from the start of its first line to
/// the start of the next document's (the last one to the end of the text).
fn doc_ranges(text: &str, docs: &[Document]) -> Vec<(usize, usize)> {
    let off = Offsets::new(text);
    let starts: Vec<usize> = docs.iter().map(|d| line_start(text, off.byte(d.start.index))).collect();
    starts.iter().enumerate().map(|(i, s)| (*s, starts.get(i + 1).copied().unwrap_or(text.len()))).collect()
}
