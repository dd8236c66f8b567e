//! One workload's alert, or why it has none: what `export alerts` prints
//! and `rule_object` gathers into PrometheusRule objects.

use serde_json::Value;

use crate::model::StartupWindow;

/// One workload's alert.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadAlert {
    /// `Kind/namespace/name`, as every output names the object.
    pub workload: String,
    /// The pod's startup window.
    pub startup: StartupWindow,
    /// The alert's `for`, seconds: the longer of the startup window and
    /// the policy's recovery objective.
    pub for_seconds: i64,
    /// The Prometheus rule (`alert`, `expr`, `for`, `labels`, `annotations`).
    pub rule: Value,
}

/// Why a pod-bearing object has no alert.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotAlerted {
    /// `Kind/namespace/name`.
    pub workload: String,
    /// Why, in a few words.
    pub why: String,
}
