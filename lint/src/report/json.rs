//! `--format json`: a stable array of findings. Field names are a public
//! interface (documented in the README); add fields, never rename them.

use serde::Serialize;

use crate::lint::{Located, Outcome};

/// One finding as JSON.
#[derive(Debug, Serialize)]
pub struct JsonFinding<'a> {
    /// Rule name.
    pub rule: &'a str,
    /// `error`, `warning` or `info`.
    pub severity: &'a str,
    /// File as given (`<stdin>` for stdin).
    pub file: &'a str,
    /// 1-based line of the offending field.
    pub line: u32,
    /// 1-based column of the offending field.
    pub column: u32,
    /// Object kind.
    pub kind: &'a str,
    /// Object namespace, or null.
    pub namespace: Option<&'a str>,
    /// Object name, or null.
    pub name: Option<&'a str>,
    /// Container name, or null for pod-level findings.
    pub container: Option<&'a str>,
    /// One-line message.
    pub message: &'a str,
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
        JsonFinding {
            rule: &f.rule,
            severity: f.severity.as_str(),
            file: &l.file,
            line: l.line,
            column: l.column,
            kind: &l.kind,
            namespace: l.namespace.as_deref(),
            name: l.name.as_deref(),
            container: f.container.as_deref(),
            message: &f.message,
            help: &f.help,
            path: &f.pointer,
            fixable: f.fix.is_some(),
            fix: f.fix.as_ref().map(|x| x.description.as_str()),
            template: l.template.as_ref().map(|t| JsonTemplate {
                path: &t.path,
                line: t.line(l.line),
                exists: t.exists(),
            }),
        }
    }
}

/// Renders the findings as a pretty JSON array with a trailing newline.
pub fn render(out: &Outcome) -> String {
    let items: Vec<JsonFinding<'_>> = out.findings.iter().map(JsonFinding::new).collect();
    let mut s = serde_json::to_string_pretty(&items).unwrap_or_else(|_| "[]".to_owned());
    s.push('\n');
    s
}
