//! The kubelet's probe and restart state machine over one container's
//! timeline: the loop and the probes in `machine.rs`, kills, exits, the
//! back-off and restarts in `restart.rs`, the postStart hook and the
//! readiness gates in `lifecycle.rs`, the state they share in `state.rs`,
//! what a run takes and gives in `world.rs` (deletion is the simulation's
//! `termination.rs`).
//!
//! Times are milliseconds. Each probe runs on a grid of its own, one tick
//! every `periodSeconds`, kept across restarts as the kubelet's probe worker
//! keeps it: a container is first checked at the first tick once the
//! kubelet has seen it start ([`STARTED_SEEN_MS`]) and its
//! `initialDelaySeconds` have passed; liveness and readiness are held until the startup
//! probe succeeds. A check answered later than `timeoutSeconds` is a
//! failure. `failureThreshold` consecutive failures of startup or liveness
//! kill the container; of readiness, take it out of the Service's
//! endpoints, where `successThreshold` consecutive successes bring it back
//! (once the pod's readiness gates are True, `gates.rs`). A check whose
//! port does not resolve errors and counts neither way. A postStart hook
//! holds the first check until it ends, and a failed one kills the
//! container (`hooks.rs`).

mod lifecycle;
mod machine;
mod restart;
mod state;
pub(crate) mod world;

pub use machine::{simulate, simulate_figures};
pub use world::{BACKOFF_INITIAL_MS, BACKOFF_MAX_MS, Run, STARTED_SEEN_MS, World};
