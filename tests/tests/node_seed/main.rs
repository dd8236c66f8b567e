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

/// What the model leaves out of each replica step and the node spends: a
/// created pod's start (scheduling, its sandbox and network namespace, the
/// container's start) and a deleted pod's removal from the API once its
/// containers have exited (the kubelet's status sync), which a
/// StatefulSet's replacement waits on: observed less simulated, the probe
/// period (1 s) included, 0.9-1.5 s a Deployment's step here and 2.4-2.8 s
/// a StatefulSet's, with room for a loaded machine. Simulated and observed agree when they differ by at most
/// a probe period and this, per step (docs/simulate.md, "Checked against
/// the controllers").
pub(crate) const STEP_ALLOWANCE_S: f64 = 2.5;

/// `object` with the boot `lifeguard` is told of (the pod template's
/// `lifeguard.dev/cold-start-seconds`, the workload's `BOOT_SECONDS`) and
/// its drain (`DRAIN_SECONDS`, 0: it exits at SIGTERM, as the workload
/// does unless told), so `simulate` runs the pod the node runs.
pub(crate) fn declared(mut object: Value, boot_seconds: u64) -> Value {
    let template = &mut object["spec"]["template"];
    template["metadata"]["annotations"]["lifeguard.dev/cold-start-seconds"] = Value::from(boot_seconds.to_string());
    if let Some(containers) = template["spec"]["containers"].as_array_mut() {
        for c in containers {
            if let Some(env) = c["env"].as_array_mut() {
                env.push(serde_json::json!({"name": "DRAIN_SECONDS", "value": "0"}));
            }
        }
    }
    object
}

/// `lifeguard simulate --format json ARGS -` on `stream`: the entries of
/// the workload scenarios.
pub(crate) fn simulated(args: &[&str], stream: &str) -> Vec<Value> {
    let mut all = vec!["simulate", "--format", "json", "--fail-on", "never"];
    all.extend_from_slice(args);
    all.push("-");
    let out = lifeguard_with_input(&all, stream);
    let entries: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("simulate's JSON: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    entries.as_array().into_iter().flatten().filter(|e| e["container"].is_null()).cloned().collect()
}

/// Whether `observed` and `simulated` seconds agree over `steps` replica
/// steps of a probe `period` (see [`STEP_ALLOWANCE_S`]).
pub(crate) fn agree(observed: f64, simulated: f64, steps: u32, period: f64) -> bool {
    (observed - simulated).abs() <= f64::from(steps) * (period + STEP_ALLOWANCE_S)
}

/// The first pod of Deployment `app` in `namespace`.
pub(crate) fn pod_of(node: &Node, namespace: &str, app: &str) -> String {
    lifeguard_e2e::cluster::process::wait_for(&format!("a pod of {app}"), Duration::from_secs(60), || {
        pods::pod_names(node, namespace, app).into_iter().next().ok_or_else(|| "none yet".to_owned())
    })
}
