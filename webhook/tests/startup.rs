//! What the real binary does as it starts: where it listens when an address
//! is left to its default, what it says when it cannot listen, and what it
//! logs about files missing at start and the certificate it loads.

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

/// Log messages so far.
fn messages(server: &Server) -> Vec<String> {
    server.logs().iter().filter_map(|l| l["message"].as_str().map(str::to_owned)).collect()
}

#[test]
fn a_certificate_missing_at_start_is_not_called_a_current_pair_kept() {
    // The Secret is not issued yet: the files are named but missing.
    let server = Server::start(Start { wait_ready: false, write_certs: false, ..Start::default() });
    let missing = "certificate files cannot be read; not serving TLS until a valid pair appears";
    server.wait_log(|l| l["message"] == missing, Duration::from_secs(5));
    assert!(!messages(&server).iter().any(|m| m.contains("keeping the current pair")), "{:?}", messages(&server));

    let pair = server.ca().serving("lifeguard-webhook generation 1", &[]);
    std::fs::write(server.tls_dir().join("tls.key"), pair.key).expect("write");
    std::fs::write(server.tls_dir().join("tls.crt"), pair.cert).expect("write");
    server.wait_ready(Duration::from_secs(5));
    // Now there is a pair to keep.
    std::fs::remove_file(server.tls_dir().join("tls.crt")).expect("remove");
    let kept = "certificate files cannot be read; keeping the current pair";
    server.wait_log(|l| l["message"] == kept, Duration::from_secs(5));
}

#[test]
fn the_certificate_expiry_is_logged_as_a_date() {
    let server = Server::start(Start { wait_ready: false, write_certs: false, ..Start::default() });
    let mut params = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).expect("params");
    params.not_after = rcgen::date_time_ymd(2031, 5, 17);
    let key = rcgen::KeyPair::generate().expect("key");
    let cert = params.self_signed(&key).expect("certificate");
    std::fs::write(server.tls_dir().join("tls.key"), key.serialize_pem()).expect("write");
    std::fs::write(server.tls_dir().join("tls.crt"), cert.pem()).expect("write");
    let loaded = server.wait_log(|l| l["message"] == "serving certificate loaded", Duration::from_secs(5));
    assert_eq!(loaded["not_after"], "2031-05-17T00:00:00Z", "{loaded}");
    // The metric keeps the Unix time: alerts compare it with time().
    let expiry = server.metric("lifeguard_webhook_certificate_expiry_timestamp_seconds", &[]);
    assert_eq!(expiry, 1_936_742_400.0);
}

#[test]
fn a_policy_missing_at_start_is_not_a_current_policy_kept() {
    let server = Server::start(Start {
        insecure: true,
        wait_ready: false,
        args: vec!["--policy".into(), "no-such-policy.yaml".into()],
        ..Start::default()
    });
    let missing = "policy file cannot be read; not ready until a valid policy appears";
    server.wait_log(|l| l["message"] == missing, Duration::from_secs(5));
    assert!(!messages(&server).iter().any(|m| m.contains("keeping the current policy")), "{:?}", messages(&server));
    assert_eq!(server.health_get("/readyz").0, 503);
}
