//! The container the real-node tests run under the kubelet: an HTTP server
//! that boots slowly, pauses, wedges, crashes, checks a dependency and
//! drains on SIGTERM as its environment says, and logs every event it sees
//! as one JSON line on stdout, so a test reads what the kubelet did (which
//! probes came when, when SIGTERM arrived, whether a request was cut) from
//! the workload's side.
//!
//! Log lines: `{"t_ms": <epoch ms>, "pid": <pid>, "event": "...", ...}` with
//! events `start`, `listening`, `request`, `signal`, `drain-done`, `exit`,
//! `prestop-start`/`prestop-end`, `poststart-start`/`poststart-end`,
//! `paused`/`resumed`, `wedged`, `crash`, and
//! `alive` every 200 ms from the first SIGTERM on (the last one dates a SIGKILL).
//!
//! Environment (see [`config::Config`]): `PORT` (required), `GRPC_PORT`,
//! `BOOT_SECONDS`, `STATE_DIR`, `PAUSE=AFTER:DURATION`, `WEDGE_AFTER`,
//! `CRASH_AFTER`, `CRASH_CODE`, `DEPENDENCY=host:port`,
//! `DEPENDENCY_TIMEOUT_SECONDS`, `PRESTOP_SECONDS`, `REQUEST_SECONDS`,
//! `DRAIN_SECONDS`, `IGNORE_SIGTERM`, `PROXY_TO=host:port` (forward every
//! connection to `PORT` there instead of serving it: a proxy beside the
//! app, which stops, and cuts what it carries, when it exits).
//! Every time is seconds (a decimal); the PAUSE, WEDGE and CRASH times count
//! from listening, so they do not depend on `BOOT_SECONDS`.
//!
//! Endpoints: `/livez` (local), `/readyz` (the dependency if set, and 503
//! once draining), `/healthz` (the dependency: one handler shared by
//! liveness and readiness, the anti-pattern), `/prestop` (an httpGet preStop
//! hook taking `PRESTOP_SECONDS`), `/` (traffic taking `REQUEST_SECONDS`).
//!
//! With `GRPC_PORT`, the standard gRPC health service on that port too
//! (grpc.rs), bound with `PORT`: services `""` and `readiness` answer as
//! `/readyz`, `liveness` as `/livez`, `healthz` as `/healthz`, any other is
//! NOT_FOUND; both protocols take their answers from health.rs, so pauses,
//! wedges, the dependency and the drain look the same to either probe. Its
//! calls are `request` lines too: `method` `Check`, `path` `grpc:SERVICE`,
//! `status` `SERVING`, `NOT_SERVING`, `NOT_FOUND` or `hung`. It is why this
//! crate has dependencies beyond signal-hook (see Cargo.toml): tonic and
//! tonic-health for HTTP/2 and the generated health service, tokio for
//! tonic's runtime; the HTTP side stays std only.
//!
//! Subcommands: `pause` (the pod sandbox process), `prestop SECONDS` (an
//! exec preStop hook), `poststart SECONDS [EXIT_CODE]` (an exec postStart
//! hook that exits with EXIT_CODE, 0 unless given), `--version`.
//!
//! Over 400 lines: the doc above (about 40 lines) is the workload's whole
//! interface, and the server loop, signal handling, scheduling and request
//! routing below share the process-wide state it describes; config, health,
//! HTTP, gRPC and logging are already modules of their own.

// A binary's edge: its log and its version are what it prints on stdout.
#![allow(clippy::print_stdout)]

mod config;
mod dependency;
mod grpc;
mod health;
mod http;
mod log;

use std::fs::OpenOptions;
use std::io::{ErrorKind, Read as _, Write as _};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::process::exit;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use config::Config;
use log::{Line, now_ms};

const NAME: &str = env!("CARGO_PKG_NAME");
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// How long a connection may take to send its request head. Probes send
/// theirs at once; the limit only keeps a silent client from holding a
/// thread forever.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// Set by the first SIGTERM/SIGINT (unless ignored): `/readyz` answers 503
/// from then on, as a server taking itself out of its Service does. A
/// static, because the signal thread starts before the server exists (a
/// SIGTERM may arrive while booting).
static DRAINING: AtomicBool = AtomicBool::new(false);

