//! Load benchmark of the real `lifeguard-webhook` binary over TLS with
//! keep-alive, driven by `wrk` (the Debian package): a typical Deployment
//! review on `POST /validate/warn` side by side, in the same run and against
//! the same server, with the admission port's trivial `GET /livez` as the
//! cost floor (same TLS, same HTTP stack, no body, no decision).
//!
//! Run: `cargo bench -p lifeguard-webhook --bench load` (release build).
//! `LIFEGUARD_BENCH_SECONDS` sets each wrk run's duration (default 10),
//! `LIFEGUARD_BENCH_CONNECTIONS` the concurrency (default 64).
//!
//! What it does, in order: generates a CA and a serving certificate
//! (rcgen) in a temp dir; starts the release binary with port 0 and times
//! spawn -> first 200 on `/readyz` (polled every 1 ms; the median of five
//! starts, the last of which takes the load); checks once that the
//! review endpoint answers the body with `allowed: true` and warnings;
//! then runs `wrk -t2 -c64 -d10s --latency` on the floor and on the review,
//! sampling the server's VmRSS (and its VmHWM, reset before each run) and
//! CPU time from /proc. wrk runs on the same cores as the server and
//! competes with it for CPU: that is part of the method, and the floor pays
//! the same price. Exits non-zero when wrk reports socket errors or non-2xx
//! responses, or when the review check fails.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use serde_json::{Value, json};

/// wrk threads: one per core of the 2-core target machine.
const WRK_THREADS: u32 = 2;
/// Server starts timed for the ready time.
const STARTS: usize = 5;
/// How long the server gets to log its addresses and turn ready.
const START_LIMIT: Duration = Duration::from_secs(10);
/// RSS sampling period during a wrk run.
const SAMPLE_EVERY: Duration = Duration::from_millis(10);
/// Linux USER_HZ, the unit of utime/stime in /proc/PID/stat.
const CLOCK_TICKS_PER_SECOND: f64 = 100.0;
const MIB: f64 = 1024.0 * 1024.0;

type Failure = Box<dyn std::error::Error>;

