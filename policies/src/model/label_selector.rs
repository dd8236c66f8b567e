//! The set-based operators of a Kubernetes label selector, and what each
//! asks of a label's value: one meaning for the policy's exemptions and
//! for the PodDisruptionBudgets read with a workload.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Label selector operators, as in Kubernetes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub enum LabelOperator {
    /// The label's value is one of `values`.
    #[default]
    In,
    /// The label is missing or its value is none of `values`.
    NotIn,
    /// The label is present.
    Exists,
    /// The label is missing.
    DoesNotExist,
}

impl LabelOperator {
    /// Whether a label whose value is `value` (`None`: missing) meets this
    /// operator with `values` (`apimachinery`'s `labels.Requirement.Matches`).
    pub fn holds(self, value: Option<&String>, values: &[String]) -> bool {
        match self {
            LabelOperator::In => value.is_some_and(|v| values.contains(v)),
            LabelOperator::NotIn => value.is_none_or(|v| !values.contains(v)),
            LabelOperator::Exists => value.is_some(),
            LabelOperator::DoesNotExist => value.is_none(),
        }
    }
}
