//! What the engine knows about the objects an object is read with: the
//! Services of its context, which `readiness-probe-missing` and
//! `prestop-bridge-missing` weigh, and its PodDisruptionBudgets and
//! HorizontalPodAutoscalers, which `pdb-blocks-eviction` weighs.

use serde_json::Value;

use super::disruption_budget::{AUTOSCALER_KIND, AutoscalerView, DISRUPTION_BUDGET_KIND, DisruptionBudgetView};
use super::service::ServiceView;
use super::workload::Workload;

/// The kinds of the objects a [`Batch`] takes in: what a front end reads
/// of an object's context before judging it.
pub const CONTEXT_KINDS: [&str; 3] = ["Service", DISRUPTION_BUDGET_KIND, AUTOSCALER_KIND];

/// Whether `object` is one a [`Batch`] takes in (its kind is one of
/// [`CONTEXT_KINDS`]).
pub fn is_context_object(object: &Value) -> bool {
    object.get("kind").and_then(Value::as_str).is_some_and(|k| CONTEXT_KINDS.contains(&k))
}

/// What the engine knows about the objects an object is read with: the
/// Services (for `readiness-probe-missing` and `prestop-bridge-missing`),
/// the PodDisruptionBudgets and HorizontalPodAutoscalers (for
/// `pdb-blocks-eviction`).
///
/// A front end builds one batch per *context*, so that an object's findings
/// do not depend on which other inputs happen to be named in the same run:
/// `lifeguard lint` uses the object's own file (or stdin stream) and the
/// other manifest files of its directory; the webhook, one object alone.
#[derive(Debug, Clone, Default)]
pub struct Batch {
    /// Services of the context, in a canonical order (namespace, name, then
    /// the rest) whatever order they were read in, so messages that list
    /// them read the same however the context was read.
    pub services: Vec<ServiceView>,
    /// Whether the context held any Service at all.
    pub has_services: bool,
    /// PodDisruptionBudgets of the context, in the order they were read
    /// (a finding names each that selects its workload).
    pub budgets: Vec<DisruptionBudgetView>,
    /// HorizontalPodAutoscalers of the context, in the order they were read.
    pub autoscalers: Vec<AutoscalerView>,
    /// The Services in the order they were added, for [`Batch::differs_for`].
    arrived: Vec<ServiceView>,
}

impl Batch {
    /// Collects what the rules need from every object of an input.
    pub fn from_objects<'a>(objects: impl IntoIterator<Item = &'a Value>) -> Batch {
        let mut batch = Batch::default();
        for object in objects {
            batch.add(object);
        }
        batch
    }

    /// Takes in one more object of the context.
    pub fn add(&mut self, object: &Value) {
        if let Some(service) = ServiceView::from_object(object) {
            let key = service.order_key();
            let at = self.services.partition_point(|s| s.order_key() <= key);
            self.services.insert(at, service.clone());
            self.arrived.push(service);
            self.has_services = true;
        } else if let Some(budget) = DisruptionBudgetView::from_object(object) {
            self.budgets.push(budget);
        } else if let Some(autoscaler) = AutoscalerView::from_object(object) {
            self.autoscalers.push(autoscaler);
        }
    }

    /// The first HorizontalPodAutoscaler that scales `w`.
    pub fn autoscaler_of(&self, w: &Workload) -> Option<&AutoscalerView> {
        self.autoscalers.iter().find(|a| a.scales(w.namespace.as_deref(), &w.kind, w.name.as_deref()))
    }

    /// The PodDisruptionBudgets that select the pods of `w`.
    pub fn budgets_of<'a>(&'a self, w: &'a Workload) -> impl Iterator<Item = &'a DisruptionBudgetView> {
        self.budgets.iter().filter(|b| b.selects(w.namespace.as_deref(), &w.labels))
    }

    /// Takes in every object of parsed documents' values (a `List`'s items
    /// too): the one way a front end fills a batch from what it read.
    pub fn add_documents<'a>(&mut self, documents: impl IntoIterator<Item = &'a Value>) {
        for document in documents {
            for (_, object) in objects_in(document) {
                self.add(object);
            }
        }
    }

    /// A mark of how much of the context this batch has seen, for
    /// [`Batch::differs_for`].
    pub fn mark(&self) -> BatchMark {
        BatchMark { services: self.arrived.len(), budgets: self.budgets.len(), autoscalers: self.autoscalers.len() }
    }

    /// Whether linting `object` with this batch could give another result
    /// than linting it with the batch as it was at `earlier` (built from a
    /// prefix of the same additions). Lets a caller lint objects while the
    /// input is still being read and re-lint only the few that a later
    /// object (a Service after the Deployment it selects) could change.
    /// Conservative: `true` whenever in doubt.
    pub fn differs_for(&self, earlier: BatchMark, object: &Value) -> bool {
        let new = self.arrived.get(earlier.services..).unwrap_or_default();
        let new_budgets = self.budgets.get(earlier.budgets..).unwrap_or_default();
        let new_autoscalers = self.autoscalers.get(earlier.autoscalers..).unwrap_or_default();
        if new.is_empty() && new_budgets.is_empty() && new_autoscalers.is_empty() {
            return false;
        }
        // The first Service turns "no Service in the context" into "some".
        if earlier.services == 0 && !new.is_empty() {
            return true;
        }
        match Workload::from_object(object) {
            Ok(Some(w)) => {
                let (ns, labels) = (w.namespace.as_deref(), &w.labels);
                new.iter().any(|s| s.selects(ns, labels))
                    || new_budgets.iter().any(|b| b.selects(ns, labels))
                    || new_autoscalers.iter().any(|a| a.scales(ns, &w.kind, w.name.as_deref()))
            }
            Ok(None) => false,
            Err(_) => true,
        }
    }
}

