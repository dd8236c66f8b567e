//! Load benchmark of the real `lifeguard-webhook` binary over TLS with
//! keep-alive on 127.0.0.1, driven by `oha` (install it first:
//! `bash .ci/install-load-tools.sh`), against the targets of BENCHMARKS.md.
//!
//! Run: `cargo bench -p lifeguard-webhook --bench load` (release build).
//! `LIFEGUARD_BENCH_SECONDS` sets each closed-loop run's duration (default
//! 10), `LIFEGUARD_BENCH_OPEN_SECONDS` each open-loop run's (default 30),
//! `LIFEGUARD_BENCH_CONNECTIONS` oha's concurrency (default 64),
//! `LIFEGUARD_BENCH_BINARY` another build of the server to run instead,
//! `LIFEGUARD_BENCH_OHA` the oha to use (default `target/tools/bin/oha`
//! when it exists, else `oha` on PATH).
//!
//! What it does, in order: generates a CA and a serving certificate;
//! starts the server with the tests' harness (`lifeguard_e2e::support::webhook`:
//! port 0, its addresses from its log) and times spawn -> first 200 on
//! `/readyz` (polled every 1 ms; the median of five starts, the last of
//! which takes the load); checks once that `POST /validate/warn`
//! answers the review body with `allowed: true` and warnings, and keeps the
//! answer's bytes; starts the `fixed_answer` example, which serves those
//! bytes for any body over the server's own TLS and connection stack (the
//! floor); then, with the same oha flags against both:
//!
//! - closed loop: `-c 64 -z 10s`, fixed answer and review alternating, two
//!   rounds;
//! - open loop: `-q 1000` and `-q 5000` with `--latency-correction` (the
//!   latency counts from when a request was due, so a stalled server cannot
//!   hide its queue), 30 s each;
//! - idle connections: 1,000 TLS keep-alive connections to the server
//!   (under the default cap of 1,024), one review on each, then held idle
//!   while the server's RSS is read.
//!
//! During each oha run the server's VmRSS is sampled (and its VmHWM reset
//! before), and the CPU time of the server and of oha is read from /proc.
//! oha runs on the same cores as the server and competes with it for CPU:
//! that is part of the method, and the floor pays the same price. Exits
//! non-zero on transport errors or non-2xx answers; a missed target is
//! reported, not an error.
//!
//! Over 400 lines: one run in the order listed above (`bench`, about 215 lines)
//! with what it alone needs beside it: a raw TLS client for the idle
//! connections, /proc sampling of memory and CPU, driving oha, and printing
//! each row against its target.

// A benchmark's edge: what it measured is its report on the terminal.
#![allow(clippy::print_stderr, clippy::print_stdout)]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use lifeguard_e2e::cluster::http;
use lifeguard_e2e::cluster::pki::{Ca, client_tls};
use lifeguard_e2e::support::applied;
use lifeguard_e2e::support::webhook::{Server, Start};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

/// Server starts timed for the ready time.
const STARTS: usize = 5;
/// Closed-loop rounds, each a fixed-answer run and a review run.
const ROUNDS: usize = 2;
/// Open-loop rates, reviews per second, with their p99 targets.
const OPEN_LOOP: [(u32, Duration); 2] = [(1_000, Duration::from_millis(2)), (5_000, Duration::from_millis(5))];
/// Idle keep-alive connections held at once, and how many open at a time
/// (the listen backlog must not overflow into SYN retries). Below the
/// servers' default connection cap (1,024), which closes any beyond it at
/// accept: the RSS of the cap's worth of idle connections is what a
/// replica can be made to hold.
const IDLE_CONNECTIONS: usize = 1_000;
const OPENING_AT_ONCE: usize = 64;
/// Review throughput target, as a share of the fixed answer's.
const SHARE_TARGET: f64 = 25.0;
const RSS_TARGET: u64 = 50 * 1024 * 1024;
const READY_TARGET: Duration = Duration::from_millis(100);
/// How long the fixed-answer floor gets to print its address.
const START_LIMIT: Duration = Duration::from_secs(10);
/// RSS sampling period during a run.
const SAMPLE_EVERY: Duration = Duration::from_millis(10);
/// Linux USER_HZ, the unit of CPU times in /proc/PID/stat.
const CLOCK_TICKS_PER_SECOND: f64 = 100.0;
const MIB: f64 = 1024.0 * 1024.0;

