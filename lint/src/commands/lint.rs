//! `lifeguard lint`: every input judged through the one pipeline, the
//! report rendered as it goes (or written whole, JUnit and files), a
//! baseline applied or written, and the exit code from the findings left.

// The command's edge: input messages and the summary go to stderr.
#![allow(clippy::print_stderr)]

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::baseline::{Baseline, Recorder};
use crate::input::{Limits, TemplateFinder};
use crate::lint::lint_resolved;
use crate::options::{FailOn, POLICY_NAME, RunArgs, set_color};
use crate::outcome::InputLevel;
use crate::output::{write_file_with, write_plain_stdout_with, write_stdout_with};
use crate::pipeline::Keep;
use crate::policy_discovery::Resolved;
use crate::prepare::prepare;
use crate::report::stream::Render;
use crate::report::{self, Format};
use crate::stop::Stop;

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

/// Runs `lifeguard lint`; returns the exit code.
pub fn run(args: LintArgs) -> Result<u8> {
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
