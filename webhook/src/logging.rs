//! Log setup: `tracing` lines on stdout, text or JSON (`--log-format`),
//! filtered by `RUST_LOG` (default `info,rustls=error`: rustls warns about
//! every client that sends an IP address as SNI, which says nothing about
//! lifeguard; failed handshakes are logged at debug by the server itself).

use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

/// Installs the global subscriber; a second call is a no-op.
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,rustls=error"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stdout());
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_target(false).with_ansi(ansi);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).with_current_span(false).with_span_list(false).try_init(),
    };
}