/// Until when (epoch ms) the process is stuck: a pause's end, `u64::MAX`
/// once wedged. A stopped-the-world process handles a signal only when it
/// runs again, and a hung one never: the signal thread waits as long.
static STUCK_UNTIL_MS: AtomicU64 = AtomicU64::new(0);

/// Set by the first SIGTERM/SIGINT, ignored or not: the heartbeat starts.
static TERMINATING: AtomicBool = AtomicBool::new(false);

/// How often a terminating process says it is still there (`alive`).
const HEARTBEAT: Duration = Duration::from_millis(200);

fn main() {
    // Lossy: a non-UTF-8 argument is a usage error, not a panic.
    let args: Vec<String> = std::env::args_os().skip(1).map(|a| a.to_string_lossy().into_owned()).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        [] => serve(),
        ["--version"] => println!("{NAME} {VERSION}"),
        ["pause"] => pause(),
        ["prestop", seconds] => prestop(seconds),
        ["poststart", seconds] => poststart(seconds, "0"),
        ["poststart", seconds, code] => poststart(seconds, code),
        _ => {
            let _ = writeln!(
                std::io::stderr(),
                "{NAME}: unknown arguments {args:?}\n\
                 usage: {NAME}                  serve (configured by env vars: PORT, ...)\n\
                 \x20      {NAME} pause            the pod sandbox process\n\
                 \x20      {NAME} prestop SECONDS  an exec preStop hook\n\
                 \x20      {NAME} poststart SECONDS [EXIT_CODE]  an exec postStart hook\n\
                 \x20      {NAME} --version"
            );
            exit(2);
        }
    }
}

/// Logs an `exit` line (with `error`), says it on stderr too, and exits.
fn fail(code: i32, error: &str) -> ! {
    Line::new("exit").int("code", code).str("error", error).emit();
    let _ = writeln!(std::io::stderr(), "{NAME}: {error}");
    exit(code);
}

/// What every connection's thread shares.
struct Server {
    config: Config,
    /// When the port was bound: PAUSE, WEDGE_AFTER and CRASH_AFTER count
    /// from here.
    listening_at: Instant,
    /// Whether the one-shot behaviours (PAUSE, WEDGE_AFTER) happen in this
    /// incarnation.
    one_shot: bool,
}

impl Server {
    /// Whether the wedge hangs, or the pause holds, a request arriving
    /// `since_listening`: the same for HTTP and gRPC.
    fn gate(&self, since_listening: Duration) -> health::Gate {
        health::gate(&self.config, self.one_shot, since_listening)
    }

    /// The answer to a health check, HTTP or gRPC.
    fn answer(&self, check: health::Check) -> health::Verdict {
        health::decide(check, &self.config, DRAINING.load(Ordering::SeqCst))
    }
}

fn serve() -> ! {
    let config = Config::from_lookup(|name| match std::env::var(name) {
        Ok(value) => Some(value),
        Err(std::env::VarError::NotPresent) => None,
        // Passed on for the parser to refuse, naming the variable.
        Err(std::env::VarError::NotUnicode(raw)) => Some(raw.to_string_lossy().into_owned()),
    })
    .unwrap_or_else(|e| fail(2, &e.to_string()));

    let (incarnation, one_shot) = match &config.state_dir {
        Some(dir) => incarnation(dir).unwrap_or_else(|e| fail(2, &format!("STATE_DIR={}: {e}", dir.display()))),
        // Nothing remembers earlier incarnations: each one is the first.
        None => (None, true),
    };
    log_start(&config, incarnation, one_shot);

    // Before booting: a SIGTERM while loading must drain and exit too, not
    // kill the process with the default action.
    watch_signals(&config).unwrap_or_else(|e| fail(1, &format!("install signal handlers: {e}")));

    // Not bound while booting, so even a tcpSocket probe fails, as with a
    // server that loads its model before it listens.
    thread::sleep(config.boot);
    let listener = TcpListener::bind(("0.0.0.0", config.port))
        .unwrap_or_else(|e| fail(1, &format!("listen on 0.0.0.0:{}: {e}", config.port)));
    let grpc_listener = config.grpc_port.map(|port| {
        TcpListener::bind(("0.0.0.0", port)).unwrap_or_else(|e| fail(1, &format!("listen on 0.0.0.0:{port}: {e}")))
    });
    let server = Arc::new(Server { config, listening_at: Instant::now(), one_shot });
    Line::new("listening").int("port", server.config.port).opt_int("grpc_port", server.config.grpc_port).emit();
    if let Some(grpc_listener) = grpc_listener {
        grpc::spawn(grpc_listener, Arc::clone(&server))
            .unwrap_or_else(|e| fail(1, &format!("start the gRPC server: {e}")));
    }
    schedule(&server);

    for stream in listener.incoming() {
        match stream {
            Ok(stream) if server.config.proxy_to.is_some() => {
                let to = server.config.proxy_to.clone().unwrap_or_default();
                let _ = thread::Builder::new().spawn(move || forward(stream, &to));
            }
            Ok(stream) => {
                let server = Arc::clone(&server);
                // On failure (out of threads) the connection is dropped:
                // the client sees it closed, which a test can tell apart.
                let _ = thread::Builder::new().spawn(move || handle(stream, &server));
            }
            // Out of descriptors, or a connection reset before accept: wait
            // a little rather than spin, and keep serving.
            Err(_) => thread::sleep(Duration::from_millis(50)),
        }
    }
    fail(1, "the listener stopped accepting")
}

