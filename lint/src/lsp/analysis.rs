//! One open file linted as `lifeguard lint FILE` lints it (the same
//! parse, policy, Services and engine), with each finding's exact range:
//! what diagnostics, quick fixes and hovers are made of.

use std::panic::{AssertUnwindSafe, catch_unwind};

use lsp_types::{DiagnosticSeverity, Range, Uri};
use policies::related::places;
use policies::{Batch, Policy, objects_in};
use serde_json::Value;

use super::elsewhere::Elsewhere;
use super::text::Lines;
use crate::engine::{lint_document, parse_text};
use crate::input::{Document, Limits};
use crate::outcome::{Located, Outcome};

/// A finding and where it is in the text.
#[derive(Debug, Clone)]
pub struct Placed {
    /// The finding as `lint` reports it.
    pub located: Located,
    /// The document it is in.
    pub doc: usize,
    /// The offending field: its key (or value) to the end of its value.
    pub range: Range,
    /// Other places the finding involves (in another file, or in this one
    /// when `None`), with what each is.
    pub related: Vec<(Option<Uri>, Range, String)>,
}

/// Something about the text itself: a syntax error, a limit, a duplicate
/// key, a policy that does not load.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// Where.
    pub range: Range,
    /// Error for what stops linting, warning for what lint warns about.
    pub severity: DiagnosticSeverity,
    /// What is wrong.
    pub message: String,
}

/// A file's findings and problems.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    /// Findings, in the text's order.
    pub findings: Vec<Placed>,
    /// Problems of the text.
    pub problems: Vec<Problem>,
    /// The lines (0-based, end exclusive) of each document.
    pub documents: Vec<(u32, u32)>,
}

/// Lints `text` (shown as `name`) with `policy` and the Services of its
/// directory's other files (`context`, and each of them with its place);
/// the text's own Services join them.
pub fn analyze(name: &str, text: &str, policy: &Policy, context: (&Batch, &[Elsewhere]), limits: &Limits) -> Analysis {
    let (context, elsewhere) = context;
    let lines = Lines::new(text);
    let mut out = Analysis::default();
    if text.len() as u64 > limits.max_file_bytes {
        out.problems.push(Problem {
            range: Range::default(),
            severity: DiagnosticSeverity::ERROR,
            message: format!(
                "{name} is {} bytes; lifeguard reads at most {} bytes of a file, so it is not linted",
                text.len(),
                limits.max_file_bytes
            ),
        });
        return out;
    }
    let (docs, error) = parse_text(name, text, limits);
    if let Some(e) = error {
        let at = lines.position(e.line.unwrap_or(1), e.column.unwrap_or(1).saturating_sub(1));
        out.problems.push(Problem {
            range: Range { start: at, end: at },
            severity: DiagnosticSeverity::ERROR,
            message: e.message,
        });
    }
    out.documents = spans(&docs, &lines);
    let mut batch = context.clone();
    for doc in &docs {
        for (_, object) in objects_in(&doc.value) {
            batch.add(object);
        }
    }
    let mut outcome = Outcome::default();
    for (index, doc) in docs.iter().enumerate() {
        let before = outcome.findings.len();
        let linted = catch_unwind(AssertUnwindSafe(|| lint_document(name, doc, None, &batch, policy, &mut outcome)));
        if linted.is_err() {
            let at = lines.position(doc.start.line, doc.start.col);
            out.problems.push(Problem {
                range: Range { start: at, end: at },
                severity: DiagnosticSeverity::ERROR,
                message: "internal error in the rule engine (please report)".into(),
            });
            continue;
        }
        for located in outcome.findings.drain(before..) {
            let range = span(doc, &located.pointer, &lines);
            let related = related(&docs, doc, &located, elsewhere, &lines);
            out.findings.push(Placed { located, doc: index, range, related });
        }
    }
    for e in outcome.errors.iter().chain(&outcome.warnings) {
        let at = lines.position(e.line.unwrap_or(1), e.column.unwrap_or(1).saturating_sub(1));
        let warning = outcome.warnings.iter().any(|w| std::ptr::eq(w, e));
        out.problems.push(Problem {
            range: Range { start: at, end: at },
            severity: if warning { DiagnosticSeverity::WARNING } else { DiagnosticSeverity::ERROR },
            message: e.message.clone(),
        });
    }
    out
}

