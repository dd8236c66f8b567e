//! The real `lifeguard-webhook` binary, as the webhook's tests, the cluster
//! tests and the load bench run it: started on 127.0.0.1 with port 0 (its
//! addresses read from its JSON log), serving TLS from a pair written the
//! way a Secret volume or plain files hold it, waited for until `/readyz`
//! answers 200, and stopped by its process id.
//!
//! The files follow the chart's mounts: `tls/` holds the serving pair,
//! `policy/policy.yaml` the policy.
//!
//! Over 400 lines: one harness for the webhook's tests, the cluster tests and
//! the load bench: `Start`'s fourteen options, `try_start` (about 120 lines:
//! files, flags, log reader, readiness wait) and the twenty-odd methods tests
//! call on a running `Server` (logs, metrics, signals, rotation).

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;

use crate::cluster::http;
use crate::cluster::pki::{Ca, Pair, connect_tls};
use crate::cluster::process::{wait_for, watchdog};
use crate::cluster::webhook::workspace_binary;

/// How long a server gets to log its addresses, and then to turn ready.
const START_LIMIT: Duration = Duration::from_secs(20);
/// How long `wait_exit` waits, after the exit, for the last log lines.
const EXIT_LOGS_LIMIT: Duration = Duration::from_secs(5);

/// How to start a server. [`Start::default`] is the webhook tests' server:
/// TLS from a fresh CA in plain files, the default policy, short timings.
pub struct Start {
    /// The binary (default: the workspace's, see [`workspace_binary`]).
    pub binary: Option<PathBuf>,
    /// Extra flags, after the harness's own.
    pub args: Vec<String>,
    /// Environment variables set on the process.
    pub env: Vec<(String, String)>,
    /// A policy file's text (written as `policy/policy.yaml` and passed as `--policy`).
    pub policy: Option<String>,
    /// The serving pair (default: one from a fresh CA, [`Server::ca`]).
    pub pair: Option<Pair>,
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
    /// Keep every log line for [`Server::logs`]; else only those up to the
    /// "listening" line are kept and the rest counted ([`Server::log_lines`]),
    /// as a bench that sends a million reviews needs.
    pub keep_logs: bool,
    /// A 1 s drain, a 3 s shutdown budget and a 0.2 s reload interval, so
    /// that a test does not wait out the production timings; off to run
    /// with the chart's (set in its env) or the binary's defaults.
    pub quick: bool,
    /// `--listen` (default `127.0.0.1:0`).
    pub listen: Option<String>,
    /// Leave `--health-listen` out, so the server picks its default.
    pub default_health_listen: bool,
}