/// The Deployment a typical review carries: what `kubectl apply` of a Helm
/// chart's Deployment sends (labels, annotations including the
/// last-applied configuration, managedFields, two containers with ports,
/// env, resources and probes). The app container's liveness and readiness
/// probes share one endpoint, so the review has findings, as real ones do.
fn deployment() -> Value {
    let app = json!({
        "name": "orders",
        "image": "registry.example.com/shop/orders:1.14.2",
        "imagePullPolicy": "IfNotPresent",
        "args": ["--port=8080", "--metrics-port=9090", "--log-level=info"],
        "ports": [
            {"name": "http", "containerPort": 8080, "protocol": "TCP"},
            {"name": "metrics", "containerPort": 9090, "protocol": "TCP"}
        ],
        "env": [
            {"name": "SPRING_PROFILES_ACTIVE", "value": "production"},
            {"name": "SERVER_SHUTDOWN", "value": "graceful"},
            {"name": "DB_HOST", "value": "orders-db.shop.svc.cluster.local"},
            {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "orders-db", "key": "password"}}},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "JAVA_TOOL_OPTIONS", "value": "-XX:MaxRAMPercentage=75 -XX:+ExitOnOutOfMemoryError"}
        ],
        "resources": {"requests": {"cpu": "500m", "memory": "768Mi"}, "limits": {"memory": "1Gi"}},
        "livenessProbe": {
            "httpGet": {"path": "/actuator/health", "port": "http", "scheme": "HTTP"},
            "initialDelaySeconds": 30, "periodSeconds": 10, "timeoutSeconds": 2,
            "successThreshold": 1, "failureThreshold": 3
        },
        "readinessProbe": {
            "httpGet": {"path": "/actuator/health", "port": "http", "scheme": "HTTP"},
            "periodSeconds": 5, "timeoutSeconds": 2, "successThreshold": 1, "failureThreshold": 3
        },
        "lifecycle": {"preStop": {"sleep": {"seconds": 10}}},
        "volumeMounts": [{"name": "config", "mountPath": "/etc/orders", "readOnly": true}],
        "securityContext": {"runAsNonRoot": true, "readOnlyRootFilesystem": true, "allowPrivilegeEscalation": false},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File"
    });
    let sidecar = json!({
        "name": "envoy",
        "image": "envoyproxy/envoy:v1.31.2",
        "imagePullPolicy": "IfNotPresent",
        "args": ["-c", "/etc/envoy/envoy.yaml", "--drain-time-s", "15"],
        "ports": [{"name": "admin", "containerPort": 9901, "protocol": "TCP"}],
        "env": [{"name": "ENVOY_UID", "value": "0"}],
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
        "livenessProbe": {
            "httpGet": {"path": "/server_info", "port": "admin"},
            "periodSeconds": 10, "timeoutSeconds": 2, "failureThreshold": 3
        },
        "readinessProbe": {"httpGet": {"path": "/ready", "port": "admin"}, "periodSeconds": 5, "timeoutSeconds": 2},
        "volumeMounts": [{"name": "envoy", "mountPath": "/etc/envoy", "readOnly": true}],
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File"
    });
    let labels = json!({
        "app.kubernetes.io/name": "orders",
        "app.kubernetes.io/instance": "orders",
        "app.kubernetes.io/version": "1.14.2",
        "app.kubernetes.io/part-of": "shop",
        "app.kubernetes.io/managed-by": "Helm",
        "helm.sh/chart": "orders-3.2.0"
    });
    let selector = json!({"app.kubernetes.io/name": "orders", "app.kubernetes.io/instance": "orders"});
    let spec = json!({
        "replicas": 3,
        "revisionHistoryLimit": 10,
        "progressDeadlineSeconds": 600,
        "selector": {"matchLabels": selector},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
        "template": {
            "metadata": {
                "labels": selector,
                "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9090"}
            },
            "spec": {
                "serviceAccountName": "orders",
                "terminationGracePeriodSeconds": 45,
                "dnsPolicy": "ClusterFirst",
                "restartPolicy": "Always",
                "schedulerName": "default-scheduler",
                "securityContext": {"fsGroup": 1000},
                "containers": [app, sidecar],
                "volumes": [
                    {"name": "config", "configMap": {"name": "orders", "defaultMode": 420}},
                    {"name": "envoy", "configMap": {"name": "orders-envoy", "defaultMode": 420}}
                ]
            }
        }
    });
    let last_applied = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "orders", "namespace": "shop", "labels": labels},
        "spec": spec
    });
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "orders",
            "namespace": "shop",
            "uid": "7f6c2a55-7a43-4c38-9d1e-3b0f6e2f8a11",
            "generation": 1,
            "creationTimestamp": "2026-11-30T09:12:44Z",
            "labels": labels,
            "annotations": {
                "meta.helm.sh/release-name": "orders",
                "meta.helm.sh/release-namespace": "shop",
                "kubectl.kubernetes.io/last-applied-configuration": last_applied.to_string()
            },
            "managedFields": [{
                "manager": "kubectl-client-side-apply",
                "operation": "Update",
                "apiVersion": "apps/v1",
                "time": "2026-11-30T09:12:44Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}}, "f:labels": {".": {}}}, "f:spec": {"f:replicas": {}, "f:selector": {}, "f:template": {"f:spec": {"f:containers": {}}}}}
            }]
        },
        "spec": spec
    })
}

/// A CREATE AdmissionReview for [`deployment`], as the API server sends it.
fn review_body() -> Value {
    let object = deployment();
    let kind = json!({"group": "apps", "version": "v1", "kind": "Deployment"});
    let resource = json!({"group": "apps", "version": "v1", "resource": "deployments"});
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "0f3e5c1a-9b2d-4e61-8a77-52c0d4b1e9f3",
            "kind": kind, "resource": resource, "requestKind": kind, "requestResource": resource,
            "name": "orders", "namespace": "shop", "operation": "CREATE",
            "userInfo": {"username": "system:serviceaccount:argocd:argocd-application-controller",
                         "uid": "2b9d1c4e-5f6a-4b7c-8d9e-0a1b2c3d4e5f",
                         "groups": ["system:serviceaccounts", "system:serviceaccounts:argocd", "system:authenticated"]},
            "object": object,
            "oldObject": null,
            "dryRun": false,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions", "fieldManager": "argocd-controller"}
        }
    })
}

