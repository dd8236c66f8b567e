//! The other places a finding involves, which an editor shows with it: what
//! its rule declares ([`Related`]), found in the finding's object and among
//! the objects of its context read with it (Services, PodDisruptionBudgets,
//! HorizontalPodAutoscalers).

use serde_json::Value;

use crate::finding::Finding;
use crate::model::{AutoscalerView, DisruptionBudgetView, ServiceView, Workload};
use crate::rules::{Related, find};

/// Where a finding's related places are.
#[derive(Debug, Default)]
pub struct Places {
    /// Fields of the finding's object: each one's pointer in the object,
    /// and what it is.
    pub fields: Vec<(String, &'static str)>,
    /// The objects of the context the finding involves, when it does.
    pub context: Option<ContextPlaces>,
}

/// Which objects of a workload's context a finding involves: the Services
/// that send its pods traffic, or the budgets that select them and the
/// autoscaler that scales it.
#[derive(Debug)]
pub struct ContextPlaces {
    workload: Workload,
    related: Related,
}

impl ContextPlaces {
    /// What `object` is to the finding when it is one of those; `None` for
    /// any other object.
    pub fn label(&self, object: &Value) -> Option<String> {
        let w = &self.workload;
        let (ns, labels) = (w.namespace.as_deref(), &w.labels);
        let text = |k: &str| object["metadata"][k].as_str().unwrap_or("?").to_owned();
        match self.related {
            Related::SendingServices => {
                let view = ServiceView::from_object(object)?;
                (!view.headless && view.selects(ns, labels))
                    .then(|| format!("Service {}/{} sends this pod traffic", text("namespace"), text("name")))
            }
            Related::Budgets => {
                if let Some(budget) = DisruptionBudgetView::from_object(object) {
                    return budget.selects(ns, labels).then(|| format!("{} selects these pods", budget.label()));
                }
                let autoscaler = AutoscalerView::from_object(object)?;
                autoscaler.scales(ns, &w.kind, w.name.as_deref()).then(|| {
                    format!(
                        "HorizontalPodAutoscaler {}/{} scales this workload (minReplicas {})",
                        text("namespace"),
                        text("name"),
                        autoscaler.min_replicas
                    )
                })
            }
            Related::SharedReadiness | Related::Nothing => None,
        }
    }
}

/// The places `finding`, of `object`, involves (a custom rule's, none).
pub fn places(finding: &Finding, object: &Value) -> Places {
    let mut out = Places::default();
    match find(&finding.rule).map(|r| r.related) {
        Some(Related::SharedReadiness) => {
            let Some(container) = finding.pointer.strip_suffix("/livenessProbe") else { return out };
            let readiness = format!("{container}/readinessProbe");
            if object.pointer(&readiness).is_some() {
                out.fields.push((readiness, "the readiness probe with the same handler"));
            }
        }
        Some(related @ (Related::SendingServices | Related::Budgets)) => {
            if let Ok(Some(workload)) = Workload::from_object(object) {
                out.context = Some(ContextPlaces { workload, related });
            }
        }
        Some(Related::Nothing) | None => {}
    }
    out
}
