//! The PrometheusRule objects (prometheus-operator's
//! `monitoring.coreos.com/v1` CRD) holding the workloads' alerts.

use serde_json::{Value, json};

use super::alert::WorkloadAlert;
use crate::vap::EXPORT_LABEL;

/// Every workload's alert has this name; `lifeguard_workload` tells them apart.
pub const ALERT_NAME: &str = "LifeguardPodUnreadyPastObjective";

/// The rule group's name in every part.
pub const GROUP_NAME: &str = "lifeguard-unready-past-objective";

/// The most bytes of rules one object holds (as JSON). A client-side
/// `kubectl apply` keeps a copy of the object in an annotation, and the API
/// server refuses annotations over 256 KiB in all
/// (`TotalAnnotationSizeLimitB`); a part of 200 KB leaves room for the
/// rest, so any number of workloads can be applied either way.
pub const PART_LIMIT_BYTES: usize = 200_000;

/// The objects: `name`, then `name-2`, `name-3`, ... when the alerts do not
/// fit in one, in the alerts' order; none without alerts.
pub fn prometheus_rules(name: &str, alerts: &[WorkloadAlert]) -> Vec<Value> {
    let mut parts: Vec<Vec<&Value>> = Vec::new();
    let mut size = 0;
    for alert in alerts {
        let bytes = alert.rule.to_string().len();
        match parts.last_mut() {
            Some(part) if size + bytes <= PART_LIMIT_BYTES => part.push(&alert.rule),
            _ => {
                parts.push(vec![&alert.rule]);
                size = 0;
            }
        }
        size += bytes;
    }
    parts
        .into_iter()
        .enumerate()
        .map(|(i, rules)| {
            let object_name = if i == 0 { name.to_owned() } else { format!("{name}-{}", i + 1) };
            json!({
                "apiVersion": "monitoring.coreos.com/v1",
                "kind": "PrometheusRule",
                "metadata": {"name": object_name, "labels": {EXPORT_LABEL: name}},
                "spec": {"groups": [{"name": GROUP_NAME, "rules": rules}]},
            })
        })
        .collect()
}
