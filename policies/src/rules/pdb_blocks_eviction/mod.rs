//! `pdb-blocks-eviction`: the PodDisruptionBudgets beside a workload let
//! no eviction through while every replica is healthy, so a node drain
//! waits on its pods for ever.
//!
//! Tests: `policies/src/rules/pdb_blocks_eviction/fixtures/`,
//! `policies/src/rules/pdb_blocks_eviction/snapshots/rule_fixtures__pdb-blocks-eviction.snap`; the
//! counting: `policies/src/model/disruption_budget.rs`.

use crate::finding::{Finding, Severity};
use crate::model::{DisruptionBudgetView, Workload};
use crate::rules::{Ctx, FixAvailability, Harm, HarmShown, MapExport, Related, Rule, VapExport};
use crate::simulate::Verdict;

pub(crate) static RULE: Rule = Rule {
    name: "pdb-blocks-eviction",
    severity: Severity::Warning,
    summary: "a PodDisruptionBudget allows no eviction of the workload's pods (or two select them): node drains hang",
    doc: DOC,
    fix: FixAvailability::NoFix(
        "whether to run more replicas or to let one go during a drain is the owner's choice; neither is derived \
         from the spec",
    ),
    check,
    vap: VapExport::No(
        "needs the PodDisruptionBudgets that select the pod, which an admission policy of the workload cannot see",
    ),
    map: MapExport::NoFix,
    related: Related::Budgets,
    harm: HarmShown::InWorkload(&[Harm { scenario: "drain", verdicts: &[Verdict::EvictionBlocked] }]),
};

const DOC: &str = r#"## What it does
Flags a long-running workload whose pods are selected by a
PodDisruptionBudget that allows no eviction while every replica is
healthy, or by more than one budget. Budgets, and the
HorizontalPodAutoscaler that scales the workload, are read where its
Services are (its file and the manifests of its directory: see
`readiness-probe-missing`), in its namespace or with none set; a budget
selects the pods when its selector matches the pod template's labels.
It is reported for:
- `maxUnavailable: 0` (or `"0%"`), or `minAvailable: "100%"`, whatever the
  replicas;
- `minAvailable` of at least the replicas (a count, or a percentage of
  them rounded up, as the controller rounds it): the `minReplicas` of a
  HorizontalPodAutoscaler of the context that scales the workload (1 when
  unset), where the budget is tightest; else a Deployment's or
  StatefulSet's written `replicas`; a bare Pod's one;
- two or more budgets selecting the same pods.

## Why is this bad?
An eviction (what `kubectl drain`, node upgrades, the cluster autoscaler's
scale-down and Karpenter's consolidation send) is refused with 429 while
the budget's `disruptionsAllowed` is 0. The disruption controller sets it
to the healthy pods minus the desired healthy ones: `minAvailable` as
written for a count, or scaled from the controller's replicas and rounded
up for a percentage; the replicas minus `maxUnavailable`, rounded up
likewise (`pkg/controller/disruption/disruption.go`,
`getExpectedPodCount`). When that is every replica, no pod can be evicted
even with all of them healthy, and every drain of their node waits until
someone edits the budget or deletes the pod by hand: node upgrades stall
and the autoscaler keeps the node. A pod selected by two budgets cannot be
evicted at all: the eviction API answers 500, "This pod has more than one
PodDisruptionBudget, which the eviction subresource does not support"
(`pkg/registry/core/pod/storage/eviction.go`). With a slow boot the wish
to keep every replica is understandable; the way to keep capacity during a
drain is a spare replica, which then boots on another node before the
next eviction is allowed.

## Not a finding
- A budget that allows one eviction: `minAvailable` below the replicas,
  `maxUnavailable` of 1 or more (a percentage rounds up to at least 1).
- An unset `replicas` with no HorizontalPodAutoscaler in the context that
  scales the workload, under an integer `minAvailable` or a percentage
  below 100: the count is not in the manifest.
- A budget in another namespace, whose selector does not match the pod
  template's labels, or without a selector (in `policy/v1` it selects no
  pod).
