//! One namespace's objects judged with its Services, as `lint` judges a
//! file's: the same engine, the same policy, findings located by object
//! and JSON pointer instead of line; page by page as they are listed.

use std::sync::Arc;

use policies::{Batch, OutOfScope, Policy, Scope, Severity};
use serde_json::Value;

use super::verdicts::Simulation;
use crate::documents::{Seen, lint_one};
use crate::outcome::{Origin, Outcome};
use crate::report::policy_report::Workload;
use crate::report::stream::Render;

/// What was read of one namespace, whole: for callers (tests) that judge
/// it as `audit` judges the pages it lists.
#[derive(Debug, Default)]
pub struct Namespace {
    /// Its name.
    pub name: String,
    /// Its pod-bearing objects, as listed.
    pub objects: Vec<Value>,
    /// Its Services, when they could be listed (`None` when they could not).
    pub services: Option<Vec<Value>>,
}

/// One row of the per-namespace table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Row {
    /// The namespace.
    pub namespace: String,
    /// Workloads judged.
    pub workloads: usize,
    /// Objects left to their controller's template.
    pub owned: usize,
    /// Findings by severity: errors, warnings, info.
    pub findings: [usize; 3],
    /// The workload with the most severe findings (most findings on a tie), and its worst severity.
    pub worst: Option<(String, Severity)>,
}

/// What judging a namespace gave.
#[derive(Debug, Default)]
pub struct Judged {
    /// Its findings, in workload order.
    pub outcome: Outcome,
    /// Its row of the table.
    pub row: Row,
    /// With `--simulate`, its verdicts' JSON entries.
    pub verdicts: Vec<Value>,
    /// The workloads judged, in order, each with its findings' range.
    pub workloads: Vec<Workload>,
}

/// Judges a namespace's objects as they are read, page by page, so memory
/// holds a page of objects and the findings, not the namespace: in the
/// engine's scope (controller-owned ones counted and skipped, as the webhook
/// skips them; those being deleted skipped), with its Services; with a
/// simulation, also simulates each workload judged.
pub struct Judge<'p> {
    policy: &'p Policy,
    batch: Batch,
    file: Arc<str>,
    judged: Judged,
    /// The worst workload so far: its severity, how many findings of it, its label.
    worst: Option<(Severity, usize, String)>,
}

