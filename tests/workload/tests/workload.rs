//! The built workload binary on a free loopback port, as the kubelet would
//! run it: booting, serving, logging JSON lines, draining on SIGTERM,
//! failing readiness on a dependency that never answers, pausing, wedging,
//! and refusing bad settings.

mod support;

use std::io::ErrorKind;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{BIN, Workload, get, probe, wait_serving};

#[test]
fn boots_serves_logs_and_drains_on_sigterm() {
    let mut workload = Workload::start(&[("BOOT_SECONDS", "1.5"), ("DRAIN_SECONDS", "1.5")]);
    let start = workload.wait_event("start", Duration::from_secs(5), |_| true);
    assert_eq!(start["boot_seconds"], 1.5);
    assert_eq!(start["drain_seconds"], 1.5);
    assert_eq!(start["incarnation"], Value::Null, "no STATE_DIR");

    // Booting: nothing listens yet, so even a TCP connect fails.
    let refused = TcpStream::connect_timeout(&workload.addr, Duration::from_secs(1));
    assert_eq!(refused.map_err(|e| e.kind()).err(), Some(ErrorKind::ConnectionRefused), "connected while booting");

    wait_serving(&workload, Duration::from_secs(10));
    let listening = workload.wait_event("listening", Duration::from_secs(1), |_| true);
    let booted = listening["t_ms"].as_u64().unwrap_or(0).saturating_sub(start["t_ms"].as_u64().unwrap_or(0));
    assert!(booted >= 1400, "listening {booted} ms after start, BOOT_SECONDS=1.5");

    assert_eq!(probe(workload.addr, "/livez"), (200, "ok".to_owned()));
    assert_eq!(probe(workload.addr, "/readyz").0, 200);
    assert_eq!(probe(workload.addr, "/healthz").0, 200, "no DEPENDENCY: local");
    assert_eq!(probe(workload.addr, "/").0, 200);
    assert_eq!(probe(workload.addr, "/nothing").0, 404);
    let request = workload.wait_event("request", Duration::from_secs(2), |e| {
        e["path"] == "/livez" && e["user_agent"] == "kube-probe/1.37"
    });
    assert_eq!(request["method"], "GET");
    assert_eq!(request["status"], 200);

    workload.signal("TERM");
    let terminated = Instant::now();
    let signal = workload.wait_event("signal", Duration::from_secs(5), |_| true);
    assert_eq!(signal["name"], "SIGTERM");
    // Draining: still serving, but no longer ready.
    assert_eq!(probe(workload.addr, "/readyz"), (503, "draining".to_owned()));
    assert_eq!(probe(workload.addr, "/livez").0, 200);
    // A second SIGTERM is only logged.
    workload.signal("TERM");
    workload.wait_event("signal", Duration::from_secs(5), |e| e["starts_drain"] == false);

    let status = workload.wait_exit(Duration::from_millis(1500 + 3000));
    assert_eq!(status.code(), Some(0));
    assert!(terminated.elapsed() >= Duration::from_millis(1300), "exited {:?} after SIGTERM", terminated.elapsed());
    let events = workload.events();
    let names: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    assert_eq!(names.first(), Some(&"start"));
    assert_eq!(names[names.len().saturating_sub(2)..], ["drain-done", "exit"], "{names:?}");
    assert_eq!(events.last().map(|e| &e["code"]), Some(&Value::from(0)));
}

#[test]
fn readyz_fails_after_the_timeout_when_the_dependency_never_answers() {
    // Accepted by the kernel (the backlog), never answered: a stalled
    // dependency.
    let dependency = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let address = dependency.local_addr().expect("its address").to_string();
    let workload = Workload::start(&[("DEPENDENCY", &address), ("DEPENDENCY_TIMEOUT_SECONDS", "1")]);
    wait_serving(&workload, Duration::from_secs(10));

    let asked = Instant::now();
    let (status, body) = probe(workload.addr, "/readyz");
    let took = asked.elapsed();
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("timed out"), "{body}");
    assert!(took >= Duration::from_millis(950) && took < Duration::from_secs(5), "answered after {took:?}");
    // Liveness is local: not held by the dependency.
    let asked = Instant::now();
    assert_eq!(probe(workload.addr, "/livez").0, 200);
    assert!(asked.elapsed() < Duration::from_millis(900));

    let request = workload.wait_event("request", Duration::from_secs(2), |e| e["path"] == "/readyz");
    assert_eq!(request["status"], 503);
    assert!(request["dependency"].as_str().is_some_and(|d| d.starts_with("dependency failed: timed out")), "{request}");
    drop(dependency);
}

