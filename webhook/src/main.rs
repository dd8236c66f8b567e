//! `lifeguard-webhook`: the binary's edge. All wiring lives in the library.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = webhook::Cli::parse();
    let config = match cli.into_config() {
        Ok(config) => config,
        Err(e) => {
            eprintln!("lifeguard-webhook: {e}");
            return ExitCode::from(2);
        }
    };
    webhook::logging::init(config.log_format);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("lifeguard-webhook: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(webhook::run(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "cannot serve");
            eprintln!("lifeguard-webhook: {e}");
            ExitCode::FAILURE
        }
    }
}
