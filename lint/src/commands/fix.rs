//! `lifeguard fix`: the rules asked for checked first, then every input
//! fixed in place (or shown as a diff, or stdin to stdout) through the one
//! pipeline, and what was done told on stderr.

use std::io::Write;

use anyhow::{Context, Result};

use crate::input::Limits;
use crate::options::{FailOn, POLICY_NAME, RULE_NAME, RunArgs, did_you_mean, set_color};
use crate::prepare::prepare;
use crate::report;
use crate::stop::Stop;

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

/// Runs `lifeguard fix`; returns the exit code.
pub fn run(args: FixArgs) -> Result<u8> {
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
