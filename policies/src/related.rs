//! The other places a finding involves, which an editor shows with it: what
//! its rule declares ([`Related`]), found in the finding's object and among
//! the Services read with it.

use serde_json::Value;

use crate::finding::Finding;
use crate::model::{ServiceView, Workload};
use crate::rules::{Related, find};

/// Where a finding's related places are.
#[derive(Debug, Default)]
pub struct Places {
    /// Fields of the finding's object: each one's pointer in the object,
    /// and what it is.
    pub fields: Vec<(String, &'static str)>,
    /// The Services that send the pod traffic, when the finding involves them.
    pub senders: Option<Senders>,
}

/// Which Services send a pod traffic.
#[derive(Debug)]
pub struct Senders {
    workload: Workload,
}

impl Senders {
    /// What `service` is to the finding when it is a Service that sends
    /// the pod traffic (not a headless one); `None` for any other object.
    pub fn label(&self, service: &Value) -> Option<String> {
        let view = ServiceView::from_object(service)?;
        if view.headless || !view.selects(self.workload.namespace.as_deref(), &self.workload.labels) {
            return None;
        }
        let text = |k: &str| service["metadata"][k].as_str().unwrap_or("?").to_owned();
        Some(format!("Service {}/{} sends this pod traffic", text("namespace"), text("name")))
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
        Some(Related::SendingServices) => {
            if let Ok(Some(workload)) = Workload::from_object(object) {
                out.senders = Some(Senders { workload });
            }
        }
        Some(Related::Nothing) | None => {}
    }
    out
}
