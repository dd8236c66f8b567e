//! Connections and the drain. The admission listener serves HTTP/1.1 and
//! HTTP/2 (over TLS by ALPN) until the drain's last phase; each connection
//! is told to shut down gracefully when it must, and in-flight requests are
//! tracked so shutdown waits for them within the budget.

use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;
use tokio_util::task::TaskTracker;

/// Where the server is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Normal service.
    Serving,
    /// SIGTERM received: still admitting while endpoints converge. HTTP/2
    /// connections get a GOAWAY (the client opens a new connection for its
    /// next request; streams in flight finish) and HTTP/1.1 responses carry
    /// `Connection: close`, so clients move off this replica without a
    /// failed request.
    Draining,
    /// The listener is closed; connections finish their requests and close.
    Closing,
}

/// How long an HTTP/1.1 connection may wait for the next request's headers
/// (hyper's header read timeout also bounds the idle time between requests).
/// Longer than the API server's idle keep-alive (Go's 90 s), so lifeguard
/// never closes an idle connection the client may be writing a request to;
/// request bodies have the per-request deadline.
const HTTP1_IDLE_TIMEOUT: Duration = Duration::from_secs(120);

/// A TLS handshake that takes longer than this is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Accepts connections until the phase is [`Phase::Closing`], then drops
/// the listener. Connection tasks are spawned on `tracker`.
pub async fn serve(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    app: Router,
    phase: watch::Receiver<Phase>,
    tracker: TaskTracker,
) {
    let closing = until_closing(phase.clone());
    tokio::pin!(closing);
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _peer)) => {
                    let (tls, app, phase) = (tls.clone(), app.clone(), phase.clone());
                    tracker.spawn(connection(tcp, tls, app, phase));
                }
                // Out of descriptors and the like: back off instead of spinning.
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            () = &mut closing => break,
        }
    }
    drop(listener);
}

async fn until_closing(mut phase: watch::Receiver<Phase>) {
    // A dropped sender means the server is going away: close too.
    let _ = phase.wait_for(|p| *p == Phase::Closing).await.map(|_| ());
}

async fn connection(tcp: TcpStream, tls: Option<TlsAcceptor>, app: Router, phase: watch::Receiver<Phase>) {
    let _ = tcp.set_nodelay(true);
    match tls {
        None => drive(TokioIo::new(tcp), None, app, phase).await,
        Some(acceptor) => {
            let stream = match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                Ok(Ok(stream)) => stream,
                Ok(Err(e)) => {
                    tracing::debug!(error = %e, "TLS handshake failed");
                    return;
                }
                Err(_) => return,
            };
            // ALPN decided the protocol: serve it directly, so no connection
            // sits in hyper's version sniffing, where a graceful shutdown is
            // an abrupt close.
            let h2 = match stream.get_ref().1.alpn_protocol() {
                Some(b"h2") => Some(true),
                Some(_) => Some(false),
                None => None,
            };
            drive(TokioIo::new(stream), h2, app, phase).await;
        }
    }
}

/// Serves one connection; `h2` is what ALPN chose (`None`: sniff it).
async fn drive<I>(io: I, h2: Option<bool>, app: Router, mut phase: watch::Receiver<Phase>)
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    // Only phase changes after this connection was accepted concern it: one
    // accepted during the drain is served normally until the listener closes
    // (it is a client that has not seen the endpoint change yet).
    phase.mark_unchanged();
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder = match h2 {
        Some(true) => builder.http2_only(),
        Some(false) => builder.http1_only(),
        None => builder,
    };
    let h2 = h2 == Some(true);
    builder.http1().timer(TokioTimer::new()).header_read_timeout(HTTP1_IDLE_TIMEOUT);
    builder.http2().timer(TokioTimer::new()).keep_alive_interval(Some(Duration::from_secs(30)));
    let conn = builder.serve_connection(io, TowerToHyperService::new(app));
    tokio::pin!(conn);
    let mut told = false;
    if *phase.borrow() == Phase::Closing {
        conn.as_mut().graceful_shutdown();
        told = true;
    }
    loop {
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!(error = %e, "connection ended with an error");
                }
                return;
            }
            changed = phase.changed(), if !told => {
                let now = *phase.borrow_and_update();
                if changed.is_err() || now == Phase::Closing || (now == Phase::Draining && h2) {
                    conn.as_mut().graceful_shutdown();
                    told = true;
                }
            }
        }
    }
}
