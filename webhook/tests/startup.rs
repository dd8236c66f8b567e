//! What the real binary does as it starts: where it listens when an address
//! is left to its default, and what it says when it cannot listen.

mod common;

use std::net::TcpListener;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{Server, Start};

/// Runs the binary to its exit (bounded: it must fail to start).
fn run_to_exit(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lifeguard-webhook"))
        .args(args)
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start lifeguard-webhook");
    let started = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!("still running after 20 s: {}", String::from_utf8_lossy(&out.stdout));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

// Each test uses a loopback address of its own (all of 127/8 is loopback on
// Linux), so they run in parallel on the fixed default port.

#[test]
fn insecure_http_on_loopback_keeps_the_health_port_on_loopback() {
    let server = Server::start(Start {
        insecure: true,
        listen: Some("127.0.0.3:0".to_owned()),
        default_health_listen: true,
        ..Start::default()
    });
    assert_eq!(server.health.to_string(), "127.0.0.3:8080", "the health port follows --listen's address");
    assert_eq!(server.health_get("/livez").0, 200);
    assert_eq!(server.admission.ip().to_string(), "127.0.0.3");
}

#[test]
fn a_default_health_address_in_use_names_the_flag_that_sets_it() {
    // Held here, or already by another process: the server's bind fails
    // either way.
    let _held = TcpListener::bind("127.0.0.2:8080");
    let out = run_to_exit(&["--insecure-http", "--listen", "127.0.0.2:0"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot listen on 127.0.0.2:8080, the health address (--health-listen): "),
        "names the address it tried and the flag that changes it: {stderr}"
    );
}

#[test]
fn an_admission_address_in_use_names_its_flag() {
    let held = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = held.local_addr().expect("address").to_string();
    let out = run_to_exit(&["--insecure-http", "--listen", &addr, "--health-listen", "127.0.0.1:0"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("cannot listen on {addr}, the admission address (--listen): ")), "{stderr}");
}
