//! Command-line interface: flags parsed once into plain values, then the
//! subcommands. Exit codes: 0 clean, 1 findings, 2 usage or input errors.

// The commands' edge: usage errors go to the user on stderr.
#![allow(clippy::print_stderr)]

use crate::stop::Stop;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

use crate::baseline::{Baseline, Recorder};
use crate::input::{Limits, TemplateFinder};
use crate::lint::lint_resolved;
use crate::options::{
    EXPLAIN_TOPIC, FailOn, POLICY_NAME, RULE_NAME, RunArgs, SIMULATE_TOPIC, did_you_mean, set_color, unknown_rule,
};
use crate::outcome::InputLevel;
use crate::output::{write_file_with, write_plain_stdout_with, write_stdout, write_stdout_with};
use crate::pipeline::Keep;
use crate::policy_discovery::Resolved;
use crate::prepare::prepare;
use crate::report::stream::Render;
use crate::report::{self, Format, ListFormat};

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

/// `lifeguard lint` flags.
#[derive(Debug, clap::Args)]
pub struct LintArgs {
    /// Files, directories or `-` (stdin). Default: the current directory.
    #[arg(value_name = "PATH")]
    pub paths: Vec<String>,
    /// Output format.
    #[arg(long, value_parser = crate::options::LintFormat, default_value = "text")]
    pub format: Format,
    /// Exit 1 when a finding has at least this severity. Default: the
    /// policy's `denySeverity` (`error` in the default policy).
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOn>,
    /// Policy file or built-in pack (`default`, `strict`, `gpu-serving`).
    /// Default: for each file, the nearest `.lifeguard.yaml` or
    /// `.lifeguard.yml` from its directory up to the repository root (for
    /// stdin, from the current directory), else `default`.
    #[arg(long, env = "LIFEGUARD_POLICY", value_name = "FILE|PACK", value_parser = POLICY_NAME, hide_possible_values = true)]
    pub policy: Option<String>,
    /// Write the report to this file instead of stdout (colour only with `--color always`).
    #[arg(long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,
    /// The flags `lint` and `fix` share.
    #[command(flatten)]
    pub run: RunArgs,
    /// For `helm template` output: the chart's directory, relative to the
    /// repository root, so findings name `DIR/templates/x.yaml` instead of
    /// the `chart/templates/x.yaml` of Helm's `# Source:` comments.
    #[arg(long, value_name = "DIR")]
    pub helm_chart_root: Option<String>,
    /// Accept the findings this baseline file lists (by rule, object and
    /// container, not line): only new ones are reported and fail the run;
    /// accepted ones no longer found are noted, so the file shrinks.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Write every finding of this run to a baseline file (exit 0 but for
    /// input errors), for `--baseline` to accept from now on.
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
}

