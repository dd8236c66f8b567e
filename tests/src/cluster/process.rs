//! Child processes that never outlive the test binary, free loopback ports
//! and bounded waits.
//!
//! The control plane lives in a `static` (one per test binary), and Rust
//! never drops statics, so each child gets a watchdog: a `sh` that blocks
//! reading a pipe from this process and kills the child when the pipe
//! closes. The kernel closes it however this process ends — the harness
//! returning, a panic, an abort, SIGKILL — so no etcd or kube-apiserver is
//! left behind holding ports.

use std::collections::BTreeSet;
use std::fs::File;
use std::net::TcpListener;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// A running child with its watchdog; killed on drop.
pub struct Supervised {
    /// What it is, for messages.
    pub name: String,
    child: Child,
    _watchdog: Option<(Child, ChildStdin)>,
    /// Its stdout and stderr, together.
    pub log: PathBuf,
}

impl Supervised {
    /// Starts `command` with its output in `log`.
    pub fn spawn(name: &str, mut command: Command, log: &Path) -> Supervised {
        let out = File::create(log).unwrap_or_else(|e| panic!("create {}: {e}", log.display()));
        let err = out.try_clone().expect("clone log handle");
        command.stdin(Stdio::null()).stdout(out).stderr(err);
        let child = command.spawn().unwrap_or_else(|e| panic!("start {name}: {e}"));
        let watchdog = watchdog(child.id());
        Supervised { name: name.to_owned(), child, _watchdog: watchdog, log: log.to_owned() }
    }

    /// Panics with the end of its log if it has exited.
    pub fn assert_running(&mut self) {
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!("{} exited ({status}); the end of its log:\n{}", self.name, tail(&self.log, 40));
        }
    }

    /// Sends SIGKILL and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A `sh` that waits for EOF on its stdin, then sends `pid` SIGTERM and,
/// if it is still there a few seconds later, SIGKILL.
pub fn watchdog(pid: u32) -> Option<(Child, ChildStdin)> {
    at_exit(&format!(
        "kill -TERM {pid} 2>/dev/null || exit 0; \
         for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 {pid} 2>/dev/null || exit 0; sleep 0.5; done; \
         kill -KILL {pid} 2>/dev/null"
    ))
}

/// A `sh` that runs `script` once this process has ended, however it ends:
/// it waits for EOF on a pipe whose write end only this process holds (keep
/// the returned stdin for as long as the script must wait).
pub fn at_exit(script: &str) -> Option<(Child, ChildStdin)> {
    let mut child = Command::new("sh")
        .args(["-c", &format!("read _ignored\n{script}")])
        // A group of its own: Ctrl-C, or a signal sent to this process's
        // group, must not end it before it has done its work.
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let stdin = child.stdin.take()?;
    Some((child, stdin))
}

/// What a caught panic said.
pub fn panic_text(panic: &(dyn std::any::Any + Send), otherwise: &str) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| otherwise.to_owned())
}

/// The last `lines` lines of a log file.
pub fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// A loopback port free right now, and never given before in this process
/// (the child binds it a moment later; a port taken in between makes the
/// child fail to start, which its log says).
///
/// The kernel hands a released port out again: of 52 ports taken one after
/// another (a node matrix's two per case), some two were the same in about
/// one run in five. Two host-network pods declaring one port cannot both be
/// scheduled (the port is their hostPort), and two servers on one port
/// cannot both listen, so each port is given once.
pub fn free_port() -> u16 {
    static GIVEN: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());
    // Held while choosing, so two threads never take the same port; a
    // panic elsewhere while held leaves the set whole.
    let mut given = GIVEN.lock().unwrap_or_else(PoisonError::into_inner);
    // The ephemeral range has thousands of ports; a few hundred tries only
    // run out if this process has been given nearly all of them.
    for _ in 0..500 {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free loopback port");
        if given.insert(port) {
            return port;
        }
    }
    panic!("no loopback port this process has not been given before, in 500 tries ({} given)", given.len())
}

/// Polls `ready` every 100 ms until it returns `Ok`, for at most `limit`;
/// panics with `what` and the last error otherwise.
pub fn wait_for<T>(what: &str, limit: Duration, ready: impl FnMut() -> Result<T, String>) -> T {
    poll_for(limit, ready).unwrap_or_else(|last| panic!("{what}: not within {limit:?}; last: {last}"))
}

/// Polls `ready` every 100 ms until it returns `Ok`, for at most `limit`;
/// the last error otherwise, for a caller that says more about the failure
/// than [`wait_for`]'s message does.
pub fn poll_for<T, E>(limit: Duration, mut ready: impl FnMut() -> Result<T, E>) -> Result<T, E> {
    let start = Instant::now();
    loop {
        match ready() {
            Ok(value) => return Ok(value),
            Err(last) if start.elapsed() >= limit => return Err(last),
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}