type Failure = Box<dyn std::error::Error + Send + Sync>;

/// A child process killed when dropped.
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Process {
    fn pid(&self) -> u32 {
        self.0.id()
    }

    fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.0.try_wait().ok().flatten()
    }
}

/// The server under test: this build's, or `LIFEGUARD_BENCH_BINARY` (an
/// older build, to compare two servers on the same machine in one session).
fn server_binary() -> std::ffi::OsString {
    std::env::var_os("LIFEGUARD_BENCH_BINARY").unwrap_or_else(|| env!("CARGO_BIN_EXE_lifeguard-webhook").into())
}

/// Reads a child's stdout for its whole life (the pipe must not fill up),
/// sending the first line `wanted` accepts.
fn follow(stdout: ChildStdout, wanted: fn(&str) -> bool) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut tx = Some(tx);
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.is_some() && wanted(&line) {
                let _ = tx.take().map(|tx| tx.send(line));
            }
        }
    });
    rx
}

/// Starts the server serving a pair from `ca`, its log lines counted but
/// not kept (it logs one per review); returns it and the time from spawn to
/// the first 200 on `/readyz`.
fn start(ca: &Ca) -> Result<(Server, Duration), Failure> {
    let server = Server::try_start(Start {
        binary: Some(server_binary().into()),
        pair: Some(ca.serving("lifeguard-webhook bench", &[])),
        keep_logs: false,
        quick: false,
        ..Start::default()
    })?;
    let ready = server.ready_after.ok_or("no ready time")?;
    Ok((server, ready))
}

/// Builds the `fixed_answer` example with the profile of this bench (so
/// with the server's), and returns its path.
fn build_fixed_answer() -> Result<PathBuf, Failure> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["build", "--profile", "bench", "--example", "fixed_answer", "--message-format", "json"])
        .arg("--manifest-path")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
        .stderr(Stdio::inherit())
        .output()?;
    if !output.status.success() {
        return Err(format!("building the fixed_answer example failed ({})", output.status).into());
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let executable = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "fixed_answer")
        .find_map(|m| m["executable"].as_str().map(PathBuf::from));
    executable.ok_or_else(|| "cargo did not name the fixed_answer executable".into())
}

/// Starts the fixed-answer floor serving `answer` (a file).
fn start_fixed_answer(binary: &Path, dir: &Path, answer: &Path) -> Result<(Process, SocketAddr), Failure> {
    let mut process = Process(
        Command::new(binary)
            .arg(dir.join("tls.crt"))
            .arg(dir.join("tls.key"))
            .arg(answer)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?,
    );
    let stdout = process.0.stdout.take().ok_or("no stdout")?;
    let rx = follow(stdout, |line| line.starts_with("listening "));
    let line = rx.recv_timeout(START_LIMIT).map_err(|_| "fixed_answer printed no address")?;
    let addr = line.trim_start_matches("listening ").parse()?;
    Ok((process, addr))
}

/// The bench's TLS client: the bench CA, ring, ALPN http/1.1 as the API
/// server's webhook client sends it.
fn tls_connector(ca_pem: &str) -> TlsConnector {
    TlsConnector::from(Arc::new(client_tls(ca_pem, false, None)))
}

async fn connect(connector: &TlsConnector, addr: SocketAddr) -> Result<TlsStream<tokio::net::TcpStream>, Failure> {
    let tcp = tokio::net::TcpStream::connect(addr).await?;
    tcp.set_nodelay(true)?;
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1")?.to_owned();
    Ok(connector.connect(name, tcp).await?)
}

