//! The drain contract, with real signals: on SIGTERM `/readyz` turns 503 at
//! once while `/livez` stays 200; admission goes on for `--drain-seconds`;
//! then the listener closes, in-flight requests finish within
//! `--shutdown-budget-seconds`, and the process exits 0.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use common::{Burst, Clients, Server, Start, client_tls, deployment, post, review, shared_endpoint_container};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigterm_during_a_burst_fails_no_request_and_exits_zero() {
    let mut server = Server::start(Start::default());
    let body =
        review("burst", "CREATE", Some(&deployment("orders", json!([shared_endpoint_container("orders")]))), None);
    let burst = Burst::start(&server, "/validate/warn", &body, 16, None);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = burst.ok();
    assert!(before > 0, "the burst is running");

    let signalled = Instant::now();
    let signalled_at = SystemTime::now();
    server.signal("TERM");
    let health = server.health;
    // Every /readyz poll with the wall-clock time it was sent, until one is 503.
    let polls = tokio::task::spawn_blocking(move || {
        let mut polls = Vec::new();
        loop {
            let sent = SystemTime::now();
            let status = common::http_get(health, "/readyz").0;
            polls.push((sent, status));
            if status == 503 {
                return polls;
            }
            assert!(signalled.elapsed() < Duration::from_secs(5), "/readyz never turned 503");
        }
    })
    .await
    .expect("poll");
    // The server turns readiness off before it logs "draining:", so no poll
    // sent after that line's timestamp may see 200: this holds on the
    // server's own clock however slowly a loaded machine delivers the
    // signal or answers the polls.
    let draining =
        server.wait_log(|l| l["message"].as_str().is_some_and(|m| m.starts_with("draining:")), Duration::from_secs(5));
    let began = Server::logged_at(&draining);
    for (sent, status) in &polls {
        if *sent > began {
            assert_eq!(*status, 503, "a /readyz sent after the drain began answered {status}: {polls:?}");
        }
    }
    // And the signal is handled at once: within a second on a loaded
    // machine (a readiness probe's shortest period), typically in a few ms.
    let reaction = began.duration_since(signalled_at).unwrap_or_default();
    assert!(reaction < Duration::from_secs(1), "the drain began {reaction:?} after SIGTERM");
    let (live, _) = server.health_get("/livez");
    assert_eq!(live, 200, "/livez stays 200 during the drain");
    let (status, reason) = server.health_get("/readyz");
    assert_eq!((status, reason.trim()), (503, "draining: shutting down"));
    assert_eq!(server.health_get("/startupz").0, 200, "startup does not flap during the drain");

    // Endpoints converge well within the 1 s drain: the clients stop here.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let during_drain = burst.ok() - before;
    let (ok, failed) = burst.stop().await;
    assert!(during_drain > 0, "admission went on during the drain");
    assert_eq!(failed, 0, "no request failed ({ok} succeeded)");

    let status = server.wait_exit(Duration::from_secs(6));
    let took = signalled.elapsed();
    assert!(status.success(), "exit 0, got {status:?}");
    assert!(took < Duration::from_secs(4) + Duration::from_millis(500), "exit within drain + budget, took {took:?}");
    let messages: Vec<String> = server.logs().iter().filter_map(|l| l["message"].as_str().map(str::to_owned)).collect();
    for phase in ["draining:", "drain over:", "all connections finished", "exiting"] {
        assert!(messages.iter().any(|m| m.starts_with(phase)), "phase {phase:?} is logged: {messages:?}");
    }
}

/// A raw TLS connection on which a request can be sent in parts.
async fn tls_stream(server: &Server) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
    let connector = tokio_rustls::TlsConnector::from(Arc::new(client_tls(&server.ca().pem, false, None)));
    let tcp = tokio::net::TcpStream::connect(server.admission).await.expect("connect");
    let name = rustls::pki_types::ServerName::try_from("localhost").expect("name");
    connector.connect(name, tcp).await.expect("handshake")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_in_flight_when_the_listener_closes_is_answered() {
    let mut server = Server::start(Start::default());
    let body =
        review("late", "CREATE", Some(&deployment("orders", json!([shared_endpoint_container("orders")]))), None)
            .to_string();
    let (first, rest) = body.split_at(body.len() / 2);
    let mut stream = tls_stream(&server).await;
    let head = format!(
        "POST /validate/warn HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.expect("write");
    stream.write_all(first.as_bytes()).await.expect("write");
    stream.flush().await.expect("flush");

    let signalled = Instant::now();
    server.signal("TERM");
    // Past the 1 s drain: the listener is closed, new connections refused.
    let closed = server
        .wait_log(|l| l["message"].as_str().is_some_and(|m| m.starts_with("drain over:")), Duration::from_secs(3));
    assert_eq!(closed["in_flight_connections"], 1, "{closed}");
    assert!(tokio::net::TcpStream::connect(server.admission).await.is_err(), "the listener is closed");

    stream.write_all(rest.as_bytes()).await.expect("write the rest");
    stream.flush().await.expect("flush");
    let mut response = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(3), stream.read_to_end(&mut response)).await;
    let text = String::from_utf8_lossy(&response);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(text.to_ascii_lowercase().contains("connection: close"), "asked to close while draining: {text}");
    assert!(text.contains("\"uid\":\"late\""), "{text}");
    assert!(server.wait_exit(Duration::from_secs(5)).success());
    assert!(signalled.elapsed() < Duration::from_millis(4500));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_that_never_ends_cannot_hold_the_exit_past_the_budget() {
    let mut server = Server::start(Start::args(&["--request-timeout-seconds", "30"]));
    let mut stream = tls_stream(&server).await;
    let head = "POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{";
    stream.write_all(head.as_bytes()).await.expect("write");
    stream.flush().await.expect("flush");
    let signalled = Instant::now();
    server.signal("TERM");
    let status = server.wait_exit(Duration::from_secs(8));
    let took = signalled.elapsed();
    assert!(status.success(), "{status:?}");
    // Drain 1 s + budget 3 s.
    assert!(took >= Duration::from_secs(4) && took < Duration::from_millis(4800), "took {took:?}");
    assert!(
        server.logs().iter().any(|l| l["message"].as_str().is_some_and(|m| m.starts_with("shutdown budget spent"))),
        "the cut is logged"
    );
    drop(stream);
}

#[tokio::test(flavor = "multi_thread")]
async fn sigint_drains_the_same_way() {
    let mut server = Server::start(Start::default());
    let (status, _) = post(&server.client(true), &server.url("/validate"), &review("i", "CREATE", None, None)).await;
    assert_eq!(status, 200);
    server.signal("INT");
    assert!(server.wait_exit(Duration::from_secs(6)).success());
}
