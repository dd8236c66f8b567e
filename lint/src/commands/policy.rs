//! `lifeguard policy check|show|schema`.

use crate::stop::Stop;
use std::path::Path;

use anyhow::{Context, Result};
use clap::{Subcommand, ValueEnum};
use policies::Policy;

use crate::policy_source::PolicySource;

/// `lifeguard policy` subcommands.
#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Validate a policy file (or pack): exit 0 when valid, 2 with `file:line:col: key: message` when not.
    Check {
        /// The policy file, or a built-in pack name.
        #[arg(value_name = "FILE")]
        file: String,
    },
    /// Print the effective policy: packs merged, every parameter filled in.
    Show {
        /// Show the policy `lint` and `fix` use for this file: the nearest
        /// `.lifeguard.yaml` or `.lifeguard.yml` from its directory up.
        #[arg(value_name = "PATH")]
        path: Option<String>,
        /// Policy file or built-in pack (`default`, `strict`, `gpu-serving`);
        /// default: the nearest `.lifeguard.yaml` or `.lifeguard.yml` from
        /// PATH's directory (or the current directory) up to the repository
        /// root, else `default`.
        #[arg(long, env = "LIFEGUARD_POLICY", value_name = "FILE|PACK")]
        policy: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = ShowFormat::Yaml)]
        format: ShowFormat,
    },
    /// Print the JSON Schema of the policy file.
    Schema,
}

/// How `policy show` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ShowFormat {
    /// A policy file, ready to edit.
    Yaml,
    /// The same as JSON.
    Json,
}

/// Runs a `policy` subcommand; returns the exit code.
pub fn run(command: PolicyCommand, write_stdout: impl Fn(&str) -> Result<()>) -> Result<u8> {
    match command {
        PolicyCommand::Check { file } => {
            let cwd = std::env::current_dir().unwrap_or_default();
            let source = PolicySource::choose(Some(&file), &cwd);
            match source.load() {
                Ok(policy) => {
                    write_stdout(&format!("{file}: valid ({})\n", outline(&policy)))?;
                    Ok(0)
                }
                Err(e) => Err(Stop::usage(format!("invalid policy: {e}"))),
            }
        }
        PolicyCommand::Show { path, policy, format } => {
            let cwd = std::env::current_dir().unwrap_or_default();
            let source = match &policy {
                None => crate::policy_discovery::source_for(path.as_deref().map(Path::new), &cwd),
                Some(_) => PolicySource::choose(policy.as_deref(), &cwd),
            };
            let loaded = match source.load() {
                Ok(p) => p,
                Err(e) => {
                    return Err(Stop::usage(format!("invalid policy: {e}")));
                }
            };
            let value = serde_json::to_value(loaded.to_file()).context("serializing the policy")?;
            let text = match format {
                ShowFormat::Yaml => {
                    format!("# The effective policy ({}).\n{}", source.describe(), policies::yaml::to_yaml(&value))
                }
                ShowFormat::Json => {
                    let mut s = serde_json::to_string_pretty(&value).context("serializing the policy")?;
                    s.push('\n');
                    s
                }
            };
            write_stdout(&text)?;
            Ok(0)
        }
        PolicyCommand::Schema => {
            write_stdout(&policies::policy::json_schema())?;
            Ok(0)
        }
    }
}

/// `policy "web", deny at error, 2 rules off, 3 severity overrides, 1 exemption, 2 custom rules`.
fn outline(policy: &Policy) -> String {
    let file = policy.to_file();
    let count = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let off = file.rules.values().filter(|r| r.enabled == Some(false)).count();
    let overrides = file.rules.values().filter(|r| r.severity.is_some()).count();
    let mut parts = Vec::new();
    if let Some(name) = policy.name() {
        parts.push(format!("policy {name:?}"));
    }
    parts.push(format!("deny at {}", policy.deny_severity));
    parts.push(count(off, "rule off", "rules off"));
    parts.push(count(overrides, "severity override", "severity overrides"));
    parts.push(count(file.exemptions.len(), "exemption", "exemptions"));
    parts.push(count(file.custom_rules.len(), "custom rule", "custom rules"));
    parts.join(", ")
}