/// POSTs `body` to `path` on a kept-alive connection: (status, body).
async fn post(
    stream: &mut TlsStream<tokio::net::TcpStream>,
    path: &str,
    body: &[u8],
) -> Result<(u16, Vec<u8>), Failure> {
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body).await?;
    stream.flush().await?;
    read_response(stream).await
}

/// Reads one HTTP/1.1 response with a Content-Length.
async fn read_response(stream: &mut (impl AsyncRead + Unpin)) -> Result<(u16, Vec<u8>), Failure> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    let split = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err("the connection closed before a response head".into());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..split]).to_ascii_lowercase();
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).ok_or("no status in the response")?;
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or("no Content-Length in the response")?;
    let mut body = buf.split_off(split + 4);
    while body.len() < length {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err("the connection closed inside a response body".into());
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Ok((status, body))
}

/// Checks that the review endpoint does the real work: an AdmissionReview
/// for our uid, allowed, with warnings. Returns the answer's bytes and its
/// warnings.
async fn check_review(
    connector: &TlsConnector,
    addr: SocketAddr,
    body: &[u8],
    uid: &str,
) -> Result<(Vec<u8>, Vec<String>), Failure> {
    let (status, response) = post(&mut connect(connector, addr).await?, "/validate/warn", body).await?;
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
    Ok((response, warnings))
}

/// `Field: N kB` from /proc/PID/status, in bytes.
fn status_field(pid: u32, name: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(name))?;
    let value: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(if line.ends_with("kB") { value * 1024 } else { value })
}

/// CPU seconds from /proc/PID/stat: (user + system of the process, user +
/// system of its waited-for children).
fn cpu_seconds(pid: u32) -> Option<(f64, f64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command name, which is in parentheses and may
    // hold spaces: utime, stime, cutime, cstime are the 12th to 15th.
    let rest = stat.rsplit_once(") ")?.1;
    let times: Vec<f64> = rest.split_whitespace().skip(11).take(4).map(|f| f.parse().ok()).collect::<Option<_>>()?;
    let [utime, stime, cutime, cstime] = times.as_slice() else { return None };
    Some(((utime + stime) / CLOCK_TICKS_PER_SECOND, (cutime + cstime) / CLOCK_TICKS_PER_SECOND))
}

/// CPU seconds the whole machine spent busy (all cores), from /proc/stat.
fn machine_busy_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let ticks: Vec<f64> =
        stat.lines().next()?.split_whitespace().skip(1).map(|f| f.parse().ok()).collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal: all but idle and iowait.
    let busy: f64 = ticks.iter().take(8).enumerate().filter(|(i, _)| *i != 3 && *i != 4).map(|(_, t)| t).sum();
    Some(busy / CLOCK_TICKS_PER_SECOND)
}

/// Resets the process's VmHWM to its current RSS (Linux >= 4.0).
fn reset_peak(pid: u32) -> bool {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok()
}

/// Samples a process's RSS and threads until stopped.
struct Sampler {
    pid: u32,
    hwm_reset: bool,
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<(u64, u64)>,
}

impl Sampler {
    fn start(pid: u32) -> Sampler {
        let hwm_reset = reset_peak(pid);
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            let (mut peak, mut threads) = (0, 0);
            while !stopped.load(Ordering::Relaxed) {
                peak = peak.max(status_field(pid, "VmRSS:").unwrap_or(0));
                threads = threads.max(status_field(pid, "Threads:").unwrap_or(0));
                std::thread::sleep(SAMPLE_EVERY);
            }
            (peak, threads)
        });
        Sampler { pid, hwm_reset, stop, thread }
    }

    /// (peak RSS, VmHWM since the start if it could be reset, peak threads).
    fn stop(self) -> Result<(u64, Option<u64>, u64), Failure> {
        self.stop.store(true, Ordering::Relaxed);
        let (peak, threads) = self.thread.join().map_err(|_| "the RSS sampler panicked")?;
        let hwm = if self.hwm_reset { status_field(self.pid, "VmHWM:") } else { None };
        Ok((peak, hwm, threads))
    }
}

