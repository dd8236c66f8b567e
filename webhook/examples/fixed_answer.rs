//! The load bench's floor (`webhook/benches/load.rs`): the webhook's own
//! TLS and connection stack answering every `POST /validate/warn` with the
//! same bytes, so the bench can tell what a review costs beyond serving a
//! request of its size at all.
//!
//! Usage: `fixed_answer CERT_PEM KEY_PEM ANSWER_FILE`. Listens on
//! 127.0.0.1 on a free port and prints `listening ADDR` on stdout.
//!
//! Kept from the server: the allocator, the runtime, the TLS configuration
//! (rustls with ring, TLS 1.3 and 1.2, ALPN h2 and http/1.1), the accept
//! loop with its connection cap, header-read and idle bounds
//! (`webhook::server::serve`), hyper, axum's routing, and reading the whole
//! body. Left out: the decision, the request deadline, the body limit's
//! checks, the log line, the metrics and the drain middleware.

// An example's edge: it shows on the terminal what it did.
#![allow(clippy::print_stderr, clippy::print_stdout)]

use std::process::ExitCode;
use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes, to_bytes};
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_util::task::TaskTracker;
use webhook::config::Bounds;
use webhook::connections::Connections;
use webhook::metrics::ConnectionMetrics;
use webhook::server::Phase;
use webhook::tls;

// As in the server's main.rs: the allocator is part of what a request costs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The server's default `--max-body-bytes`.
const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

async fn answer(State(answer): State<Bytes>, body: Body) -> Response {
    match to_bytes(body, MAX_BODY_BYTES).await {
        Ok(_) => ([(header::CONTENT_TYPE, "application/json")], answer).into_response(),
        Err(e) => (StatusCode::BAD_REQUEST, format!("reading the body: {e}")).into_response(),
    }
}

async fn run(cert: &str, key: &str, answer_file: &str) -> Result<(), String> {
    tls::install_provider();
    let read = |path: &str| std::fs::read(path).map_err(|e| format!("{path}: {e}"));
    let pair = tls::serving_pair(&read(cert)?, &read(key)?, cert, key)?;
    let resolver = Arc::new(tls::Resolver::default());
    resolver.store(pair.key);
    let config = tls::server_config(resolver, None)?;
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let app = Router::new().route("/validate/warn", post(answer)).with_state(Bytes::from(read(answer_file)?));
    let listener = TcpListener::bind("127.0.0.1:0").await.map_err(|e| format!("bind: {e}"))?;
    let addr = listener.local_addr().map_err(|e| format!("local address: {e}"))?;
    println!("listening {addr}");
    // Held until the process is killed: a dropped sender closes the listener.
    let (_phase, phase_rx) = watch::channel(Phase::Serving);
    let connections = Arc::new(Connections::new("admission", Bounds::default(), ConnectionMetrics::default()));
    webhook::server::serve(listener, Some(acceptor), app, phase_rx, TaskTracker::new(), connections).await;
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [cert, key, answer_file] = args.as_slice() else {
        eprintln!("usage: fixed_answer CERT_PEM KEY_PEM ANSWER_FILE");
        return ExitCode::from(2);
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("fixed_answer: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cert, key, answer_file)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fixed_answer: {e}");
            ExitCode::FAILURE
        }
    }
}
