//! `lifeguard export alerts`: for each long-running workload, a Prometheus
//! alert on its pods that run and are not Ready for longer than it should
//! take them to start, the design source's "alert separately on pods that
//! stay live but unready beyond the startup or recovery objective, because
//! silent capacity loss can otherwise accumulate". The startup objective is
//! the pod's startup window ([`startup_window`]), the one the rules and fixes
//! use; the recovery objective the policy's `alertRecoverySeconds`. The
//! objects are built here; the CLI reads the manifests and prints them.

mod alert;
pub mod promql;
mod rule_object;

use serde_json::json;

use crate::Policy;
use crate::model::{Workload, object_label, pod_kind, startup_window};
use crate::policy::alert_labels::EXPORT_SET_LABELS;

pub use alert::{NotAlerted, WorkloadAlert};
pub use promql::{OwnerName, Pods};
pub use rule_object::{ALERT_NAME, GROUP_NAME, PART_LIMIT_BYTES, prometheus_rules};

/// The alerts of one object, one per pod template whose pods can be told
/// apart (a LeaderWorkerSet's leaders and workers), else one from its first
/// template, or why it has none; empty for an object without a pod template.
pub fn object_alerts(
    workloads: &[Workload],
    policy: &Policy,
    namespace: Option<&str>,
) -> Vec<Result<WorkloadAlert, NotAlerted>> {
    let Some(first) = workloads.first() else { return Vec::new() };
    if first.kind != "LeaderWorkerSet" {
        return vec![workload_alert(first, policy, namespace)];
    }
    let leaders = workloads.iter().any(|w| w.template_pointer.ends_with("/leaderTemplate"));
    workloads.iter().map(|w| template_alert(w, policy, namespace, leaders)).collect()
}

/// The alert of a pod-bearing object's first pod template, or why it has
/// none. `namespace` stands in for the object's own when it has none
/// (where it will be applied); without either the alert matches the
/// workload's name in every namespace, and says so.
pub fn workload_alert(w: &Workload, policy: &Policy, namespace: Option<&str>) -> Result<WorkloadAlert, NotAlerted> {
    template_alert(w, policy, namespace, false)
}

/// The alert of the pods of one template; `leaders` says whether a
/// LeaderWorkerSet has a leader template of its own.
fn template_alert(
    w: &Workload,
    policy: &Policy,
    namespace: Option<&str>,
    leaders: bool,
) -> Result<WorkloadAlert, NotAlerted> {
    let namespace = w.namespace.as_deref().or(namespace);
    let workload = object_label(&w.kind, namespace, w.name.as_deref());
    let not = |why: &str| NotAlerted { workload: workload.clone(), why: why.to_owned() };
    let Some(name) = w.name.as_deref().filter(|n| !n.is_empty()) else {
        return Err(not("no metadata.name to find its pods by"));
    };
    // A LeaderWorkerSet's template is its leaders' or its workers' pods.
    let whose = match w.template_pointer.rsplit('/').next() {
        Some("leaderTemplate") if w.kind == "LeaderWorkerSet" => " (its leader pods)",
        Some("workerTemplate") if w.kind == "LeaderWorkerSet" && leaders => " (its worker pods)",
        _ => "",
    };
    let pods = match w.kind.as_str() {
        // Its controller makes a StatefulSet NAME of leader pods and, for
        // each leader, a StatefulSet NAME-I of its workers
        // (`leaderworkerset_controller.go`, `pod_controller.go` of
        // sigs.k8s.io/lws v0.7.0); without a leader template, the leaders
        // run the worker template.
        "LeaderWorkerSet" => {
            let owner = if w.template_pointer.ends_with("/leaderTemplate") {
                OwnerName::Exact(name.to_owned())
            } else if leaders {
                OwnerName::GroupsOf(name.to_owned())
            } else {
                OwnerName::LeadersAndGroupsOf(name.to_owned())
            };
            Pods::Owner { kind: "StatefulSet", name: owner }
        }
        "Deployment" => Pods::Owner { kind: "ReplicaSet", name: OwnerName::ReplicaSetsOf(name.to_owned()) },
        // Their pods' owner is the object itself: its kind from the table of
        // built-in kinds, `'static` as the PromQL's owner label wants it.
        kind @ ("StatefulSet" | "DaemonSet" | "ReplicaSet" | "ReplicationController") => match pod_kind(kind) {
            Some(built_in) => Pods::Owner { kind: built_in.kind, name: OwnerName::Exact(name.to_owned()) },
            None => return Err(not("not a kind of Kubernetes itself")),
        },
        "Pod" => Pods::Named(name.to_owned()),
        "Job" | "CronJob" => return Err(not("runs to completion: its pods are not meant to serve")),
        "PodTemplate" => return Err(not("a template: no pod runs from it by itself")),
        _ => return Err(not("its operator creates and owns its pods, under names the manifest does not give")),
    };
    if !w.long_running {
        return Err(not("its pods run to completion (restartPolicy is not Always)"));
    }
    let startup = startup_window(w, policy);
    let recovery = policy.settings.alert_recovery_seconds;
    let (for_seconds, objective) =
        if startup.seconds > recovery { (startup.seconds, "startup") } else { (recovery, "recovery") };
    let expr = promql::unready_pods(&pods, namespace);
    let mut labels = serde_json::Map::new();
    for (k, v) in &policy.settings.alert_labels {
        // The policy's check refuses these names; kept out here too so the
        // export's own labels always win.
        if !EXPORT_SET_LABELS.contains(&k.as_str()) {
            labels.insert(k.clone(), json!(v));
        }
    }
    labels.insert("severity".into(), json!(policy.settings.alert_severity));
    labels.insert("lifeguard_workload".into(), json!(workload));
    labels.insert("lifeguard_objective".into(), json!(objective));
    let where_ = if namespace.is_some() { "" } else { " (no namespace given: in every namespace)" };
    let window = startup.describe();
    let description = format!(
        "Pod {{{{ $labels.namespace }}}}/{{{{ $labels.pod }}}} of {workload}{whose}{where_} has been running and not Ready \
         for {for_} or more: past its startup window, {window}, and past the recovery objective of {recovery}s \
         (alertRecoverySeconds). It is out of its Services' endpoints: capacity the workload has lost without a restart.",
        for_ = promql::duration(for_seconds),
    );
    let rule = json!({
        "alert": ALERT_NAME,
        "expr": expr,
        "for": promql::duration(for_seconds),
        "labels": labels,
        "annotations": {
            "summary": format!("A pod of {workload}{whose} has been running but not Ready for {} or more.", promql::duration(for_seconds)),
            "description": description,
        },
    });
    Ok(WorkloadAlert { workload, startup, for_seconds, rule })
}

#[cfg(test)]
mod tests;