/// Each document's lines, from its start to the next one's.
fn spans(docs: &[Document], lines: &Lines<'_>) -> Vec<(u32, u32)> {
    let starts: Vec<u32> = docs.iter().map(|d| lines.position(d.start.line, 0).line).collect();
    starts.iter().enumerate().map(|(i, &s)| (s, starts.get(i + 1).copied().unwrap_or(u32::MAX))).collect()
}

/// The range of the field `pointer` names (for a missing field, its
/// deepest existing parent): from its key, or its value when it has no
/// key, to the end of its value. A finding's range starts where `lint`
/// places it.
pub fn span(doc: &Document, pointer: &str, lines: &Lines<'_>) -> Range {
    let mut value = &doc.value;
    let mut node = &doc.root;
    for raw in pointer.split('/').skip(1) {
        let token = raw.replace("~1", "/").replace("~0", "~");
        let found = match value {
            Value::Object(map) => map.iter().enumerate().find(|(_, (k, _))| **k == token).map(|(i, (_, v))| (i, v)),
            Value::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get(i).map(|v| (i, v))),
            _ => None,
        };
        let Some((next_value, next_node)) = found.and_then(|(i, v)| node.kids.get(i).map(|n| (v, n))) else {
            break;
        };
        value = next_value;
        node = next_node;
    }
    let start = node.key.unwrap_or(node.start);
    let (start, end) = (lines.position(start.line, start.col), lines.position(node.end.line, node.end.col));
    Range { start, end: if end < start { start } else { end } }
}

/// The other places a finding involves, as its rule declares them
/// ([`policies::related::places`]): fields of its object, and the Services
/// that send the pod traffic (this file's or its directory's).
fn related(
    docs: &[Document],
    doc: &Document,
    located: &Located,
    elsewhere: &[Elsewhere],
    lines: &Lines<'_>,
) -> Vec<(Option<Uri>, Range, String)> {
    let Some(prefix) = located.pointer.strip_suffix(located.finding.pointer.as_str()) else {
        return Vec::new();
    };
    let Some(object) = doc.value.pointer(prefix) else { return Vec::new() };
    let places = places(&located.finding, object);
    let mut out: Vec<(Option<Uri>, Range, String)> = places
        .fields
        .into_iter()
        .map(|(pointer, what)| (None, span(doc, &format!("{prefix}{pointer}"), lines), what.to_owned()))
        .collect();
    if let Some(senders) = places.senders {
        for d in docs {
            for (p, service) in objects_in(&d.value) {
                if let Some(label) = senders.label(service) {
                    out.push((None, span(d, &p, lines), label));
                }
            }
        }
        for e in elsewhere {
            if let Some(label) = senders.label(&e.object) {
                out.push((Some(e.uri.clone()), e.range, label));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHARED: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  template:
    spec:
      containers:
        - name: web
          image: example/web:1
          ports: [{name: http, containerPort: 8080}]
          livenessProbe:
            httpGet: {path: /healthz, port: http}
          readinessProbe:
            httpGet: {path: /healthz, port: http}
";

    #[test]
    fn a_finding_spans_its_field_and_names_the_other_probe() {
        let analysis = analyze("web.yaml", SHARED, &Policy::default(), (&Batch::default(), &[]), &Limits::default());
        let reused =
            analysis.findings.iter().find(|p| p.located.finding.rule == "probe-endpoint-reused").expect("found");
        assert_eq!((reused.range.start.line, reused.range.start.character), (10, 10));
        assert_eq!(reused.range.end.line, 12, "to the end of the probe's block");
        assert_eq!(reused.related.len(), 1);
        assert_eq!(reused.related[0].1.start.line, 12);
        assert_eq!(analysis.documents, vec![(0, u32::MAX)]);
    }

    #[test]
    fn a_syntax_error_is_a_problem_at_its_position_and_a_huge_file_one_problem() {
        let analysis = analyze(
            "bad.yaml",
            "kind: Pod\nmetadata: {name: x\n",
            &Policy::default(),
            (&Batch::default(), &[]),
            &Limits::default(),
        );
        assert_eq!(analysis.problems.len(), 1, "{:?}", analysis.problems);
        assert_eq!(analysis.problems[0].severity, DiagnosticSeverity::ERROR);
        assert!(analysis.problems[0].range.start.line >= 1);
        let limits = Limits { max_file_bytes: 10, ..Limits::default() };
        let huge = analyze("huge.yaml", SHARED, &Policy::default(), (&Batch::default(), &[]), &limits);
        assert_eq!(huge.problems.len(), 1);
        assert!(huge.problems[0].message.contains("at most 10 bytes"), "{:?}", huge.problems);
        assert!(huge.findings.is_empty());
    }
}
