//! What a workload's controller reads beside the pod template to roll it
//! out: today a Deployment's progress deadline.

use serde_json::Value;

/// The Deployment controller's default `progressDeadlineSeconds`
/// (`pkg/apis/apps/v1/defaults.go`, `SetDefaults_Deployment`).
pub const DEFAULT_PROGRESS_DEADLINE_SECONDS: i64 = 600;

/// A Deployment's rollout settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rollout {
    /// `spec.progressDeadlineSeconds` as written; `None` when unset (the
    /// API server sets 600) or not an integer (the API server refuses it).
    pub progress_deadline_seconds: Option<i64>,
    /// Whether the field is written at all.
    pub progress_deadline_set: bool,
}

/// Where the field is.
pub const PROGRESS_DEADLINE_POINTER: &str = "/spec/progressDeadlineSeconds";

impl Rollout {
    /// The rollout settings of a Deployment; `None` for any other kind.
    pub fn of(object: &Value, kind: &str) -> Option<Rollout> {
        if kind != "Deployment" {
            return None;
        }
        let field = object.pointer(PROGRESS_DEADLINE_POINTER);
        Some(Rollout {
            progress_deadline_seconds: match field {
                None => Some(DEFAULT_PROGRESS_DEADLINE_SECONDS),
                Some(v) => v.as_i64(),
            },
            progress_deadline_set: field.is_some(),
        })
    }
}
