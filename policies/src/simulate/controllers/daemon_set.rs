//! A DaemonSet's rolling update (`pkg/controller/daemon/update.go`,
//! `rollingUpdate`), one pod a node.
//!
//! Without a surge it deletes old pods while fewer than `maxUnavailable`
//! nodes have no available pod, and creates a node's new pod at once: a
//! terminating pod is skipped when the controller looks for a node's
//! running daemon pod (`podsShouldBeOnNode`). With `maxSurge` it starts a
//! new pod beside the old one on that many nodes and deletes the old one
//! once the new one is available. Both amounts are scaled to the nodes
//! rounding up (`updatedDesiredNodeCounts`). Either way the steps are a
//! Deployment's with the same amounts over as many replicas
//! ([`super::deployment`]), which this reads them into.

use serde_json::Value;

use super::deployment::{self, Strategy};
use super::replicas::ReplicaTimes;
use super::run::ControllerRun;
use crate::model::scaled;
use crate::simulate::verdict::plural;

/// The rollout of a DaemonSet over `nodes` nodes, and how, in words.
pub(crate) fn rollout(object: &Value, nodes: i64, times: ReplicaTimes) -> Result<(String, ControllerRun), String> {
    let strategy = object.pointer("/spec/updateStrategy/type").and_then(Value::as_str).unwrap_or("RollingUpdate");
    if strategy != "RollingUpdate" {
        return Err(format!("its update strategy is {strategy}: nothing rolls until someone deletes its pods"));
    }
    // Both scaled to the nodes rounding up (`updatedDesiredNodeCounts`).
    let amount = |field: &str, default: &str| -> Result<i64, String> {
        let written = object.pointer(&format!("/spec/updateStrategy/rollingUpdate/{field}"));
        scaled(written, default, nodes, true)
            .map(|(_, n)| n)
            .ok_or_else(|| format!("{field} is not a count or a percentage the API server takes"))
    };
    let (unavailable, surge) = (amount("maxUnavailable", "1")?, amount("maxSurge", "0")?);
    if unavailable == 0 && surge == 0 {
        return Err("maxUnavailable and maxSurge are both 0, which the API server refuses".to_owned());
    }
    let min_ready_ms = object.pointer("/spec/minReadySeconds").and_then(Value::as_i64).unwrap_or(0).max(0) * 1000;
    let plan = deployment::Plan {
        replicas: nodes,
        strategy: Strategy::Rolling { surge, unavailable },
        min_ready_ms,
        deadline_ms: None,
    };
    let how = format!("RollingUpdate on {}: maxSurge {surge}, maxUnavailable {unavailable}", plural(nodes, "node"));
    Ok((how, deployment::roll(plan, times)))
}