/// A CA and a serving pair for 127.0.0.1: (CA PEM, cert PEM, key PEM).
fn certificates() -> Result<(String, String, String), Failure> {
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, "lifeguard bench CA");
    let ca = CertifiedIssuer::self_signed(params, KeyPair::generate()?)?;
    let mut params = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])?;
    params.distinguished_name.push(DnType::CommonName, "lifeguard-webhook bench");
    let key = KeyPair::generate()?;
    let cert = params.signed_by(&key, &ca)?;
    Ok((ca.pem(), cert.pem(), key.serialize_pem()))
}

/// The wrk script: the request (a POST with the body file, or the default
/// GET) and a `done` hook printing one machine-readable line.
fn wrk_script(body: Option<&Path>) -> String {
    let request = match body {
        Some(path) => format!(
            "local file = assert(io.open([==[{}]==], \"rb\"))\nwrk.method = \"POST\"\nwrk.body = \
             file:read(\"*a\")\nfile:close()\nwrk.headers[\"Content-Type\"] = \"application/json\"\n",
            path.display()
        ),
        None => String::new(),
    };
    format!(
        r#"-- generated by webhook/benches/load.rs
{request}
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "LIFEGUARD_WRK requests=%d duration_us=%d bytes=%d p50_us=%d p90_us=%d p99_us=%d max_us=%d connect=%d read=%d write=%d status=%d timeout=%d\n",
    summary.requests, summary.duration, summary.bytes,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
end
"#
    )
}

/// The server: the child and the addresses from its "listening" log line.
struct Server {
    child: Child,
    admission: SocketAddr,
    health: SocketAddr,
    log_lines: Arc<AtomicU64>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the binary; returns it and the time from spawn to the first 200
/// on `/readyz`.
fn start(dir: &Path) -> Result<(Server, Duration), Failure> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lifeguard-webhook"));
    cmd.args(["--listen", "127.0.0.1:0", "--health-listen", "127.0.0.1:0", "--log-format", "json"])
        .arg("--tls-cert")
        .arg(dir.join("tls.crt"))
        .arg("--tls-key")
        .arg(dir.join("tls.key"))
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let spawned = Instant::now();
    let mut child = cmd.spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let (tx, rx) = mpsc::channel::<Value>();
    let log_lines = Arc::new(AtomicU64::new(0));
    let count = log_lines.clone();
    // Reads the log for the whole run (one line per review: the pipe must
    // not fill up), parsing lines only until the addresses are known.
    std::thread::spawn(move || {
        let mut tx = Some(tx);
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            count.fetch_add(1, Ordering::Relaxed);
            if tx.is_some() && line.contains("\"listening\"") {
                let value: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
                if value["message"] == "listening" {
                    let _ = tx.take().map(|tx| tx.send(value));
                }
            }
        }
    });
    let listening = match rx.recv_timeout(START_LIMIT) {
        Ok(line) => line,
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("no \"listening\" log line within {START_LIMIT:?}").into());
        }
    };
    let addr = |k: &str| -> Result<SocketAddr, Failure> {
        Ok(listening[k].as_str().ok_or_else(|| format!("no {k} address in the log"))?.parse()?)
    };
    let mut server = Server { admission: addr("admission")?, health: addr("health")?, child, log_lines };
    loop {
        if http_status(server.health, "/readyz") == Some(200) {
            return Ok((server, spawned.elapsed()));
        }
        if spawned.elapsed() > START_LIMIT {
            return Err(format!("/readyz not 200 within {START_LIMIT:?}").into());
        }
        if let Ok(Some(status)) = server.child.try_wait() {
            return Err(format!("the server exited during startup: {status}").into());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// `GET path` over plain HTTP/1.1: the status, if one came back.
fn http_status(addr: SocketAddr, path: &str) -> Option<u16> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_millis(200)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(1))).ok()?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response.split(' ').nth(1)?.parse().ok()
}

/// POSTs `body` to `path` over TLS (verifying the certificate against the
/// bench CA, ALPN http/1.1): (status, response body).
fn https_post(addr: SocketAddr, ca_pem: &str, path: &str, body: &[u8]) -> Result<(u16, Vec<u8>), Failure> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, ServerName};
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(cert?)?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let connection = rustls::ClientConnection::new(Arc::new(config), ServerName::try_from("127.0.0.1")?.to_owned())?;
    let tcp = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    tcp.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut tls = rustls::StreamOwned::new(connection, tcp);
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    );
    tls.write_all(head.as_bytes())?;
    tls.write_all(body)?;
    tls.flush()?;
    let mut response = Vec::new();
    // The server may close without close_notify: keep what arrived.
    let _ = tls.read_to_end(&mut response);
    let split = response.windows(4).position(|w| w == b"\r\n\r\n").ok_or("no HTTP response head")?;
    let head = String::from_utf8_lossy(&response[..split]).to_ascii_lowercase();
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).ok_or("no status")?;
    if head.contains("transfer-encoding: chunked") {
        return Err("chunked response: not supported by this check".into());
    }
    Ok((status, response[split + 4..].to_vec()))
}

