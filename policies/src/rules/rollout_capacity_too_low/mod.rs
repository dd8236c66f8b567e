//! `rollout-capacity-too-low`: a rolling update may leave fewer replicas
//! available than the policy's `minRolloutCapacityPercent`, for as long as
//! a new pod takes to start.
//!
//! Tests: `policies/src/rules/rollout_capacity_too_low/fixtures/`,
//! `policies/src/rules/rollout_capacity_too_low/snapshots/rule_fixtures__rollout-capacity-too-low.snap`; on
//! the real controller: `tests/tests/node_seed/rollout.rs`.

use crate::finding::{Finding, Naming, Severity};
use crate::model::{Update, Workload, startup_window};
use crate::rules::{Ctx, FixAvailability, Harm, HarmShown, MapExport, Related, Rule, VapExport};
use crate::simulate::Verdict;

pub(crate) static RULE: Rule = Rule {
    name: "rollout-capacity-too-low",
    severity: Severity::Warning,
    summary: "a rollout may take out more replicas than the policy's capacity allows, for a slow boot's length (opt-in: minRolloutCapacityPercent)",
    doc: DOC,
    fix: FixAvailability::NoFix(
        "keeping capacity means surging new pods beside the old ones, which needs spare capacity (GPUs) that only \
         the cluster's owner knows is there; a lower maxUnavailable without it stalls the rollout",
    ),
    check,
    vap: VapExport::No(
        "weighs the pod's whole startup window (every container's probes and assumed boot, native sidecars in turn) \
         against the controller's own fields: not written in CEL yet",
    ),
    map: MapExport::NoFix,
    related: Related::Nothing,
    harm: HarmShown::InWorkload(&[Harm {
        scenario: "rollout",
        verdicts: &[Verdict::CapacityShort, Verdict::OutOfService, Verdict::RolloutStuck],
    }]),
};

const DOC: &str = r#"## What it does
Opt-in: with the policy's `minRolloutCapacityPercent` above 0 (the
`gpu-serving` pack sets 50), flags a Deployment or StatefulSet with a slow
boot whose update may leave fewer available replicas than that share of
`spec.replicas`: a `Recreate` Deployment (none, while the new pods boot),
or a rolling update whose `maxUnavailable`, as the controller resolves it,
takes out more. A slow boot is a startup window (the one
`progress-deadline-too-short` and `export alerts` use) above the policy's
`slowBootInitialDelaySeconds`: each replica taken out stays out that long.

## Why is this bad?
A Deployment's rolling update scales the old ReplicaSet down as long as
`replicas - maxUnavailable` pods stay available: `maxUnavailable` of 25%
(the default) rounds down and `maxSurge` rounds up
(`pkg/controller/deployment/util/deployment_util.go`, `ResolveFenceposts`,
which makes `maxUnavailable` 1 when both come to 0); it takes them out at
once and waits for new pods to become available before taking more. A
StatefulSet deletes `maxUnavailable` pods (1 unless written, and read only
with the feature gate `MaxUnavailableStatefulSet`, on by default from 1.37)
and waits for their replacements to be Ready
(`pkg/controller/statefulset/stateful_set_utils.go`,
`getStatefulSetMaxUnavailable`). With a model server that boots for
minutes, every release runs the Service short by those replicas for the
whole boot, step after step: the design sources' farm takes one worker out
at a time so it never loses service.

## Not a finding
- `minRolloutCapacityPercent` at 0 (the default policy).
- A boot within `slowBootInitialDelaySeconds`: the dip lasts seconds.
- An unset `replicas`: 1, or an autoscaler's to set; the manifest does not
  say how many there are.
- A window that is only the policy's `gpuBootSeconds` for a model server
  without a startup probe: nothing in the manifest says the boot is slow
  (the startup rules ask for the measured cold start).
- A `Recreate` Deployment whose pod mounts a PersistentVolumeClaim: a
  ReadWriteOnce volume cannot be mounted by a second pod on another node,
  so replacing the pod in place is the design, not an oversight.
