//! The real `lifeguard-webhook` binary, started with the arguments and
//! environment of the chart's own Deployment (paths and listen addresses
//! moved to a directory and ports of the test's), its serving pair from the
//! test CA in a Secret-volume layout, and its policy from the chart's
//! ConfigMap.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use super::chart::Rendered;
use super::pki::{Ca, Pair};
use super::process::{wait_for, watchdog};
use crate::skip;

/// The `lifeguard-webhook` binary beside this test binary's directory
/// (see [`workspace_binary`]).
pub fn binary() -> Option<PathBuf> {
    workspace_binary("lifeguard-webhook", "lifeguard-webhook")
}

/// The workspace's `lifeguard` run with `args` and `input` on stdin, as a
/// user pipes a manifest (or `helm template` output) through it.
pub fn lifeguard_with_input(args: &[&str], input: &str) -> std::process::Output {
    use std::io::Write as _;
    let binary = workspace_binary("lifeguard", "lifeguard").expect("the lifeguard binary");
    let mut child = Command::new(binary)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run lifeguard");
    child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write the input");
    child.wait_with_output().expect("lifeguard")
}

/// Binary `bin` of workspace package `package`, beside this test binary's
/// directory (`cargo test --workspace` builds it); built with `cargo build`
/// when it is missing (a run of this crate's tests alone) or for a
/// benchmark, `None` if that fails.
pub fn workspace_binary(package: &str, bin: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    // target/<profile>/deps/<test> -> target/<profile>/<bin>
    let path = exe.parent()?.parent()?.join(bin);
    // A benchmark (target/release) always builds it, so it measures this tree.
    let release = path.parent().and_then(Path::file_name).is_some_and(|p| p == "release");
    if !path.is_file() || release {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = Command::new(cargo);
        build.args(["build", "-p", package, "--bin", bin]);
        if release {
            build.arg("--release");
        }
        let built = build.status();
        if !built.is_ok_and(|s| s.success()) || !path.is_file() {
            skip(&format!("{} is not built (cargo build -p {package})", path.display()));
            return None;
        }
    }
    Some(path)
}

/// A connection held open to the webhook; closed when dropped.
pub struct Held {
    _stream: Box<rustls::StreamOwned<rustls::ClientConnection, std::net::TcpStream>>,
}

/// A running webhook.
pub struct Webhook {
    child: Option<Child>,
    // Kills it when this process ends without dropping it (a `static`).
    _watchdog: Option<(Child, ChildStdin)>,
    /// Its HTTPS admission address.
    pub admission: SocketAddr,
    /// Its plain-HTTP health and metrics address.
    pub health: SocketAddr,
    /// Its directory: `tls/` (a Secret volume) and `policy/policy.yaml`.
    pub dir: tempfile::TempDir,
    logs: Arc<Mutex<Vec<Value>>>,
    /// The chart's env, as set on the process.
    env: Vec<(String, String)>,
}

/// The chart's webhook container: its args and env, as rendered.
fn container(rendered: &Rendered) -> Value {
    let deployment = rendered.find("Deployment", None).expect("the chart renders a Deployment");
    let containers = deployment["spec"]["template"]["spec"]["containers"].as_array().cloned().unwrap_or_default();
    containers.into_iter().find(|c| c["name"] == "webhook").expect("the chart's Deployment has a webhook container")
}

