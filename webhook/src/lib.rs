//! `lifeguard-webhook`: lifeguard's rules as a validating and mutating
//! admission webhook.
//!
//! The decision is [`review`] (pure: an AdmissionReview body in, an answer
//! out). Around it: [`handlers`] (limits, time, metrics, logs), [`health`]
//! (probe state; [`health_app`] its endpoints) and [`self_test`], [`tls`]
//! and [`reload`] (certificates and policy kept fresh from files),
//! [`server`] (connections and drain) and [`metrics`]. [`run`] wires them
//! together; [`router`] builds the admission app so tests can drive it in
//! process.

pub mod activity;
pub mod config;
pub mod connections;
pub mod handlers;
pub mod health;
pub mod health_app;
pub mod logging;
pub mod metrics;
pub mod reload;
pub mod review;
pub mod self_test;
pub mod server;
pub mod state;
pub mod tls;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State as AxumState};
use axum::http::{HeaderValue, StatusCode, Version, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use thiserror::Error;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_util::task::TaskTracker;
use tower_http::catch_panic::CatchPanicLayer;

pub use config::{Cli, Config};
pub use state::{Shared, State};

use crate::config::Bounds;
use crate::connections::{Connections, HEALTH_MAX_CONNECTIONS};
use crate::reload::{PolicySource, Seen};
use crate::server::Phase;

/// Why the server could not start or stopped badly.
#[derive(Debug, Error)]
pub enum RunError {
    /// A listener could not be bound. The flag is named because the address
    /// may be a default the user never wrote.
    #[error("cannot listen on {addr}, the {listener} address ({flag}): {source}")]
    Bind {
        /// `admission` or `health`.
        listener: &'static str,
        /// The flag that sets the address.
        flag: &'static str,
        /// The address.
        addr: std::net::SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The TLS configuration is unusable (client CA unreadable, ...).
    #[error("TLS: {0}")]
    Tls(String),
    /// Signal handlers could not be installed.
    #[error("signals: {0}")]
    Signals(std::io::Error),
}

/// The admission app: `/validate`, `/validate/{mode}`, `/mutate`, and a
/// cheap `/livez` on the admission port too (a TLS check that touches
/// nothing else, and the load benchmark's cost floor).
pub fn router(state: Shared) -> Router {
    Router::new()
        .route("/validate", post(handlers::validate))
        .route("/validate/{mode}", post(handlers::validate_mode))
        .route("/mutate", post(handlers::mutate))
        .route("/livez", get(health_app::livez))
        .layer(middleware::from_fn_with_state(state.clone(), close_when_draining))
        .layer(CatchPanicLayer::custom(panic_response))
        .with_state(state)
}

/// The health app (plain HTTP): `/livez`, `/readyz`, `/startupz`, `/metrics`.
pub fn health_router(state: Shared) -> Router {
    Router::new()
        .route("/livez", get(health_app::livez))
        .route("/readyz", get(health_app::readyz))
        .route("/startupz", get(health_app::startupz))
        .route("/metrics", get(health_app::metrics))
        .with_state(state)
}

/// While draining, HTTP/1.1 responses ask the client to close the
/// connection, so its next request opens a new one (to a replica that is
/// not draining, once endpoints converge) instead of racing the close.
async fn close_when_draining(AxumState(state): AxumState<Shared>, request: Request, next: Next) -> Response {
    let http11 = request.version() == Version::HTTP_11;
    let mut response = next.run(request).await;
    if http11 && state.health.is_draining() {
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

fn panic_response(_: Box<dyn std::any::Any + Send + 'static>) -> Response {
    tracing::error!("a request handler panicked; answered 500");
    (StatusCode::INTERNAL_SERVER_ERROR, "internal error\n").into_response()
}

/// Runs the server until SIGTERM or SIGINT and the drain after it.
pub async fn run(config: Config) -> Result<(), RunError> {
    tls::install_provider();
    let state = State::new(config.clone());
    let source = PolicySource::choose(&config.policy);
    let mut seen = Seen::default();
    reload::check_policy(&state, &source, &mut seen);
    if let Some(files) = &config.tls {
        reload::check_certificate(&state, files, &mut seen);
    }
    let acceptor = match &config.tls {
        None => {
            tracing::warn!("--insecure-http: admission is served over plain HTTP (local development only)");
            None
        }
        Some(files) => {
            let tls = tls::server_config(state.resolver.clone(), files.client_ca.as_deref()).map_err(RunError::Tls)?;
            Some(tokio_rustls::TlsAcceptor::from(Arc::new(tls)))
        }
    };
    let bind = |listener, flag, addr| async move {
        TcpListener::bind(addr).await.map_err(|source| RunError::Bind { listener, flag, addr, source })
    };
    let health_listener = bind("health", "--health-listen", config.health_listen).await?;
    let listener = bind("admission", "--listen", config.listen).await?;
    let mut sigterm =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).map_err(RunError::Signals)?;
    let mut sigint =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).map_err(RunError::Signals)?;

    self_test::run_once(&state, &Arc::new(self_test::body())).await;
    let background = TaskTracker::new();
    let watcher = tokio::spawn(reload::watch(state.clone(), source, seen));
    let tester = tokio::spawn(self_test::watch(state.clone()));

    // The health port keeps serving through the drain (/readyz says 503
    // there) and closes last; its connections have the admission port's
    // time bounds and a cap of their own.
    let (health_phase, health_phase_rx) = watch::channel(Phase::Serving);
    let health_addr = health_listener.local_addr().ok();
    let health_bounds = Bounds { max_connections: HEALTH_MAX_CONNECTIONS, ..config.connections };
    let health_connections = Arc::new(Connections::new("health", health_bounds, state.metrics.connections("health")));
    let health = background.spawn(server::serve(
        health_listener,
        None,
        health_router(state.clone()),
        health_phase_rx,
        background.clone(),
        health_connections,
    ));

    if config.connections.idle <= connections::API_SERVER_IDLE_TIMEOUT {
        tracing::warn!(
            idle_timeout_seconds = config.connections.idle.as_secs_f64(),
            "the idle timeout is not above the API server's 90 s: a request it sends on a connection being closed fails"
        );
    }
    let admission = Arc::new(Connections::new("admission", config.connections, state.metrics.connections("admission")));
    let (phase_tx, phase_rx) = watch::channel(Phase::Serving);
    let connections = TaskTracker::new();
    let addr = listener.local_addr().ok();
    let accept = tokio::spawn(server::serve(
        listener,
        acceptor,
        router(state.clone()),
        phase_rx,
        connections.clone(),
        admission,
    ));
    tracing::info!(
        admission = %addr.map(|a| a.to_string()).unwrap_or_default(),
        health = %health_addr.map(|a| a.to_string()).unwrap_or_default(),
        tls = config.tls.is_some(),
        ready = state.health.readiness().is_ok(),
        "listening"
    );

    let signal = tokio::select! {
        _ = sigterm.recv() => "SIGTERM",
        _ = sigint.recv() => "SIGINT",
    };
    state.health.start_draining();
    let _ = phase_tx.send(Phase::Draining);
    tracing::info!(
        signal,
        drain_seconds = config.drain.as_secs_f64(),
        "draining: /readyz answers 503; still admitting while endpoints converge"
    );
    tokio::time::sleep(config.drain).await;
    let _ = phase_tx.send(Phase::Closing);
    let _ = accept.await;
    connections.close();
    tracing::info!(
        in_flight_connections = connections.len(),
        budget_seconds = config.shutdown_budget.as_secs_f64(),
        "drain over: listener closed; finishing in-flight requests"
    );
    match tokio::time::timeout(config.shutdown_budget, connections.wait()).await {
        Ok(()) => tracing::info!("all connections finished"),
        Err(_) => tracing::warn!(cut = connections.len(), "shutdown budget spent; cutting the remaining connections"),
    }
    watcher.abort();
    tester.abort();
    let _ = health_phase.send(Phase::Closing);
    let _ = health.await;
    background.close();
    // Open health connections (a scraper's keep-alive) finish their request.
    let _ = tokio::time::timeout(Duration::from_secs(1), background.wait()).await;
    tracing::info!("exiting");
    Ok(())
}
