//! Command-line interface: flags parsed once into plain values, then the
//! subcommands. Exit codes: 0 clean, 1 findings, 2 usage or input errors.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand};

use crate::commands::fix::FixArgs;
use crate::commands::lint::LintArgs;
use crate::options::EXPLAIN_TOPIC;
use crate::output::write_stdout;

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
    Rules(crate::commands::rules::RulesArgs),
    /// Judge what runs in a cluster now, through the Kubernetes API: the
    /// same rules, policy and formats as `lint`, per namespace.
    Audit(crate::commands::audit::AuditArgs),
    /// Simulate what the kubelet does to each pod in a slow boot, a dependency stall, a pause, a wedge and a deletion.
    Simulate(crate::commands::simulate::SimulateArgs),
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
    Policy(crate::commands::policy::PolicyCommand),
    /// Export the policy for the API server to enforce and fix itself (`vap`:
    /// ValidatingAdmissionPolicies with the rules CEL checks exactly; `map`: a
    /// MutatingAdmissionPolicy with their fixes).
    #[command(subcommand)]
    Export(crate::commands::export::ExportCommand),
    /// Run the language server (LSP, on stdio) that gives editors findings,
    /// quick fixes and hovers as you type (see docs/editors.md).
    Lsp(crate::commands::lsp::LspArgs),
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
    use crate::commands;
    match cli.command {
        Command::Lint(args) => commands::lint::run(args),
        Command::Fix(args) => commands::fix::run(args),
        Command::Simulate(args) => commands::simulate::run(args),
        Command::Audit(args) => commands::audit::run(*Box::new(args)),
        Command::Lsp(args) => commands::lsp::run(args),
        Command::Rules(args) => commands::rules::run(args),
        Command::Explain { rule } => commands::explain::run(rule.as_deref()),
        Command::Policy(command) => commands::policy::run(command, write_stdout),
        Command::Export(command) => commands::export::run(command, write_stdout),
        Command::Completions { shell } => commands::completions::run(shell, <Cli as clap::CommandFactory>::command()),
    }
}
