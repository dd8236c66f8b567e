//! `lifeguard`: the binary's edge. All wiring lives in the library.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = lifeguard::cli::Cli::parse();
    match lifeguard::cli::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("lifeguard: {e:#}");
            ExitCode::from(2)
        }
    }
}
