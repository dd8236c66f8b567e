//! What the workload's integration tests share: the built binary run on a
//! free loopback port with only the environment a test gives it, its log
//! lines parsed as JSON, and a small HTTP client.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The workload binary cargo built for these tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_lifeguard-test-workload");

/// A running workload and the lines it has logged so far.
pub struct Workload {
    /// The process.
    pub child: Child,
    /// Where its HTTP server listens (`PORT`, on loopback).
    pub addr: SocketAddr,
    /// Its stdout so far, a line each.
    pub lines: Arc<Mutex<Vec<String>>>,
    reader: Option<JoinHandle<()>>,
}

impl Workload {
    /// Starts the binary with only `env` (and a free `PORT`) set, so a
    /// variable in the developer's environment cannot change it.
    pub fn start(env: &[(&str, &str)]) -> Workload {
        let port = free_port();
        let mut command = Command::new(BIN);
        command.env_clear().env("PORT", port.to_string()).envs(env.iter().copied());
        command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::inherit());
        let mut child = command.spawn().expect("start the workload");
        let stdout = child.stdout.take().expect("its stdout");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&lines);
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                sink.lock().expect("the lines").push(line);
            }
        });
        Workload { child, addr: SocketAddr::from(([127, 0, 0, 1], port)), lines, reader: Some(reader) }
    }

    /// Every line so far, each parsed as a JSON object with the fields
    /// every line has.
    pub fn events(&self) -> Vec<Value> {
        let pid = u64::from(self.child.id());
        let lines = self.lines.lock().expect("the lines").clone();
        lines
            .iter()
            .map(|line| {
                let value: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
                assert!(value["t_ms"].as_u64().is_some_and(|t| t > 1_600_000_000_000), "no epoch t_ms: {line}");
                assert_eq!(value["pid"].as_u64(), Some(pid), "{line}");
                assert!(value["event"].is_string(), "no event: {line}");
                value
            })
            .collect()
    }

    /// The first logged `event` that `matches`, waiting up to `limit`.
    pub fn wait_event(&self, event: &str, limit: Duration, matches: impl Fn(&Value) -> bool) -> Value {
        let start = Instant::now();
        loop {
            if let Some(found) = self.events().into_iter().find(|e| e["event"] == event && matches(e)) {
                return found;
            }
            assert!(start.elapsed() < limit, "no {event:?} line within {limit:?}; the log:\n{:#?}", self.events());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits up to `limit` for the process to exit.
    pub fn wait_exit(&mut self, limit: Duration) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for the workload") {
                if let Some(reader) = self.reader.take() {
                    reader.join().expect("the log reader");
                }
                return status;
            }
            assert!(start.elapsed() < limit, "still running after {limit:?}; the log:\n{:#?}", self.events());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends it signal `name` (`TERM`, ...).
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill").args([&format!("-{name}"), &self.child.id().to_string()]).status();
        assert!(status.as_ref().is_ok_and(|s| s.success()), "kill -{name}: {status:?}");
    }
}

impl Drop for Workload {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A GET with `user_agent` and a read timeout: (status, body), or the I/O
/// error (refused, timed out).
pub fn get(addr: SocketAddr, path: &str, user_agent: &str, timeout: Duration) -> std::io::Result<(u16, String)> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    stream.set_read_timeout(Some(timeout))?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nUser-Agent: {user_agent}\r\nConnection: close\r\n\r\n")?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let status = response.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = response.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    Ok((status, body))
}

/// A GET of `path` as the kubelet's probe sends it: (status, body).
pub fn probe(addr: SocketAddr, path: &str) -> (u16, String) {
    get(addr, path, "kube-probe/1.37", Duration::from_secs(10)).unwrap_or_else(|e| panic!("GET {path}: {e}"))
}

/// Polls `/livez` until it answers, up to `limit`.
pub fn wait_serving(workload: &Workload, limit: Duration) {
    let start = Instant::now();
    loop {
        match get(workload.addr, "/livez", "test", Duration::from_secs(5)) {
            Ok((200, _)) => return,
            result => assert!(start.elapsed() < limit, "not serving within {limit:?}: {result:?}"),
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub use lifeguard_e2e::cluster::process::free_port;