/// The oha binary: `LIFEGUARD_BENCH_OHA`, else the one
/// `.ci/install-load-tools.sh` installs, else `oha` on PATH.
fn oha_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("LIFEGUARD_BENCH_OHA") {
        return path.into();
    }
    let installed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/tools/bin/oha");
    if installed.is_file() { installed } else { PathBuf::from("oha") }
}

/// One oha run's load.
struct Load<'a> {
    url: String,
    body: &'a Path,
    ca: &'a Path,
    connections: u64,
    seconds: u64,
    /// Requests per second for an open loop; a closed loop when `None`.
    rate: Option<u32>,
}

impl Load<'_> {
    fn args(&self) -> Vec<String> {
        let mut args: Vec<String> = vec![
            "--no-tui".into(),
            "--output-format".into(),
            "json".into(),
            "-c".into(),
            self.connections.to_string(),
            "-z".into(),
            format!("{}s", self.seconds),
            // Requests in flight at the deadline finish instead of counting
            // as errors.
            "-w".into(),
            "--cacert".into(),
            self.ca.display().to_string(),
            "-m".into(),
            "POST".into(),
            "-T".into(),
            "application/json".into(),
            "-D".into(),
            self.body.display().to_string(),
        ];
        if let Some(rate) = self.rate {
            args.extend(["-q".into(), rate.to_string(), "--latency-correction".into()]);
        }
        args.push(self.url.clone());
        args
    }
}

/// What one oha run reported, plus what was sampled meanwhile.
#[derive(Debug, Default)]
struct Run {
    /// 2xx answers.
    ok: u64,
    /// Non-2xx answers, by status.
    statuses: Vec<(String, u64)>,
    /// Transport errors, by oha's message.
    errors: Vec<(String, u64)>,
    seconds: f64,
    p50: f64,
    p90: f64,
    p99: f64,
    max: f64,
    peak_rss: u64,
    hwm: Option<u64>,
    peak_threads: u64,
    server_cpu: f64,
    client_cpu: f64,
    /// The share of the machine's CPU that other processes used meanwhile:
    /// the same cores, so a busy neighbour shows up in the latencies.
    others: f64,
}

impl Run {
    fn per_second(&self) -> f64 {
        self.ok as f64 / self.seconds.max(1e-9)
    }

    fn answered(&self) -> u64 {
        self.ok + self.statuses.iter().map(|(_, n)| n).sum::<u64>()
    }

    fn failures(&self) -> u64 {
        self.statuses.iter().chain(&self.errors).map(|(_, n)| n).sum()
    }

    fn cpu_us(cpu: f64, requests: u64) -> f64 {
        cpu * 1e6 / requests.max(1) as f64
    }

    fn peak(&self) -> u64 {
        self.peak_rss.max(self.hwm.unwrap_or(0))
    }

    /// oha's JSON report (latencies in seconds).
    fn parse(report: &Value) -> Option<Run> {
        let counts = |key: &str| -> Vec<(String, u64)> {
            report[key].as_object().into_iter().flatten().filter_map(|(k, v)| Some((k.clone(), v.as_u64()?))).collect()
        };
        let (ok, statuses): (Vec<_>, Vec<_>) =
            counts("statusCodeDistribution").into_iter().partition(|(code, _)| code.starts_with('2'));
        let percentile = |p: &str| report["latencyPercentiles"][p].as_f64().unwrap_or(f64::NAN);
        Some(Run {
            ok: ok.iter().map(|(_, n)| n).sum(),
            statuses,
            errors: counts("errorDistribution"),
            seconds: report["summary"]["total"].as_f64()?,
            p50: percentile("p50"),
            p90: percentile("p90"),
            p99: percentile("p99"),
            max: report["summary"]["slowest"].as_f64().unwrap_or(f64::NAN),
            ..Run::default()
        })
    }
}

