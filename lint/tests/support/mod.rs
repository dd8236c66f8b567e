//! Running the real `lifeguard` binary from integration tests.

// Each test binary compiles this module and uses a different part of it.
#![allow(dead_code)]

pub mod simulate;

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Longer than any run may take: past it the run counts as a hang.
const HANG: Duration = Duration::from_secs(60);

/// What a run of the binary left behind.
pub struct Run {
    /// Exit code.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    /// Fails unless the process exited normally, whatever its code: a panic
    /// (exit 101, "panicked" on stderr) is never an acceptable answer.
    pub fn assert_no_panic(&self) {
        assert!(!self.stderr.contains("panicked") && self.code != 101, "lifeguard panicked:\n{}", self.stderr);
    }
}

/// Runs `lifeguard` in `dir` with stdout and stderr piped. `env` sets
/// (`Some`) or removes (`None`) variables. A run longer than a minute is
/// killed and fails the test as a hang.
pub fn lifeguard(dir: &Path, args: &[&str], stdin: Option<&str>, env: &[(&str, Option<&str>)]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lifeguard"));
    cmd.args(args)
        .current_dir(dir)
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, value) in env {
        match value {
            Some(v) => cmd.env(key, v),
            None => cmd.env_remove(key),
        };
    }
    let start = Instant::now();
    let mut child = cmd.spawn().expect("run lifeguard");
    // Drain both pipes on threads so a chatty child never blocks on a full pipe.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut p) = pipe {
                p.read_to_string(&mut text).expect("output is UTF-8");
            }
            text
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(text.as_bytes()).expect("write stdin");
    }
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for lifeguard") {
            break status;
        }
        if start.elapsed() > HANG {
            let _ = child.kill();
            panic!("lifeguard {} hung for more than {HANG:?}", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Run {
        code: status.code().expect("lifeguard exited, not killed by a signal"),
        stdout: stdout.join().expect("stdout reader"),
        stderr: stderr.join().expect("stderr reader"),
    }
}
