//! What the end-to-end tests share: certificates generated in the test
//! (`rcgen`), the real `lifeguard-webhook` binary started on 127.0.0.1 with
//! port 0 (its addresses read from its JSON log), HTTPS clients that trust
//! the test CA, and AdmissionReview bodies as the API server sends them.

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};

// Shared with the cluster tests' harness: the test CA, a TLS client of it,
// the Secret-volume layout and a plain GET.
pub use lifeguard_e2e::cluster::http_get;
pub use lifeguard_e2e::cluster::pki::{Ca, client_tls};
pub use lifeguard_e2e::cluster::webhook::write_secret_volume;

/// A running `lifeguard-webhook`.
pub struct Server {
    child: Option<Child>,
    /// Admission address (HTTPS unless started insecure).
    pub admission: SocketAddr,
    /// Health address (plain HTTP).
    pub health: SocketAddr,
    logs: Arc<Mutex<Vec<Value>>>,
    /// The directory holding its certificate, key and policy.
    pub dir: tempfile::TempDir,
    /// The CA its certificate chains to.
    pub ca: Ca,
}

/// How to start a server.
pub struct Start {
    /// Extra flags.
    pub args: Vec<String>,
    /// A policy file's text (written as `policy.yaml` and passed as `--policy`).
    pub policy: Option<String>,
    /// Certificates as a cert-manager Secret volume: files behind a `..data` symlink.
    pub secret_volume: bool,
    /// Plain HTTP.
    pub insecure: bool,
    /// Wait for /readyz before returning.
    pub wait_ready: bool,
    /// Write the serving pair before starting (else `tls.crt` and `tls.key`
    /// are named but missing, as before cert-manager has issued them).
    pub write_certs: bool,
    /// Stop reading the server's stdout after its "listening" line, as a
    /// log collector that hangs would, leaving the pipe open.
    pub stall_logs: bool,
    /// `--listen` (default `127.0.0.1:0`).
    pub listen: Option<String>,
    /// Leave `--health-listen` out, so the server picks its default.
    pub default_health_listen: bool,
}

impl Default for Start {
    fn default() -> Self {
        Start {
            args: Vec::new(),
            policy: None,
            secret_volume: false,
            insecure: false,
            wait_ready: true,
            write_certs: true,
            stall_logs: false,
            listen: None,
            default_health_listen: false,
        }
    }
}

impl Start {
    /// With these flags.
    pub fn args(args: &[&str]) -> Start {
        Start { args: args.iter().map(|a| (*a).to_owned()).collect(), ..Start::default() }
    }
}