/// Runs oha with `load` against the process `pid`, sampling it meanwhile.
fn run_oha(oha: &Path, load: &Load, pid: u32) -> Result<Run, Failure> {
    let sampler = Sampler::start(pid);
    let me = std::process::id();
    let (server_before, client_before) = cpu_seconds(pid).zip(cpu_seconds(me)).map_or((0.0, 0.0), |(s, c)| (s.0, c.1));
    let (busy_before, wall) = (machine_busy_seconds().unwrap_or(0.0), Instant::now());
    let output = Command::new(oha).args(load.args()).stdin(Stdio::null()).output();
    let (busy_after, wall) = (machine_busy_seconds().unwrap_or(0.0), wall.elapsed().as_secs_f64());
    let (server_after, client_after) = cpu_seconds(pid).zip(cpu_seconds(me)).map_or((0.0, 0.0), |(s, c)| (s.0, c.1));
    let (peak_rss, hwm, peak_threads) = sampler.stop()?;
    let output = output.map_err(|e| format!("cannot run {}: {e}", oha.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!("oha failed ({}):\n{stdout}{stderr}", output.status).into());
    }
    let report: Value =
        serde_json::from_str(&stdout).map_err(|e| format!("oha's report is not JSON ({e}):\n{stdout}"))?;
    let mut run = Run::parse(&report).ok_or_else(|| format!("oha's report has no summary.total:\n{stdout}"))?;
    run.peak_rss = peak_rss;
    run.hwm = hwm;
    run.peak_threads = peak_threads;
    run.server_cpu = server_after - server_before;
    run.client_cpu = client_after - client_before;
    let cores = std::thread::available_parallelism().map_or(1, usize::from) as f64;
    run.others = ((busy_after - busy_before - run.server_cpu - run.client_cpu) / (wall * cores)).max(0.0);
    Ok(run)
}

/// What holding idle connections cost a server.
struct Idle {
    opened: usize,
    before_rss: u64,
    held_rss: u64,
    peak: u64,
    after_rss: u64,
    /// The server's own count of open admission connections while held,
    /// and a second after they were closed.
    counted: Option<(u64, u64)>,
    open_seconds: f64,
}

impl Idle {
    fn kib_per_connection(&self) -> f64 {
        (self.held_rss as f64 - self.before_rss as f64) / 1024.0 / self.opened.max(1) as f64
    }
}

/// Opens `count` TLS keep-alive connections to `addr`, sends a review on
/// each (so each holds the buffers a served connection keeps), holds them
/// idle while reading the RSS of `pid`, then closes them. `health` is
/// where the server counts its connections, if it does.
async fn hold_idle(
    pid: u32,
    addr: SocketAddr,
    health: Option<SocketAddr>,
    connector: &TlsConnector,
    body: Arc<Vec<u8>>,
    count: usize,
) -> Result<Idle, Failure> {
    let before_rss = status_field(pid, "VmRSS:").unwrap_or(0);
    let sampler = Sampler::start(pid);
    let started = Instant::now();
    let gate = Arc::new(tokio::sync::Semaphore::new(OPENING_AT_ONCE));
    let mut opening = tokio::task::JoinSet::new();
    for _ in 0..count {
        let (gate, connector, body) = (gate.clone(), connector.clone(), body.clone());
        opening.spawn(async move {
            let _permit = gate.acquire_owned().await?;
            let mut stream = connect(&connector, addr).await?;
            let (status, _) = post(&mut stream, "/validate/warn", &body).await?;
            if status != 200 {
                return Err(format!("a review on an idle connection answered {status}").into());
            }
            Ok::<_, Failure>(stream)
        });
    }
    let mut held = Vec::with_capacity(count);
    let mut failures = Vec::new();
    while let Some(joined) = opening.join_next().await {
        match joined? {
            Ok(stream) => held.push(stream),
            Err(e) => failures.push(e.to_string()),
        }
    }
    let open_seconds = started.elapsed().as_secs_f64();
    // Let the connections' tasks settle into their idle wait.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let held_rss = status_field(pid, "VmRSS:").unwrap_or(0);
    let counted_held = health.and_then(open_connections);
    let (peak_rss, hwm, _) = sampler.stop()?;
    drop(held);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let after_rss = status_field(pid, "VmRSS:").unwrap_or(0);
    let counted_after = health.and_then(open_connections);
    if let Some(first) = failures.first() {
        return Err(format!("{} of {count} idle connections failed, the first: {first}", failures.len()).into());
    }
    Ok(Idle {
        opened: count,
        before_rss,
        held_rss,
        peak: peak_rss.max(hwm.unwrap_or(0)),
        after_rss,
        counted: counted_held.zip(counted_after),
        open_seconds,
    })
}