#[test]
fn the_pause_and_the_wedge_happen_in_the_first_incarnation_only() {
    let state = StateDir::new();
    let state_dir = state.0.to_str().expect("a UTF-8 temporary path").to_owned();
    // A pause from listening for 2 s (long enough for the first probe to
    // land in it on a busy machine), then the wedge.
    let env = [("STATE_DIR", state_dir.as_str()), ("PAUSE", "0:2"), ("WEDGE_AFTER", "2.5")];
    {
        let workload = Workload::start(&env);
        let start = workload.wait_event("start", Duration::from_secs(5), |_| true);
        assert_eq!((start["incarnation"].as_u64(), start["one_shot_armed"].as_bool()), (Some(1), Some(true)));
        wait_serving(&workload, Duration::from_secs(10));
        let paused = workload.wait_event("paused", Duration::from_secs(2), |_| true);
        let resumed = workload.wait_event("resumed", Duration::from_secs(4), |_| true);
        let held = workload.wait_event("request", Duration::from_secs(1), |e| e["held_ms"].is_u64());
        assert!(held["t_ms"].as_u64() >= resumed["t_ms"].as_u64(), "answered during the pause: {held} {resumed}");
        assert!(paused["t_ms"].as_u64() <= held["received_ms"].as_u64(), "{paused} {held}");

        workload.wait_event("wedged", Duration::from_secs(3), |_| true);
        // Wedged: the connection is accepted, the request never answered.
        let hung = get(workload.addr, "/livez", "kube-probe/1.37", Duration::from_millis(500));
        assert!(
            hung.as_ref().is_err_and(|e| matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)),
            "{hung:?}"
        );
        workload.wait_event("request", Duration::from_secs(2), |e| e["status"] == "hung");
    }
    // The next incarnation (a container restart: same STATE_DIR) neither
    // pauses nor wedges.
    let workload = Workload::start(&env);
    let start = workload.wait_event("start", Duration::from_secs(5), |_| true);
    assert_eq!((start["incarnation"].as_u64(), start["one_shot_armed"].as_bool()), (Some(2), Some(false)));
    wait_serving(&workload, Duration::from_secs(10));
    let answered_at_once = || {
        let asked = Instant::now();
        assert_eq!(probe(workload.addr, "/livez").0, 200);
        assert!(asked.elapsed() < Duration::from_millis(900), "held for {:?}", asked.elapsed());
    };
    answered_at_once();
    std::thread::sleep(Duration::from_millis(2600));
    answered_at_once();
    assert!(!workload.events().iter().any(|e| e["event"] == "paused" || e["event"] == "wedged"));
}

#[test]
fn crashes_with_the_code_it_was_given() {
    let mut workload = Workload::start(&[("CRASH_AFTER", "0.2"), ("CRASH_CODE", "7")]);
    assert_eq!(workload.wait_exit(Duration::from_secs(5)).code(), Some(7));
    let names: Vec<String> = workload.events().iter().filter_map(|e| e["event"].as_str().map(str::to_owned)).collect();
    assert_eq!(names, ["start", "listening", "crash", "exit"]);
}

