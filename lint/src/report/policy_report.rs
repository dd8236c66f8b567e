//! `lifeguard audit --format openreports|policyreport`: each namespace's
//! findings as the report object platform teams' tools read, ready for
//! `kubectl apply -f -`: an `openreports.io/v1alpha1` `Report`, or the
//! `wgpolicyk8s.io/v1alpha2` `PolicyReport` Kyverno installs and Policy
//! Reporter reads. Both carry the same results; only the API group, the
//! kind and where `source` goes differ.
//!
//! The reports are a multi-document YAML stream, a document per report:
//! each is written as its namespace is judged and stands alone (a `List`
//! would hold every namespace under one `items`).
//!
//! A namespace's results are split into reports of bounded size
//! ([`MAX_RESULTS`], [`MAX_BYTES`]), a workload's results never across
//! two: one object per namespace stops being storable at about 2,000
//! results (etcd refuses a request over 1.5 MiB), and readers (Policy
//! Reporter, `kubectl get reports`) aggregate every report of a source in
//! a namespace, so parts read as one. Bounded parts rather than a report
//! per workload: a rerun rewrites every report it owns (the results carry
//! its time), and parts keep that to a few writes per namespace where a
//! report per workload would be one write per workload on every run.
//!
//! Over 400 lines: the contract (this doc, the documented constants and
//! `ReportKind`, about 150 lines), `Reports`, which builds each namespace's
//! results into bounded parts (about 190), and the tests of both kinds and the
//! split (about 105); the report format stays in one place.

use std::collections::BTreeMap;
use std::io::Write;
use std::ops::Range;
use std::time::{SystemTime, UNIX_EPOCH};

use policies::{Policy, Severity};
use serde_json::{Map, Value, json};

use crate::outcome::{Located, Outcome, Rendered};
use policies::rules::docs_url;

/// What the reports say they come from (`source`), and the field manager
/// that writes them.
pub const SOURCE: &str = "lifeguard";

/// A namespace's first report has this name, its next ones `lifeguard-2`,
/// `lifeguard-3`...: a rerun replaces them.
pub const REPORT_NAME: &str = "lifeguard";

/// The label that numbers a namespace's reports (`"1"` for
/// [`REPORT_NAME`]): a rerun that writes fewer removes the rest by it.
pub const PART_LABEL: &str = "lifeguard.dev/report-part";

/// The most results one report holds: a page of `kubectl get` output a
/// reader can still take in, and, at the few hundred bytes a result takes,
/// well under what etcd stores in one object ([`MAX_BYTES`] bounds the
/// rest).
pub const MAX_RESULTS: usize = 1_000;

/// The most bytes of JSON one report's results take: half of etcd's
/// default request limit (1.5 MiB), leaving room for the rest of the
/// object, its managed fields, and results with long messages.
pub const MAX_BYTES: usize = 768 * 1024;

/// The name of a namespace's `part`-th report (from 1).
pub fn report_name(part: usize) -> String {
    if part <= 1 { REPORT_NAME.to_owned() } else { format!("{REPORT_NAME}-{part}") }
}

/// The label Policy Reporter and `kubectl -l` select lifeguard's reports by.
pub const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "lifeguard");

/// Every result's `category`: the rule registry has no categories, and
/// every rule is about probes or the pod's lifecycle.
pub const CATEGORY: &str = "Probes and lifecycle";

/// The `policy` and `rule` of a workload's one `pass` result: lifeguard as
/// a whole, every rule the policy runs.
pub const PASS_POLICY: &str = "lifeguard";

/// The report objects `audit` can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportKind {
    /// One `openreports.io/v1alpha1` `Report` per namespace, as YAML for `kubectl apply -f -`.
    Openreports,
    /// One `wgpolicyk8s.io/v1alpha2` `PolicyReport` per namespace (Kyverno's CRD, which Policy Reporter reads).
    Policyreport,
}

