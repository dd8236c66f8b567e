//! Command-line interface: flags parsed once into plain values, then the
//! subcommands. Exit codes: 0 clean, 1 findings, 2 usage or input errors.

use std::io::Write;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use policies::{Policy, Severity};

use crate::input::Limits;
use crate::lint::lint_paths;
use crate::report::{self, Format};

/// lifeguard: finds (and fixes) Kubernetes probe and pod-lifecycle anti-patterns.
#[derive(Debug, Parser)]
#[command(name = "lifeguard", version, about, long_about = None)]
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
    /// List every rule with its default severity and one line.
    Rules(RulesArgs),
    /// Print a rule's documentation: why, a bad and a good example, the fix.
    Explain {
        /// Rule name, e.g. `probe-endpoint-reused`.
        rule: String,
    },
}

/// The lowest severity that makes `lint` exit 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// Fail on errors only.
    Error,
    /// Fail on warnings and errors.
    Warning,
    /// Fail on any finding.
    Info,
    /// Never fail because of findings (input errors still exit 2).
    Never,
}

impl FailOn {
    /// The minimum failing severity; `None` for `never`.
    pub fn severity(self) -> Option<Severity> {
        match self {
            FailOn::Error => Some(Severity::Error),
            FailOn::Warning => Some(Severity::Warning),
            FailOn::Info => Some(Severity::Info),
            FailOn::Never => None,
        }
    }
}

/// `lifeguard lint` flags.
#[derive(Debug, clap::Args)]
pub struct LintArgs {
    /// Files, directories or `-` (stdin). Default: the current directory.
    #[arg(value_name = "PATH")]
    pub paths: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Exit 1 when a finding has at least this severity.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
}

/// `lifeguard rules` flags.
#[derive(Debug, clap::Args)]
pub struct RulesArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Runs a parsed command line; returns the exit code.
pub fn run(cli: Cli) -> Result<u8> {
    match cli.command {
        Command::Lint(args) => lint(args),
        Command::Rules(args) => {
            let text = match args.format {
                Format::Text => crate::report::rules::text(),
                Format::Json => crate::report::rules::json(),
            };
            write_stdout(&text)?;
            Ok(0)
        }
        Command::Explain { rule } => match policies::rules::find(&rule) {
            Some(r) => {
                write_stdout(&crate::report::rules::explain(r))?;
                Ok(0)
            }
            None => {
                eprintln!("lifeguard: unknown rule {rule:?}; `lifeguard rules` lists them");
                Ok(2)
            }
        },
    }
}

fn lint(args: LintArgs) -> Result<u8> {
    let paths = if args.paths.is_empty() {
        vec![".".to_owned()]
    } else {
        args.paths
    };
    let policy = Policy::default();
    let out = lint_paths(&paths, &policy, &Limits::default());
    let mut stderr = anstream::stderr();
    for e in &out.errors {
        write!(stderr, "{}", report::text::input_error(e)).context("writing to stderr")?;
    }
    match args.format {
        Format::Text => write_stdout(&report::text::render(&out))?,
        Format::Json => {
            write_stdout(&report::json::render(&out))?;
            writeln!(stderr, "{}", report::summary::line(&out)).context("writing to stderr")?;
        }
    }
    Ok(out.exit_code(args.fail_on.severity()))
}

fn write_stdout(text: &str) -> Result<()> {
    let mut stdout = anstream::stdout();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        // A closed pipe (`lifeguard lint | head`) is not an error worth a message.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(e).context("writing to stdout"),
    }
}