#[test]
fn bad_settings_exit_2_naming_the_variable() {
    for (env, variable) in [
        (vec![], "PORT"),
        (vec![("PORT", "http")], "PORT"),
        (vec![("PORT", "8080"), ("BOOT_SECONDS", "-1")], "BOOT_SECONDS"),
        (vec![("PORT", "8080"), ("PAUSE", "10")], "PAUSE"),
        (vec![("PORT", "8080"), ("DEPENDENCY", "nowhere")], "DEPENDENCY"),
    ] {
        let output = Command::new(BIN).env_clear().envs(env.iter().copied()).output().expect("run the workload");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{env:?}: {stderr}");
        assert!(stderr.contains(variable), "{env:?}: {stderr}");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let exit: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
        assert_eq!((&exit["event"], &exit["code"]), (&Value::from("exit"), &Value::from(2)));
    }
    let usage = Command::new(BIN).arg("serve").output().expect("run the workload");
    assert_eq!(usage.status.code(), Some(2));
    let version = Command::new(BIN).arg("--version").output().expect("run the workload");
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("lifeguard-test-workload "));
}

/// A fresh directory under the system's temporary directory, removed on
/// drop (the workspace's tempfile would be one more dependency for this
/// crate alone).
struct StateDir(PathBuf);

impl StateDir {
    fn new() -> StateDir {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!("lifeguard-test-workload-{}-{nanos}", std::process::id()));
        std::fs::create_dir(&dir).expect("create a state directory");
        StateDir(dir)
    }
}

impl Drop for StateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn a_sigterm_in_a_pause_is_logged_on_arrival_and_handled_when_the_pause_ends() {
    let dir = tempfile_dir("pause-sigterm");
    let log_file = dir.join("events.jsonl");
    let log_file_text = log_file.display().to_string();
    let mut workload = Workload::start(&[("PAUSE", "0.2:1.5"), ("LOG_FILE", &log_file_text)]);
    let paused = workload.wait_event("paused", Duration::from_secs(5), |_| true);
    workload.signal("TERM");
    let arrived = workload.wait_event("signal", Duration::from_secs(2), |e| e["stuck"] == true);
    assert!(arrived["t_ms"].as_u64() < paused["t_ms"].as_u64().map(|t| t + 1_500), "logged while paused");
    let status = workload.wait_exit(Duration::from_secs(5));
    assert!(status.success(), "{status:?}");
    let handled = workload.wait_event("signal-handled", Duration::from_secs(1), |_| true);
    // The pause (1.5 s from `paused`) ends first; its own `resumed` line may
    // not come, the process exiting at once.
    assert!(handled["t_ms"].as_u64() >= paused["t_ms"].as_u64().map(|t| t + 1_400), "handled after the pause");
    // Exactly one `signal` line for the one SIGTERM: a test counts them.
    assert_eq!(workload.events().iter().filter(|e| e["event"] == "signal").count(), 1);
    // LOG_FILE has every line stdout had, in order.
    let kept = std::fs::read_to_string(&log_file).expect("the log file");
    let stdout: Vec<String> = workload.lines.lock().expect("the lines").clone();
    assert_eq!(kept.lines().collect::<Vec<_>>(), stdout.iter().map(String::as_str).collect::<Vec<_>>());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_wedged_process_logs_sigterm_and_never_exits_but_beats_until_killed() {
    let workload = Workload::start(&[("WEDGE_AFTER", "0.1"), ("IGNORE_SIGTERM", "0")]);
    workload.wait_event("wedged", Duration::from_secs(5), |_| true);
    workload.signal("TERM");
    workload.wait_event("signal", Duration::from_secs(2), |e| e["stuck"] == true && e["handled"] == false);
    std::thread::sleep(Duration::from_millis(600));
    assert!(workload.events().iter().all(|e| e["event"] != "exit"), "a hung process does not exit");
    // A drain that runs is heard every 200 ms until it exits.
    let mut draining = Workload::start(&[("DRAIN_SECONDS", "1")]);
    wait_serving(&draining, Duration::from_secs(5));
    draining.signal("TERM");
    assert!(draining.wait_exit(Duration::from_secs(5)).success());
    let beats = draining.events().iter().filter(|e| e["event"] == "alive").count();
    assert!((3..=6).contains(&beats), "{beats} heartbeats in a 1 s drain");
}

/// A fresh directory under the system's temporary directory.
fn tempfile_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lifeguard-workload-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}