/// Counts this incarnation in `STATE_DIR/incarnations` and tells whether it
/// is the first (it created the `first-incarnation` marker). The directory
/// outlives container restarts, so a restarted container boots again but
/// does not pause or wedge again: otherwise a liveness restart caused by the
/// wedge would meet the same wedge forever.
fn incarnation(dir: &Path) -> Result<(Option<u64>, bool), String> {
    let count_file = dir.join("incarnations");
    let previous = match std::fs::read_to_string(&count_file) {
        Ok(text) => text.trim().parse::<u64>().map_err(|e| format!("{}: not a count: {e}", count_file.display()))?,
        Err(e) if e.kind() == ErrorKind::NotFound => 0,
        Err(e) => return Err(format!("read {}: {e}", count_file.display())),
    };
    let count = previous.saturating_add(1);
    // Written aside and renamed, so a kill in between never leaves a torn
    // count for the next incarnation to refuse.
    let temporary = dir.join("incarnations.tmp");
    std::fs::write(&temporary, format!("{count}\n"))
        .and_then(|()| std::fs::rename(&temporary, &count_file))
        .map_err(|e| format!("write {}: {e}", count_file.display()))?;
    // create_new: exactly one incarnation can create it, even if the count
    // was lost.
    let marker = dir.join("first-incarnation");
    let first = match OpenOptions::new().write(true).create_new(true).open(&marker) {
        Ok(_) => true,
        Err(e) if e.kind() == ErrorKind::AlreadyExists => false,
        Err(e) => return Err(format!("create {}: {e}", marker.display())),
    };
    Ok((Some(count), first))
}

/// The `start` line: every setting read, so a test's log shows what the
/// workload was told.
fn log_start(config: &Config, incarnation: Option<u64>, one_shot: bool) {
    Line::new("start")
        .str("version", VERSION)
        .opt_int("incarnation", incarnation)
        .bool("one_shot_armed", one_shot)
        .int("port", config.port)
        .opt_int("grpc_port", config.grpc_port)
        .secs("boot_seconds", config.boot.as_secs_f64())
        .opt_str("state_dir", config.state_dir.as_ref().and_then(|d| d.to_str()))
        .opt_secs("pause_after", config.pause.map(|p| p.after.as_secs_f64()))
        .opt_secs("pause_seconds", config.pause.map(|p| p.duration.as_secs_f64()))
        .opt_secs("wedge_after", config.wedge_after.map(|d| d.as_secs_f64()))
        .opt_secs("crash_after", config.crash_after.map(|d| d.as_secs_f64()))
        .int("crash_code", config.crash_code)
        .opt_str("dependency", config.dependency.as_deref())
        .secs("dependency_timeout_seconds", config.dependency_timeout.as_secs_f64())
        .secs("prestop_seconds", config.prestop.as_secs_f64())
        .secs("request_seconds", config.request.as_secs_f64())
        .secs("drain_seconds", config.drain.as_secs_f64())
        .bool("ignore_sigterm", config.ignore_sigterm)
        .emit();
}