/// `lifeguard_webhook_connections{listener="admission"}` from /metrics.
fn open_connections(health: SocketAddr) -> Option<u64> {
    let metrics = http::get(health, "/metrics", Duration::from_secs(1)).ok()?.body;
    let line = metrics.lines().find(|l| l.starts_with("lifeguard_webhook_connections{listener=\"admission\"}"))?;
    line.split_whitespace().nth(1)?.parse().ok()
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

fn ms(seconds: f64) -> f64 {
    seconds * 1e3
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / MIB
}

fn print_row(name: &str, r: &Run) {
    println!(
        "{name:<30} {:>8.0} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>9.1} {:>7} {:>7} {:>8.0} {:>8.0} {:>7.0} {:>6}",
        r.per_second(),
        ms(r.p50),
        ms(r.p90),
        ms(r.p99),
        ms(r.max),
        mib(r.peak_rss),
        r.hwm.map_or("n/a".to_owned(), |h| format!("{:.1}", mib(h))),
        r.peak_threads,
        Run::cpu_us(r.server_cpu, r.answered()),
        Run::cpu_us(r.client_cpu, r.answered()),
        r.others * 100.0,
        r.failures(),
    );
}

fn print_idle(name: &str, idle: &Idle) {
    let counted = idle.counted.map_or(String::new(), |(held, after)| {
        format!(" (the server counted {held} open, {after} a second after closing)")
    });
    println!(
        "idle {} connections {name:<6} opened in {:.1} s{counted}: RSS {:.1} MiB before, {:.1} MiB held (peak \
         {:.1}), {:.1} MiB after closing: {:.1} KiB per connection",
        idle.opened,
        idle.open_seconds,
        mib(idle.before_rss),
        mib(idle.held_rss),
        mib(idle.peak),
        mib(idle.after_rss),
        idle.kib_per_connection(),
    );
}

fn bench() -> Result<bool, Failure> {
    let seconds = env_number("LIFEGUARD_BENCH_SECONDS", 10)?;
    let open_seconds = env_number("LIFEGUARD_BENCH_OPEN_SECONDS", 30)?;
    let connections = env_number("LIFEGUARD_BENCH_CONNECTIONS", 64)?;
    let oha = oha_binary();
    let oha_version = Command::new(&oha)
        .arg("--version")
        .output()
        .map_err(|e| format!("cannot run {} ({e}): install it with `bash .ci/install-load-tools.sh`", oha.display()))?;
    let oha_version = String::from_utf8_lossy(&oha_version.stdout).trim().to_owned();
    let fixed_binary = build_fixed_answer()?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;

    let dir = tempfile::tempdir()?;
    let ca = Ca::new("lifeguard bench CA");
    let ca_path = dir.path().join("ca.crt");
    std::fs::write(&ca_path, &ca.pem)?;
    let review = applied::review();
    let uid = review["request"]["uid"].as_str().unwrap_or_default().to_owned();
    let body = serde_json::to_vec(&review)?;
    let body_path = dir.path().join("review.json");
    std::fs::write(&body_path, &body)?;
    let connector = tls_connector(&ca.pem);

    // Ready time: the median of STARTS starts (the last one serves the load).
    let mut readies = Vec::with_capacity(STARTS);
    let mut started = None;
    for _ in 0..STARTS {
        drop(started.take());
        let (server, ready) = start(&ca)?;
        readies.push(ready);
        started = Some(server);
    }
    let mut server = started.ok_or("no server")?;
    readies.sort();
    let (ready, ready_max) = (readies[STARTS / 2], readies[STARTS - 1]);
    let pid = server.pid();
    let idle_rss = status_field(pid, "VmRSS:").unwrap_or(0);
    let (answer, warnings) = runtime.block_on(check_review(&connector, server.admission, &body, &uid))?;
    let answer_path = dir.path().join("answer.json");
    std::fs::write(&answer_path, &answer)?;
    let (mut fixed, fixed_addr) = start_fixed_answer(&fixed_binary, &server.tls_dir(), &answer_path)?;
    let (status, fixed_answer) =
        runtime.block_on(async { post(&mut connect(&connector, fixed_addr).await?, "/validate/warn", &body).await })?;
    if status != 200 || fixed_answer != answer {
        return Err(format!("the fixed answer is not the server's ({status}, {} bytes)", fixed_answer.len()).into());
    }

    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    println!("lifeguard-webhook under load: {oha_version}, HTTPS/1.1 with keep-alive on 127.0.0.1");
    println!("{cores} cores, shared by oha and the server under test (the other server is idle)");
    println!(
        "review: POST /validate/warn, a {:.1} KiB Deployment AdmissionReview (CREATE, 2 containers) answered \
         allowed with {} warnings ({:.1} KiB):",
        body.len() as f64 / 1024.0,
        warnings.len(),
        answer.len() as f64 / 1024.0
    );
    for w in &warnings {
        let short: String = w.chars().take(110).collect();
        println!("  - {short}{}", if short.len() < w.len() { "..." } else { "" });
    }
    println!(
        "fixed answer: the same bytes for the same body, from the fixed_answer example (the server's TLS and \
         connection stack, no decision)"
    );
    println!(
        "ready: {:.1} ms from spawn to the first 200 on /readyz (median of {STARTS} starts, max {:.1} ms); \
         idle RSS {:.1} MiB",
        ms(ready.as_secs_f64()),
        ms(ready_max.as_secs_f64()),
        mib(idle_rss)
    );

    let load = |addr: SocketAddr, seconds: u64, rate: Option<u32>| Load {
        url: format!("https://127.0.0.1:{}/validate/warn", addr.port()),
        body: &body_path,
        ca: &ca_path,
        connections,
        seconds,
        rate,
    };
    let fixed_pid = fixed.pid();
    let mut runs: Vec<(String, bool, Run)> = Vec::new();
    let mut oha_run = |name: String, reviews: bool, load: Load| -> Result<(), Failure> {
        let lines_before = server.log_lines();
        let run = run_oha(&oha, &load, if reviews { pid } else { fixed_pid })?;
        let logged = server.log_lines() - lines_before;
        eprintln!(
            "--- {name}: oha {}\n    {} 2xx, non-2xx {:?}, errors {:?}, {logged} server log lines",
            load.args().join(" "),
            run.ok,
            run.statuses,
            run.errors
        );
        runs.push((name, reviews, run));
        Ok(())
    };
    for round in 1..=ROUNDS {
        oha_run(format!("closed c{connections} #{round} fixed"), false, load(fixed_addr, seconds, None))?;
        oha_run(format!("closed c{connections} #{round} review"), true, load(server.admission, seconds, None))?;
    }
    for (rate, _) in OPEN_LOOP {
        oha_run(format!("open {rate}/s review"), true, load(server.admission, open_seconds, Some(rate)))?;
        oha_run(format!("open {rate}/s fixed"), false, load(fixed_addr, open_seconds, Some(rate)))?;
    }
    let body = Arc::new(body);
    let idle = runtime.block_on(hold_idle(
        pid,
        server.admission,
        Some(server.health),
        &connector,
        body.clone(),
        IDLE_CONNECTIONS,
    ))?;
    let idle_fixed =
        runtime.block_on(hold_idle(fixed_pid, fixed_addr, None, &connector, body.clone(), IDLE_CONNECTIONS))?;
    if let Some(status) = fixed.exited() {
        return Err(format!("the fixed-answer server died under load: {status}").into());
    }
    drop(fixed);
    if let Some(status) = server.exited() {
        return Err(format!("the server died under load: {status}").into());
    }
    drop(server);

    println!();
    println!(
        "{:<30} {:>8} {:>7} {:>7} {:>7} {:>7} {:>9} {:>7} {:>7} {:>8} {:>8} {:>7} {:>6}",
        "run",
        "2xx/s",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "max ms",
        "RSS MiB",
        "HWM MiB",
        "threads",
        "srv us",
        "oha us",
        "others%",
        "errors"
    );
    for (name, _, run) in &runs {
        print_row(name, run);
    }
    for (name, idle) in [("review", &idle), ("fixed", &idle_fixed)] {
        print_idle(name, idle);
    }
    println!("(2xx/s: answers per second; p50-max: oha's latencies, from when a request was due in the open loop;");
    println!(" RSS: the server's peak VmRSS sampled every 10 ms, HWM its VmHWM reset before the run;");
    println!(" srv us / oha us: CPU time, user + system, per answer, of the server and of oha;");
    println!(" others%: the machine's CPU used by other processes during the run)");

    let closed = |reviews: bool| -> Vec<f64> {
        runs.iter()
            .filter(|(n, r, _)| n.starts_with("closed") && *r == reviews)
            .map(|(_, _, run)| run.per_second())
            .collect()
    };
    let shares: Vec<f64> = closed(true).iter().zip(closed(false)).map(|(r, f)| r / f * 100.0).collect();
    let share = shares.iter().copied().fold(f64::INFINITY, f64::min);
    let peak_load = runs.iter().filter(|(_, r, _)| *r).map(|(_, _, run)| run.peak()).max().unwrap_or(0);
    let peak = peak_load.max(idle.peak);
    println!();
    println!("{:<58} {:>34}  result", "target (2 cores)", "measured");
    let target = |name: String, measured: String, met: bool| println!("{name:<58} {measured:>34}  {}", verdict(met));
    target(
        format!("closed loop c{connections}: review 2xx/s >= {SHARE_TARGET:.0}% of the fixed answer's"),
        format!("{} (lowest of {ROUNDS})", shares.iter().map(|s| format!("{s:.1}%")).collect::<Vec<_>>().join(", ")),
        share >= SHARE_TARGET,
    );
    for (rate, p99) in OPEN_LOOP {
        let name = format!("open {rate}/s review");
        let Some((_, _, run)) = runs.iter().find(|(n, _, _)| *n == name) else { continue };
        target(
            format!("open loop {rate}/s for {open_seconds} s: p99 < {} ms, no error", p99.as_millis()),
            format!("p99 {:.2} ms, {:.0}/s, {} errors", ms(run.p99), run.per_second(), run.failures()),
            run.p99 < p99.as_secs_f64() && run.failures() == 0,
        );
    }
    target(
        format!("RSS < 50 MiB, under load and with {} idle connections", idle.opened),
        format!("{:.1} MiB load, {:.1} MiB idle conns", mib(peak_load), mib(idle.peak)),
        peak < RSS_TARGET,
    );
    target(
        "ready < 100 ms (spawn to first 200 on /readyz)".to_owned(),
        format!("{:.1} ms (median of {STARTS})", ms(ready.as_secs_f64())),
        ready < READY_TARGET,
    );

    let mut ok = true;
    for (name, _, run) in &runs {
        if run.failures() > 0 {
            eprintln!("error: {name}: non-2xx {:?}, transport errors {:?}", run.statuses, run.errors);
            ok = false;
        }
        if run.ok == 0 {
            eprintln!("error: {name}: no request completed");
            ok = false;
        }
    }
    if let Some((held, after)) = idle.counted {
        if held < idle.opened as u64 {
            eprintln!("error: the server counted {held} of {} idle connections open", idle.opened);
            ok = false;
        }
        if after > 0 {
            eprintln!("warning: the server still counted {after} connections open a second after they closed");
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