/// Checks that the review endpoint does the real work: an AdmissionReview
/// for our uid, allowed, with warnings. Returns the warnings and the
/// response body's size.
fn check_review(server: &Server, ca_pem: &str, body: &[u8], uid: &str) -> Result<(Vec<String>, usize), Failure> {
    let (status, response) = https_post(server.admission, ca_pem, "/validate/warn", body)?;
    let text = String::from_utf8_lossy(&response);
    if status != 200 {
        return Err(format!("/validate/warn answered {status}: {text}").into());
    }
    let review: Value = serde_json::from_slice(&response)?;
    let answer = &review["response"];
    if review["kind"] != "AdmissionReview" || answer["uid"] != uid {
        return Err(format!("not an AdmissionReview for uid {uid}: {text}").into());
    }
    if answer["allowed"] != true {
        return Err(format!("the review was not allowed: {text}").into());
    }
    let warnings: Vec<String> =
        answer["warnings"].as_array().into_iter().flatten().filter_map(|w| w.as_str().map(str::to_owned)).collect();
    if warnings.is_empty() {
        return Err(format!("the review has no warnings, so it measures no findings: {text}").into());
    }
    Ok((warnings, response.len()))
}

/// `Field: N kB` from /proc/PID/status, in bytes.
fn status_field(pid: u32, name: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(name))?;
    let value: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(if line.ends_with("kB") { value * 1024 } else { value })
}

/// User + system CPU time of the whole process, in seconds.
fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which is in parentheses: utime is the
    // 14th field of the line, the 12th after ") ".
    let rest = stat.rsplit_once(") ")?.1;
    let mut fields = rest.split_whitespace().skip(11);
    let utime: f64 = fields.next()?.parse().ok()?;
    let stime: f64 = fields.next()?.parse().ok()?;
    Some((utime + stime) / CLOCK_TICKS_PER_SECOND)
}

/// Resets the process's VmHWM to its current RSS (Linux >= 4.0).
fn reset_peak(pid: u32) -> bool {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok()
}

/// What one wrk run reported, plus what was sampled meanwhile.
#[derive(Debug, Default)]
struct Run {
    requests: u64,
    duration_us: u64,
    p50_us: u64,
    p90_us: u64,
    p99_us: u64,
    max_us: u64,
    socket_errors: u64,
    status_errors: u64,
    peak_rss: u64,
    hwm: Option<u64>,
    peak_threads: u64,
    cpu_seconds: f64,
    output: String,
}

impl Run {
    fn per_second(&self) -> f64 {
        self.requests as f64 / (self.duration_us as f64 / 1e6)
    }

    fn cpu_us_per_request(&self) -> f64 {
        self.cpu_seconds * 1e6 / self.requests.max(1) as f64
    }

    fn parse(output: &str) -> Option<Run> {
        let line = output.lines().find_map(|l| l.strip_prefix("LIFEGUARD_WRK "))?;
        let get = |key: &str| {
            line.split_whitespace().find_map(|kv| kv.strip_prefix(key)?.strip_prefix('=')?.parse::<u64>().ok())
        };
        Some(Run {
            requests: get("requests")?,
            duration_us: get("duration_us")?.max(1),
            p50_us: get("p50_us")?,
            p90_us: get("p90_us")?,
            p99_us: get("p99_us")?,
            max_us: get("max_us")?,
            socket_errors: get("connect")? + get("read")? + get("write")? + get("timeout")?,
            status_errors: get("status")?,
            output: output.to_owned(),
            ..Run::default()
        })
    }
}

