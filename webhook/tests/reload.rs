//! Hot reload from files as Kubernetes mounts them: a cert-manager Secret
//! rotated by swapping the volume's `..data` symlink during a burst (no
//! failed request, new connections see the new pair), an invalid pair
//! refused with the old one kept, a policy reloaded and a bad policy
//! refused, and `/readyz` at 503 with the reason until both are loaded.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use common::{
    Burst, Clients, Server, Start, client_tls, deployment, post, review, shared_endpoint_container, write_secret_volume,
};
use serde_json::json;

/// The subject CN a new TLS connection is served.
async fn served_cn(server: &Server) -> String {
    let connector = tokio_rustls::TlsConnector::from(Arc::new(client_tls(&server.ca().pem, true, None)));
    let tcp = tokio::net::TcpStream::connect(server.admission).await.expect("connect");
    let name = rustls::pki_types::ServerName::try_from("localhost").expect("name");
    let tls = connector.connect(name, tcp).await.expect("handshake with a certificate the CA signed");
    let leaf = tls.get_ref().1.peer_certificates().and_then(|c| c.first()).expect("a certificate").clone();
    let (_, cert) = x509_parser::parse_x509_certificate(&leaf).expect("x509");
    cert.subject().iter_common_name().next().and_then(|cn| cn.as_str().ok()).unwrap_or_default().to_owned()
}

