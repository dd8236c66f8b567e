//! Command-line interface: flags parsed once into plain values, then the
//! subcommands. Exit codes: 0 clean, 1 findings, 2 usage or input errors.

// The commands' edge: usage errors go to the user on stderr.
#![allow(clippy::print_stderr)]

use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand};

use crate::commands::fix::FixArgs;
use crate::commands::lint::LintArgs;
use crate::options::{EXPLAIN_TOPIC, SIMULATE_TOPIC, unknown_rule};
use crate::output::write_stdout;
use crate::report::ListFormat;
use crate::stop::Stop;

/// Kubernetes probe and lifecycle checks: lint, fix, simulate the kubelet, audit, export VAP/MAP, LSP.
#[derive(Debug, Parser)]
#[command(name = "lifeguard", version, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Lint manifests: files, directories (recursive; .yaml/.yml/.json) or `-` for stdin.
    Lint(LintArgs),
    /// Apply the automatic fixes in place (`--diff` prints them instead; `-` fixes stdin to stdout).
    Fix(FixArgs),
    /// List every rule with its default severity and one line.
    Rules(RulesArgs),
    /// Judge what runs in a cluster now, through the Kubernetes API: the
    /// same rules, policy and formats as `lint`, per namespace.
    Audit(crate::audit::AuditArgs),
    /// Simulate what the kubelet does to each pod in a slow boot, a dependency stall, a pause, a wedge and a deletion.
    Simulate(crate::simulate::SimulateArgs),
    /// Print a rule's documentation: why, a bad and a good example, the fix
    /// (`explain simulate`: the simulation's kubelet model).
    #[command(after_help = "`lifeguard rules` lists every rule.")]
    Explain {
        /// Rule name, e.g. `probe-endpoint-reused`, or `simulate`.
        // Optional so that `explain` alone can point at `rules` rather than
        // only say an argument is missing.
        #[arg(value_parser = EXPLAIN_TOPIC, hide_possible_values = true)]
        rule: Option<String>,
    },
    /// Validate, show or describe policies (`check FILE`, `show`, `schema`).
    #[command(subcommand)]
    Policy(crate::policy_cmd::PolicyCommand),
    /// Export the policy for the API server to enforce and fix itself (`vap`:
    /// ValidatingAdmissionPolicies with the rules CEL checks exactly; `map`: a
    /// MutatingAdmissionPolicy with their fixes).
    #[command(subcommand)]
    Export(crate::export::ExportCommand),
    /// Run the language server (LSP, on stdio) that gives editors findings,
    /// quick fixes and hovers as you type (see docs/editors.md).
    Lsp(crate::lsp::LspArgs),
    /// Print a shell completion script (`--help` says where each shell looks for it).
    ///
    /// Write it where the shell looks for completions:
    ///
    ///   lifeguard completions bash > ~/.local/share/bash-completion/completions/lifeguard
    ///   lifeguard completions zsh > "${fpath[1]}/_lifeguard"
    ///   lifeguard completions fish > ~/.config/fish/completions/lifeguard.fish
    ///
    /// Create the directory first; for zsh, take a directory of your $fpath you
    /// can write to. elvish and powershell work too.
    // Verbatim: clap would otherwise join the command lines into one paragraph.
    #[command(verbatim_doc_comment)]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// `lifeguard rules` flags.
#[derive(Debug, clap::Args)]
pub struct RulesArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Text)]
    pub format: ListFormat,
}

impl Cli {
    /// The command line, named in help and errors as it was invoked: run
    /// as `kubectl-lifeguard` (krew's link, or the binary renamed), kubectl
    /// runs it for `kubectl lifeguard ...`, so that is its name.
    pub fn parse_invoked() -> Cli {
        let invoked = std::env::args_os().next().map(PathBuf::from);
        let plugin = invoked.as_deref().and_then(|p| p.file_stem()).is_some_and(|n| n == "kubectl-lifeguard");
        let command = <Cli as clap::CommandFactory>::command();
        let command = if plugin { command.bin_name("kubectl lifeguard") } else { command };
        let matches = command.get_matches();
        <Cli as clap::FromArgMatches>::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
    }
}

/// Runs a parsed command line; returns the exit code.
pub fn run(cli: Cli) -> Result<u8> {
    match cli.command {
        Command::Lint(args) => crate::commands::lint::run(args),
        Command::Fix(args) => crate::commands::fix::run(args),
        Command::Simulate(args) => crate::simulate::run(args),
        Command::Audit(args) => crate::audit::run(*Box::new(args)),
        Command::Lsp(args) => crate::lsp::run(args),
        Command::Rules(args) => {
            let text = match args.format {
                ListFormat::Text => crate::report::rules::text(),
                ListFormat::Json => crate::report::rules::json(),
            };
            write_stdout(&text)?;
            Ok(0)
        }
        Command::Explain { rule: None } => {
            eprintln!(
                "lifeguard explain: name a rule, e.g. `lifeguard explain probe-endpoint-reused` \
                 (`lifeguard rules` lists them all), or `simulate` for the simulation's kubelet model"
            );
            Ok(2)
        }
        Command::Explain { rule: Some(rule) } if rule == SIMULATE_TOPIC => {
            write_stdout(policies::simulate::MODEL)?;
            Ok(0)
        }
        Command::Explain { rule: Some(rule) } => match policies::rules::find(&rule) {
            Some(r) => {
                write_stdout(&crate::report::rules::explain(r))?;
                Ok(0)
            }
            None => {
                let mut known: Vec<&str> = policies::rules::RULES.iter().map(|r| r.name).collect();
                known.push(SIMULATE_TOPIC);
                Err(Stop::usage(unknown_rule(&rule, &known)))
            }
        },
        Command::Policy(command) => crate::policy_cmd::run(command, write_stdout),
        Command::Export(command) => crate::export::run(command, write_stdout),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut <Cli as clap::CommandFactory>::command(), "lifeguard", &mut script);
            write_stdout(&String::from_utf8_lossy(&script))?;
            Ok(0)
        }
    }
}
