//! `lifeguard simulate` checked against the kubelet, case by case: a case
//! ([`Case`]) is a pod of the test workload whose behaviour enacts one
//! scenario (a slow boot, a dependency stall, a pause, a wedge, a crash, a
//! deletion, a postStart hook), run on the real node; what the kubelet did,
//! read from the workload's own log of probes and signals and from the
//! pod's status ([`observed`]), is set beside `lifeguard simulate --format
//! json` for the same pod ([`predicted`]) by the rule of agreement
//! ([`compare`]): the number of restarts, their times, readiness changes,
//! SIGTERM and SIGKILL, each within one probe period plus 2 s.
//!
//! Used by the hand-chosen matrix (`tests/tests/node_simulate.rs`) and by
//! the random cases of [`random`] (`tests/tests/node_random.rs`, and the
//! bench `tests/benches/node_random.rs`); [`run`] runs a set of cases with
//! a bounded number of pods at once.

pub mod case;
pub mod compare;
pub mod lifecycle;
pub mod limits;
pub mod observed;
pub mod pod;
pub mod predicted;
pub mod random;
pub mod report;
pub mod run;
pub mod stop;
pub mod traffic;

pub use case::{Act, Case, Others, TO_SERVER, container, held_back, other, period_of, pod_for, probe, s};
pub use compare::{disagreements, judge};
pub use observed::{Observed, observe, workload_log};
pub use predicted::{Predicted, simulate};
pub use run::{Outcome, RANDOM_NAMESPACE, run, run_random};

/// Seconds from `t0_ms` to `t_ms`.
pub fn since(t0_ms: u64, t_ms: u64) -> f64 {
    (t_ms as f64 - t0_ms as f64) / 1000.0
}