impl Server {
    /// Starts the binary with `start`, fails the test if it does not come up.
    pub fn start(start: Start) -> Server {
        let dir = tempfile::tempdir().expect("tempdir");
        let ca = Ca::new("lifeguard test CA");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_lifeguard-webhook"));
        cmd.args(["--listen", start.listen.as_deref().unwrap_or("127.0.0.1:0"), "--log-format", "json"]);
        if !start.default_health_listen {
            cmd.args(["--health-listen", "127.0.0.1:0"]);
        }
        cmd.args(["--drain-seconds", "1", "--shutdown-budget-seconds", "3", "--reload-interval-seconds", "0.2"]);
        if start.insecure {
            cmd.arg("--insecure-http");
        } else {
            let pair = ca.serving("lifeguard-webhook generation 1", &[]);
            let (cert, key) = (pair.cert, pair.key);
            let (cert_path, key_path) = if !start.write_certs {
                (dir.path().join("tls.crt"), dir.path().join("tls.key"))
            } else if start.secret_volume {
                write_secret_volume(dir.path(), 1, &cert, &key);
                (dir.path().join("tls.crt"), dir.path().join("tls.key"))
            } else {
                std::fs::write(dir.path().join("tls.crt"), cert).expect("write");
                std::fs::write(dir.path().join("tls.key"), key).expect("write");
                (dir.path().join("tls.crt"), dir.path().join("tls.key"))
            };
            cmd.arg("--tls-cert").arg(cert_path).arg("--tls-key").arg(key_path);
        }
        if let Some(policy) = &start.policy {
            let path = dir.path().join("policy.yaml");
            std::fs::write(&path, policy).expect("write policy");
            cmd.arg("--policy").arg(path);
        }
        cmd.args(&start.args).env_remove("RUST_LOG").stdout(Stdio::piped()).stderr(Stdio::inherit());
        let mut child = cmd.spawn().expect("start lifeguard-webhook");
        let stdout = child.stdout.take().expect("stdout");
        let logs: Arc<Mutex<Vec<Value>>> = Arc::default();
        let sink = logs.clone();
        let stall = start.stall_logs;
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            for line in lines.by_ref().map_while(Result::ok) {
                let value: Value = serde_json::from_str(&line).unwrap_or(Value::String(line));
                let listening = value["message"] == "listening";
                sink.lock().expect("logs").push(value);
                if stall && listening {
                    // Holds the pipe open, unread, until the test process ends.
                    loop {
                        std::thread::park();
                    }
                }
            }
        });
        let mut server = Server {
            child: Some(child),
            admission: "0.0.0.0:0".parse().expect("addr"),
            health: "0.0.0.0:0".parse().expect("addr"),
            logs,
            dir,
            ca,
        };
        let listening = server.wait_log(|l| l["message"] == "listening", Duration::from_secs(20));
        let addr = |k: &str| listening[k].as_str().and_then(|a| a.parse().ok()).expect("address in the log");
        server.admission = addr("admission");
        server.health = addr("health");
        if start.wait_ready {
            server.wait_ready(Duration::from_secs(10));
        }
        server
    }

    /// When the server wrote a JSON log line, on its own clock (its
    /// `timestamp`): bounds measured from it hold however slowly a loaded
    /// machine hands the test what the server did.
    pub fn logged_at(line: &Value) -> SystemTime {
        let at: jiff::Timestamp = line["timestamp"]
            .as_str()
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("a log line without an RFC 3339 timestamp: {line}"));
        SystemTime::from(at)
    }

    /// Every log line so far.
    pub fn logs(&self) -> Vec<Value> {
        self.logs.lock().expect("logs").clone()
    }

    /// Waits (bounded) for a log line matching `pred`.
    pub fn wait_log(&self, pred: impl Fn(&Value) -> bool, limit: Duration) -> Value {
        let start = Instant::now();
        loop {
            if let Some(line) = self.logs().into_iter().find(|l| pred(l)) {
                return line;
            }
            assert!(start.elapsed() < limit, "no such log line within {limit:?}; logs: {:#?}", self.logs());
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// `GET` on the health port: (status, body). Blocking, plain HTTP/1.1.
    pub fn health_get(&self, path: &str) -> (u16, String) {
        http_get(self.health, path)
    }

    /// Waits (bounded) until /readyz answers 200.
    pub fn wait_ready(&self, limit: Duration) {
        let start = Instant::now();
        loop {
            let (status, body) = self.health_get("/readyz");
            if status == 200 {
                return;
            }
            assert!(start.elapsed() < limit, "not ready within {limit:?}: {status} {body}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The base URL of the admission server.
    pub fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.admission.port())
    }

    /// An HTTPS client that trusts the test CA (HTTP/2 when `h2`, else
    /// HTTP/1.1), with keep-alive, as the API server's.
    pub fn client(&self, h2: bool) -> reqwest::Client {
        client_trusting(&self.ca.pem, h2, None)
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(Child::id).unwrap_or_default()
    }

    /// Sends a signal with `kill`.
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill").arg(format!("-{name}")).arg(self.pid().to_string()).status().expect("kill");
        assert!(status.success());
    }

    /// Waits (bounded) for the process to exit.
    pub fn wait_exit(&mut self, limit: Duration) -> ExitStatus {
        let start = Instant::now();
        let child = self.child.as_mut().expect("running");
        loop {
            if let Some(status) = child.try_wait().expect("wait") {
                self.child = None;
                return status;
            }
            assert!(start.elapsed() < limit, "did not exit within {limit:?}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// A counter or gauge from /metrics (0 when absent).
    pub fn metric(&self, series: &str) -> f64 {
        let (_, text) = self.health_get("/metrics");
        text.lines()
            .find_map(|l| l.strip_prefix(series).and_then(|rest| rest.strip_prefix(' ')))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0.0)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
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

/// The API server's `request.kind` / `request.resource` for a kind.
pub fn kind_and_resource(kind: &str) -> (Value, Value) {
    let (group, version, resource) = match (policies::model::pod_kind(kind), kind) {
        (Some(k), _) => (k.group, k.version, k.resource),
        (None, "Rollout") => ("argoproj.io", "v1alpha1", "rollouts"),
        (None, "Service") => ("", "v1", "services"),
        (None, "ConfigMap") => ("", "v1", "configmaps"),
        (None, other) => ("example.com", "v1", other),
    };
    (
        json!({"group": group, "version": version, "kind": kind}),
        json!({"group": group, "version": version, "resource": resource}),
    )
}

/// An AdmissionReview as the API server sends it.
pub fn review(uid: &str, operation: &str, object: Option<&Value>, old: Option<&Value>) -> Value {
    let some = object.or(old).cloned().unwrap_or(Value::Null);
    let kind = some["kind"].as_str().unwrap_or("Pod");
    let (kind_v, resource) = kind_and_resource(kind);
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": kind_v,
            "resource": resource,
            "requestKind": kind_v,
            "requestResource": resource,
            "name": some.pointer("/metadata/name").cloned().unwrap_or(json!("")),
            "namespace": some.pointer("/metadata/namespace").cloned().unwrap_or(json!("default")),
            "operation": operation,
            "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]},
            "object": object.cloned().unwrap_or(Value::Null),
            "oldObject": old.cloned().unwrap_or(Value::Null),
            "dryRun": false,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": if operation == "UPDATE" { "UpdateOptions" } else { "CreateOptions" }}
        }
    })
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

/// A Deployment with the given containers.
pub fn deployment(name: &str, containers: Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "shop", "labels": {"app": name}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}}, "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {"containers": containers}}}
    })
}

/// A container whose liveness and readiness share `/actuator/health`
/// (probe-endpoint-reused and liveness-checks-dependency, both errors).
pub fn shared_endpoint_container(name: &str) -> Value {
    json!({
        "name": name, "image": "registry.example/orders:1.4",
        "ports": [{"containerPort": 8080, "name": "http"}],
        "livenessProbe": {"httpGet": {"path": "/actuator/health", "port": 8080}, "periodSeconds": 10},
        "readinessProbe": {"httpGet": {"path": "/actuator/health", "port": 8080}, "periodSeconds": 5}
    })
}

/// A container with separate, sane probes (no finding under `default`).
pub fn clean_container(name: &str) -> Value {
    json!({
        "name": name, "image": "registry.example/web:2.0",
        "ports": [{"containerPort": 8080, "name": "http"}],
        "livenessProbe": {"httpGet": {"path": "/livez", "port": "http"}, "periodSeconds": 10, "failureThreshold": 3, "timeoutSeconds": 2},
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": "http"}, "periodSeconds": 5}
    })
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
                let (ca, url, uid, body) = (server.ca.pem.clone(), server.url(path), uid.clone(), body.clone());
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
