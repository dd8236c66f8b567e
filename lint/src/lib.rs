//! The `lifeguard` command-line tool: reads manifests, runs the shared rule
//! engine ([`policies`]) on every pod-bearing object, and reports findings
//! with `file:line:column`. It never decides what is a finding.

pub mod cli;
pub mod input;
pub mod lint;
pub mod report;
