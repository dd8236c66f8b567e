//! A PodDisruptionBudget as the eviction API and the disruption controller
//! read it: the pods it selects and how many of a workload's replicas it
//! lets an eviction take (`pkg/controller/disruption/disruption.go`,
//! `getExpectedPodCount`; `pkg/registry/core/pod/storage/eviction.go`);
//! and the HorizontalPodAutoscaler that sets those replicas, whose floor is
//! where a budget is tightest.

use std::collections::BTreeMap;

use serde_json::Value;

use super::label_selector::LabelOperator;
use super::service::same_namespace;

/// The kind of the object.
pub const DISRUPTION_BUDGET_KIND: &str = "PodDisruptionBudget";

/// `minAvailable` or `maxUnavailable`: a count or a percentage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Amount {
    Count(i64),
    Percent(i64),
}

impl Amount {
    /// Reads an IntOrString (`1`, `"50%"`); `None` for anything else
    /// (which the API server refuses).
    fn read(value: &Value) -> Option<Amount> {
        if let Some(n) = value.as_i64() {
            return Some(Amount::Count(n));
        }
        let text = value.as_str()?;
        match text.strip_suffix('%') {
            Some(p) => p.parse().ok().map(Amount::Percent),
            None => text.parse().ok().map(Amount::Count),
        }
    }

    /// Its value scaled to `total` replicas, rounding up as the controller
    /// does (`GetScaledValueFromIntOrPercent(.., true)`).
    fn scaled(self, total: i64) -> i64 {
        match self {
            Amount::Count(n) => n,
            Amount::Percent(p) => (p * total + 99).div_euclid(100),
        }
    }

    /// As written in the manifest.
    pub fn shown(self) -> String {
        match self {
            Amount::Count(n) => n.to_string(),
            Amount::Percent(p) => format!("\"{p}%\""),
        }
    }
}

/// One `matchExpressions` requirement.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Requirement {
    key: String,
    /// `None` for an operator Kubernetes does not know (which the API
    /// server refuses): it selects nothing.
    operator: Option<LabelOperator>,
    values: Vec<String>,
}

/// A PodDisruptionBudget's namespace, name, selector and budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisruptionBudgetView {
    /// `metadata.namespace`, if set.
    pub namespace: Option<String>,
    /// `metadata.name`, if set.
    pub name: Option<String>,
    /// `spec.selector`: `None` when absent or null, which in `policy/v1`
    /// selects no pod; an empty one selects every pod of the namespace.
    match_labels: Option<BTreeMap<String, String>>,
    match_expressions: Vec<Requirement>,
    /// `spec.minAvailable`.
    pub min_available: Option<Amount>,
    /// `spec.maxUnavailable` (the API server refuses both set at once).
    pub max_unavailable: Option<Amount>,
}

