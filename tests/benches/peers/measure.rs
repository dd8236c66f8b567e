//! One run of one tool, measured as `/usr/bin/time` would: the bench runs
//! itself as `--measure OUT PROGRAM ARGS... [--then PROGRAM ARGS...]...`,
//! which runs the commands one after the other (kyverno's groups), the
//! output of the i-th into `OUT.i`, and prints the wall time, the CPU time
//! (user and system) and the peak RSS of the tool and of every process it
//! waited for (Checkov forks workers), read with getrusage once they are
//! gone. A child of its own per run, so no other tool's peak counts.

// A benchmark's edge: what it measured is its report on the terminal.
#![allow(clippy::print_stderr, clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::resource::{UsageWho, getrusage};

/// What one run cost.
#[derive(Clone, Copy, Debug)]
pub struct Cost {
    /// From the first spawn to the last exit.
    pub wall: Duration,
    /// User and system time of the tool and its waited-for children.
    pub cpu: Duration,
    /// The largest peak resident set of any of those processes, in bytes.
    pub peak_rss: u64,
}

/// Separates the commands of one run on the child's command line.
const THEN: &str = "--then";

/// The `i`-th command's output file.
pub fn output(out: &Path, i: usize) -> PathBuf {
    out.with_extension(format!("{i}"))
}

/// The child's side: runs `args` (`OUT PROGRAM ARGS... [--then ...]`),
/// prints the cost as `wall_ns cpu_ns peak_rss_bytes exit_code...`.
pub fn child(args: &[String]) {
    let Some((out, commands)) = args.split_first() else {
        eprintln!("--measure needs OUT PROGRAM [ARGS...]");
        std::process::exit(2);
    };
    let out = Path::new(out);
    let mut codes = Vec::new();
    let start = Instant::now();
    for (i, command) in commands.split(|a| a == THEN).enumerate() {
        let Some((program, rest)) = command.split_first() else { continue };
        let path = output(out, i);
        let stdout = std::fs::File::create(&path).unwrap_or_else(|e| panic!("create {}: {e}", path.display()));
        let errors = path.with_extension(format!("{i}.stderr"));
        let stderr = std::fs::File::create(&errors).unwrap_or_else(|e| panic!("create {}: {e}", errors.display()));
        let status = Command::new(program)
            .args(rest)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .status()
            .unwrap_or_else(|e| panic!("run {program}: {e}"));
        codes.push(status.code().unwrap_or(-1).to_string());
    }
    let wall = start.elapsed();
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).expect("getrusage of the children");
    let micros = |t: nix::sys::time::TimeVal| t.tv_sec() as u128 * 1_000_000 + t.tv_usec() as u128;
    let cpu_ns = (micros(usage.user_time()) + micros(usage.system_time())) * 1000;
    // ru_maxrss is in KiB on Linux.
    let peak = u64::try_from(usage.max_rss()).unwrap_or(0) * 1024;
    println!("{} {cpu_ns} {peak} {}", wall.as_nanos(), codes.join(" "));
}

/// The parent's side: runs `commands` (one tool's: the same environment
/// and directory) through `--measure`, the i-th one's output into
/// [`output`]`(out, i)`; the cost and each command's exit code.
pub fn run(commands: &[Command], out: &Path) -> (Cost, Vec<i32>) {
    let exe = std::env::current_exe().expect("the bench's own path");
    let mut measured = Command::new(exe);
    measured.arg("--measure").arg(out);
    for (i, command) in commands.iter().enumerate() {
        if i > 0 {
            measured.arg(THEN);
        }
        measured.arg(command.get_program()).args(command.get_args());
    }
    if let Some(first) = commands.first() {
        for (key, value) in first.get_envs() {
            match value {
                Some(value) => measured.env(key, value),
                None => measured.env_remove(key),
            };
        }
        if let Some(dir) = first.get_current_dir() {
            measured.current_dir(dir);
        }
    }
    let output = measured.output().expect("run the measuring child");
    let line = String::from_utf8_lossy(&output.stdout);
    let fields: Vec<i128> = line.split_whitespace().filter_map(|v| v.parse().ok()).collect();
    let [wall, cpu, peak, ref codes @ ..] = fields[..] else {
        panic!("the measuring child printed {line:?}: {}", String::from_utf8_lossy(&output.stderr));
    };
    let nanos = |n: i128| Duration::from_nanos(u64::try_from(n).unwrap_or(u64::MAX));
    let cost = Cost { wall: nanos(wall), cpu: nanos(cpu), peak_rss: u64::try_from(peak).unwrap_or(0) };
    (cost, codes.iter().map(|c| i32::try_from(*c).unwrap_or(-1)).collect())
}
