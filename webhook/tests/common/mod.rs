//! What the webhook's tests share beyond the harness of every crate's tests
//! ([`lifeguard_e2e::support`]: the real `lifeguard-webhook` process, the
//! AdmissionReviews and Deployments they send): HTTPS clients that trust the
//! test CA, the POST of a review, its patch, and bursts of clients.
// Each test binary compiles this module and uses a different part of it.
#![allow(dead_code, unused_imports)]
// A test's edge: it tells on the terminal what it saw fail.
#![allow(clippy::print_stderr)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

pub use lifeguard_e2e::cluster::http_get;
pub use lifeguard_e2e::cluster::pki::{Ca, client_tls};
pub use lifeguard_e2e::support::deployment::{Deployment, clean_container, shared_endpoint_container};
pub use lifeguard_e2e::support::review::review;
pub use lifeguard_e2e::support::webhook::{Server, Start, write_secret_volume};

/// The webhook tests' Deployment: `containers` in namespace `shop`, two
/// replicas, labelled `app: NAME`.
pub fn deployment(name: &str, containers: Value) -> Value {
    Deployment::new(name).namespace("shop").labelled().replicas(2).containers(containers).build()
}

/// HTTPS clients of a [`Server`].
pub trait Clients {
    /// An HTTPS client that trusts the server's test CA (HTTP/2 when `h2`,
    /// else HTTP/1.1), with keep-alive, as the API server's.
    fn client(&self, h2: bool) -> reqwest::Client;
}

impl Clients for Server {
    fn client(&self, h2: bool) -> reqwest::Client {
        client_trusting(&self.ca().pem, h2, None)
    }
}

/// A reqwest client over [`client_tls`].
pub fn client_trusting(ca_pem: &str, h2: bool, identity: Option<(&str, &str)>) -> reqwest::Client {
    let mut builder = reqwest::Client::builder()
        .tls_backend_preconfigured(client_tls(ca_pem, h2, identity))
        .timeout(Duration::from_secs(10));
    builder = if h2 { builder.http2_prior_knowledge() } else { builder.http1_only() };
    builder.build().expect("client")
}

/// POSTs a review: (HTTP status, JSON body or the text as a JSON string).
pub async fn post(client: &reqwest::Client, url: &str, body: &Value) -> (u16, Value) {
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .body(serde_json::to_vec(body).expect("json"))
        .send()
        .await
        .expect("request");
    let status = response.status().as_u16();
    let text = response.text().await.expect("body");
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

/// The response's decoded JSON Patch, if any (checking `patchType`).
pub fn patch_of(review: &Value) -> Option<json_patch::Patch> {
    let response = &review["response"];
    let patch = response.get("patch")?.as_str()?;
    assert_eq!(response["patchType"], "JSONPatch");
    use base64::Engine;
    // `[]byte` fields are standard base64 in Go's JSON.
    let bytes = base64::engine::general_purpose::STANDARD.decode(patch).expect("base64 patch");
    Some(serde_json::from_slice(&bytes).expect("patch is JSON Patch"))
}

/// Applies the response's patch (if any) to `object`.
pub fn apply(object: &Value, review: &Value) -> Value {
    let mut out = object.clone();
    if let Some(patch) = patch_of(review) {
        json_patch::patch(&mut out, &patch).expect("the patch applies");
    }
    out
}

/// Concurrent clients posting one review to one path until stopped, as an
/// API server's burst: half over HTTP/2, half over HTTP/1.1, with keep-alive;
/// every `fresh_every`-th client opens a new connection for each request.
pub struct Burst {
    stop: Arc<std::sync::atomic::AtomicBool>,
    ok: Arc<std::sync::atomic::AtomicUsize>,
    failed: Arc<std::sync::atomic::AtomicUsize>,
    workers: Vec<tokio::task::JoinHandle<()>>,
}

impl Burst {
    /// Starts `clients` clients. A request counts as ok when it gets 200 and
    /// an AdmissionReview for the body's uid.
    pub fn start(server: &Server, path: &str, body: &Value, clients: usize, fresh_every: Option<usize>) -> Burst {
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        let stop = Arc::new(AtomicBool::new(false));
        let (ok, failed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let uid = format!("\"uid\":{}", body["request"]["uid"]);
        let body = Arc::new(body.to_string());
        let workers = (0..clients)
            .map(|i| {
                let h2 = i % 2 == 0;
                let fresh = fresh_every.is_some_and(|n| i % n == 0);
                let kept = server.client(h2);
                let (ca, url, uid, body) = (server.ca().pem.clone(), server.url(path), uid.clone(), body.clone());
                let (stop, ok, failed) = (stop.clone(), ok.clone(), failed.clone());
                tokio::spawn(async move {
                    while !stop.load(Ordering::SeqCst) {
                        let client = if fresh { client_trusting(&ca, h2, None) } else { kept.clone() };
                        let sent = client.post(&url).header("content-type", "application/json").body(body.to_string());
                        let answer = match sent.send().await {
                            Ok(r) if r.status().as_u16() == 200 => r.text().await.map_err(|e| e.to_string()),
                            Ok(r) => Err(format!("status {}", r.status())),
                            Err(e) => Err(e.to_string()),
                        };
                        match answer {
                            Ok(text) if text.contains(&uid) => ok.fetch_add(1, Ordering::SeqCst),
                            other => {
                                if failed.load(Ordering::SeqCst) < 3 {
                                    eprintln!("burst request failed (h2={h2}, fresh={fresh}): {other:?}");
                                }
                                failed.fetch_add(1, Ordering::SeqCst)
                            }
                        };
                    }
                })
            })
            .collect();
        Burst { stop, ok, failed, workers }
    }

    /// Requests answered so far.
    pub fn ok(&self) -> usize {
        self.ok.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Stops the clients, waits for their last requests: (ok, failed).
    pub async fn stop(mut self) -> (usize, usize) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        for w in std::mem::take(&mut self.workers) {
            w.await.expect("burst client");
        }
        (self.ok(), self.failed.load(std::sync::atomic::Ordering::SeqCst))
    }
}
