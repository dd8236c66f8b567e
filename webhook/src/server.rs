//! Connections and the drain. The admission listener serves HTTP/1.1 and
//! HTTP/2 (over TLS by ALPN) until the drain's last phase; each connection
//! is told to shut down gracefully when it must, and in-flight requests are
//! tracked so shutdown waits for them within the budget. Each connection
//! lives within its listener's [`Bounds`]: a slot under the cap, a bound on
//! the time to read a request's headers, and one on its idle time.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;
use tokio_util::task::TaskTracker;

use crate::activity::{Activity, Due, Tracked, Watched};
use crate::config::Bounds;
use crate::connections::{Connections, Slot};

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

/// A TLS handshake that takes longer than this is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Accepts connections until the phase is [`Phase::Closing`], then drops
/// the listener. Connection tasks are spawned on `tracker`; a connection
/// accepted at the cap of `connections` is closed at once.
pub async fn serve(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    app: Router,
    phase: watch::Receiver<Phase>,
    tracker: TaskTracker,
    connections: Arc<Connections>,
) {
    let closing = until_closing(phase.clone());
    tokio::pin!(closing);
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _peer)) => {
                    // Refused before the handshake: the cap bounds TLS state too.
                    let Some(slot) = connections.admit() else { continue };
                    let (tls, app, phase) = (tls.clone(), app.clone(), phase.clone());
                    tracker.spawn(connection(tcp, tls, app, phase, Served { bounds: connections.bounds, slot }));
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

/// What a connection's task holds besides the stream.
struct Served {
    bounds: Bounds,
    /// Given back when the task ends.
    slot: Slot,
}

async fn connection(
    tcp: TcpStream,
    tls: Option<TlsAcceptor>,
    app: Router,
    phase: watch::Receiver<Phase>,
    served: Served,
) {
    let _ = tcp.set_nodelay(true);
    match tls {
        // Plain HTTP (the health port, --insecure-http) is HTTP/1.1 only:
        // kubelet probes and scrapers speak it, and a sniffed protocol would
        // leave a slow head unbounded until the sniffing ends.
        None => drive(tcp, false, app, phase, served).await,
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
            // an abrupt close. HTTP/2 over TLS is negotiated by ALPN (RFC
            // 9113, section 3.2): without it the client speaks HTTP/1.1.
            let h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
            drive(stream, h2, app, phase, served).await;
        }
    }
}

/// Serves one connection over HTTP/2 or HTTP/1.1.
async fn drive<S>(stream: S, h2: bool, app: Router, mut phase: watch::Receiver<Phase>, served: Served)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    // Only phase changes after this connection was accepted concern it: one
    // accepted during the drain is served normally until the listener closes
    // (it is a client that has not seen the endpoint change yet).
    phase.mark_unchanged();
    let builder = auto::Builder::new(TokioExecutor::new());
    let mut builder = if h2 { builder.http2_only() } else { builder.http1_only() };
    // Heads are watched on HTTP/1.1 only: HTTP/2 exchanges frames between
    // requests.
    let activity = Activity::new(Instant::now(), !h2);
    // hyper's own header timer (30 s by default once a timer is set) starts
    // when it starts reading a head, idle time included: ours replaces it.
    builder.http1().timer(TokioTimer::new()).header_read_timeout(None);
    builder.http2().timer(TokioTimer::new()).keep_alive_interval(Some(Duration::from_secs(30)));
    let io = TokioIo::new(Watched::new(stream, activity.clone()));
    let conn = builder.serve_connection(io, TowerToHyperService::new(Tracked::new(app, activity.clone())));
    tokio::pin!(conn);
    let mut told = false;
    if *phase.borrow() == Phase::Closing {
        conn.as_mut().graceful_shutdown();
        told = true;
    }
    let watchdog = tokio::time::sleep(Duration::ZERO);
    tokio::pin!(watchdog);
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
            () = activity.head_started() => watchdog.as_mut().reset(Instant::now().into()),
            () = &mut watchdog => match activity.check(Instant::now(), &served.bounds) {
                Due::Until(at) => watchdog.as_mut().reset(at.into()),
                Due::HeadTooSlow => {
                    served.slot.metrics().header_timeouts.inc();
                    tracing::debug!("closing a connection: a request's headers took longer than the header-read bound");
                    return;
                }
                // No request is in flight: HTTP/1.1 closes at once; HTTP/2
                // gets a GOAWAY so the client sees why.
                Due::Idle if h2 && !told => {
                    served.slot.metrics().idle_closes.inc();
                    conn.as_mut().graceful_shutdown();
                    told = true;
                    watchdog.as_mut().reset((Instant::now() + served.bounds.header_read).into());
                }
                Due::Idle if h2 => watchdog.as_mut().reset((Instant::now() + served.bounds.header_read).into()),
                Due::Idle => {
                    served.slot.metrics().idle_closes.inc();
                    return;
                }
            },
        }
    }
}