- A StatefulSet with `OnDelete`: nothing rolls until someone deletes pods.
- A StatefulSet's `maxUnavailable` above 1 where the policy's
  `kubernetesVersion` is before 1.37: the controller takes one pod at a time.

## Example
```yaml
kind: Deployment
spec:
  replicas: 2
  strategy:
    rollingUpdate: {maxUnavailable: 1, maxSurge: 0}   # one of two out for the boot
```

## Use instead
```yaml
spec:
  replicas: 2
  strategy:
    rollingUpdate: {maxUnavailable: 0, maxSurge: 1}   # a new pod boots beside the old ones
```

## Fix
No automatic fix: keeping capacity means surging new pods beside the old
ones, which needs spare capacity (GPUs) that only the cluster's owner knows
is there; a lower `maxUnavailable` without it leaves the surge pod Pending
and the rollout stalled. More replicas, or a surge the cluster can place,
is the choice to make.
"#;

fn check(w: &Workload, ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let settings = &ctx.policy.settings;
    let wanted = settings.min_rollout_capacity_percent;
    if wanted <= 0 || !w.long_running {
        return;
    }
    let Some(rollout) = &w.rollout else { return };
    let (Some(replicas), Some(update)) = (rollout.replicas, &rollout.update) else { return };
    if replicas < 1 {
        return;
    }
    let window = startup_window(w, ctx.policy);
    // A quick boot makes the dip seconds long; a window that is only the
    // policy's GPU default says nothing of this pod's boot.
    if window.seconds <= settings.slow_boot_initial_delay_seconds || window.only_assumed() {
        return;
    }
    // Recreate is how a pod with a ReadWriteOnce claim is replaced at all.
    if matches!(update, Update::Recreate) && rollout.claims_volume {
        return;
    }
    let (taken, how, pointer) = match update {
        Update::Recreate => (replicas, "strategy Recreate deletes every pod first".to_owned(), "/spec/strategy/type"),
        Update::Rolling { written, pointer, unavailable, gated, .. } => {
            // Without the gate, the StatefulSet controller takes one at a time.
            let unavailable = if *gated && settings.kubernetes_minor() < (1, 37) { 1 } else { *unavailable };
            (unavailable.min(replicas), format!("maxUnavailable {written} takes out {unavailable}"), *pointer)
        }
    };
    let available = replicas - taken;
    // available / replicas below wanted%, in integers.
    if available.saturating_mul(100) >= wanted.saturating_mul(replicas) {
        return;
    }
    let percent = available * 100 / replicas;
    let kind = &w.kind;
    let message = format!(
        "a rollout of this {kind} leaves {available} of {replicas} replicas available ({percent}%, below \
         minRolloutCapacityPercent {wanted}%): {how}, and each stays out for up to the pod's startup window, {}",
        window.describe()
    );
    let short = format!(
        "rollout leaves {available}/{replicas} available ({percent}% < {wanted}%) for up to {}s",
        window.seconds
    );
    let at = pointer.to_owned();
    out.push(
        RULE.finding(
            Severity::Warning,
            at,
            None,
            message,
            short,
            "surge new pods beside the old ones (maxUnavailable 0, maxSurge 1) where the cluster has room for one \
             more, or run more replicas so one out keeps the capacity",
        )
        .named(Naming::Subject),
    );
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::RULE;
    use crate::finding::Finding;
    use crate::model::Batch;
    use crate::policy::Policy;
    use crate::rules::testing::{check_with, one_container};
    use crate::settings::Settings;

    fn policy(percent: i64, version: &str) -> Policy {
        Policy::new(Settings {
            min_rollout_capacity_percent: percent,
            kubernetes_version: version.into(),
            ..Settings::default()
        })
        .expect("valid")
    }

    fn slow(spec: Value, kind: &str) -> Value {
        let mut obj = one_container(json!({"startupProbe": {"httpGet": {"path": "/health", "port": 8000},
            "periodSeconds": 10, "failureThreshold": 30}}));
        obj["kind"] = json!(kind);
        if let (Some(s), Some(extra)) = (obj["spec"].as_object_mut(), spec.as_object()) {
            for (k, v) in extra {
                s.insert(k.clone(), v.clone());
            }
        }
        obj
    }

    fn check(obj: &Value, percent: i64) -> Vec<Finding> {
        check_with(&RULE, obj, &policy(percent, "1.30"), &Batch::default())
    }

    #[test]
    fn one_of_two_out_for_a_slow_boot_is_below_half_plus_one() {
        let obj = slow(
            json!({"replicas": 2, "strategy": {"rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}}),
            "Deployment",
        );
        let f = check(&obj, 75);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].message.contains("leaves 1 of 2 replicas available (50%, below minRolloutCapacityPercent 75%)"),
            "{}",
            f[0].message
        );
        assert_eq!(f[0].pointer, "/spec/strategy/rollingUpdate/maxUnavailable");
        assert!(check(&obj, 50).is_empty(), "50% is enough for 50");
        assert!(check(&obj, 0).is_empty(), "off by default");
    }

    #[test]
    fn recreate_takes_every_replica_out() {
        let obj = slow(json!({"replicas": 3, "strategy": {"type": "Recreate"}}), "Deployment");
        let f = check(&obj, 1);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].pointer, "/spec/strategy/type");
        assert!(f[0].message.contains("0 of 3"), "{}", f[0].message);
    }

    #[test]
    fn a_single_replica_stateful_set_is_out_for_the_boot() {
        let f = check(&slow(json!({"replicas": 1}), "StatefulSet"), 50);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].pointer, "/spec");
    }

    #[test]
    fn a_stateful_sets_max_unavailable_needs_1_37() {
        let obj =
            slow(json!({"replicas": 4, "updateStrategy": {"rollingUpdate": {"maxUnavailable": 3}}}), "StatefulSet");
        assert!(check(&obj, 50).is_empty(), "one at a time before 1.37: 3 of 4");
        let f = check_with(&RULE, &obj, &policy(50, "1.37"), &Batch::default());
        assert_eq!(f.len(), 1, "{f:?}");
    }

    #[test]
    fn not_findings() {
        // The defaults: 25% of 4 is 1 out, 75% kept.
        assert!(check(&slow(json!({"replicas": 4}), "Deployment"), 75).is_empty());
        // Surge, nothing out.
        let surge = json!({"replicas": 2, "strategy": {"rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}});
        assert!(check(&slow(surge, "Deployment"), 100).is_empty());
        // Unset replicas.
        assert!(check(&slow(json!({"strategy": {"type": "Recreate"}}), "Deployment"), 50).is_empty());
        // A quick boot.
        let mut quick = slow(json!({"replicas": 1, "strategy": {"type": "Recreate"}}), "Deployment");
        quick["spec"]["template"]["spec"]["containers"][0].as_object_mut().map(|c| c.remove("startupProbe"));
        assert!(check(&quick, 50).is_empty());
        // Recreate with a claim: the volume's design.
        let mut claimed = slow(json!({"replicas": 1, "strategy": {"type": "Recreate"}}), "Deployment");
        claimed["spec"]["template"]["spec"]["volumes"] =
            json!([{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]);
        assert!(check(&claimed, 50).is_empty());
        // Only the policy's GPU boot.
        let gpu = json!({"replicas": 1, "template": {"spec": {"containers": [{"name": "vllm", "image": "vllm/vllm-openai:v0.6.0",
            "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}});
        let mut assumed = slow(json!({}), "StatefulSet");
        assumed["spec"] = gpu;
        assert!(check(&assumed, 50).is_empty());
        // OnDelete.
        assert!(
            check(&slow(json!({"replicas": 1, "updateStrategy": {"type": "OnDelete"}}), "StatefulSet"), 50).is_empty()
        );
    }
}
