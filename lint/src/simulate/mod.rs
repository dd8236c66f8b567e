//! `lifeguard simulate`: reads manifests as `lint` does, runs the engine's
//! kubelet simulation ([`policies::simulate`]) on every pod-bearing object
//! and renders the timelines and verdicts.

pub mod args;
mod capacity_svg;
pub mod fail_on;
pub mod html;
pub mod json;
pub mod read;
pub mod svg;
pub mod text;
pub mod workload;

pub use args::{SimulateArgs, SimulateFormat, run};
pub use read::{SimulateRun, Simulated, simulate_found};
