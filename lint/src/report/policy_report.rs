//! `lifeguard audit --format openreports|policyreport`: each namespace's
//! findings as the report object platform teams' tools read, ready for
//! `kubectl apply -f -`: an `openreports.io/v1alpha1` `Report`, or the
//! `wgpolicyk8s.io/v1alpha2` `PolicyReport` Kyverno installs and Policy
//! Reporter reads. Both carry the same results; only the API group, the
//! kind and where `source` goes differ.
//!
//! The reports are a multi-document YAML stream, one document per
//! namespace: each is written as its namespace is judged and stands alone
//! (a `List` would hold every namespace under one `items`).

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

/// Every namespace's report has this name: a rerun replaces it.
pub const REPORT_NAME: &str = "lifeguard";

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

    /// The report of `namespace`: a result per finding of `findings` (the
    /// namespace's, which `workloads` index), one `pass` per workload
    /// without any, and with `--simulate`, each container's verdicts
    /// (`verdicts`: the JSON entries of the namespace) in its findings'
    /// properties. `None` when no workload was judged: a namespace with
    /// nothing to judge gets no report.
    pub fn object(
        &self,
        namespace: &str,
        workloads: &[Workload],
        findings: &[Located],
        verdicts: &[Value],
    ) -> Option<Value> {
        if workloads.is_empty() {
            return None;
        }
        let scenarios = by_container(verdicts);
        let mut results = Vec::new();
        let mut summary = [("pass", 0), ("fail", 0), ("warn", 0), ("error", 0), ("skip", 0)];
        for w in workloads {
            let resource = json!([{
                "apiVersion": w.api_version, "kind": w.kind, "name": w.name, "namespace": namespace, "uid": w.uid,
            }]);
            let found = findings.get(w.findings.clone()).unwrap_or_default();
            if found.is_empty() {
                summary[0].1 += 1;
                let message = format!("no finding from the {} rules the policy runs", self.rules);
                results.push(self.result(PASS_POLICY, "pass", None, message, resource, Map::new()));
                continue;
            }
            for l in found {
                let f = &l.finding;
                let outcome = if f.severity >= self.deny { "fail" } else { "warn" };
                summary[if outcome == "fail" { 1 } else { 2 }].1 += 1;
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
                results.push(self.result(&f.rule, outcome, severity, message, resource.clone(), properties));
            }
        }
        let mut report = Map::new();
        report.insert("apiVersion".into(), json!(self.kind.api_version()));
        report.insert("kind".into(), json!(self.kind.kind()));
        report.insert(
            "metadata".into(),
            json!({"name": REPORT_NAME, "namespace": namespace, "labels": {MANAGED_BY.0: MANAGED_BY.1}}),
        );
        // Policy Reporter reads a PolicyReport's source from each result;
        // a Report says it once.
        if self.kind == ReportKind::Openreports {
            report.insert("source".into(), json!(SOURCE));
        }
        report.insert(
            "summary".into(),
            Value::Object(summary.iter().map(|(k, n)| ((*k).to_owned(), json!(n))).collect()),
        );
        report.insert("results".into(), Value::Array(results.into_iter().map(Value::Object).collect()));
        Some(Value::Object(report))
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
        if let Some(report) = self.object(namespace, workloads, &out.findings, verdicts) {
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

    #[test]
    fn a_namespace_with_no_workload_gets_no_report() {
        let reports = Reports::new(ReportKind::Openreports, &Policy::default(), UNIX_EPOCH);
        assert_eq!(reports.object("empty", &[], &[], &[]), None);
    }
}
