//! Requests to the API server: each bounded by the request timeout, retried
//! with back-off on 429 and 5xx (and on a connection that could not be
//! made), LISTs read page by page.

use std::time::Duration;

use kube::Client;
use kube::client::Body;
use kube::core::Request;
use kube::core::params::ListParams;
use serde_json::Value;
use thiserror::Error;

use super::resources::Resource;
use super::transport::RefusedCertificate;

/// Attempts of one request before it fails: the first and four retries.
pub const ATTEMPTS: u32 = 5;
/// The first retry's wait; each next one doubles it.
pub const FIRST_BACKOFF: Duration = Duration::from_millis(250);
/// The longest wait a `Retry-After` header gets.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(10);

/// Why a request failed.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum FetchError {
    /// 401 or 403: the credentials may not do this.
    #[error("{what}: forbidden: the credentials lack `{verb}` ({message})")]
    Denied {
        /// `list deployments.apps in namespace shop`.
        what: String,
        /// The verb refused.
        verb: &'static str,
        /// The API server's words.
        message: String,
    },
    /// 404: the API server does not serve it.
    #[error("{what}: not found ({message})")]
    NotFound {
        /// What was asked.
        what: String,
        /// The API server's words.
        message: String,
    },
    /// No answer within the request timeout.
    #[error("{what}: the API server did not answer within {seconds} s (--request-timeout)")]
    TimedOut {
        /// What was asked.
        what: String,
        /// The timeout.
        seconds: u64,
    },
    /// The TLS handshake refused the API server's certificate: not retried,
    /// as no retry can change it.
    #[error("{what}: {message}")]
    Refused {
        /// What was asked.
        what: String,
        /// What is wrong with the certificate and what to change.
        message: String,
    },
    /// Anything else, after the retries.
    #[error("{what}: {message}")]
    Failed {
        /// What was asked.
        what: String,
        /// Why (the last attempt's error).
        message: String,
    },
}

/// What a failed attempt means for the next one.
enum Attempt {
    /// Wait (at least this long) and try again.
    Retry(String, Option<Duration>),
    /// Give up.
    Fail(FetchError),
}

/// Sends requests; counts them.
pub struct Fetcher {
    client: Client,
    timeout: Duration,
    page_size: u32,
    /// Requests sent, retries included.
    pub requests: std::sync::atomic::AtomicUsize,
}

impl Fetcher {
    /// A fetcher whose requests each take at most `timeout`.
    pub fn new(client: Client, timeout: Duration, page_size: u32) -> Fetcher {
        Fetcher { client, timeout, page_size, requests: std::sync::atomic::AtomicUsize::new(0) }
    }

    /// GETs `path` (with its query) as JSON; `what` names it in errors.
    pub async fn get(&self, path: &str, what: &str, verb: &'static str) -> Result<Value, FetchError> {
        self.get_as(path, "application/json", what, verb).await
    }

    /// [`Fetcher::get`] with another `Accept` header.
    pub async fn get_as(&self, path: &str, accept: &str, what: &str, verb: &'static str) -> Result<Value, FetchError> {
        self.send(http::Method::GET, path, accept, None, what, verb).await
    }

    /// Server-side applies `object` at `path` as field manager `manager`,
    /// taking over fields another manager set (`force`): what `kubectl
    /// apply --server-side --force-conflicts` sends. Idempotent, so retried
    /// as a GET is. An apply that makes the object is authorised as a
    /// `create` too, so a refusal names both verbs.
    pub async fn apply(&self, path: &str, object: &Value, manager: &str, what: &str) -> Result<Value, FetchError> {
        let path = format!("{path}?fieldManager={manager}&force=true");
        let body = ("application/apply-patch+yaml", object.to_string().into_bytes());
        self.send(http::Method::PATCH, &path, "application/json", Some(body), what, "patch` or `create").await
    }

    /// DELETEs what `path` (with its query) names: a collection's
    /// `deletecollection` with selectors. Idempotent.
    pub async fn delete(&self, path: &str, what: &str, verb: &'static str) -> Result<Value, FetchError> {
        self.send(http::Method::DELETE, path, "application/json", None, what, verb).await
    }

    /// One request, retried on 429, 5xx and connections that fail;
    /// `body` is its content type and bytes.
    async fn send(
        &self,
        method: http::Method,
        path: &str,
        accept: &str,
        body: Option<(&str, Vec<u8>)>,
        what: &str,
        verb: &'static str,
    ) -> Result<Value, FetchError> {
        let mut wait = FIRST_BACKOFF;
        let mut attempt = 1;
        loop {
            let mut request =
                http::Request::builder().method(method.clone()).uri(path).header(http::header::ACCEPT, accept);
            if let Some((content_type, _)) = &body {
                request = request.header(http::header::CONTENT_TYPE, *content_type);
            }
            let request = request
                .body(body.as_ref().map(|(_, bytes)| bytes.clone()).unwrap_or_default())
                .map_err(|e| FetchError::Failed { what: what.to_owned(), message: e.to_string() })?;
            match self.once(request, what, verb).await {
                Ok(value) => return Ok(value),
                Err(Attempt::Fail(e)) => return Err(e),
                Err(Attempt::Retry(message, _)) if attempt >= ATTEMPTS => {
                    return Err(FetchError::Failed {
                        what: what.to_owned(),
                        message: format!("{message} (after {ATTEMPTS} attempts)"),
                    });
                }
                Err(Attempt::Retry(_, after)) => {
                    tokio::time::sleep(after.map_or(wait, |a| a.min(MAX_RETRY_AFTER))).await;
                    wait *= 2;
                    attempt += 1;
                }
            }
        }
    }