impl ReportKind {
    /// The objects' `apiVersion`.
    pub fn api_version(self) -> &'static str {
        match self {
            ReportKind::Openreports => "openreports.io/v1alpha1",
            ReportKind::Policyreport => "wgpolicyk8s.io/v1alpha2",
        }
    }

    /// The objects' `kind`.
    pub fn kind(self) -> &'static str {
        match self {
            ReportKind::Openreports => "Report",
            ReportKind::Policyreport => "PolicyReport",
        }
    }

    /// The resource that serves them.
    pub fn plural(self) -> &'static str {
        match self {
            ReportKind::Openreports => "reports",
            ReportKind::Policyreport => "policyreports",
        }
    }

    /// The CRD that serves them (`resource.group`).
    pub fn crd(self) -> &'static str {
        match self {
            ReportKind::Openreports => "reports.openreports.io",
            ReportKind::Policyreport => "policyreports.wgpolicyk8s.io",
        }
    }

    /// Where its CRD comes from, for a cluster that lacks it.
    pub fn crd_source(self) -> &'static str {
        match self {
            ReportKind::Openreports => "config/crd/openreports.io_reports.yaml of github.com/openreports/reports-api",
            ReportKind::Policyreport => {
                "Kyverno's, or config/crds/policyreport/wgpolicyk8s.io_policyreports.yaml of github.com/kyverno/kyverno"
            }
        }
    }
}

