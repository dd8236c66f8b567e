//! The admission handlers: the body limit, the per-request deadline, the
//! decision on a blocking thread (so the deadline can fire and a panic is
//! caught), then the log line and the metrics. What to answer is
//! [`crate::review`]'s job.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use axum::body::{Body, to_bytes};
use axum::extract::{Path, Request, State as AxumState};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use policies::policy::AdmissionMode;

use crate::review::{self, Endpoint, Invalid, Reply, RequestHead, Summary};
use crate::state::Shared;

/// `POST /validate`: the policy's mode.
pub async fn validate(AxumState(state): AxumState<Shared>, request: Request) -> Response {
    admit(state, Endpoint::Validate(None), request).await
}

/// `POST /validate/{mode}`.
pub async fn validate_mode(
    AxumState(state): AxumState<Shared>,
    Path(mode): Path<String>,
    request: Request,
) -> Response {
    let Some(mode) = AdmissionMode::parse(&mode) else {
        let message = format!("unknown mode {mode:?}: use /validate/enforce, /validate/warn or /validate/audit");
        return (StatusCode::NOT_FOUND, message).into_response();
    };
    admit(state, Endpoint::Validate(Some(mode)), request).await
}

/// `POST /mutate`.
pub async fn mutate(AxumState(state): AxumState<Shared>, request: Request) -> Response {
    admit(state, Endpoint::Mutate, request).await
}

async fn admit(state: Shared, endpoint: Endpoint, request: Request) -> Response {
    let started = Instant::now();
    let _in_flight = state.metrics.in_flight();
    let timeout = state.config.request_timeout;
    let deadline = tokio::time::Instant::from_std(started + timeout);
    let (parts, body) = request.into_parts();
    let body = match read_body(&state, &parts.headers, body, deadline).await {
        Ok(body) => body,
        Err(invalid) => return refuse(&state, endpoint, invalid, started),
    };
    // Leave a little of the deadline to write the answer.
    let decide_by = deadline - (timeout / 10).min(Duration::from_millis(250));
    let head: Arc<OnceLock<RequestHead>> = Arc::default();
    let reply = if body.len() <= INLINE_BODY_BYTES {
        // A small object is judged in well under a millisecond: on the
        // worker, without a thread hop. A panic is still caught and answered.
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| decide(&state, endpoint, &body, &head)));
        caught.unwrap_or_else(|_| failed(&state, endpoint, head.get(), "internal error (a panic), please report it"))
    } else {
        decide_off_thread(&state, endpoint, body, head, decide_by, timeout).await
    };
    match reply {
        Reply::Review { review, summary } => {
            let seconds = started.elapsed().as_secs_f64();
            log_review(&summary, seconds);
            state.metrics.reviewed(&summary, seconds);
            match review::wire_json(&review) {
                Ok(json) => ([(header::CONTENT_TYPE, "application/json")], json).into_response(),
                Err(e) => refuse(&state, endpoint, Invalid { status: 500, message: format!("encoding: {e}") }, started),
            }
        }
        Reply::Invalid(invalid) => refuse(&state, endpoint, invalid, started),
    }
}

/// Bodies up to this size are judged on the async worker; larger ones (whose
/// cost grows with their size) on a blocking thread under the deadline.
const INLINE_BODY_BYTES: usize = 64 * 1024;

/// Judges a large body on a blocking thread, under the deadline and the
/// bound on decisions in flight.
async fn decide_off_thread(
    state: &Shared,
    endpoint: Endpoint,
    body: axum::body::Bytes,
    head: Arc<OnceLock<RequestHead>>,
    decide_by: tokio::time::Instant,
    timeout: Duration,
) -> Reply {
    let permit = match tokio::time::timeout_at(decide_by, state.decisions.clone().acquire_owned()).await {
        Ok(Ok(permit)) => permit,
        _ => {
            let busy = "busy: no decision slot free before the deadline".to_owned();
            return Reply::Invalid(Invalid { status: 503, message: busy });
        }
    };
    let task = {
        let (state, head) = (state.clone(), head.clone());
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            decide(&state, endpoint, &body, &head)
        })
    };
    match tokio::time::timeout_at(decide_by, task).await {
        Ok(Ok(reply)) => reply,
        Ok(Err(join)) => failed(state, endpoint, head.get(), &format!("internal error, please report it: {join}")),
        Err(_) => {
            let why = format!("not judged within the {}s request timeout", timeout.as_secs_f64());
            failed(state, endpoint, head.get(), &why)
        }
    }
}

fn decide(state: &Shared, endpoint: Endpoint, body: &[u8], head: &OnceLock<RequestHead>) -> Reply {
    let parsed = match review::parse_with(body, |h| {
        let _ = head.set(h.clone());
    }) {
        Ok(parsed) => parsed,
        Err(invalid) => return Reply::Invalid(invalid),
    };
    match state.policy.load_full() {
        Some(policy) => review::decide(&parsed, endpoint, &policy, &state.options),
        None => failed(state, endpoint, Some(&parsed.head), "no policy is loaded yet"),
    }
}

/// The on-error answer when the uid is known, else a 503.
fn failed(state: &Shared, endpoint: Endpoint, head: Option<&RequestHead>, why: &str) -> Reply {
    tracing::error!(endpoint = endpoint.name(), uid = head.map(|h| h.uid.as_str()), error = %why, "review failed");
    match head {
        Some(head) => review::error_reply(head, endpoint, None, state.options.on_error, why),
        // Not even the uid could be read in time: the API server applies
        // the webhook's failurePolicy to a non-200 answer.
        None => Reply::Invalid(Invalid { status: 503, message: format!("{why} (before its uid could be read)") }),
    }
}

async fn read_body(
    state: &Shared,
    headers: &HeaderMap,
    body: Body,
    deadline: tokio::time::Instant,
) -> Result<axum::body::Bytes, Invalid> {
    let limit = state.config.max_body_bytes;
    let too_large = || Invalid { status: 413, message: format!("request body larger than the {limit}-byte limit") };
    let declared =
        headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    match tokio::time::timeout_at(deadline, to_bytes(body, limit)).await {
        Err(_) => {
            Err(Invalid { status: 408, message: "request body not received within the request timeout".to_owned() })
        }
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(e)) => {
            let over = std::error::Error::source(&e).is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
            if over {
                Err(too_large())
            } else {
                Err(Invalid { status: 400, message: format!("reading the body: {e}") })
            }
        }
    }
}

fn refuse(state: &Shared, endpoint: Endpoint, invalid: Invalid, started: Instant) -> Response {
    let seconds = started.elapsed().as_secs_f64();
    state.metrics.request(endpoint.name(), "none", &invalid.status.to_string(), seconds);
    tracing::warn!(endpoint = endpoint.name(), status = invalid.status, error = %invalid.message, "request refused");
    let status = StatusCode::from_u16(invalid.status).unwrap_or(StatusCode::BAD_REQUEST);
    (status, format!("{}\n", invalid.message)).into_response()
}

fn log_review(s: &Summary, seconds: f64) {
    tracing::info!(
        uid = %s.uid,
        object = %s.object,
        operation = %s.operation,
        endpoint = s.endpoint,
        mode = s.mode.map_or("none", |m| m.as_str()),
        verdict = s.verdict.as_str(),
        rules = %s.rules.join(","),
        note = s.note.as_deref(),
        duration_ms = (seconds * 1000.0 * 1000.0).round() / 1000.0,
        "review"
    );
}
