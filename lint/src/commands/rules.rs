//! `lifeguard rules`: every rule with its default severity and one line.

use anyhow::Result;

use crate::output::write_stdout;
use crate::report::ListFormat;

/// `lifeguard rules` flags.
#[derive(Debug, clap::Args)]
pub struct RulesArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Text)]
    pub format: ListFormat,
}

/// Prints the rules; returns the exit code.
pub fn run(args: RulesArgs) -> Result<u8> {
    let text = match args.format {
        ListFormat::Text => crate::report::rules::text(),
        ListFormat::Json => crate::report::rules::json(),
    };
    write_stdout(&text)?;
    Ok(0)
}
