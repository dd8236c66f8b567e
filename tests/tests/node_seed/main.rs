//! The seed's worked examples on a real kubelet:
//! - 000 ([`gpu`]): a model server that boots for 40 s behind one endpoint
//!   shared by liveness and readiness and no startup probe is restarted
//!   before it ever answers, and goes to CrashLoopBackOff, never Ready; the
//!   same Deployment after `lifeguard fix`, and as lifeguard's webhook
//!   stores it in a `lifeguard.dev/mutate=true` namespace, is Ready once the
//!   workload answers, with no restart.
//! - 002 ([`stall`]): the seed's shared health handler in a 2-second
//!   dependency stall: every replica restarts; with the probes split, none
//!   does.
//! - 004 ([`drain`]): a Deployment lifeguard finds clean is deleted one pod
//!   at a time under a client loop that follows its Service's endpoints, and
//!   no request fails; the sleep-only, grace-too-short version is SIGKILLed
//!   with requests in flight, when `simulate` says.
//! - 000's rollout ([`rollout`]): a progress deadline shorter than the
//!   pod's startup window is exceeded by a pod that boots fine
//!   (`progress-deadline-too-short`); after `lifeguard fix` it is not.
//! - 004's drain ([`eviction`]): budgets that allow no eviction refuse
//!   it (`pdb-blocks-eviction`); a sound one lets the pods go one boot at
//!   a time.

mod drain;
mod eviction;
mod gpu;
mod rollout;
mod stall;

use std::time::Duration;

use lifeguard_e2e::cluster::node::Node;
use lifeguard_e2e::cluster::pods;
use lifeguard_e2e::cluster::webhook::lifeguard_with_input;
use serde_json::Value;

/// The `lifeguard` binary run with `args` and `object` on stdin, as a user
/// pipes a manifest through it.
pub(crate) fn lifeguard_on(args: &[&str], object: &Value) -> std::process::Output {
    lifeguard_with_input(args, &object.to_string())
}

/// The first pod of Deployment `app` in `namespace`.
pub(crate) fn pod_of(node: &Node, namespace: &str, app: &str) -> String {
    lifeguard_e2e::cluster::process::wait_for(&format!("a pod of {app}"), Duration::from_secs(60), || {
        pods::pod_names(node, namespace, app).into_iter().next().ok_or_else(|| "none yet".to_owned())
    })
}
