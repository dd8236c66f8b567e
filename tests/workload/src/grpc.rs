//! The gRPC health service (`GRPC_PORT`): `grpc.health.v1.Health/Check`
//! over plain HTTP/2, what the kubelet's `grpc` probes call.
//!
//! It answers as the HTTP endpoints do, from the same decisions
//! (health.rs): service `""` and `readiness` as `/readyz`, `liveness` as
//! `/livez`, `healthz` as `/healthz`; any other service is `NOT_FOUND`, a
//! failure to the kubelet. The pause holds a call, the wedge hangs it until
//! the client gives up (its deadline cancels the call).
//!
//! tonic needs a runtime: one current-thread runtime on a thread of its
//! own. Each call's decision runs on a plain thread, as each HTTP
//! connection's does, so a pause or a slow dependency never blocks the
//! runtime, and a call whose client gave up is still decided and logged.

use std::net::TcpListener;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use tokio::sync::oneshot;
use tonic::codegen::tokio_stream;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_server::{Health, HealthServer};
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};

use crate::Server;
use crate::health::{Check, Gate};
use crate::log::{Line, now_ms};

/// Serves the health service on `listener` (already bound, so a test that
/// sees `listening` can call it) from a thread of its own; `fail`s the
/// process if the server stops.
pub fn spawn(listener: TcpListener, server: Arc<Server>) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    thread::Builder::new().name("grpc".into()).spawn(move || {
        let served = runtime.block_on(async move {
            let incoming = TcpIncoming::from(tokio::net::TcpListener::from_std(listener)?);
            tonic::transport::Server::builder()
                .serve_with_incoming(HealthServer::new(HealthService { server }), incoming)
                .await
                .map_err(|e| std::io::Error::other(e.to_string()))
        });
        let why = served.err().map_or_else(|| "stopped".to_owned(), |e| e.to_string());
        crate::fail(1, &format!("the gRPC server: {why}"));
    })?;
    Ok(())
}

/// The `grpc.health.v1.Health` implementation.
struct HealthService {
    server: Arc<Server>,
}

/// The log line's `path` for a call naming `service`: `grpc:SERVICE`
/// (`grpc:` alone for the whole server). HTTP paths start with `/`, so the
/// two never meet.
fn log_path(service: &str) -> String {
    format!("grpc:{service}")
}

#[tonic::async_trait]
impl Health for HealthService {
    async fn check(&self, request: Request<HealthCheckRequest>) -> Result<Response<HealthCheckResponse>, Status> {
        let received_ms = now_ms();
        let since_listening = self.server.listening_at.elapsed();
        let user_agent = request.metadata().get("user-agent").and_then(|v| v.to_str().ok()).map(str::to_owned);
        let service = request.into_inner().service;
        // Stamped when written, as the HTTP lines are: after the answer.
        let path = log_path(&service);
        let line = move || {
            Line::new("request")
                .str("method", "Check")
                .str("path", &path)
                .opt_str("user_agent", user_agent.as_deref())
                .int("received_ms", received_ms)
        };

        let held = match self.server.gate(since_listening) {
            Gate::Hang => {
                line().str("status", "hung").emit();
                // Dropped, and with it the call, when the client cancels it
                // (its deadline) or closes the connection.
                return std::future::pending().await;
            }
            Gate::Answer { held } => held,
        };
        // Decided on a thread of its own, as an HTTP connection is: it may
        // sleep (the pause) and block (the dependency), and it logs even
        // when the client has gone.
        let check = Check::of_grpc_service(&service);
        let (answer, answered) = oneshot::channel();
        let server = Arc::clone(&self.server);
        thread::Builder::new()
            .spawn(move || {
                if let Some(held) = held {
                    thread::sleep(held);
                }
                // None: an unknown service.
                let verdict = check.map(|check| server.answer(check));
                let status = verdict
                    .as_ref()
                    .map(|v| if v.healthy { ServingStatus::Serving } else { ServingStatus::NotServing });
                let mut line = held_field(line(), held).str("status", status.map_or("NOT_FOUND", |s| s.as_str_name()));
                if let Some(dependency) = verdict.and_then(|v| v.dependency) {
                    line = line.str("dependency", &dependency);
                }
                if answer.send(status).is_err() {
                    // The client gave up before the answer (a probe's timeout).
                    line = line.str("write_error", "the client cancelled the call");
                }
                line.emit();
            })
            .map_err(|e| Status::resource_exhausted(format!("no thread for the call: {e}")))?;
        match answered.await {
            Ok(Some(status)) => Ok(Response::new(HealthCheckResponse { status: status.into() })),
            Ok(None) => Err(Status::not_found(format!("unknown service {service:?}"))),
            Err(_) => Err(Status::internal("the call's thread ended without an answer")),
        }
    }

    type WatchStream = tokio_stream::Empty<Result<HealthCheckResponse, Status>>;

    /// Not offered: the kubelet only calls `Check`. UNIMPLEMENTED tells a
    /// client not to retry.
    async fn watch(&self, request: Request<HealthCheckRequest>) -> Result<Response<Self::WatchStream>, Status> {
        let user_agent = request.metadata().get("user-agent").and_then(|v| v.to_str().ok()).map(str::to_owned);
        Line::new("request")
            .str("method", "Watch")
            .str("path", &log_path(&request.get_ref().service))
            .opt_str("user_agent", user_agent.as_deref())
            .int("received_ms", now_ms())
            .str("status", "UNIMPLEMENTED")
            .emit();
        Err(Status::unimplemented("only Check is served"))
    }
}

/// Adds `held_ms` when the pause held the call, as the HTTP lines do.
fn held_field(line: Line, held: Option<Duration>) -> Line {
    match held {
        Some(held) => line.int("held_ms", u64::try_from(held.as_millis()).unwrap_or(u64::MAX)),
        None => line,
    }
}