/// A thread that logs SIGTERM/SIGINT; the first one (unless
/// `IGNORE_SIGTERM`) starts the drain: `/readyz` fails, serving goes on for
/// `DRAIN_SECONDS`, then the process exits 0. Later ones are only logged,
/// as a second SIGTERM from a runtime is.
fn watch_signals(config: &Config) -> std::io::Result<()> {
    let mut signals = Signals::new([SIGTERM, SIGINT])?;
    let (drain, ignore) = (config.drain, config.ignore_sigterm);
    thread::Builder::new().name("signals".into()).spawn(move || {
        for signal in signals.forever() {
            let name = signal_hook::low_level::signal_name(signal).unwrap_or("unknown");
            // Logged when it arrives (the kubelet's moment, which the tests
            // read), handled once the process runs again.
            let stuck_until = STUCK_UNTIL_MS.load(Ordering::SeqCst);
            let stuck = stuck_until > now_ms();
            if stuck {
                let forever = stuck_until == u64::MAX;
                Line::new("signal").str("name", name).bool("stuck", true).bool("handled", !forever).emit();
                if forever {
                    continue;
                }
                thread::sleep(Duration::from_millis(stuck_until.saturating_sub(now_ms())));
            }
            let first = !TERMINATING.swap(true, Ordering::SeqCst);
            let starts_drain = !ignore && !DRAINING.swap(true, Ordering::SeqCst);
            // One `signal` line per signal: a stuck one was logged on arrival.
            let event = if stuck { "signal-handled" } else { "signal" };
            Line::new(event).str("name", name).bool("ignored", ignore).bool("starts_drain", starts_drain).emit();
            if first {
                // SIGKILL leaves no line of its own: a heartbeat from the
                // first SIGTERM on puts it within one tick after the last.
                let _ = thread::Builder::new().name("heartbeat".into()).spawn(|| {
                    loop {
                        thread::sleep(HEARTBEAT);
                        Line::new("alive").emit();
                    }
                });
            }
            if starts_drain {
                // Its own thread, so signals during the drain are logged.
                let _ = thread::Builder::new().name("drain".into()).spawn(move || {
                    thread::sleep(drain);
                    Line::new("drain-done").secs("drain_seconds", drain.as_secs_f64()).emit();
                    Line::new("exit").int("code", 0).emit();
                    exit(0);
                });
            }
        }
    })?;
    Ok(())
}

/// The timed behaviours, each on its own thread counting from listening:
/// the pause's and the wedge's log lines (when armed), and the crash.
fn schedule(server: &Arc<Server>) {
    let at = |offset: Duration| server.listening_at + offset;
    if let Some(pause) = server.config.pause.filter(|_| server.one_shot) {
        let (start, end) = (at(pause.after), at(pause.after + pause.duration));
        let end_ms = now_ms().saturating_add(u64::try_from((end - Instant::now()).as_millis()).unwrap_or(u64::MAX));
        spawn_at(start, move || {
            STUCK_UNTIL_MS.store(end_ms, Ordering::SeqCst);
            Line::new("paused").secs("seconds", pause.duration.as_secs_f64()).emit();
            sleep_until(end);
            Line::new("resumed").emit();
        });
    }
    if let Some(after) = server.config.wedge_after.filter(|_| server.one_shot) {
        spawn_at(at(after), || {
            STUCK_UNTIL_MS.store(u64::MAX, Ordering::SeqCst);
            Line::new("wedged").emit();
        });
    }
    if let Some(after) = server.config.crash_after {
        let code = server.config.crash_code;
        spawn_at(at(after), move || {
            Line::new("crash").int("code", code).emit();
            Line::new("exit").int("code", code).emit();
            exit(code);
        });
    }
}

fn spawn_at(when: Instant, f: impl FnOnce() + Send + 'static) {
    let _ = thread::Builder::new().spawn(move || {
        sleep_until(when);
        f();
    });
}

fn sleep_until(when: Instant) {
    thread::sleep(when.saturating_duration_since(Instant::now()));
}

