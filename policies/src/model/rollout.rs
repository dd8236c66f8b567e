//! What a workload's controller reads beside the pod template to roll it
//! out: a Deployment's progress deadline, and how many of a Deployment's or
//! StatefulSet's replicas a rolling update may take out at once.

use serde_json::Value;

/// The Deployment controller's default `progressDeadlineSeconds`
/// (`pkg/apis/apps/v1/defaults.go`, `SetDefaults_Deployment`).
pub const DEFAULT_PROGRESS_DEADLINE_SECONDS: i64 = 600;

/// Where a Deployment's progress deadline is.
pub const PROGRESS_DEADLINE_POINTER: &str = "/spec/progressDeadlineSeconds";

/// A Deployment's or StatefulSet's rollout settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rollout {
    /// `spec.progressDeadlineSeconds` as written, or 600 when unset;
    /// `None` when it is not an integer (the API server refuses it) or the
    /// kind has none (a StatefulSet).
    pub progress_deadline_seconds: Option<i64>,
    /// Whether the field is written at all.
    pub progress_deadline_set: bool,
    /// `spec.replicas` when written as an integer: unset, it is 1 or an
    /// autoscaler's to set, which the manifest does not say.
    pub replicas: Option<i64>,
    /// How a rolling update takes replicas out; `None` for a strategy that
    /// does not roll (`OnDelete`) or values the API server refuses.
    pub update: Option<Update>,
    /// Whether the pod mounts a PersistentVolumeClaim (read here, as the
    /// pod spec's typed mirror leaves volumes out).
    pub claims_volume: bool,
    /// `spec.minReadySeconds`: how long a pod stays Ready before the
    /// controller counts it available (0 when unset).
    pub min_ready_seconds: i64,
    /// A StatefulSet's `updateStrategy.rollingUpdate.partition`: ordinals
    /// below it keep the old revision (0 when unset, and for a Deployment).
    pub partition: i64,
    /// A StatefulSet's `podManagementPolicy: Parallel`: its controller
    /// creates pods without waiting for the ones before to be Ready
    /// (`OrderedReady`, the default, waits).
    pub parallel: bool,
}

/// How an update replaces the pods.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Update {
    /// Every old pod deleted before any new one starts (a Deployment's `Recreate`).
    Recreate,
    /// A rolling update that keeps at least `replicas - unavailable` pods
    /// available (`pkg/controller/deployment/util/deployment_util.go`,
    /// `ResolveFenceposts`; a StatefulSet's controller takes out
    /// `maxUnavailable`, 1 by default, at a time).
    Rolling {
        /// The pods it may take out, as written (`25%`, `1`), for messages.
        written: String,
        /// Where it is written, or else its deepest written parent.
        pointer: &'static str,
        /// The pods that may be unavailable for `replicas`.
        unavailable: i64,
        /// The pods a Deployment may create above `replicas` (`maxSurge`,
        /// rounded up); 0 for a StatefulSet.
        surge: i64,
        /// Whether that number needs a feature the cluster may not have: a
        /// StatefulSet's `maxUnavailable` is read only with the feature gate
        /// `MaxUnavailableStatefulSet`, on by default from Kubernetes 1.37;
        /// without it the controller takes one pod at a time.
        gated: bool,
    },
}

impl Rollout {
    /// The rollout settings of a Deployment or a StatefulSet; `None` for
    /// any other kind.
    pub fn of(object: &Value, kind: &str) -> Option<Rollout> {
        let replicas = object.pointer("/spec/replicas").and_then(Value::as_i64);
        let claims_volume = object
            .pointer("/spec/template/spec/volumes")
            .and_then(Value::as_array)
            .is_some_and(|volumes| volumes.iter().any(|v| v.get("persistentVolumeClaim").is_some()));
        let min_ready_seconds = object.pointer("/spec/minReadySeconds").and_then(Value::as_i64).unwrap_or(0).max(0);
        match kind {
            "Deployment" => {
                let field = object.pointer(PROGRESS_DEADLINE_POINTER);
                Some(Rollout {
                    progress_deadline_seconds: match field {
                        None => Some(DEFAULT_PROGRESS_DEADLINE_SECONDS),
                        Some(v) => v.as_i64(),
                    },
                    progress_deadline_set: field.is_some(),
                    replicas,
                    update: replicas.and_then(|r| deployment_update(object, r)),
                    claims_volume,
                    min_ready_seconds,
                    partition: 0,
                    parallel: false,
                })
            }
            "StatefulSet" => Some(Rollout {
                progress_deadline_seconds: None,
                progress_deadline_set: false,
                replicas,
                update: replicas.and_then(|r| stateful_set_update(object, r)),
                claims_volume,
                min_ready_seconds,
                partition: object
                    .pointer("/spec/updateStrategy/rollingUpdate/partition")
                    .and_then(Value::as_i64)
                    .unwrap_or(0)
                    .max(0),
                parallel: object.pointer("/spec/podManagementPolicy").and_then(Value::as_str) == Some("Parallel"),
            }),
            _ => None,
        }
    }
}

const DEPLOYMENT_MAX_UNAVAILABLE: &str = "/spec/strategy/rollingUpdate/maxUnavailable";
const STATEFUL_SET_MAX_UNAVAILABLE: &str = "/spec/updateStrategy/rollingUpdate/maxUnavailable";