impl Default for Start {
    fn default() -> Self {
        Start {
            binary: None,
            args: Vec::new(),
            env: Vec::new(),
            policy: None,
            pair: None,
            secret_volume: false,
            insecure: false,
            wait_ready: true,
            write_certs: true,
            stall_logs: false,
            keep_logs: true,
            quick: true,
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

/// The server's stdout, read line by line for its whole life (it logs a
/// line per review: the pipe must not fill up).
#[derive(Default)]
struct Logs {
    lines: Mutex<Vec<Value>>,
    added: Condvar,
    count: AtomicU64,
    /// The reader reached the end of the process's stdout.
    ended: AtomicBool,
}

impl Logs {
    /// Waits at most `limit` for `found` to give something, asking it again
    /// each time the reader adds a line or reaches the end.
    fn wait<T>(&self, limit: Duration, mut found: impl FnMut(&[Value]) -> Option<T>) -> Option<T> {
        let start = Instant::now();
        let mut lines = self.lines.lock().expect("logs");
        loop {
            if let Some(it) = found(&lines) {
                return Some(it);
            }
            let left = limit.checked_sub(start.elapsed())?;
            lines = self.added.wait_timeout(lines, left).expect("logs").0;
        }
    }
}

/// A connection held open to the webhook; closed when dropped.
pub struct Held {
    _stream: Box<rustls::StreamOwned<rustls::ClientConnection, std::net::TcpStream>>,
}

/// A running `lifeguard-webhook`; killed when dropped.
pub struct Server {
    child: Option<Child>,
    // Kills it when this process ends without dropping it (a `static`).
    watchdog: Option<(Child, ChildStdin)>,
    /// Admission address (HTTPS unless started insecure).
    pub admission: SocketAddr,
    /// Health and metrics address (plain HTTP).
    pub health: SocketAddr,
    /// From spawn to the first 200 on `/readyz`, when started waiting for it.
    pub ready_after: Option<Duration>,
    /// Its directory: `tls/` and `policy/policy.yaml`.
    pub dir: tempfile::TempDir,
    ca: Option<Ca>,
    logs: Arc<Logs>,
    env: Vec<(String, String)>,
}

impl Server {
    /// Starts a server with `start`; fails the test if it does not come up.
    pub fn start(start: Start) -> Server {
        Server::try_start(start).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Starts a server with `start`, or says why it did not come up.
    pub fn try_start(start: Start) -> Result<Server, String> {
        let dir = tempfile::tempdir().map_err(|e| format!("a temporary directory: {e}"))?;
        let (tls, policy) = (dir.path().join("tls"), dir.path().join("policy"));
        for d in [&tls, &policy] {
            std::fs::create_dir_all(d).map_err(|e| format!("create {}: {e}", d.display()))?;
        }
        let binary = match start.binary {
            Some(binary) => binary,
            None => {
                workspace_binary("lifeguard-webhook", "lifeguard-webhook").ok_or("lifeguard-webhook is not built")?
            }
        };
        let mut cmd = Command::new(&binary);
        cmd.args(["--listen", start.listen.as_deref().unwrap_or("127.0.0.1:0"), "--log-format", "json"]);
        if !start.default_health_listen {
            cmd.args(["--health-listen", "127.0.0.1:0"]);
        }
        if start.quick {
            cmd.args(["--drain-seconds", "1", "--shutdown-budget-seconds", "3", "--reload-interval-seconds", "0.2"]);
        }
        let mut ca = None;
        if start.insecure {
            cmd.arg("--insecure-http");
        } else {
            let pair = start.pair.unwrap_or_else(|| {
                let own = Ca::new("lifeguard test CA");
                let pair = own.serving("lifeguard-webhook generation 1", &[]);
                ca = Some(own);
                pair
            });
            if start.write_certs && start.secret_volume {
                write_secret_volume(&tls, 1, &pair.cert, &pair.key);
            } else if start.write_certs {
                write(&tls.join("tls.crt"), &pair.cert)?;
                write(&tls.join("tls.key"), &pair.key)?;
            }
            cmd.arg("--tls-cert").arg(tls.join("tls.crt")).arg("--tls-key").arg(tls.join("tls.key"));
        }
        if let Some(text) = &start.policy {
            let path = policy.join("policy.yaml");
            write(&path, text)?;
            cmd.arg("--policy").arg(path);
        }
        // The server reads every flag from a LIFEGUARD_* variable too: only
        // the test's own settings reach it, not the shell's.
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("LIFEGUARD_") {
                cmd.env_remove(name);
            }
        }
        cmd.envs(start.env.iter().map(|(k, v)| (k, v))).env_remove("RUST_LOG");
        cmd.args(&start.args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::inherit());
        let spawned = Instant::now();
        let mut child = cmd.spawn().map_err(|e| format!("start {}: {e}", binary.display()))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let logs: Arc<Logs> = Arc::default();
        let sink = logs.clone();
        let (keep, stall) = (start.keep_logs, start.stall_logs);
        std::thread::spawn(move || {
            let mut listening = false;
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                sink.count.fetch_add(1, Ordering::Relaxed);
                if listening && !keep {
                    continue;
                }
                let value: Value = serde_json::from_str(&line).unwrap_or(Value::String(line));
                listening |= value["message"] == "listening";
                sink.lines.lock().expect("logs").push(value);
                sink.added.notify_all();
                if stall && listening {
                    // Holds the pipe open, unread, until the test process ends.
                    loop {
                        std::thread::park();
                    }
                }
            }
            // Under the lock, so a waiter cannot miss the wakeup.
            let _lines = sink.lines.lock().expect("logs");
            sink.ended.store(true, Ordering::Release);
            sink.added.notify_all();
        });
        let unset: SocketAddr = "0.0.0.0:0".parse().map_err(|e| format!("{e}"))?;
        let mut server = Server {
            child: Some(child),
            watchdog: None,
            admission: unset,
            health: unset,
            ready_after: None,
            dir,
            ca,
            logs,
            env: start.env,
        };
        let listening = server
            .find_log(|l| l["message"] == "listening", START_LIMIT)
            .ok_or_else(|| format!("no \"listening\" log line within {START_LIMIT:?}; logs: {:#?}", server.logs()))?;
        let address = |key: &str| {
            listening[key].as_str().and_then(|a| a.parse().ok()).ok_or(format!("no {key} address in {listening}"))
        };
        server.admission = address("admission")?;
        server.health = address("health")?;
        if start.wait_ready {
            // Polled every millisecond: the load bench reports the time to ready.
            loop {
                if server.health_get("/readyz").0 == 200 {
                    server.ready_after = Some(spawned.elapsed());
                    break;
                }
                if let Some(status) = server.exited() {
                    return Err(format!("the server exited during startup: {status}"));
                }
                if spawned.elapsed() > START_LIMIT {
                    return Err(format!("/readyz not 200 within {START_LIMIT:?}"));
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        // After the ready time is taken: starting the watchdog's shell is not the server's start.
        server.watchdog = watchdog(server.pid());
        Ok(server)
    }

    /// The CA of its serving pair, made by the harness.
    pub fn ca(&self) -> &Ca {
        self.ca.as_ref().expect("a server started with the harness's own pair (not insecure, no pair given)")
    }

    /// The directory of its serving pair (`tls.crt`, `tls.key`).
    pub fn tls_dir(&self) -> PathBuf {
        self.dir.path().join("tls")
    }

    /// Its policy file, when started with one.
    pub fn policy_path(&self) -> PathBuf {
        self.dir.path().join("policy/policy.yaml")
    }

    /// Replaces the serving pair the way a Secret volume's update does.
    pub fn rotate(&self, generation: u32, pair: &Pair) {
        write_secret_volume(&self.tls_dir(), generation, &pair.cert, &pair.key);
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

    /// Every log line kept so far (see [`Start::keep_logs`]).
    pub fn logs(&self) -> Vec<Value> {
        self.logs.lines.lock().expect("logs").clone()
    }

    /// How many lines it has logged so far.
    pub fn log_lines(&self) -> u64 {
        self.logs.count.load(Ordering::Relaxed)
    }

    /// The `review` log lines so far.
    pub fn reviews(&self) -> Vec<Value> {
        self.logs().into_iter().filter(|l| l["message"] == "review").collect()
    }

    /// Waits (bounded) for a log line matching `pred`.
    pub fn wait_log(&self, pred: impl Fn(&Value) -> bool, limit: Duration) -> Value {
        self.find_log(pred, limit)
            .unwrap_or_else(|| panic!("no such log line within {limit:?}; logs: {:#?}", self.logs()))
    }

    /// The first log line matching `pred`, waiting for it at most `limit`.
    fn find_log(&self, pred: impl Fn(&Value) -> bool, limit: Duration) -> Option<Value> {
        self.logs.wait(limit, |lines| lines.iter().find(|l| pred(l)).cloned())
    }

    /// `GET` on the health port: (status, body), status 0 and why when
    /// there was no response.
    pub fn health_get(&self, path: &str) -> (u16, String) {
        match http::get(self.health, path, Duration::from_secs(5)) {
            Ok(response) => (response.status, response.body),
            Err(e) => (0, e),
        }
    }

    /// Waits (bounded) until /readyz answers 200.
    pub fn wait_ready(&self, limit: Duration) {
        wait_for("the webhook's /readyz", limit, || match self.health_get("/readyz") {
            (200, _) => Ok(()),
            (status, body) => Err(format!("{status} {body}")),
        });
    }

    /// The URL of `path` on the admission port (`""`: the base the
    /// webhook configurations' URLs start with).
    pub fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.admission.port())
    }

    /// The sum of the series of metric `name` whose labels include every
    /// one of `labels` (`verdict="skipped"`, say); 0 when there is none.
    pub fn metric(&self, name: &str, labels: &[&str]) -> f64 {
        let (_, text) = self.health_get("/metrics");
        text.lines()
            .filter(|l| l.strip_prefix(name).is_some_and(|rest| rest.starts_with(['{', ' '])))
            .filter(|l| labels.iter().all(|label| l.contains(label)))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    }

    /// A whole-seconds variable of the environment it was started with.
    pub fn env_seconds(&self, name: &str) -> u64 {
        self.env
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in the webhook's environment"))
    }

    /// `GET /livez` on the admission port over a TLS connection that trusts
    /// `ca_pem` alone: (status, body), or why the handshake failed.
    pub fn livez_trusting(&self, ca_pem: &str) -> Result<(u16, String), String> {
        use std::io::{Read as _, Write as _};
        let mut tls = connect_tls(self.admission, ca_pem).map_err(|e| e.to_string())?;
        let request = format!("GET /livez HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", self.admission);
        tls.write_all(request.as_bytes()).map_err(|e| e.to_string())?;
        let mut response = String::new();
        // The server closes without a TLS close_notify at times; what was read counts.
        let _ = tls.read_to_string(&mut response);
        match http::parse(&response) {
            Some(answer) => Ok((answer.status, answer.body)),
            None => Err(format!("no response: {response:?}")),
        }
    }

    /// A keep-alive TLS connection to the admission port that trusts
    /// `ca_pem`, after one `GET /livez` answered 200 on it: held open (and
    /// idle) until dropped, as a greedy client holds it. `Err` when the
    /// webhook refused or closed it.
    pub fn hold_connection(&self, ca_pem: &str) -> Result<Held, String> {
        use std::io::{Read as _, Write as _};
        let mut tls = connect_tls(self.admission, ca_pem).map_err(|e| e.to_string())?;
        let request = format!("GET /livez HTTP/1.1\r\nHost: {}\r\n\r\n", self.admission);
        tls.write_all(request.as_bytes()).map_err(|e| e.to_string())?;
        // `/livez` answers a short fixed body: the head and body arrive together.
        let mut response = Vec::new();
        let mut buf = [0u8; 1024];
        while !String::from_utf8_lossy(&response).contains("\r\n\r\n") {
            match tls.read(&mut buf) {
                Ok(0) => return Err("closed by the webhook".to_owned()),
                Ok(n) => response.extend_from_slice(&buf[..n]),
                Err(e) => return Err(e.to_string()),
            }
        }
        match http::parse(&String::from_utf8_lossy(&response)) {
            Some(answer) if answer.status == 200 => Ok(Held { _stream: Box::new(tls) }),
            Some(answer) => Err(format!("{} {}", answer.status, answer.body)),
            None => Err(format!("no response: {:?}", String::from_utf8_lossy(&response))),
        }
    }

    /// The process id (0 once it has exited and been reaped).
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(Child::id).unwrap_or_default()
    }

    /// Sends signal `name` (`TERM`, `HUP`) with `kill`.
    pub fn signal(&self, name: &str) {
        let pid = self.pid().to_string();
        let status = Command::new("kill").arg(format!("-{name}")).arg(&pid).status().expect("run kill");
        assert!(status.success(), "kill -{name} {pid}");
    }

    /// Sends SIGTERM, as the kubelet does to begin a pod's shutdown.
    pub fn terminate(&self) {
        self.signal("TERM");
    }

    /// Its exit status, if it has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.as_mut()?.try_wait().ok().flatten()
    }

    /// Waits (bounded) for the process to exit by itself; its status.
    pub fn wait_exit(&mut self, limit: Duration) -> ExitStatus {
        let child = self.child.as_mut().expect("the webhook was started and not killed");
        let status = wait_for("the webhook's exit", limit, || match child.try_wait() {
            Ok(Some(status)) => Ok(status),
            Ok(None) => Err("still running".to_owned()),
            Err(e) => Err(e.to_string()),
        });
        self.child = None;
        // The process has exited but the reader may not have taken its last
        // lines yet: wait (bounded) for the end of its stdout, so `logs()`
        // holds every line it wrote.
        let ended = &self.logs.ended;
        self.logs.wait(EXIT_LOGS_LIMIT, |_| ended.load(Ordering::Acquire).then_some(()));
        status
    }

    /// Sends SIGKILL and reaps it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        self.watchdog = None;
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("write {}: {e}", path.display()))
}

/// Writes `pair` into `dir` as a Secret volume holds it: the data in a
/// timestamped directory, `..data` a symlink to it, and `tls.crt` /
/// `tls.key` symlinks through `..data`; an update swaps `..data` atomically.
pub fn write_secret_volume(dir: &Path, generation: u32, cert: &str, key: &str) {
    let data = dir.join(format!("..2026_12_02_{generation:04}"));
    std::fs::create_dir_all(&data).expect("mkdir");
    std::fs::write(data.join("tls.crt"), cert).expect("write cert");
    std::fs::write(data.join("tls.key"), key).expect("write key");
    let tmp = dir.join("..data_tmp");
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(data.file_name().expect("name"), &tmp).expect("symlink");
    std::fs::rename(&tmp, dir.join("..data")).expect("swap ..data");
    for name in ["tls.crt", "tls.key"] {
        let link = dir.join(name);
        if std::fs::symlink_metadata(&link).is_err() {
            std::os::unix::fs::symlink(format!("..data/{name}"), &link).expect("symlink");
        }
    }
}