impl<'p> Judge<'p> {
    /// A judge of namespace `name`, whose Services are `services` (`None`
    /// when they could not be listed).
    pub fn new(name: &str, services: Option<&[Value]>, policy: &'p Policy) -> Judge<'p> {
        // Read whole, even none: an audit knows every Service of the namespace,
        // so "no Service selects it" is a fact, not a gap in the input.
        let mut batch = Batch::default();
        if let Some(services) = services {
            batch.has_services = true;
            for service in services {
                batch.add(service);
            }
        }
        let judged = Judged {
            outcome: Outcome { origin: Origin::Cluster, ..Outcome::default() },
            row: Row { namespace: name.to_owned(), ..Row::default() },
            ..Judged::default()
        };
        Judge { policy, batch, file: name.into(), judged, worst: None }
    }

    /// Takes in more objects of the namespace's context (its
    /// PodDisruptionBudgets), before any workload is judged.
    pub fn add_context(&mut self, objects: &[Value]) {
        for object in objects {
            self.batch.add(object);
        }
    }

    /// Judges a page of objects.
    pub fn objects(&mut self, objects: &[Value], mut simulation: Option<&mut Simulation>) {
        let no_line = |_: &str| None;
        let seen = Seen { file: &self.file, template: None, origin: Origin::Cluster, locate: &no_line };
        let Judged { outcome: out, row, verdicts, workloads } = &mut self.judged;
        for object in objects {
            match Scope::default().admits(object) {
                Ok(()) => {}
                Err(OutOfScope::Controlled(_)) => {
                    row.owned += 1;
                    continue;
                }
                Err(_) => continue,
            }
            let (findings_before, objects_before) = (out.findings.len(), out.objects);
            lint_one(&seen, "", object, &self.batch, self.policy, out);
            if out.objects == objects_before {
                continue;
            }
            row.workloads += 1;
            let text = |p: &str| object.pointer(p).and_then(Value::as_str).unwrap_or_default().to_owned();
            workloads.push(Workload {
                api_version: text("/apiVersion"),
                kind: text("/kind"),
                name: text("/metadata/name"),
                uid: text("/metadata/uid"),
                findings: findings_before..out.findings.len(),
            });
            if let Some(simulation) = simulation.as_deref_mut() {
                verdicts.extend(simulation.run(object, &self.batch, self.policy));
            }
            let found = &out.findings[findings_before..];
            for f in found {
                row.findings[slot(f.finding.severity)] += 1;
            }
            if let Some(top) = found.iter().map(|f| f.finding.severity).max() {
                let count = found.iter().filter(|f| f.finding.severity == top).count();
                let label = found.first().map(|f| f.object()).unwrap_or_default();
                if self.worst.as_ref().is_none_or(|(s, n, _)| (top, count) > (*s, *n)) {
                    self.worst = Some((top, count, label));
                }
            }
        }
    }

    /// Renders the findings judged so far and drops them (their counts
    /// stay), for a report that needs no report object: the workloads'
    /// ranges of findings no longer index anything after it.
    pub fn render(&mut self, render: &mut Render) {
        render.document(&mut self.judged.outcome);
    }

    /// What judging the namespace gave.
    pub fn finish(self) -> Judged {
        let mut judged = self.judged;
        judged.row.worst = self.worst.map(|(severity, _, label)| (label, severity));
        judged
    }
}

/// Judges a namespace read whole, as [`Judge`] judges it page by page.
pub fn judge(namespace: Namespace, policy: &Policy, simulation: Option<&mut Simulation>) -> Judged {
    let mut judge = Judge::new(&namespace.name, namespace.services.as_deref(), policy);
    judge.objects(&namespace.objects, simulation);
    judge.finish()
}

fn slot(severity: Severity) -> usize {
    match severity {
        Severity::Error => 0,
        Severity::Warning => 1,
        Severity::Info => 2,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A Deployment whose liveness probe kills on the first failure.
    fn deployment(name: &str, metadata: Value) -> Value {
        let mut object = json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "namespace": "shop", "uid": name},
            "spec": {"template": {"spec": {"containers": [{
                "name": "app",
                "image": "example/app:1",
                "livenessProbe": {"httpGet": {"path": "/livez", "port": 8080}, "failureThreshold": 1},
            }]}}},
        });
        if let (Some(into), Some(extra)) = (object["metadata"].as_object_mut(), metadata.as_object()) {
            into.extend(extra.clone());
        }
        object
    }

    /// The engine's scope decides, as at admission: an object being deleted
    /// is neither judged nor counted as owned; a controlled one is counted
    /// as owned and left to its controller's template.
    #[test]
    fn objects_out_of_the_engines_scope_are_not_judged() {
        let owner =
            json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": true}]);
        let namespace = Namespace {
            name: "shop".into(),
            objects: vec![
                deployment("judged", json!({})),
                deployment("deleting", json!({"deletionTimestamp": "2026-01-01T00:00:00Z"})),
                deployment("owned", json!({"ownerReferences": owner})),
            ],
            services: Some(Vec::new()),
        };
        let judged = judge(namespace, &Policy::default(), None);
        let names: Vec<&str> = judged.workloads.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(names, ["judged"]);
        assert_eq!((judged.row.workloads, judged.row.owned), (1, 1));
        assert!(judged.outcome.findings.iter().all(|f| f.object().contains("judged")), "{:?}", judged.outcome.findings);
        assert!(!judged.outcome.findings.is_empty());
    }
}
