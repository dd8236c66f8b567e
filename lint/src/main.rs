//! `lifeguard`: the binary's edge. All wiring lives in the library.

use std::process::ExitCode;

// glibc's malloc spends about a fifth of a lint in malloc and free, and
// more when one thread frees what another built (a stream's findings are
// reported on the thread that writes the output); mimalloc does not.
// Version 2 without transparent huge pages keeps the peak memory in bounds.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

// The binary's edge: an error that ends the run is told on stderr.
#[allow(clippy::print_stderr)]
fn main() -> ExitCode {
    let cli = lifeguard::cli::Cli::parse_invoked();
    match lifeguard::cli::run(cli) {
        Ok(code) => ExitCode::from(code),
        // Told where it was found, with its details.
        Err(e) if matches!(e.downcast_ref(), Some(lifeguard::stop::Stop::Told)) => ExitCode::from(2),
        Err(e) => {
            eprintln!("lifeguard: {e:#}");
            ExitCode::from(2)
        }
    }
}