async fn wait_cn(server: &Server, want: &str) -> Duration {
    let start = Instant::now();
    loop {
        if served_cn(server).await == want {
            return start.elapsed();
        }
        assert!(start.elapsed() < Duration::from_secs(5), "never served {want:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits (5 s at most) for `done`, polling every 20 ms.
async fn wait_until(what: &str, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(5), "{what}: not within 5 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_symlink_swap_rotates_the_certificate_during_a_burst_without_a_failed_request() {
    let server = Server::start(Start { secret_volume: true, ..Start::default() });
    assert_eq!(served_cn(&server).await, "lifeguard-webhook generation 1");
    let body = review("rot", "CREATE", Some(&deployment("orders", json!([shared_endpoint_container("orders")]))), None);
    // A third of the clients open a new connection (and handshake) each time.
    let burst = Burst::start(&server, "/validate/warn", &body, 12, Some(3));
    wait_until("the burst answered before the rotation", || burst.ok() > 0).await;
    let pair = server.ca().serving("lifeguard-webhook generation 2", &[]);
    let (cert, key) = (pair.cert, pair.key);
    let written = SystemTime::now();
    write_secret_volume(&server.tls_dir(), 2, &cert, &key);
    // Picked up within a few reload intervals (0.2 s) on the server's own
    // clock: the log line's timestamp, not how long a loaded machine takes
    // to hand the test a handshake.
    let reloaded = server.wait_log(
        |l| {
            l["message"] == "serving certificate reloaded"
                && l["subject"].as_str().is_some_and(|s| s.contains("generation 2"))
        },
        Duration::from_secs(5),
    );
    let took = Server::logged_at(&reloaded).duration_since(written).unwrap_or_default();
    assert!(took < Duration::from_secs(2), "picked up {took:?} after the swap (reload interval 0.2 s)");
    wait_cn(&server, "lifeguard-webhook generation 2").await;
    // The burst goes on over the new certificate, new connections included.
    let after_swap = burst.ok();
    wait_until("the burst answered after the rotation", || burst.ok() > after_swap + 12).await;
    let (ok, failed) = burst.stop().await;
    assert_eq!(failed, 0, "no request failed during the rotation ({ok} succeeded)");
    assert_eq!(
        server.metric("lifeguard_webhook_reloads_total", &[r#"what="certificate""#, r#"result="success""#]),
        2.0
    );

    // A key that does not belong to the certificate is refused; generation 2 stays.
    let other_key = server.ca().serving("someone else", &[]).key;
    let cert3 = server.ca().serving("lifeguard-webhook generation 3", &[]).cert;
    write_secret_volume(&server.tls_dir(), 3, &cert3, &other_key);
    server.wait_log(
        |l| l["message"] == "new serving certificate refused; keeping the current pair",
        Duration::from_secs(3),
    );
    assert_eq!(served_cn(&server).await, "lifeguard-webhook generation 2");
    // Garbage is refused too, and counted once, not on every check: the
    // count reaches 2, then stays there over several more checks.
    write_secret_volume(&server.tls_dir(), 4, "not a certificate", "not a key");
    let failures =
        || server.metric("lifeguard_webhook_reloads_total", &[r#"what="certificate""#, r#"result="failure""#]);
    wait_until("the garbage refused", || failures() >= 2.0).await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(served_cn(&server).await, "lifeguard-webhook generation 2");
    assert_eq!(failures(), 2.0);
    assert_eq!(server.health_get("/readyz").0, 200, "a refused rotation does not make the replica unready");
    // And a good pair after the bad ones is taken.
    let pair = server.ca().serving("lifeguard-webhook generation 5", &[]);
    let (cert5, key5) = (pair.cert, pair.key);
    write_secret_volume(&server.tls_dir(), 5, &cert5, &key5);
    wait_cn(&server, "lifeguard-webhook generation 5").await;
}

const ENFORCE: &str = "apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\n";
const RELAXED: &str = "apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\nrules:\n  probe-endpoint-reused: {enabled: false}\n  liveness-checks-dependency: {severity: warning}\n";
const BROKEN: &str = "apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\nparameters:\n  gpuBotSeconds: 1\n";

#[tokio::test(flavor = "multi_thread")]
async fn a_policy_edit_is_picked_up_and_a_bad_one_refused() {
    let server = Server::start(Start { policy: Some(ENFORCE.to_owned()), ..Start::default() });
    let client = server.client(true);
    let body = review("p", "CREATE", Some(&deployment("orders", json!([shared_endpoint_container("orders")]))), None);
    let allowed = |out: &serde_json::Value| out["response"]["allowed"].as_bool();
    let (_, out) = post(&client, &server.url("/validate/enforce"), &body).await;
    assert_eq!(allowed(&out), Some(false));

    // ConfigMap style: the file is replaced through a symlink swap.
    let path = server.policy_path();
    let staged = server.policy_path().with_file_name("policy.v2.yaml");
    std::fs::write(&staged, RELAXED).expect("write");
    std::fs::rename(&staged, &path).expect("swap");
    server.wait_log(|l| l["message"] == "policy reloaded", Duration::from_secs(3));
    let (_, out) = post(&client, &server.url("/validate/enforce"), &body).await;
    assert_eq!(allowed(&out), Some(true), "{out}");
    assert_eq!(out["response"]["warnings"].as_array().map(Vec::len), Some(1), "{out}");

    std::fs::write(&path, BROKEN).expect("write");
    let refused = server
        .wait_log(|l| l["message"] == "policy change refused; keeping the current policy", Duration::from_secs(3));
    assert!(refused["error"].as_str().unwrap_or_default().contains("gpuBootSeconds"), "names the key: {refused}");
    let (_, out) = post(&client, &server.url("/validate/enforce"), &body).await;
    assert_eq!(allowed(&out), Some(true), "the relaxed policy is still in force");
    assert_eq!(server.metric("lifeguard_webhook_reloads_total", &[r#"what="policy""#, r#"result="failure""#]), 1.0);
    assert_eq!(server.metric("lifeguard_webhook_reloads_total", &[r#"what="policy""#, r#"result="success""#]), 2.0);
    assert_eq!(server.health_get("/readyz").0, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn not_ready_with_the_reason_until_certificate_and_policy_load() {
    let dir = tempfile::tempdir().expect("tempdir");
    let policy = dir.path().join("policy.yaml");
    std::fs::write(&policy, BROKEN).expect("write");
    let arg = |p: &std::path::Path| p.to_str().expect("utf-8").to_owned();
    let server = Server::start(Start {
        insecure: true,
        wait_ready: false,
        args: vec!["--policy".into(), arg(&policy)],
        ..Start::default()
    });
    let (status, reason) = server.health_get("/readyz");
    assert_eq!(status, 503);
    assert!(reason.contains("policy") && reason.contains("gpuBootSeconds"), "{reason}");
    assert_eq!(server.health_get("/livez").0, 200, "liveness never depends on the policy");
    assert_eq!(server.health_get("/startupz").0, 503);
    std::fs::write(&policy, ENFORCE).expect("write");
    server.wait_ready(Duration::from_secs(3));
    drop(server);

    // No certificate yet (cert-manager has not issued it): not ready, then ready.
    let server = Server::start(Start { wait_ready: false, write_certs: false, ..Start::default() });
    let (status, reason) = server.health_get("/readyz");
    assert_eq!(status, 503);
    assert!(reason.contains("serving certificate") && reason.contains("tls.crt"), "{reason}");
    let pair = server.ca().serving("lifeguard-webhook generation 1", &[]);
    let (cert, key) = (pair.cert, pair.key);
    std::fs::write(server.tls_dir().join("tls.key"), key).expect("write");
    std::fs::write(server.tls_dir().join("tls.crt"), cert).expect("write");
    server.wait_ready(Duration::from_secs(3));
    assert_eq!(served_cn(&server).await, "lifeguard-webhook generation 1");
}