/// `lifeguard fix` flags.
#[derive(Debug, clap::Args)]
pub struct FixArgs {
    /// Files, directories or `-` (stdin; the fixed stream goes to stdout). Default: the current directory.
    #[arg(value_name = "PATH")]
    pub paths: Vec<String>,
    /// Print a unified diff of the fixes instead of writing any file.
    #[arg(long)]
    pub diff: bool,
    /// Apply only this rule's fixes (repeatable).
    #[arg(long = "rule", value_name = "RULE", value_parser = RULE_NAME, hide_possible_values = true)]
    pub rules: Vec<String>,
    /// Exit 1 when a finding at least this severe remains unfixed, or when
    /// a fix was applied (with `--diff`, would be), except with `never`.
    /// Default: the policy's `denySeverity` (`error` in the default policy).
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOn>,
    /// Policy file or built-in pack, as for `lint`: its parameters shape the
    /// fixes, and suppressed findings are not fixed.
    #[arg(long, env = "LIFEGUARD_POLICY", value_name = "FILE|PACK", value_parser = POLICY_NAME, hide_possible_values = true)]
    pub policy: Option<String>,
    /// The flags `lint` and `fix` share.
    #[command(flatten)]
    pub run: RunArgs,
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
        Command::Lint(args) => lint(args),
        Command::Fix(args) => fix(args),
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
                eprintln!("lifeguard: {}", unknown_rule(&rule, &known));
                Ok(2)
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

fn lint(args: LintArgs) -> Result<u8> {
    set_color(&args.run);
    let Some(mut resolved) = prepare(&args.paths, args.policy.as_deref(), &args.run) else {
        return Err(Stop::told());
    };
    let flag = args.fail_on.map(FailOn::severity);
    // JUnit lists the rules any policy runs; each case fails at its file's threshold, as the exit code does.
    let rules_run = junit_rules(&resolved);
    if let Some(root) = args.helm_chart_root.as_deref().filter(|root| !std::path::Path::new(root).is_dir()) {
        return Err(Stop::usage(format!("--helm-chart-root {root:?} is not a directory (give the chart's directory)")));
    }
    let quiet = args.run.quiet;
    // Every format but JUnit is rendered as the input is linted; a report for
    // stdout that would lose its styles is rendered without them. Relative
    // template paths are the repository's, from where lifeguard runs.
    let plain =
        args.output_file.is_none() && anstream::AutoStream::choice(&std::io::stdout()) == anstream::ColorChoice::Never;
    let baseline = args.baseline.as_deref().map(read_baseline).transpose().map_err(|e| Stop::usage(e.to_string()))?;
    let render = Render::new(args.format).map(|r| if plain { r.plain() } else { r });
    let render = render.map(|r| if baseline.is_some() { r.with_baseline() } else { r });
    let mut keep = Keep {
        templates: TemplateFinder::on_disk(args.helm_chart_root.as_deref()),
        render,
        baseline,
        record: args.write_baseline.is_some().then(Recorder::default),
    };
    let mut out = lint_resolved(&mut resolved, &Limits::default(), &mut keep);
    out.warnings.extend(keep.baseline.as_ref().and_then(Baseline::unmatched));
    let render = keep.render.take();
    let mut stderr = anstream::stderr();
    // GitHub annotations on stdout already carry every input error, and an
    // Actions log shows both streams: each error is said once.
    let annotated = args.format == Format::Github && args.output_file.is_none();
    // `--quiet` keeps the errors and warnings, not the notes.
    let quieted = |level: InputLevel| quiet && level == InputLevel::Note;
    for (level, e) in out.input_messages().filter(|&(level, _)| !annotated && !quieted(level)) {
        write!(stderr, "{}", report::text::input_message(level, e)).context("writing to stderr")?;
    }
    let report = |w: &mut dyn Write| match render {
        Some(render) => render.write(&out, quiet, w),
        None => w.write_all(report::junit::render(&out, &rules_run, &|file| resolved.fail_on(flag, file)).as_bytes()),
    };
    match &args.output_file {
        Some(path) => write_file_with(path, report)?,
        None if plain => write_plain_stdout_with(report)?,
        None => write_stdout_with(report)?,
    }
    // Machine formats keep stdout for the report alone; a report in a file
    // still tells the terminal how the run went.
    if !quiet && (args.format != Format::Text || args.output_file.is_some()) {
        writeln!(stderr, "{}", report::summary::line(&out)).context("writing to stderr")?;
    }
    if let (Some(path), Some(record)) = (&args.write_baseline, &keep.record) {
        std::fs::write(path, record.file_text()).with_context(|| format!("writing {}", path.display()))?;
        // Today's findings are the baseline: only an input error fails.
        return Ok(if out.errors.is_empty() { 0 } else { 2 });
    }
    Ok(resolved.exit_code(&out, flag))
}

/// A `--baseline` file, read; the error names the file and line.
fn read_baseline(path: &std::path::Path) -> std::result::Result<Baseline, String> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{shown}: cannot read the baseline: {e}"))?;
    Baseline::parse(&shown, &text).map_err(|e| match (e.line, e.column) {
        (Some(line), Some(column)) => format!("{}:{line}:{column}: {}", e.file, e.message),
        _ => format!("{}: {}", e.file, e.message),
    })
}

/// The rules any of the policies in force runs, for JUnit's test cases.
fn junit_rules(resolved: &Resolved) -> Vec<String> {
    let mut rules: Vec<String> = Vec::new();
    for p in &resolved.policies {
        for rule in report::junit::rules_run(&p.policy) {
            if !rules.contains(&rule) {
                rules.push(rule);
            }
        }
    }
    if resolved.policies.is_empty() {
        rules = report::junit::rules_run(&resolved.first());
    }
    rules
}

fn fix(args: FixArgs) -> Result<u8> {
    use policies::rules::FixAvailability;
    for name in &args.rules {
        let problem = match policies::rules::find(name) {
            None => match did_you_mean(name, policies::rules::RULES.iter().map(|r| r.name)) {
                // The rule meant may have no fix: better said now than after a second try.
                Some(meant) => match policies::rules::find(meant).map(|r| &r.fix) {
                    Some(FixAvailability::Fix(_)) => format!("unknown rule (did you mean {meant:?}?)"),
                    _ => format!("unknown rule (did you mean {meant:?}? it has no automatic fix)"),
                },
                None => "unknown rule".to_owned(),
            },
            Some(r) if matches!(r.fix, FixAvailability::NoFix(_)) => "rule has no automatic fix".to_owned(),
            Some(_) => continue,
        };
        let fixable: Vec<&str> = policies::rules::RULES
            .iter()
            .filter(|r| matches!(r.fix, FixAvailability::Fix(_)))
            .map(|r| r.name)
            .collect();
        return Err(Stop::usage(format!("--rule {name:?}: {problem}; rules with a fix: {}", fixable.join(", "))));
    }
    set_color(&args.run);
    let only = (!args.rules.is_empty()).then_some(args.rules.as_slice());
    let Some(mut resolved) = prepare(&args.paths, args.policy.as_deref(), &args.run) else {
        return Err(Stop::told());
    };
    let mode = if args.diff { crate::fix::Output::Diff } else { crate::fix::Output::InPlace };
    let flag = args.fail_on.map(FailOn::severity);
    let mut stdout = std::io::stdout().lock();
    let (out, written) =
        crate::fix::stream::fix_and_write(&mut resolved, only, &Limits::default(), mode, flag, &mut stdout);
    match written {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(e).context("writing to stdout"),
        _ => {}
    }
    let mut stderr = anstream::stderr();
    if !args.run.quiet {
        write!(stderr, "{}", out.render(mode)).context("writing to stderr")?;
    } else {
        for e in out.all_errors() {
            write!(stderr, "{}", report::text::input_error(e)).context("writing to stderr")?;
        }
    }
    Ok(out.exit_code())
}