/// One connection: read the request head, hang or hold it if the wedge or
/// the pause says so, answer, log.
fn handle(mut stream: TcpStream, server: &Server) {
    let head = match read_head(&mut stream) {
        // Closed without a word: a tcpSocket probe. Not logged: it never
        // reaches a handler, as with a real server.
        Ok(None) => return,
        Ok(Some(head)) => http::parse_head(&head),
        Err(why) => Err(why),
    };
    let received_ms = now_ms();
    let request = match head {
        Ok(request) => request,
        Err(why) => {
            let _ = stream.write_all(http::response(400, &why).as_bytes());
            let _ = stream.shutdown(Shutdown::Write);
            Line::new("request")
                .null("method")
                .null("path")
                .int("status", 400u16)
                .null("user_agent")
                .str("error", &why)
                .emit();
            return;
        }
    };
    let since_listening = server.listening_at.elapsed();

    let health::Gate::Answer { held } = server.gate(since_listening) else {
        Line::new("request")
            .str("method", &request.method)
            .str("path", &request.target)
            .str("status", "hung")
            .opt_str("user_agent", request.user_agent.as_deref())
            .int("received_ms", received_ms)
            .emit();
        hang(stream);
        return;
    };
    if let Some(held) = held {
        // As a stopped-the-world pause: the kernel accepted the connection,
        // the process answers when it runs again.
        thread::sleep(held);
    }

    let (status, body, dependency) = route(&request, server);
    let written = stream.write_all(http::response(status, &body).as_bytes()).and_then(|()| stream.flush());
    let _ = stream.shutdown(Shutdown::Write);
    let mut line = Line::new("request")
        .str("method", &request.method)
        .str("path", &request.target)
        .int("status", status)
        .opt_str("user_agent", request.user_agent.as_deref())
        .int("received_ms", received_ms);
    if let Some(held) = held {
        line = line.int("held_ms", u64::try_from(held.as_millis()).unwrap_or(u64::MAX));
    }
    if let Some(dependency) = dependency {
        line = line.str("dependency", &dependency);
    }
    if let Err(e) = written {
        // The client gave up before the answer (a probe's timeout).
        line = line.str("write_error", &e.to_string());
    }
    line.emit();
}

/// Carries one connection to `to` and back, byte for byte, until either
/// side closes; the process's exit cuts it. Logged as `proxied` when it
/// ends, with whether the app's side could be reached.
fn forward(client: TcpStream, to: &str) {
    let upstream = match TcpStream::connect(to) {
        Ok(upstream) => upstream,
        Err(e) => {
            Line::new("proxied").str("to", to).str("error", &e.to_string()).emit();
            return;
        }
    };
    let pipe = |mut from: TcpStream, mut into: TcpStream| {
        let _ = std::io::copy(&mut from, &mut into);
        let _ = into.shutdown(Shutdown::Write);
    };
    let (Ok(client_reader), Ok(upstream_reader)) = (client.try_clone(), upstream.try_clone()) else { return };
    let back = thread::spawn(move || pipe(upstream_reader, client));
    pipe(client_reader, upstream);
    let _ = back.join();
    Line::new("proxied").str("to", to).emit();
}

/// The request head, up to its blank line; `None` when the client closed
/// without sending anything.
fn read_head(stream: &mut TcpStream) -> Result<Option<Vec<u8>>, String> {
    stream.set_read_timeout(Some(HEAD_TIMEOUT)).map_err(|e| format!("set timeout: {e}"))?;
    let mut head = Vec::new();
    let mut chunk = [0u8; 2048];
    // Bounded by MAX_HEAD bytes and HEAD_TIMEOUT per read.
    loop {
        if let Some(end) = http::head_end(&head) {
            head.truncate(end);
            return Ok(Some(head));
        }
        if head.len() > http::MAX_HEAD {
            return Err(format!("request head over {} bytes", http::MAX_HEAD));
        }
        match stream.read(&mut chunk) {
            Ok(0) if head.is_empty() => return Ok(None),
            Ok(0) => return Err("closed in the middle of the request head".to_owned()),
            Ok(n) => head.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if head.is_empty() && e.kind() == ErrorKind::ConnectionReset => return Ok(None),
            Err(e) => return Err(format!("read the request head: {e}")),
        }
    }
}

