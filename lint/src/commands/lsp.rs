//! `lifeguard lsp`: the language server on stdio (`crate::lsp`).

use anyhow::Result;

/// `lifeguard lsp` flags.
#[derive(Debug, Clone, clap::Args)]
pub struct LspArgs {
    /// Talk over stdin and stdout (the only transport; editors' clients pass it).
    #[arg(long)]
    pub stdio: bool,
}

/// Runs the server until the client shuts it down; returns the exit code.
pub fn run(_args: LspArgs) -> Result<u8> {
    crate::lsp::serve_stdio()
}
