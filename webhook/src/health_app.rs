//! The health app's endpoints (plain HTTP): each answers from the shared
//! state's [`crate::health::Health`] or metrics, which the state holds.

use axum::extract::State as AxumState;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::state::Shared;

fn probe(result: Result<(), String>) -> Response {
    match result {
        Ok(()) => (StatusCode::OK, "ok\n").into_response(),
        Err(why) => (StatusCode::SERVICE_UNAVAILABLE, format!("{why}\n")).into_response(),
    }
}

/// `GET /livez`: the process answers. Touches nothing else on purpose.
pub async fn livez() -> Response {
    (StatusCode::OK, "ok\n").into_response()
}

/// `GET /readyz`.
pub async fn readyz(AxumState(state): AxumState<Shared>) -> Response {
    probe(state.health.readiness())
}

/// `GET /startupz`.
pub async fn startupz(AxumState(state): AxumState<Shared>) -> Response {
    probe(state.health.startup())
}

/// `GET /metrics`: OpenMetrics text.
pub async fn metrics(AxumState(state): AxumState<Shared>) -> Response {
    let content_type = "application/openmetrics-text; version=1.0.0; charset=utf-8";
    ([(header::CONTENT_TYPE, content_type)], state.metrics.encode()).into_response()
}