- A budget in a file the workload is not read with (see
  `readiness-probe-missing`, *Which Services count*: the same context).
- Jobs and CronJobs: their pods end by themselves.

## Example
```yaml
kind: Deployment
metadata: {name: model}
spec:
  replicas: 1
  template:
    metadata: {labels: {app: model}}
---
kind: PodDisruptionBudget
metadata: {name: model}
spec:
  minAvailable: 1          # the one replica: no drain ever evicts it
  selector: {matchLabels: {app: model}}
```

## Use instead
```yaml
kind: Deployment
spec:
  replicas: 2              # one can go while the other serves
---
kind: PodDisruptionBudget
spec:
  maxUnavailable: 1
  selector: {matchLabels: {app: model}}
```

## Fix
No automatic fix: more replicas cost capacity (GPUs) only the owner can
grant, and a looser budget gives up the availability the budget was
written for. Choose one of them, or delete the budget of a singleton that
may go down during a drain.
"#;

fn check(w: &Workload, ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    if !w.long_running {
        return;
    }
    let budgets: Vec<&DisruptionBudgetView> = ctx.batch.budgets_of(w).collect();
    let kind = &w.kind;
    if budgets.len() > 1 {
        let names: Vec<String> = budgets.iter().map(|b| b.label()).collect();
        let message = format!(
            "{} budgets select the pods of this {kind} ({}): the eviction API refuses to evict a pod that more \
             than one PodDisruptionBudget selects, so every drain of their nodes hangs",
            budgets.len(),
            names.join(", ")
        );
        let short = format!("{} PodDisruptionBudgets select these pods: no eviction at all", budgets.len());
        let help = "keep one PodDisruptionBudget per workload: narrow the others' selectors or delete them";
        out.push(RULE.finding(Severity::Warning, "/metadata/name".to_owned(), None, message, short, help));
        return;
    }
    let Some(budget) = budgets.first() else { return };
    // A bare Pod is one; an autoscaled workload is as few as the
    // autoscaler's floor, where the budget is tightest; otherwise a
    // Deployment's or StatefulSet's written count.
    let autoscaler = ctx.batch.autoscaler_of(w);
    let replicas = match (kind.as_str(), autoscaler) {
        ("Pod", _) => Some(1),
        (_, Some(a)) => Some(a.min_replicas),
        _ => w.rollout.as_ref().and_then(|r| r.replicas),
    };
    if !budget.allows_no_eviction(replicas) {
        return;
    }
    let setting = budget.setting();
    let label = budget.label();
    let count = |r: i64| if r == 1 { "one replica".to_owned() } else { format!("{r} replicas") };
    let (pointer, of) = match (replicas, autoscaler) {
        (Some(r), Some(a)) if kind != "Pod" => {
            let hpa = a.name.as_deref().unwrap_or("(unnamed)");
            ("/metadata/name", format!("at the {} of HorizontalPodAutoscaler/{hpa}'s minReplicas", count(r)))
        }
        (Some(r), None) if kind != "Pod" => ("/spec/replicas", format!("of its {}", count(r))),
        _ => ("/metadata/name", "of them".to_owned()),
    };
    let message = format!(
        "{label} ({setting}) selects the pods of this {kind} and allows no eviction {of} while all are healthy: \
         kubectl drain, node upgrades and the cluster autoscaler wait on these pods until the budget is edited"
    );
    let short =
        format!("PDB {} ({setting}) allows no eviction: drains hang", budget.name.as_deref().unwrap_or("(unnamed)"));
    let help = "run a spare replica and let the budget take one out (maxUnavailable: 1), or loosen the budget";
    out.push(RULE.finding(Severity::Warning, pointer.to_owned(), None, message, short, help));
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::RULE;
    use crate::finding::Finding;
    use crate::model::Batch;
    use crate::policy::Policy;
    use crate::rules::testing::{check_with, one_container};

    fn budget(name: &str, spec: Value) -> Value {
        let mut spec = spec;
        if spec.get("selector").is_none() {
            spec["selector"] = json!({"matchLabels": {"app": "web"}});
        }
        json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": "prod"}, "spec": spec})
    }

    fn web(replicas: Option<i64>) -> Value {
        let mut obj = one_container(json!({}));
        if let Some(r) = replicas {
            obj["spec"]["replicas"] = json!(r);
        }
        obj
    }

    fn check(obj: &Value, budgets: &[Value]) -> Vec<Finding> {
        check_with(&RULE, obj, &Policy::default(), &Batch::from_objects(budgets))
    }

    #[test]
    fn min_available_of_every_replica_allows_no_eviction() {
        let f = check(&web(Some(1)), &[budget("web", json!({"minAvailable": 1}))]);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].pointer, "/spec/replicas");
        assert!(f[0].message.starts_with("PodDisruptionBudget/prod/web (minAvailable: 1) selects the pods of this Deployment and allows no eviction of its one replica"), "{}", f[0].message);
        assert!(check(&web(Some(2)), &[budget("web", json!({"minAvailable": 1}))]).is_empty());
    }

    #[test]
    fn zero_unavailable_allows_none_whatever_the_replicas() {
        for spec in [json!({"maxUnavailable": 0}), json!({"maxUnavailable": "0%"}), json!({"minAvailable": "100%"})] {
            let f = check(&web(None), &[budget("web", spec.clone())]);
            assert_eq!(f.len(), 1, "{spec}: {f:?}");
            assert_eq!(f[0].pointer, "/metadata/name");
        }
    }

    #[test]
    fn an_autoscaled_workload_is_judged_at_its_autoscalers_floor() {
        let hpa = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "prod"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "maxReplicas": 10}});
        let pdb = budget("web", json!({"minAvailable": "80%"}));
        let f = check(&web(None), &[pdb.clone(), hpa.clone()]);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].message.contains("at the one replica of HorizontalPodAutoscaler/web's minReplicas"),
            "{}",
            f[0].message
        );
        let mut floor_of_five = hpa;
        floor_of_five["spec"]["minReplicas"] = json!(5);
        assert!(check(&web(Some(1)), &[pdb, floor_of_five]).is_empty(), "80% of 5 leaves one to evict");
    }

    #[test]
    fn two_budgets_on_one_pod_refuse_every_eviction() {
        let budgets = [budget("a", json!({"maxUnavailable": 1})), budget("b", json!({"maxUnavailable": 1}))];
        let f = check(&web(Some(3)), &budgets);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].message.starts_with(
                "2 budgets select the pods of this Deployment (PodDisruptionBudget/prod/a, PodDisruptionBudget/prod/b)"
            ),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn not_findings() {
        // Unset replicas: an autoscaler's count.
        assert!(check(&web(None), &[budget("web", json!({"minAvailable": 1}))]).is_empty());
        // Another namespace, another app, no selector.
        let mut elsewhere = budget("web", json!({"maxUnavailable": 0}));
        elsewhere["metadata"]["namespace"] = json!("staging");
        assert!(check(&web(Some(1)), &[elsewhere]).is_empty());
        let other = budget("db", json!({"maxUnavailable": 0, "selector": {"matchLabels": {"app": "db"}}}));
        assert!(check(&web(Some(1)), &[other]).is_empty());
        let mut unselecting = budget("web", json!({"maxUnavailable": 0}));
        unselecting["spec"].as_object_mut().map(|s| s.remove("selector"));
        assert!(check(&web(Some(1)), &[unselecting]).is_empty());
        // A Job's pods end by themselves.
        let mut job = web(None);
        job["kind"] = json!("Job");
        assert!(check(&job, &[budget("web", json!({"maxUnavailable": 0}))]).is_empty());
    }
}