/// A workload judged: what a result names it by, and where its findings
/// are among its namespace's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workload {
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.uid` (empty when the object has none).
    pub uid: String,
    /// Its findings: this range of the namespace's.
    pub findings: Range<usize>,
}

/// The severity a report gives a finding. The reports' scale is
/// `critical`, `high`, `medium`, `low`, `info`; `critical` is left for
/// what scanners mean by it (an exploitable flaw), so an error, which
/// breaks pods or drops traffic as written, is `high`, a warning
/// (hurts under load or on rollout) `medium`, and info stays `info`.
pub fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "high",
        Severity::Warning => "medium",
        Severity::Info => "info",
    }
}

/// The reports of one audit: the kind, the policy's deny severity (a
/// finding at or above it is a `fail`, below it a `warn`), how many rules
/// run, and the time every result is stamped with.
#[derive(Debug, Clone)]
pub struct Reports {
    kind: ReportKind,
    deny: Severity,
    rules: usize,
    seconds: i64,
    nanos: u32,
}

impl Reports {
    /// Reports of `kind` judged by `policy`, stamped `at` (the audit's
    /// start; a fixed time in tests).
    pub fn new(kind: ReportKind, policy: &Policy, at: SystemTime) -> Reports {
        let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
        Reports {
            kind,
            deny: policy.deny_severity,
            rules: crate::report::junit::rules_run(policy).len(),
            seconds: i64::try_from(since.as_secs()).unwrap_or(i64::MAX),
            nanos: since.subsec_nanos(),
        }
    }

    /// The objects' kind.
    pub fn kind(&self) -> ReportKind {
        self.kind
    }

    /// The reports of `namespace`: a result per finding of `findings` (the
    /// namespace's, which `workloads` index), one `pass` per workload
    /// without any, and with `--simulate`, each container's verdicts
    /// (`verdicts`: the JSON entries of the namespace) in its findings'
    /// properties; split into parts of at most [`MAX_RESULTS`] results and
    /// [`MAX_BYTES`] of them, a workload's results in one part. Empty when
    /// no workload was judged: a namespace with nothing to judge gets no
    /// report.
    pub fn objects(
        &self,
        namespace: &str,
        workloads: &[Workload],
        findings: &[Located],
        verdicts: &[Value],
    ) -> Vec<Value> {
        self.split(namespace, workloads, findings, verdicts, MAX_RESULTS, MAX_BYTES)
    }

    /// [`Reports::objects`] with the bounds given.
    fn split(
        &self,
        namespace: &str,
        workloads: &[Workload],
        findings: &[Located],
        verdicts: &[Value],
        max_results: usize,
        max_bytes: usize,
    ) -> Vec<Value> {
        let scenarios = by_container(verdicts);
        let mut parts = Vec::new();
        let mut part = Part::default();
        for w in workloads {
            let results = self.results(namespace, w, findings, &scenarios);
            let bytes: usize = results.iter().map(|(r, _)| json_len(r)).sum();
            let full = part.results.len() + results.len() > max_results || part.bytes + bytes > max_bytes;
            if full && !part.results.is_empty() {
                parts.push(std::mem::take(&mut part));
            }
            part.bytes += bytes;
            for (result, outcome) in results {
                part.count(outcome);
                part.results.push(Value::Object(result));
            }
        }
        if !part.results.is_empty() {
            parts.push(part);
        }
        parts.into_iter().enumerate().map(|(i, part)| self.report(namespace, i + 1, part)).collect()
    }

    /// A workload's results, each with its outcome's slot in the summary.
    fn results(
        &self,
        namespace: &str,
        w: &Workload,
        findings: &[Located],
        scenarios: &BTreeMap<Container<'_>, Vec<(&str, &str)>>,
    ) -> Vec<(Map<String, Value>, usize)> {
        let resource = json!([{
            "apiVersion": w.api_version, "kind": w.kind, "name": w.name, "namespace": namespace, "uid": w.uid,
        }]);
        let found = findings.get(w.findings.clone()).unwrap_or_default();
        if found.is_empty() {
            let message = format!("no finding from the {} rules the policy runs", self.rules);
            return vec![(self.result(PASS_POLICY, "pass", None, message, resource, Map::new()), 0)];
        }
        let mut results = Vec::with_capacity(found.len());
        for l in found {
            let f = &l.finding;
            let (outcome, slot) = if f.severity >= self.deny { ("fail", 1) } else { ("warn", 2) };
            let mut properties = Map::new();
            if let Some(container) = &f.container {
                properties.insert("container".into(), json!(container));
            }
            properties.insert("pointer".into(), json!(l.pointer));
            let (label, note) = f.fix_labelled();
            properties.insert("fix".into(), json!(format!("{label} {note}")));
            if policies::rules::find(&f.rule).is_some() {
                properties.insert("docs".into(), json!(docs_url(&f.rule)));
            }
            let key = (w.kind.as_str(), w.name.as_str(), f.container.as_deref().unwrap_or_default());
            for (scenario, verdict) in scenarios.get(&key).into_iter().flatten() {
                properties.insert(format!("simulate.{scenario}"), json!(verdict));
            }
            // The result names the container in a field of its own.
            let message = f.short.clone();
            let severity = Some(severity(f.severity));
            results.push((self.result(&f.rule, outcome, severity, message, resource.clone(), properties), slot));
        }
        results
    }

    /// The `number`-th report of `namespace`, holding `part`.
    fn report(&self, namespace: &str, number: usize, part: Part) -> Value {
        let mut report = Map::new();
        report.insert("apiVersion".into(), json!(self.kind.api_version()));
        report.insert("kind".into(), json!(self.kind.kind()));
        report.insert(
            "metadata".into(),
            json!({"name": report_name(number), "namespace": namespace,
                "labels": {MANAGED_BY.0: MANAGED_BY.1, PART_LABEL: number.to_string()}}),
        );
        // Policy Reporter reads a PolicyReport's source from each result;
        // a Report says it once.
        if self.kind == ReportKind::Openreports {
            report.insert("source".into(), json!(SOURCE));
        }
        let summary = SUMMARY.iter().zip(part.summary).map(|(k, n)| ((*k).to_owned(), json!(n))).collect();
        report.insert("summary".into(), Value::Object(summary));
        report.insert("results".into(), Value::Array(part.results));
        Value::Object(report)
    }

    /// One result: its rule (as both `policy` and `rule`), outcome and
    /// what it is about.
    fn result(
        &self,
        rule: &str,
        outcome: &str,
        severity: Option<&str>,
        message: String,
        resources: Value,
        properties: Map<String, Value>,
    ) -> Map<String, Value> {
        let mut r = Map::new();
        r.insert("policy".into(), json!(rule));
        r.insert("rule".into(), json!(rule));
        r.insert("category".into(), json!(CATEGORY));
        if let Some(severity) = severity {
            r.insert("severity".into(), json!(severity));
        }
        r.insert("result".into(), json!(outcome));
        r.insert("scored".into(), json!(true));
        if self.kind == ReportKind::Policyreport {
            r.insert("source".into(), json!(SOURCE));
        }
        r.insert("message".into(), json!(message));
        r.insert("resources".into(), resources);
        if !properties.is_empty() {
            r.insert("properties".into(), Value::Object(properties));
        }
        r.insert("timestamp".into(), json!({"seconds": self.seconds, "nanos": self.nanos}));
        r
    }

    /// Renders a namespace's report into its outcome's text and drops the
    /// findings, as [`crate::report::stream::Render`] does with a
    /// document's: the counts (and so the exit code and summary) stay.
    pub fn namespace(&self, out: &mut Outcome, namespace: &str, workloads: &[Workload], verdicts: &[Value]) {
        let mut rendered = Rendered::default();
        for report in self.objects(namespace, workloads, &out.findings, verdicts) {
            rendered.push_str("---\n");
            rendered.push_str(&policies::yaml::to_yaml(&report));
        }
        for l in &out.findings {
            rendered.note(l);
        }
        rendered.suppressed = out.suppressed.len();
        out.findings = Vec::new();
        out.suppressed = Vec::new();
        out.linted = Vec::new();
        out.rendered.absorb(rendered);
    }
}

/// Writes the reports rendered into `out`, in namespace order.
pub fn write(out: &Outcome, w: &mut dyn Write) -> std::io::Result<()> {
    for piece in out.rendered.pieces() {
        w.write_all(piece.as_bytes())?;
    }
    Ok(())
}

/// Writes the reports rendered into `out` so far and drops them: each
/// document stands alone, so the stream is written as it is made.
pub fn stream(out: &mut Outcome, w: &mut dyn Write) -> std::io::Result<()> {
    out.rendered.take_pieces().iter().try_for_each(|p| w.write_all(p.as_bytes()))
}

/// The summary's outcomes, in the order reports list them.
const SUMMARY: [&str; 5] = ["pass", "fail", "warn", "error", "skip"];

/// One report's results as they are gathered.
#[derive(Default)]
struct Part {
    results: Vec<Value>,
    /// Their JSON's length.
    bytes: usize,
    /// Counts by [`SUMMARY`]'s outcomes.
    summary: [usize; 5],
}

impl Part {
    fn count(&mut self, slot: usize) {
        if let Some(n) = self.summary.get_mut(slot) {
            *n += 1;
        }
    }
}

/// The length of `value` as compact JSON, as the API server receives it.
fn json_len(value: &Map<String, Value>) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Writing to a counter cannot fail.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

/// A container of a workload: `(kind, name, container)`.
type Container<'a> = (&'a str, &'a str, &'a str);

/// `--simulate`'s verdicts by container: `(scenario, verdict)` in the
/// order the scenarios ran. Each is already the worst of the scenario's
/// offsets.
fn by_container(verdicts: &[Value]) -> BTreeMap<Container<'_>, Vec<(&str, &str)>> {
    let mut out: BTreeMap<Container<'_>, Vec<(&str, &str)>> = BTreeMap::new();
    for e in verdicts {
        let text = |k: &str| e.get(k).and_then(Value::as_str);
        let (Some(kind), Some(name), Some(container), Some(scenario), Some(verdict)) =
            (text("kind"), text("name"), text("container"), text("scenario"), text("verdict"))
        else {
            continue;
        };
        out.entry((kind, name, container)).or_default().push((scenario, verdict));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_severity_scale_leaves_critical_and_low_unused() {
        assert_eq!([Severity::Error, Severity::Warning, Severity::Info].map(severity), ["high", "medium", "info"]);
    }

    /// A namespace of `n` Deployments, every other one with a liveness
    /// probe that kills on the first failure on the readiness endpoint,
    /// judged as `audit` judges it.
    fn judged(n: usize) -> crate::audit::judge::Judged {
        let deployment = |i: usize| {
            let liveness = if i % 2 == 0 {
                json!({"httpGet": {"path": "/readyz", "port": 8080}, "failureThreshold": 1})
            } else {
                Value::Null
            };
            let mut container = json!({"name": "app", "image": "example/app:1",
                "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8080}}});
            if !liveness.is_null() {
                container["livenessProbe"] = liveness;
            }
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": format!("app-{i}"), "namespace": "shop", "uid": format!("uid-{i}")},
                "spec": {"template": {"spec": {"containers": [container]}}}})
        };
        let namespace = crate::audit::judge::Namespace {
            name: "shop".into(),
            objects: (0..n).map(deployment).collect(),
            services: Some(Vec::new()),
        };
        crate::audit::judge::judge(namespace, &Policy::default(), None)
    }

    fn results(report: &Value) -> Vec<Value> {
        report["results"].as_array().cloned().unwrap_or_default()
    }

    /// The workload (`name`) of each result.
    fn names(results: &[Value]) -> Vec<String> {
        results.iter().map(|r| r["resources"][0]["name"].as_str().unwrap_or_default().to_owned()).collect()
    }

    /// How many workloads `results` are about (each workload's results come together).
    fn workloads_in(results: &[Value]) -> usize {
        let mut names = names(results);
        names.dedup();
        names.len()
    }

    #[test]
    fn a_namespace_is_split_into_numbered_parts_that_never_split_a_workload() {
        let judged = judged(7);
        let reports = Reports::new(ReportKind::Openreports, &Policy::default(), UNIX_EPOCH);
        let (workloads, findings) = (&judged.workloads, &judged.outcome.findings);
        let whole = reports.objects("shop", workloads, findings, &[]);
        assert_eq!(whole.len(), 1, "7 workloads fit one report");
        let all = results(&whole[0]);
        let failing = all.iter().filter(|r| r["result"] == "fail" || r["result"] == "warn").count();
        assert!(failing >= 4 && all.len() > 7, "every other workload has a finding: {all:#?}");

        let parts = reports.split("shop", workloads, findings, &[], 3, usize::MAX);
        assert!(parts.len() > 2, "{parts:#?}");
        let mut joined = Vec::new();
        for (i, part) in parts.iter().enumerate() {
            let number = i + 1;
            assert_eq!(part["metadata"]["name"], report_name(number));
            assert_eq!(part["metadata"]["labels"][PART_LABEL], number.to_string());
            assert_eq!(part["metadata"]["labels"][MANAGED_BY.0], MANAGED_BY.1);
            let these = results(part);
            let counted: u64 = SUMMARY.iter().map(|k| part["summary"][k].as_u64().unwrap_or_default()).sum();
            assert_eq!(counted, these.len() as u64, "the summary counts the part's own results");
            assert!(these.len() <= 3 || workloads_in(&these) == 1, "over the bound only with one workload: {these:#?}");
            joined.extend(these);
        }
        assert_eq!(joined, all, "the parts hold every result, in order");
        let split: Vec<Vec<String>> = parts.iter().map(|p| names(&results(p))).collect();
        for (a, b) in split.iter().zip(split.iter().skip(1)) {
            assert_ne!(a.last(), b.first(), "a workload's results stay in one part: {split:?}");
        }
        assert_eq!(report_name(1), "lifeguard");
        assert_eq!(report_name(2), "lifeguard-2");
    }

    #[test]
    fn a_part_is_bounded_by_the_bytes_of_its_results() {
        let judged = judged(6);
        let reports = Reports::new(ReportKind::Policyreport, &Policy::default(), UNIX_EPOCH);
        let (workloads, findings) = (&judged.workloads, &judged.outcome.findings);
        let whole = reports.objects("shop", workloads, findings, &[]);
        let bytes = |r: &Value| results(r).iter().map(|x| x.to_string().len()).sum::<usize>();
        let limit = bytes(&whole[0]) / 3;
        let parts = reports.split("shop", workloads, findings, &[], usize::MAX, limit);
        assert!(parts.len() >= 3, "{} parts", parts.len());
        for part in &parts {
            assert!(bytes(part) <= limit || workloads_in(&results(part)) == 1, "{} > {limit}", bytes(part));
        }
    }

    #[test]
    fn a_namespace_with_no_workload_gets_no_report() {
        let reports = Reports::new(ReportKind::Openreports, &Policy::default(), UNIX_EPOCH);
        assert_eq!(reports.objects("empty", &[], &[], &[]), Vec::<Value>::new());
    }
}
