//! The `lifeguard` command-line tool: reads manifests, runs the shared rule
//! engine ([`policies`]) on every pod-bearing object, and reports findings
//! with `file:line:column`. It never decides what is a finding.

pub mod audit;
pub mod baseline;
pub mod cli;
pub mod commands;
pub mod documents;
pub mod fix;
pub mod input;
pub mod lint;
pub mod lsp;
pub mod options;
pub mod outcome;
pub mod output;
pub mod pipeline;
pub mod policy_discovery;
pub mod policy_source;
pub mod prepare;
pub mod report;
pub mod simulate;
pub mod stop;
