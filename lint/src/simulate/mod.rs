//! `lifeguard simulate`: reads manifests as `lint` does, runs the engine's
//! kubelet simulation ([`policies::simulate`]) on every pod-bearing object
//! and hands the timelines and verdicts to its renderers
//! ([`crate::report::simulate`]).

pub mod fail_on;
pub mod read;

pub use read::{SimulateRun, Simulated, simulate_found};