    async fn once(&self, request: http::Request<Vec<u8>>, what: &str, verb: &'static str) -> Result<Value, Attempt> {
        self.requests.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let timed_out =
            || Attempt::Fail(FetchError::TimedOut { what: what.to_owned(), seconds: self.timeout.as_secs() });
        // The client's read timeout bounds each read; this bounds the whole
        // exchange (connect, TLS, a body that trickles in).
        let exchange = async {
            let response = self.client.send(request.map(Body::from)).await?;
            let status = response.status();
            let retry_after = response
                .headers()
                .get(http::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(Duration::from_secs);
            let body = response.into_body().collect_bytes().await?;
            Ok::<_, kube::Error>((status, retry_after, body))
        };
        let (status, retry_after, body) = match tokio::time::timeout(self.timeout, exchange).await {
            Err(_) => return Err(timed_out()),
            Ok(Err(e)) => return Err(transport(&e, what, timed_out)),
            Ok(Ok(answer)) => answer,
        };
        if status.is_success() {
            return serde_json::from_slice(&body).map_err(|e| {
                Attempt::Fail(FetchError::Failed {
                    what: what.to_owned(),
                    message: format!("the answer is not JSON: {e}"),
                })
            });
        }
        let message = status_message(&body).unwrap_or_else(|| status.to_string());
        match status.as_u16() {
            401 | 403 => Err(Attempt::Fail(FetchError::Denied { what: what.to_owned(), verb, message })),
            404 => Err(Attempt::Fail(FetchError::NotFound { what: what.to_owned(), message })),
            429 | 500..=599 => Err(Attempt::Retry(format!("{status}: {message}"), retry_after)),
            _ => Err(Attempt::Fail(FetchError::Failed {
                what: what.to_owned(),
                message: format!("{status}: {message}"),
            })),
        }
    }

    /// Lists `resource` in `namespace`, page by page (`limit`/`continue`),
    /// handing each page's objects (with their `apiVersion` and `kind`, which
    /// a LIST leaves out) to `each`. Returns the number of objects.
    pub async fn list(
        &self,
        resource: &Resource,
        namespace: &str,
        selector: Option<&str>,
        each: impl FnMut(Vec<Value>),
    ) -> Result<usize, FetchError> {
        let what = format!("list {} in namespace {namespace}", resource.name());
        self.list_at(resource, Some(namespace), selector, &what, each).await
    }

    /// Lists a cluster-scoped resource (or one across all namespaces), page by page.
    pub async fn list_all(&self, resource: &Resource, each: impl FnMut(Vec<Value>)) -> Result<usize, FetchError> {
        let what = format!("list {}", resource.name());
        self.list_at(resource, None, None, &what, each).await
    }

    async fn list_at(
        &self,
        resource: &Resource,
        namespace: Option<&str>,
        selector: Option<&str>,
        what: &str,
        mut each: impl FnMut(Vec<Value>),
    ) -> Result<usize, FetchError> {
        let request = Request::new(resource.url_path(namespace));
        let mut params = ListParams::default().limit(self.page_size);
        if let Some(selector) = selector {
            params = params.labels(selector);
        }
        let mut count = 0;
        loop {
            let built = request
                .list(&params)
                .map_err(|e| FetchError::Failed { what: what.to_owned(), message: e.to_string() })?;
            let path = built.uri().to_string();
            let mut page = self.get(&path, what, "list").await?;
            let next = page.pointer("/metadata/continue").and_then(Value::as_str).unwrap_or_default().to_owned();
            let items = match page.get_mut("items").map(Value::take) {
                Some(Value::Array(items)) => items,
                _ => Vec::new(),
            };
            count += items.len();
            each(items.into_iter().map(|item| resource.typed(item)).collect());
            if next.is_empty() {
                return Ok(count);
            }
            params = params.continue_token(&next);
        }
    }
}

/// A transport error: a connection that could not be made is retried; a
/// timeout fails at once (the request timeout is the bound), and so does a
/// certificate the handshake refused.
fn transport(e: &kube::Error, what: &str, timed_out: impl Fn() -> Attempt) -> Attempt {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(refused) = s.downcast_ref::<RefusedCertificate>() {
            return Attempt::Fail(FetchError::Refused { what: what.to_owned(), message: refused.to_string() });
        }
        source = s.source();
    }
    let text = error_chain(e);
    if text.contains("timed out") || text.contains("deadline has elapsed") {
        return timed_out();
    }
    Attempt::Retry(text, None)
}

/// An error and its sources, as one line.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = s.source();
    }
    text
}

/// The `message` of a `Status` answer.
fn status_message(body: &[u8]) -> Option<String> {
    let status: Value = serde_json::from_slice(body).ok()?;
    status.get("message").and_then(Value::as_str).map(str::to_owned)
}