impl Webhook {
    /// Starts `binary` as `rendered`'s Deployment runs it, serving `pair`;
    /// waits until `/readyz` is 200. `extra` flags go last (they win).
    pub fn start(binary: &Path, rendered: &Rendered, pair: &Pair, extra: &[&str]) -> Webhook {
        let dir = tempfile::tempdir().expect("webhook directory");
        let tls = dir.path().join("tls");
        let policy = dir.path().join("policy");
        std::fs::create_dir_all(&tls).expect("tls directory");
        std::fs::create_dir_all(&policy).expect("policy directory");
        write_secret_volume(&tls, 1, &pair.cert, &pair.key);
        let config_map = rendered
            .objects
            .iter()
            .find(|o| o["kind"] == "ConfigMap" && o["data"]["policy.yaml"].is_string())
            .expect("the chart renders the policy ConfigMap");
        let policy_text = config_map["data"]["policy.yaml"].as_str().unwrap_or_default();
        std::fs::write(policy.join("policy.yaml"), policy_text).expect("write the policy");

        let container = container(rendered);
        let mut command = Command::new(binary);
        for arg in container["args"].as_array().into_iter().flatten().filter_map(Value::as_str) {
            let arg = arg
                .replace("/etc/lifeguard/tls", &tls.to_string_lossy())
                .replace("/etc/lifeguard/policy", &policy.to_string_lossy())
                .replace("0.0.0.0:8443", "127.0.0.1:0")
                .replace("0.0.0.0:8080", "127.0.0.1:0");
            command.arg(arg);
        }
        let mut env = Vec::new();
        for var in container["env"].as_array().into_iter().flatten() {
            if let (Some(name), Some(value)) = (var["name"].as_str(), var["value"].as_str()) {
                command.env(name, value);
                env.push((name.to_owned(), value.to_owned()));
            }
        }
        // Read by the harness line by line; the chart's own is JSON too.
        command.env("LIFEGUARD_LOG_FORMAT", "json").env_remove("RUST_LOG");
        command.args(extra).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::inherit());
        let mut child = command.spawn().unwrap_or_else(|e| panic!("start {}: {e}", binary.display()));
        let stdout = child.stdout.take().expect("stdout");
        let logs: Arc<Mutex<Vec<Value>>> = Arc::default();
        let sink = logs.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let value = serde_json::from_str(&line).unwrap_or(Value::String(line));
                sink.lock().expect("logs").push(value);
            }
        });
        let unset: SocketAddr = "0.0.0.0:0".parse().expect("address");
        let watchdog = watchdog(child.id());
        let mut webhook =
            Webhook { child: Some(child), _watchdog: watchdog, admission: unset, health: unset, dir, logs, env };
        let listening =
            webhook.wait_log("the webhook's listening line", Duration::from_secs(20), |l| l["message"] == "listening");
        let address = |key: &str| listening[key].as_str().and_then(|a| a.parse().ok()).expect("an address in the log");
        webhook.admission = address("admission");
        webhook.health = address("health");
        wait_for("the webhook's /readyz", Duration::from_secs(20), || match webhook.health_get("/readyz") {
            (200, _) => Ok(()),
            (status, body) => Err(format!("{status} {body}")),
        });
        webhook
    }

    /// `https://127.0.0.1:PORT`, the base of the configurations' URLs.
    pub fn base_url(&self) -> String {
        format!("https://{}", self.admission)
    }

    /// Every log line so far.
    pub fn logs(&self) -> Vec<Value> {
        self.logs.lock().expect("logs").clone()
    }

    /// The `review` log lines so far.
    pub fn reviews(&self) -> Vec<Value> {
        self.logs().into_iter().filter(|l| l["message"] == "review").collect()
    }

    /// Waits (bounded) for a log line matching `pred`.
    pub fn wait_log(&self, what: &str, limit: Duration, pred: impl Fn(&Value) -> bool) -> Value {
        wait_for(what, limit, || self.logs().into_iter().find(|l| pred(l)).ok_or_else(|| format!("{:?}", self.logs())))
    }

    /// GET on the health port: (status, body).
    pub fn health_get(&self, path: &str) -> (u16, String) {
        crate::cluster::http_get(self.health, path)
    }

    /// The sum of the series of metric `name` whose labels include every
    /// one of `labels` (`verdict="skipped"`, say).
    pub fn metric(&self, name: &str, labels: &[&str]) -> f64 {
        let (_, text) = self.health_get("/metrics");
        text.lines()
            .filter(|l| l.strip_prefix(name).is_some_and(|rest| rest.starts_with(['{', ' '])))
            .filter(|l| labels.iter().all(|label| l.contains(label)))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    }

    /// Replaces the serving pair the way a Secret volume's update does.
    pub fn rotate(&self, generation: u32, pair: &Pair) {
        write_secret_volume(&self.dir.path().join("tls"), generation, &pair.cert, &pair.key);
    }

    /// `GET /livez` on the admission port over a TLS connection that trusts
    /// `ca_pem` alone: (status, body), or why the handshake failed.
    pub fn livez_trusting(&self, ca_pem: &str) -> Result<(u16, String), String> {
        use std::io::{Read as _, Write as _};
        let mut tls = super::pki::connect_tls(self.admission, ca_pem).map_err(|e| e.to_string())?;
        let request = format!("GET /livez HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", self.admission);
        tls.write_all(request.as_bytes()).map_err(|e| e.to_string())?;
        let mut response = String::new();
        // The server closes without a TLS close_notify at times; what was read counts.
        let _ = tls.read_to_string(&mut response);
        match super::http::parse(&response) {
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
        let mut tls = super::pki::connect_tls(self.admission, ca_pem).map_err(|e| e.to_string())?;
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
        match super::http::parse(&String::from_utf8_lossy(&response)) {
            Some(answer) if answer.status == 200 => Ok(Held { _stream: Box::new(tls) }),
            Some(answer) => Err(format!("{} {}", answer.status, answer.body)),
            None => Err(format!("no response: {:?}", String::from_utf8_lossy(&response))),
        }
    }

    /// A whole-seconds variable of the chart's env the webhook runs with.
    pub fn env_seconds(&self, name: &str) -> u64 {
        self.env
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in the chart's env"))
    }

    /// Sends SIGTERM, as the kubelet does to begin a pod's shutdown.
    pub fn terminate(&self) {
        if let Some(child) = &self.child {
            let status = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().expect("run kill");
            assert!(status.success(), "kill -TERM {}", child.id());
        }
    }

    /// Waits (bounded) for the process to exit by itself; its status.
    pub fn wait_exit(&mut self, limit: Duration) -> std::process::ExitStatus {
        let child = self.child.as_mut().expect("the webhook was started and not killed");
        let status = wait_for("the webhook's exit", limit, || match child.try_wait() {
            Ok(Some(status)) => Ok(status),
            Ok(None) => Err("still running".to_owned()),
            Err(e) => Err(e.to_string()),
        });
        self.child = None;
        status
    }

    /// Sends SIGKILL and reaps it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Webhook {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A serving pair from `ca` for the webhook on loopback.
pub fn serving_pair(ca: &Ca) -> Pair {
    ca.serving("lifeguard-webhook", &["lifeguard.lifeguard.svc"])
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