/// How much of an input a [`Batch`] had seen (see [`Batch::mark`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BatchMark {
    services: usize,
    budgets: usize,
    autoscalers: usize,
}

/// The objects in a document: the document itself, or the `items` of a
/// `List` / `*List`, each with the pointer prefix of its place in the document.
pub fn objects_in(doc: &Value) -> Vec<(String, &Value)> {
    let is_list = doc.get("kind").and_then(Value::as_str).is_some_and(|k| k.ends_with("List"));
    match (is_list, doc.get("items").and_then(Value::as_array)) {
        (true, Some(items)) => items
            .iter()
            .enumerate()
            .flat_map(|(i, item)| objects_in(item).into_iter().map(move |(p, v)| (format!("/items/{i}{p}"), v)))
            .collect(),
        _ => vec![(String::new(), doc)],
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Batch;

    fn service(name: &str, app: &str) -> serde_json::Value {
        json!({"kind": "Service", "metadata": {"name": name}, "spec": {"selector": {"app": app}}})
    }

    fn deployment(app: &str) -> serde_json::Value {
        json!({"kind": "Deployment", "metadata": {"name": app}, "spec": {"template": {
            "metadata": {"labels": {"app": app}}, "spec": {"containers": [{"name": "c"}]}}}})
    }

    #[test]
    fn only_a_later_selecting_service_or_the_first_service_changes_a_verdict() {
        let mut batch = Batch::default();
        let none_yet = batch.mark();
        batch.add(&service("a", "a"));
        let after_a = batch.mark();
        assert!(batch.differs_for(none_yet, &deployment("z")), "first Service changes every pod");
        assert!(!batch.differs_for(after_a, &deployment("a")), "nothing new since");
        batch.add(&service("b", "b"));
        assert!(batch.differs_for(after_a, &deployment("b")));
        assert!(!batch.differs_for(after_a, &deployment("c")));
        batch.add(&json!({"kind": "ConfigMap"}));
        assert_eq!(batch.services.len(), 2);
    }

    #[test]
    fn services_are_kept_in_one_order_whatever_order_they_arrive_in() {
        let names = |b: &Batch| b.services.iter().map(|s| s.display_name()).collect::<Vec<_>>();
        let forward = Batch::from_objects([&service("a", "x"), &service("b", "x"), &service("c", "x")]);
        let backward = Batch::from_objects([&service("c", "x"), &service("b", "x"), &service("a", "x")]);
        assert_eq!(names(&forward), ["Service/a", "Service/b", "Service/c"]);
        assert_eq!(names(&backward), names(&forward));
        // The marks still count arrivals: a Service added later is "new".
        let mut batch = Batch::from_objects([&service("z", "z")]);
        let mark = batch.mark();
        batch.add(&service("a", "a"));
        assert!(batch.differs_for(mark, &deployment("a")));
    }
}