/// A Deployment's update (`SetDefaults_Deployment`: RollingUpdate, 25% and
/// 25%; `ResolveFenceposts`: surge rounds up, unavailable down, and both at
/// 0 make unavailable 1).
fn deployment_update(object: &Value, replicas: i64) -> Option<Update> {
    let strategy = object.pointer("/spec/strategy/type").and_then(Value::as_str).unwrap_or("RollingUpdate");
    match strategy {
        "Recreate" => Some(Update::Recreate),
        "RollingUpdate" => {
            let unavailable_field = object.pointer(DEPLOYMENT_MAX_UNAVAILABLE);
            let surge_field = object.pointer("/spec/strategy/rollingUpdate/maxSurge");
            let (written, unavailable) = scaled(unavailable_field, "25%", replicas, false)?;
            let (_, surge) = scaled(surge_field, "25%", replicas, true)?;
            let unavailable = if surge == 0 && unavailable == 0 { 1 } else { unavailable };
            let pointer = deepest_written(object, DEPLOYMENT_MAX_UNAVAILABLE);
            Some(Update::Rolling { written, pointer, unavailable, surge, gated: false })
        }
        _ => None,
    }
}

/// A StatefulSet's update (`SetDefaults_StatefulSet`: RollingUpdate, one
/// pod at a time; `maxUnavailable`, where the cluster reads it, rounds
/// down and is at least 1: `pkg/controller/statefulset/stateful_set_utils.go`,
/// `getStatefulSetMaxUnavailable`).
fn stateful_set_update(object: &Value, replicas: i64) -> Option<Update> {
    let strategy = object.pointer("/spec/updateStrategy/type").and_then(Value::as_str).unwrap_or("RollingUpdate");
    if strategy != "RollingUpdate" {
        return None;
    }
    let field = object.pointer(STATEFUL_SET_MAX_UNAVAILABLE);
    let (written, unavailable) = scaled(field, "1", replicas, false)?;
    Some(Update::Rolling {
        written,
        pointer: deepest_written(object, STATEFUL_SET_MAX_UNAVAILABLE),
        unavailable: unavailable.max(1),
        surge: 0,
        gated: field.is_some(),
    })
}

/// `pointer` if `object` has it, else its deepest parent it has (at
/// least `/spec`).
fn deepest_written(object: &Value, pointer: &'static str) -> &'static str {
    let mut at = pointer;
    while at != "/spec" && object.pointer(at).is_none() {
        match at.rsplit_once('/') {
            Some((parent, _)) if !parent.is_empty() => at = parent,
            _ => return "/spec",
        }
    }
    at
}

/// An int-or-percent field scaled to `replicas` as apimachinery's
/// `GetScaledValueFromIntOrPercent` does; `default` when unset; `None`
/// for a value the API server refuses.
pub(crate) fn scaled(field: Option<&Value>, default: &str, replicas: i64, round_up: bool) -> Option<(String, i64)> {
    let text = match field {
        None => default.to_owned(),
        Some(Value::Number(n)) => n.as_i64()?.to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return None,
    };
    let value = match text.strip_suffix('%') {
        Some(percent) => {
            let p: i64 = percent.parse().ok().filter(|p| *p >= 0)?;
            let product = p.checked_mul(replicas)?;
            if round_up { product / 100 + i64::from(product % 100 != 0) } else { product / 100 }
        }
        None => text.parse().ok().filter(|v: &i64| *v >= 0)?,
    };
    Some((text, value))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Rollout, Update};

    fn unavailable(spec: serde_json::Value, kind: &str) -> Option<i64> {
        match Rollout::of(&json!({"spec": spec}), kind)?.update? {
            Update::Rolling { unavailable, .. } => Some(unavailable),
            Update::Recreate => None,
        }
    }

    #[test]
    fn fenceposts_as_the_deployment_controller_resolves_them() {
        // 25% of 4 is 1; of 3, 0 rounded down.
        assert_eq!(unavailable(json!({"replicas": 4}), "Deployment"), Some(1));
        assert_eq!(unavailable(json!({"replicas": 3}), "Deployment"), Some(0));
        // Surge 0% and unavailable 0 after rounding: unavailable 1.
        let spec = json!({"replicas": 3, "strategy": {"rollingUpdate": {"maxSurge": "0%", "maxUnavailable": "10%"}}});
        assert_eq!(unavailable(spec, "Deployment"), Some(1));
        let spec = json!({"replicas": 3, "strategy": {"rollingUpdate": {"maxUnavailable": 2}}});
        assert_eq!(unavailable(spec, "Deployment"), Some(2));
        // Unset replicas: the manifest does not say how many there are.
        assert_eq!(unavailable(json!({}), "Deployment"), None);
        let recreate = Rollout::of(&json!({"spec": {"replicas": 2, "strategy": {"type": "Recreate"}}}), "Deployment");
        assert_eq!(recreate.and_then(|r| r.update), Some(Update::Recreate));
    }

    #[test]
    fn a_stateful_set_takes_one_pod_at_a_time_unless_told() {
        assert_eq!(unavailable(json!({"replicas": 3}), "StatefulSet"), Some(1));
        let spec = json!({"replicas": 4, "updateStrategy": {"rollingUpdate": {"maxUnavailable": "50%"}}});
        assert_eq!(unavailable(spec, "StatefulSet"), Some(2));
        let spec = json!({"replicas": 4, "updateStrategy": {"type": "OnDelete"}});
        assert_eq!(unavailable(spec, "StatefulSet"), None);
    }
}
