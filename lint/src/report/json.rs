//! `--format json`: a stable array of findings, then one entry per input
//! error. Field names are a public interface (documented in docs/lint.md);
//! add fields, never rename them.
//!
//! Input errors share the array (and every field name) rather than wrapping
//! it in an object: a consumer written for the plain array keeps parsing,
//! and a run without input errors prints exactly what it printed before.
//! An input error is the entry whose `rule` is `null`.

use std::borrow::Cow;

use serde::Serialize;

use crate::outcome::{InputError, InputLevel, Located, Origin, Outcome};

/// One finding as JSON.
#[derive(Debug, Serialize)]
pub struct JsonFinding<'a> {
    /// Rule name.
    pub rule: &'a str,
    /// `error`, `warning` or `info`.
    pub severity: &'a str,
    /// File as given (`<stdin>` for stdin); null for `lifeguard audit`,
    /// whose findings the object and `path` locate.
    pub file: Option<&'a str>,
    /// 1-based line of the offending field; null for `lifeguard audit`.
    pub line: Option<u32>,
    /// 1-based column of the offending field; null for `lifeguard audit`.
    pub column: Option<u32>,
    /// Object kind.
    pub kind: &'a str,
    /// Object namespace, or null.
    pub namespace: Option<&'a str>,
    /// Object name, or null.
    pub name: Option<&'a str>,
    /// Container name, or null for pod-level findings.
    pub container: Option<&'a str>,
    /// One-line message, the container first.
    pub message: Cow<'a, str>,
    /// Short hint.
    pub help: &'a str,
    /// JSON pointer of the offending field within the object.
    pub path: &'a str,
    /// Whether `lifeguard fix` fixes it.
    pub fixable: bool,
    /// What the fix changes, or null.
    pub fix: Option<&'a str>,
    /// For `helm template` output: the template, and its line when known.
    pub template: Option<JsonTemplate<'a>>,
    /// What the finding rests on beyond the manifest (`about`, `value`,
    /// `source`, `from`, `declare`); empty when nothing.
    pub assumptions: &'a [policies::Assumption],
}

/// The Helm template a finding was rendered from.
#[derive(Debug, Serialize)]
pub struct JsonTemplate<'a> {
    /// Template path (`chart/templates/x.yaml`, or under `--helm-chart-root`).
    pub path: &'a str,
    /// The template's own line holding the finding's key, or null where the
    /// template is not on disk or no line of it matches with confidence.
    pub line: Option<u32>,
    /// Whether `path` exists (the template, or its packaged subchart's archive).
    pub exists: bool,
}

impl<'a> JsonFinding<'a> {
    /// Borrows a located finding.
    pub fn new(l: &'a Located) -> Self {
        let f = &l.finding;
        let in_file = l.origin == Origin::File;
        JsonFinding {
            rule: &f.rule,
            severity: f.severity.as_str(),
            file: in_file.then_some(&*l.file),
            line: in_file.then_some(l.line),
            column: in_file.then_some(l.column),
            kind: &l.kind,
            namespace: l.namespace.as_deref(),
            name: l.name.as_deref(),
            container: f.container.as_deref(),
            message: f.located_message(),
            help: &f.help,
            path: &f.pointer,
            fixable: f.automatic_fix().is_some(),
            fix: f.automatic_fix().map(|x| x.description.as_str()),
            template: l.template.as_ref().map(|t| {
                // A Kustomize build's field may come from a patch: the file of the line.
                let (path, at) = t.file_at(l.line);
                JsonTemplate { path, line: at.map(|(line, _)| line), exists: t.exists() }
            }),
            assumptions: &f.assumptions,
        }
    }
}

/// One input error as JSON: the fields of a finding, with `rule: null`
/// and the object's fields null (the input could not be read as objects).
#[derive(Debug, Serialize)]
pub struct JsonInputError<'a> {
    /// Always null: this is what tells an input error from a finding.
    pub rule: Option<&'a str>,
    /// `error` (the run exits 2), `warning` (linted, with something to
    /// know) or `info` (the input gave no object to check, and why).
    pub severity: &'a str,
    /// File as given (`<stdin>` for stdin).
    pub file: &'a str,
    /// 1-based line, or null when the whole file is at fault.
    pub line: Option<u32>,
    /// 1-based column, or null.
    pub column: Option<u32>,
    /// Null.
    pub kind: Option<&'a str>,
    /// Null.
    pub namespace: Option<&'a str>,
    /// Null.
    pub name: Option<&'a str>,
    /// Null.
    pub container: Option<&'a str>,
    /// What is wrong with the input.
    pub message: &'a str,
    /// What to do about it.
    pub help: &'a str,
    /// Null.
    pub path: Option<&'a str>,
    /// Always false.
    pub fixable: bool,
    /// Null.
    pub fix: Option<&'a str>,
    /// Null.
    pub template: Option<JsonTemplate<'a>>,
    /// Empty.
    pub assumptions: &'a [policies::Assumption],
}

impl<'a> JsonInputError<'a> {
    /// Borrows an input error.
    pub fn new(e: &'a InputError) -> Self {
        JsonInputError::at(InputLevel::Error, e)
    }

    /// Borrows an input's message of any level: a warning is `warning`, a
    /// note (an input that gave no object to check) `info`.
    pub fn at(level: InputLevel, e: &'a InputError) -> Self {
        let help = match level {
            InputLevel::Error => {
                "what this error names was not linted (the rest of the input was): correct it and run again"
            }
            InputLevel::Warning => "the input was linted; this never changes the exit code",
            InputLevel::Note => "nothing of this input was checked; this never changes the exit code",
        };
        JsonInputError {
            rule: None,
            severity: level.severity().as_str(),
            file: &e.file,
            line: e.line,
            column: e.column,
            kind: None,
            namespace: None,
            name: None,
            container: None,
            message: &e.message,
            help,
            path: None,
            fixable: false,
            fix: None,
            template: None,
            assumptions: &[],
        }
    }
}

/// One array entry.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Entry<'a> {
    Finding(JsonFinding<'a>),
    InputError(JsonInputError<'a>),
}

/// Renders the findings, then the input errors, as a pretty JSON array with
/// a trailing newline.
pub fn render(out: &Outcome) -> String {
    let findings = out.findings.iter().map(|f| Entry::Finding(JsonFinding::new(f)));
    let errors = out.input_messages().map(|(level, e)| Entry::InputError(JsonInputError::at(level, e)));
    let items: Vec<Entry<'_>> = findings.chain(errors).collect();
    let mut s = serde_json::to_string_pretty(&items).unwrap_or_else(|_| "[]".to_owned());
    s.push('\n');
    s
}
