//! One open file linted as `lifeguard lint FILE` lints it (the same
//! parse, policy, Services and engine), with each finding's exact range:
//! what diagnostics, quick fixes and hovers are made of.

use lsp_types::{DiagnosticSeverity, Range, Uri};
use policies::related::places;
use policies::{Batch, Policy};
use serde_json::Value;

use super::elsewhere::Elsewhere;
use super::text::Lines;
use crate::documents::lint_document;
use crate::input::context_objects::context_with;
use crate::input::{Document, Limits, Template, TemplateFinder, may_hold_context};
use crate::outcome::{InputError, Located, Outcome};
use crate::pipeline::{self, Keeper, Source, Step};

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
/// the text's own Services join them. The text goes through the pipeline
/// `lint` runs ([`crate::pipeline`]), on the calling thread.
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
    // The text's own Services, each with its place, for the related locations.
    let own = located_context(text, &lines, limits);
    let step = Analyze { lines: &lines, own: &own, elsewhere };
    let source = Source { name, text, context: 0, policy };
    let keep = &mut Unplaced(TemplateFinder::default());
    let Some(result) = pipeline::run(&[source], vec![context.clone()], limits, 1, &step, keep).pop() else {
        return out;
    };
    let problem = |e: InputError, severity: DiagnosticSeverity| {
        let at = lines.position(e.line.unwrap_or(1), e.column.unwrap_or(1).saturating_sub(1));
        Problem { range: Range { start: at, end: at }, severity, message: e.message }
    };
    out.problems.extend(result.syntax.map(|e| problem(e, DiagnosticSeverity::ERROR)));
    let analyzed = result.out;
    let starts: Vec<u32> = analyzed.starts.iter().map(|&line| lines.position(line, 0).line).collect();
    out.documents =
        starts.iter().enumerate().map(|(i, &s)| (s, starts.get(i + 1).copied().unwrap_or(u32::MAX))).collect();
    out.findings = analyzed.findings;
    out.problems.extend(analyzed.errors.into_iter().map(|e| problem(e, DiagnosticSeverity::ERROR)));
    out.problems.extend(analyzed.warnings.into_iter().map(|e| problem(e, DiagnosticSeverity::WARNING)));
    out
}

/// The editor's step: each document linted as `lint` lints it, each finding
/// with its exact range and the places it involves.
struct Analyze<'a> {
    lines: &'a Lines<'a>,
    /// The text's own Services and their ranges.
    own: &'a [(Value, Range)],
    /// The Services of the directory's other files.
    elsewhere: &'a [Elsewhere],
}

/// What the step gives for a run of documents.
#[derive(Debug, Default)]
struct Analyzed {
    /// The line each document starts on.
    starts: Vec<u32>,
    /// Findings, each with the index of its document among these.
    findings: Vec<Placed>,
    errors: Vec<InputError>,
    warnings: Vec<InputError>,
}

impl Step for Analyze<'_> {
    type Out = Analyzed;

    fn document(&self, source: &Source<'_>, doc: &Document, batch: &Batch) -> Analyzed {
        let mut outcome = Outcome::default();
        lint_document(source.name, doc, None, batch, source.policy, &mut outcome);
        let findings = outcome
            .findings
            .into_iter()
            .map(|located| {
                let range = span(doc, &located.pointer, self.lines);
                let related = related(doc, &located, self.own, self.elsewhere, self.lines);
                Placed { located, doc: 0, range, related }
            })
            .collect();
        Analyzed { starts: vec![doc.start.line], findings, errors: outcome.errors, warnings: outcome.warnings }
    }

    fn join(into: &mut Analyzed, mut part: Analyzed) {
        let before = into.starts.len();
        into.findings.extend(part.findings.into_iter().map(|p| Placed { doc: p.doc + before, ..p }));
        into.starts.append(&mut part.starts);
        into.errors.append(&mut part.errors);
        into.warnings.append(&mut part.warnings);
    }
}

/// The editor reads a text as the editor has it: no Helm template is looked up on disk.
struct Unplaced(TemplateFinder);

impl Keeper<Analyzed> for Unplaced {
    fn templates(&mut self) -> &mut TemplateFinder {
        &mut self.0
    }

    fn document(&mut self, _: &mut Analyzed, _: Option<Template>) {}
}

/// The Services a text holds, each with its range, as `lint` reads a file
/// for them ([`crate::input::context_objects`]): the open file's own, and its
/// directory's other files' (`workspace.rs`).
pub fn located_context(text: &str, lines: &Lines<'_>, limits: &Limits) -> Vec<(Value, Range)> {
    if !may_hold_context(text) {
        return Vec::new();
    }
    context_with(text, limits, &|document, pointer, service| (service.clone(), span(document, pointer, lines)))
}

/// The range of the field `pointer` names (for a missing field, its
/// deepest existing parent): from its key, or its value when it has no
/// key, to the end of its value. A finding's range starts where `lint`
/// places it.
pub fn span(doc: &Document, pointer: &str, lines: &Lines<'_>) -> Range {
    let node = doc.node_at(pointer);
    let start = node.key.unwrap_or(node.start);
    let (start, end) = (lines.position(start.line, start.col), lines.position(node.end.line, node.end.col));
    Range { start, end: if end < start { start } else { end } }
}

/// The other places a finding involves, as its rule declares them
/// ([`policies::related::places`]): fields of its object, and the Services
/// that send the pod traffic (this file's or its directory's).
fn related(
    doc: &Document,
    located: &Located,
    own: &[(Value, Range)],
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
    if let Some(context) = places.context {
        for (object, range) in own {
            if let Some(label) = context.label(object) {
                out.push((None, *range, label));
            }
        }
        for e in elsewhere {
            if let Some(label) = context.label(&e.object) {
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
    fn a_budget_finding_names_the_budget_and_the_autoscaler_of_its_file() {
        let text = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - {name: web, image: example/web:1}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 4
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: shop}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
";
        let analysis = analyze("web.yaml", text, &Policy::default(), (&Batch::default(), &[]), &Limits::default());
        let blocked =
            analysis.findings.iter().find(|p| p.located.finding.rule == "pdb-blocks-eviction").expect("found");
        let related: Vec<(u32, &str)> =
            blocked.related.iter().map(|(_, r, what)| (r.start.line, what.as_str())).collect();
        assert_eq!(
            related,
            [
                (10, "HorizontalPodAutoscaler shop/web scales this workload (minReplicas 1)"),
                (17, "PodDisruptionBudget/shop/web selects these pods"),
            ],
            "{related:?}"
        );
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