/// Runs wrk on `url` with `script`, sampling the server meanwhile.
fn run_wrk(pid: u32, url: &str, script: &Path, connections: u32, seconds: u64) -> Result<Run, Failure> {
    let hwm_reset = reset_peak(pid);
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let (mut peak, mut threads) = (0, 0);
            while !stop.load(Ordering::Relaxed) {
                peak = peak.max(status_field(pid, "VmRSS:").unwrap_or(0));
                threads = threads.max(status_field(pid, "Threads:").unwrap_or(0));
                std::thread::sleep(SAMPLE_EVERY);
            }
            (peak, threads)
        })
    };
    let cpu_before = cpu_seconds(pid).unwrap_or(0.0);
    let output = Command::new("wrk")
        .arg(format!("-t{WRK_THREADS}"))
        .arg(format!("-c{connections}"))
        .arg(format!("-d{seconds}s"))
        .arg("--latency")
        .arg("-s")
        .arg(script)
        .arg(url)
        .stdin(Stdio::null())
        .output();
    let cpu_after = cpu_seconds(pid).unwrap_or(0.0);
    stop.store(true, Ordering::Relaxed);
    let (peak_rss, peak_threads) = sampler.join().map_err(|_| "the RSS sampler panicked")?;
    let output = output.map_err(|e| format!("cannot run wrk: {e}"))?;
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    if !output.status.success() {
        return Err(format!("wrk failed ({}):\n{text}", output.status).into());
    }
    let mut run = Run::parse(&text).ok_or_else(|| format!("no LIFEGUARD_WRK line in wrk's output:\n{text}"))?;
    run.peak_rss = peak_rss;
    run.hwm = if hwm_reset { status_field(pid, "VmHWM:") } else { None };
    run.peak_threads = peak_threads;
    run.cpu_seconds = cpu_after - cpu_before;
    Ok(run)
}

fn env_number(name: &str, default: u64) -> Result<u64, Failure> {
    match std::env::var(name) {
        Err(_) => Ok(default),
        Ok(v) => v
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("{name}={v:?}: not a positive integer").into()),
    }
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "MISSED" }
}

