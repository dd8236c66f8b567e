//! `lifeguard completions SHELL`: the shell's completion script.

use anyhow::Result;

use crate::output::write_stdout;

/// Prints the completion script of `command` for `shell`; returns the exit code.
pub fn run(shell: clap_complete::Shell, mut command: clap::Command) -> Result<u8> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "lifeguard", &mut script);
    write_stdout(&String::from_utf8_lossy(&script))?;
    Ok(0)
}
