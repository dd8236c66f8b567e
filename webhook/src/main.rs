//! `lifeguard-webhook`: the binary's edge. All wiring lives in the library.

use std::process::ExitCode;

use clap::Parser;

// musl's allocator (the image is a static musl binary) and glibc's spend a
// quarter of a review's CPU in malloc and free under load; mimalloc does not.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

// The binary's edge: what stops the server from starting is told on stderr.
#[allow(clippy::print_stderr)]
fn main() -> ExitCode {
    let cli = webhook::Cli::parse();
    let config = match cli.into_config() {
        Ok(config) => config,
        Err(e) => {
            eprintln!("lifeguard-webhook: {e}");
            return ExitCode::from(2);
        }
    };
    // Held to the end of main: dropping it writes out buffered log lines.
    let _logs = webhook::logging::init(config.log_format);
    // Blocking threads only ever run bounded decisions and the self-test:
    // a fixed ceiling keeps the pool from growing a thread per burst.
    let blocking = webhook::state::decision_slots() + 2;
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().max_blocking_threads(blocking).build()
    {
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