fn bench() -> Result<bool, Failure> {
    let seconds = env_number("LIFEGUARD_BENCH_SECONDS", 10)?;
    let connections = u32::try_from(env_number("LIFEGUARD_BENCH_CONNECTIONS", 64)?)?;
    let wrk_version = Command::new("wrk").arg("--version").output().map_err(|e| {
        format!("wrk is not installed ({e}): `apt-get install -y wrk` (Debian), or see BENCHMARKS.md for oha")
    })?;
    let wrk_version = String::from_utf8_lossy(&wrk_version.stdout);
    let wrk_version = wrk_version.lines().next().unwrap_or("wrk").split(" Copyright").next().unwrap_or("wrk");

    let dir = tempfile::tempdir()?;
    let (ca_pem, cert_pem, key_pem) = certificates()?;
    std::fs::write(dir.path().join("tls.crt"), cert_pem)?;
    std::fs::write(dir.path().join("tls.key"), key_pem)?;
    let review = review_body();
    let uid = review["request"]["uid"].as_str().unwrap_or_default().to_owned();
    let body = serde_json::to_vec(&review)?;
    let body_path = dir.path().join("review.json");
    std::fs::write(&body_path, &body)?;
    let floor_script = dir.path().join("floor.lua");
    let review_script = dir.path().join("review.lua");
    std::fs::write(&floor_script, wrk_script(None))?;
    std::fs::write(&review_script, wrk_script(Some(&body_path)))?;

    // Ready time: the median of STARTS starts (the last one serves the load).
    let mut readies = Vec::with_capacity(STARTS);
    let mut started = None;
    for _ in 0..STARTS {
        drop(started.take());
        let (server, ready) = start(dir.path())?;
        readies.push(ready);
        started = Some(server);
    }
    let mut server = started.ok_or("no server")?;
    readies.sort();
    let (ready, ready_max) = (readies[STARTS / 2], readies[STARTS - 1]);
    let pid = server.child.id();
    let idle_rss = status_field(pid, "VmRSS:").unwrap_or(0);
    let (warnings, answer_len) = check_review(&server, &ca_pem, &body, &uid)?;

    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    println!("lifeguard-webhook under load: {wrk_version}, HTTPS/1.1 with keep-alive (TLS 1.3, no ALPN from wrk)");
    println!(
        "wrk -t{WRK_THREADS} -c{connections} -d{seconds}s --latency, one run per endpoint against the same server; \
         {cores} cores, shared by wrk and the server"
    );
    println!(
        "review: POST /validate/warn, a {:.1} KiB Deployment AdmissionReview (CREATE, 2 containers) answered \
         allowed with {} warnings ({:.1} KiB):",
        body.len() as f64 / 1024.0,
        warnings.len(),
        answer_len as f64 / 1024.0
    );
    for w in &warnings {
        let short: String = w.chars().take(110).collect();
        println!("  - {short}{}", if short.len() < w.len() { "..." } else { "" });
    }
    println!(
        "ready: {:.1} ms from spawn to the first 200 on /readyz (median of {STARTS} starts, max {:.1} ms); \
         idle RSS {:.1} MiB",
        ready.as_secs_f64() * 1e3,
        ready_max.as_secs_f64() * 1e3,
        idle_rss as f64 / MIB
    );

    let base = format!("https://127.0.0.1:{}", server.admission.port());
    let mut runs = Vec::new();
    for (name, path, script) in
        [("GET /livez (floor)", "/livez", &floor_script), ("POST /validate/warn", "/validate/warn", &review_script)]
    {
        let lines_before = server.log_lines.load(Ordering::Relaxed);
        let run = run_wrk(pid, &format!("{base}{path}"), script, connections, seconds)?;
        let logged = server.log_lines.load(Ordering::Relaxed) - lines_before;
        eprintln!(
            "--- wrk {path}\n{}--- {logged} server log lines during the run",
            run.output.trim_end_matches('\n').to_owned() + "\n"
        );
        runs.push((name, run));
    }
    if let Ok(Some(status)) = server.child.try_wait() {
        return Err(format!("the server died under load: {status}").into());
    }
    drop(server);

    println!();
    println!(
        "{:<22} {:>10} {:>9} {:>9} {:>9} {:>9} {:>14} {:>10} {:>8} {:>11} {:>7}",
        "endpoint",
        "requests/s",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "max ms",
        "peak RSS MiB",
        "HWM MiB",
        "threads",
        "CPU us/req",
        "errors"
    );
    for (name, r) in &runs {
        println!(
            "{name:<22} {:>10.0} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>14.1} {:>10} {:>8} {:>11.0} {:>7}",
            r.per_second(),
            r.p50_us as f64 / 1e3,
            r.p90_us as f64 / 1e3,
            r.p99_us as f64 / 1e3,
            r.max_us as f64 / 1e3,
            r.peak_rss as f64 / MIB,
            r.hwm.map_or("n/a".to_owned(), |h| format!("{:.1}", h as f64 / MIB)),
            r.peak_threads,
            r.cpu_us_per_request(),
            r.socket_errors + r.status_errors,
        );
    }
    let (floor, review) = (&runs[0].1, &runs[1].1);
    let share = review.per_second() / floor.per_second() * 100.0;
    let peak = review.peak_rss.max(review.hwm.unwrap_or(0));
    println!("review throughput = {share:.1}% of floor");
    println!(
        "ready time = {:.1} ms (median of {STARTS} starts; max {:.1} ms)",
        ready.as_secs_f64() * 1e3,
        ready_max.as_secs_f64() * 1e3
    );
    println!("(CPU us/req: server CPU time per request, user + system; wrk's own CPU is not in it)");
    println!();
    println!("targets (2 cores):");
    println!("  review p99 {:.2} ms < 5 ms: {}", review.p99_us as f64 / 1e3, verdict(review.p99_us < 5_000));
    println!("  review throughput {share:.1}% >= 70% of floor: {}", verdict(share >= 70.0));
    println!("  peak RSS under load {:.1} MiB < 50 MiB: {}", peak as f64 / MIB, verdict(peak < 50 * 1024 * 1024));
    println!("  ready {:.1} ms < 100 ms: {}", ready.as_secs_f64() * 1e3, verdict(ready < Duration::from_millis(100)));
    let mut ok = true;
    for (name, r) in &runs {
        if r.socket_errors > 0 || r.status_errors > 0 {
            eprintln!(
                "error: {name}: wrk reported {} socket errors and {} non-2xx responses",
                r.socket_errors, r.status_errors
            );
            ok = false;
        }
        if r.requests == 0 {
            eprintln!("error: {name}: no request completed");
            ok = false;
        }
    }
    Ok(ok)
}

fn main() -> ExitCode {
    // `cargo bench` passes `--bench`; this bench takes no arguments.
    match bench() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