/// Never answers: waits, without a timeout, until the client closes (a
/// probe's timeout), then lets go of the connection. Closing earlier would
/// tell the client something; waiting on after it closed would only pile up
/// threads, one per probe.
fn hang(mut stream: TcpStream) {
    let _ = stream.set_read_timeout(None);
    let mut sink = [0u8; 512];
    loop {
        match stream.read(&mut sink) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// The handler for the request's path: (status, body, the dependency check's
/// verdict if it made one).
fn route(request: &http::Request, server: &Server) -> (u16, String, Option<String>) {
    let config = &server.config;
    if let Some(check) = health::Check::of_path(request.path()) {
        let verdict = server.answer(check);
        return (if verdict.healthy { 200 } else { 503 }, verdict.why, verdict.dependency);
    }
    match request.path() {
        "/prestop" => {
            Line::new("prestop-start").str("via", "http").secs("seconds", config.prestop.as_secs_f64()).emit();
            thread::sleep(config.prestop);
            Line::new("prestop-end").str("via", "http").emit();
            (200, "ok".to_owned(), None)
        }
        "/" => {
            // Long enough for a SIGKILL to cut it when the test says so.
            thread::sleep(config.request);
            (200, "ok".to_owned(), None)
        }
        _ => (404, "not found".to_owned(), None),
    }
}

/// The pod sandbox process: nothing to do but wait for SIGTERM/SIGINT and
/// exit 0. It does not reap children, which needs `waitpid` (unsafe code,
/// forbidden here); the tests' sandboxes have none (no shared process
/// namespace, hostNetwork).
fn pause() {
    let mut signals = match Signals::new([SIGTERM, SIGINT]) {
        Ok(signals) => signals,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "{NAME} pause: install signal handlers: {e}");
            exit(1);
        }
    };
    // As PID 1 a signal without a handler is ignored, so the handlers above
    // are what let the runtime stop the sandbox with SIGTERM.
    let _ = signals.forever().next();
    exit(0);
}

/// An exec preStop hook: its own output is kept by the kubelet only when it
/// fails, so it writes to the container's main process's stdout (PID 1 in
/// the container) to land in the container log beside the server's lines.
fn prestop(seconds: &str) {
    let duration = config::parse_seconds(seconds).unwrap_or_else(|e| {
        let _ = writeln!(std::io::stderr(), "{NAME} prestop: SECONDS={seconds:?}: {e}");
        exit(2);
    });
    to_main_stdout(&Line::new("prestop-start").str("via", "exec").secs("seconds", duration.as_secs_f64()).finish());
    thread::sleep(duration);
    to_main_stdout(&Line::new("prestop-end").str("via", "exec").finish());
    exit(0);
}

/// An exec postStart hook, logged as `prestop` logs: it runs SECONDS, then
/// exits with EXIT_CODE (a non-zero code makes the kubelet kill the
/// container: `FailedPostStartHook`).
fn poststart(seconds: &str, code: &str) {
    let duration = config::parse_seconds(seconds).unwrap_or_else(|e| {
        let _ = writeln!(std::io::stderr(), "{NAME} poststart: SECONDS={seconds:?}: {e}");
        exit(2);
    });
    let code: i32 = code.parse().unwrap_or_else(|e| {
        let _ = writeln!(std::io::stderr(), "{NAME} poststart: EXIT_CODE={code:?}: {e}");
        exit(2);
    });
    to_main_stdout(&Line::new("poststart-start").secs("seconds", duration.as_secs_f64()).int("code", code).finish());
    thread::sleep(duration);
    to_main_stdout(&Line::new("poststart-end").int("code", code).finish());
    exit(code);
}

/// Writes `line` to PID 1's stdout, else to this process's, and to
/// `LOG_FILE` (the hook runs with the container's environment).
fn to_main_stdout(line: &str) {
    log::append_to_log_file(line);
    let written =
        OpenOptions::new().append(true).open("/proc/1/fd/1").and_then(|mut out| out.write_all(line.as_bytes()));
    if written.is_err() {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(line.as_bytes()).and_then(|()| out.flush());
    }
}