impl DisruptionBudgetView {
    /// Reads a PodDisruptionBudget; `None` for any other kind.
    pub fn from_object(object: &Value) -> Option<DisruptionBudgetView> {
        if object.get("kind").and_then(Value::as_str) != Some(DISRUPTION_BUDGET_KIND) {
            return None;
        }
        let meta = object.get("metadata");
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
        let spec = object.get("spec");
        let selector = spec.and_then(|s| s.get("selector")).filter(|s| s.is_object());
        let match_labels = selector.map(|s| {
            s.get("matchLabels")
                .and_then(Value::as_object)
                .map(|m| m.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned()))).collect())
                .unwrap_or_default()
        });
        let match_expressions = selector
            .and_then(|s| s.get("matchExpressions"))
            .and_then(Value::as_array)
            .map(|reqs| {
                reqs.iter()
                    .map(|r| Requirement {
                        key: r.get("key").and_then(Value::as_str).unwrap_or_default().to_owned(),
                        operator: r.get("operator").and_then(|o| serde_json::from_value(o.clone()).ok()),
                        values: r
                            .get("values")
                            .and_then(Value::as_array)
                            .map(|v| v.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                            .unwrap_or_default(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let amount = |key: &str| spec.and_then(|s| s.get(key)).and_then(Amount::read);
        Some(DisruptionBudgetView {
            namespace: text(meta.and_then(|m| m.get("namespace"))),
            name: text(meta.and_then(|m| m.get("name"))),
            match_labels,
            match_expressions,
            min_available: amount("minAvailable"),
            max_unavailable: amount("maxUnavailable"),
        })
    }

    /// Whether it selects the pods of a template with `labels` in
    /// `namespace` (an unset namespace on either side is the same one, as
    /// for a Service: both land where the manifest is applied). An unknown
    /// operator selects nothing: the API server refuses it.
    pub fn selects(&self, namespace: Option<&str>, labels: &BTreeMap<String, String>) -> bool {
        let Some(match_labels) = &self.match_labels else { return false };
        same_namespace(self.namespace.as_deref(), namespace)
            && match_labels.iter().all(|(k, v)| labels.get(k) == Some(v))
            && self
                .match_expressions
                .iter()
                .all(|req| req.operator.is_some_and(|op| op.holds(labels.get(&req.key), &req.values)))
    }

    /// `PodDisruptionBudget/NAME` (`namespace/NAME` when namespaced).
    pub fn label(&self) -> String {
        let name = self.name.as_deref().unwrap_or("(unnamed)");
        match &self.namespace {
            Some(ns) => format!("{DISRUPTION_BUDGET_KIND}/{ns}/{name}"),
            None => format!("{DISRUPTION_BUDGET_KIND}/{name}"),
        }
    }

    /// How many pods must stay healthy of a workload of `replicas`
    /// (`None`: not known), as the controller computes it; `None` when it
    /// depends on a count not known here.
    pub fn desired_healthy(&self, replicas: Option<i64>) -> Option<i64> {
        match (self.max_unavailable, self.min_available) {
            // 0 or 0% unavailable: every replica, however many.
            (Some(Amount::Count(0) | Amount::Percent(0)), _) => replicas.or(Some(i64::MAX)),
            (Some(max), _) => replicas.map(|r| (r - max.scaled(r)).max(0)),
            (None, Some(Amount::Percent(p))) if p >= 100 => replicas.or(Some(i64::MAX)),
            (None, Some(min)) => match min {
                Amount::Count(n) => Some(n),
                Amount::Percent(_) => replicas.map(|r| min.scaled(r)),
            },
            (None, None) => None,
        }
    }

    /// Whether, with every one of `replicas` pods healthy, it allows no
    /// eviction (`disruptionsAllowed` = healthy - desired healthy, at 0):
    /// `kubectl drain` and the cluster autoscaler wait on it for ever.
    /// `replicas` `None` (an autoscaler's, or a kind without a count) is
    /// judged only where no count allows one (0 unavailable, 100 %
    /// available).
    pub fn allows_no_eviction(&self, replicas: Option<i64>) -> bool {
        match (self.desired_healthy(replicas), replicas) {
            (Some(i64::MAX), _) => true,
            (Some(desired), Some(r)) => desired >= r,
            _ => false,
        }
    }

    /// The setting that decides it, as written: `maxUnavailable: 0`.
    pub fn setting(&self) -> String {
        match (self.max_unavailable, self.min_available) {
            (Some(a), _) => format!("maxUnavailable: {}", a.shown()),
            (None, Some(a)) => format!("minAvailable: {}", a.shown()),
            (None, None) => "no budget".to_owned(),
        }
    }
}

/// The kind of a HorizontalPodAutoscaler.
pub const AUTOSCALER_KIND: &str = "HorizontalPodAutoscaler";

/// A HorizontalPodAutoscaler as far as a budget needs it: the workload it
/// scales and the fewest replicas it keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoscalerView {
    /// `metadata.namespace`, if set.
    pub namespace: Option<String>,
    /// `metadata.name`, if set.
    pub name: Option<String>,
    /// `spec.scaleTargetRef.kind` and `.name`.
    pub target: (String, String),
    /// `spec.minReplicas`: 1 when unset, as the API server defaults it.
    pub min_replicas: i64,
}

impl AutoscalerView {
    /// Reads a HorizontalPodAutoscaler (`autoscaling/v1` or `v2`, which
    /// share these fields); `None` for any other kind, or one without a
    /// target.
    pub fn from_object(object: &Value) -> Option<AutoscalerView> {
        if object.get("kind").and_then(Value::as_str) != Some(AUTOSCALER_KIND) {
            return None;
        }
        let text = |p: &str| object.pointer(p).and_then(Value::as_str).map(str::to_owned);
        Some(AutoscalerView {
            namespace: text("/metadata/namespace"),
            name: text("/metadata/name"),
            target: (text("/spec/scaleTargetRef/kind")?, text("/spec/scaleTargetRef/name")?),
            min_replicas: object.pointer("/spec/minReplicas").and_then(Value::as_i64).unwrap_or(1),
        })
    }

    /// Whether it scales the object `kind`/`name` in `namespace` (an unset
    /// namespace on either side is the same one).
    pub fn scales(&self, namespace: Option<&str>, kind: &str, name: Option<&str>) -> bool {
        same_namespace(self.namespace.as_deref(), namespace)
            && self.target.0 == kind
            && Some(self.target.1.as_str()) == name
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pdb(spec: Value) -> DisruptionBudgetView {
        let object = json!({"kind": "PodDisruptionBudget", "metadata": {"name": "web"}, "spec": spec});
        DisruptionBudgetView::from_object(&object).expect("a PDB")
    }

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn a_budget_allows_no_eviction_as_the_disruption_controller_counts() {
        let sel = json!({"matchLabels": {"app": "web"}});
        let cases = [
            (json!({"selector": sel, "minAvailable": 1}), Some(1), true),
            (json!({"selector": sel, "minAvailable": 1}), Some(2), false),
            (json!({"selector": sel, "minAvailable": 3}), Some(3), true),
            (json!({"selector": sel, "minAvailable": 1}), None, false),
            (json!({"selector": sel, "maxUnavailable": 0}), None, true),
            (json!({"selector": sel, "maxUnavailable": "0%"}), Some(5), true),
            (json!({"selector": sel, "maxUnavailable": 1}), Some(1), false),
            // 10% of 3 rounds up to 1 unavailable.
            (json!({"selector": sel, "maxUnavailable": "10%"}), Some(3), false),
            (json!({"selector": sel, "minAvailable": "100%"}), None, true),
            // 50% of 1 rounds up to 1: all of it.
            (json!({"selector": sel, "minAvailable": "50%"}), Some(1), true),
            (json!({"selector": sel, "minAvailable": "50%"}), Some(2), false),
            (json!({"selector": sel, "minAvailable": "60%"}), Some(2), true),
            (json!({"selector": sel}), Some(1), false),
        ];
        for (spec, replicas, blocks) in cases {
            assert_eq!(pdb(spec.clone()).allows_no_eviction(replicas), blocks, "{spec} with {replicas:?}");
        }
    }

    #[test]
    fn an_autoscaler_names_its_target_and_its_floor() {
        let hpa = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "a"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 5}});
        let view = AutoscalerView::from_object(&hpa).expect("an HPA");
        assert_eq!(view.min_replicas, 1, "minReplicas defaults to 1");
        assert!(view.scales(Some("a"), "Deployment", Some("web")));
        assert!(view.scales(None, "Deployment", Some("web")));
        assert!(!view.scales(Some("b"), "Deployment", Some("web")));
        assert!(!view.scales(Some("a"), "StatefulSet", Some("web")));
        assert!(AutoscalerView::from_object(&json!({"kind": "HorizontalPodAutoscaler", "spec": {}})).is_none());
    }

    #[test]
    fn selects_as_a_label_selector_does_and_a_missing_selector_selects_nothing() {
        let web = labels(&[("app", "web"), ("tier", "front")]);
        let spec = |selector: Value| pdb(json!({"selector": selector, "minAvailable": 1}));
        assert!(spec(json!({"matchLabels": {"app": "web"}})).selects(None, &web));
        assert!(!spec(json!({"matchLabels": {"app": "db"}})).selects(None, &web));
        assert!(spec(json!({})).selects(None, &web), "an empty selector selects every pod");
        assert!(!pdb(json!({"minAvailable": 1})).selects(None, &web), "no selector selects none");
        let expr = |op: &str, values: &[&str]| {
            spec(json!({"matchExpressions": [{"key": "tier", "operator": op, "values": values}]}))
        };
        assert!(expr("In", &["front", "back"]).selects(None, &web));
        assert!(!expr("NotIn", &["front"]).selects(None, &web));
        assert!(expr("Exists", &[]).selects(None, &web));
        assert!(!expr("DoesNotExist", &[]).selects(None, &web));
        assert!(!expr("Matches", &[]).selects(None, &web));
        let mut other_ns = spec(json!({"matchLabels": {"app": "web"}}));
        other_ns.namespace = Some("a".to_owned());
        assert!(!other_ns.selects(Some("b"), &web));
        assert!(other_ns.selects(None, &web));
    }
}
