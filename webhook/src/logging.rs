//! Log setup: `tracing` lines on stdout, text or JSON (`--log-format`),
//! filtered by `RUST_LOG` (default `info,rustls=error`: rustls warns about
//! every client that sends an IP address as SNI, which says nothing about
//! lifeguard; failed handshakes are logged at debug by the server itself).
//!
//! Lines are written by a thread of their own, never by the thread that
//! answers a review: a log collector that stops reading stdout must not
//! stall admission, so when its buffer of lines is full, lines are dropped
//! rather than waited on. Written in batches, one line per review costs a
//! fraction of a write syscall instead of one each (9% of the server's CPU
//! under load when each review wrote its own).

use std::io::BufWriter;
use std::sync::OnceLock;

use tracing_appender::non_blocking::{ErrorCounter, NonBlockingBuilder, WorkerGuard};
use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

/// Lines held for the writer before new ones are dropped.
const BUFFERED_LINES: usize = 64 * 1024;
/// The writer's batch buffer: a burst of lines goes out in one write.
const BATCH_BYTES: usize = 64 * 1024;

/// The installed writer's count of dropped lines.
static DROPPED: OnceLock<ErrorCounter> = OnceLock::new();

/// Log lines dropped so far because stdout was not read fast enough.
pub fn dropped_lines() -> u64 {
    DROPPED.get().map_or(0, |c| c.dropped_lines() as u64)
}

/// Installs the global subscriber. Keep the guard until the process ends:
/// dropping it writes out the lines still buffered. `None` when a
/// subscriber was already installed.
#[must_use = "dropping the guard at once loses buffered log lines"]
pub fn init(format: LogFormat) -> Option<WorkerGuard> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,rustls=error"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stdout());
    let (writer, guard) = NonBlockingBuilder::default()
        .lossy(true)
        .buffered_lines_limit(BUFFERED_LINES)
        .thread_name("lifeguard-log")
        .finish(BufWriter::with_capacity(BATCH_BYTES, std::io::stdout()));
    let dropped = writer.error_counter();
    let builder =
        tracing_subscriber::fmt().with_env_filter(filter).with_target(false).with_ansi(ansi).with_writer(writer);
    let installed = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).with_current_span(false).with_span_list(false).try_init(),
    };
    if installed.is_err() {
        return None;
    }
    let _ = DROPPED.set(dropped);
    Some(guard)
}
