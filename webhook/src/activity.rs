//! What a connection is doing, for its header-read and idle bounds: idle
//! (no request in flight, nothing received since the last answer), reading
//! a request's head (bytes arrived, the request not yet dispatched), or
//! busy (a request in flight: the per-request deadline bounds it).
//!
//! hyper's own header-read timeout starts when it begins reading a head,
//! which on a kept-alive connection is right after the previous answer: it
//! cannot bound a slow head to seconds while letting an idle connection
//! live longer than the API server's 90 s. So reads and requests are
//! watched here, and the connection's task closes it when a bound passes.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Instant;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::config::Bounds;

/// One connection's activity, shared by its stream, its requests and its task.
#[derive(Debug)]
pub struct Activity {
    inner: Mutex<Inner>,
    /// HTTP/2 sends frames (pings, settings, window updates) outside any
    /// request, so bytes between requests do not start a head there.
    watch_heads: bool,
    /// Wakes the connection's task when a head starts: its next check
    /// moves from the idle deadline to the much nearer header-read one.
    head_started: tokio::sync::Notify,
}

#[derive(Debug, Clone, Copy)]
struct Inner {
    busy: u32,
    reading_head: bool,
    since: Instant,
}

/// What the connection's task should do when it checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// Nothing yet: check again at this instant.
    Until(Instant),
    /// A request's head took longer than the header-read bound.
    HeadTooSlow,
    /// No request for longer than the idle bound.
    Idle,
}

impl Activity {
    /// A connection accepted now (idle until its first request);
    /// `watch_heads` is false for HTTP/2.
    pub fn new(now: Instant, watch_heads: bool) -> Arc<Activity> {
        Arc::new(Activity {
            inner: Mutex::new(Inner { busy: 0, reading_head: false, since: now }),
            watch_heads,
            head_started: tokio::sync::Notify::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // The state is a few plain fields, always consistent between lines:
        // a panic elsewhere while holding it leaves nothing half written.
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Bytes of the request stream arrived.
    fn received(&self) {
        if !self.watch_heads {
            return;
        }
        let mut inner = self.lock();
        if inner.busy == 0 && !inner.reading_head {
            inner.reading_head = true;
            inner.since = Instant::now();
            drop(inner);
            // A permit is kept if the task is not waiting yet: never lost.
            self.head_started.notify_one();
        }
    }

    /// Resolves when a request's head has started since the last call.
    pub async fn head_started(&self) {
        self.head_started.notified().await;
    }

    /// A request was dispatched: its head is complete.
    pub fn begin(self: &Arc<Self>) -> Request {
        let mut inner = self.lock();
        inner.busy += 1;
        inner.reading_head = false;
        Request(self.clone())
    }

    fn end(&self) {
        let mut inner = self.lock();
        inner.busy = inner.busy.saturating_sub(1);
        if inner.busy == 0 {
            inner.since = Instant::now();
        }
    }

    /// Whether a bound has passed at `now`, or when to look again.
    pub fn check(&self, now: Instant, bounds: &Bounds) -> Due {
        let inner = *self.lock();
        if inner.busy > 0 {
            // The request's own deadline bounds it; a head may follow it.
            return Due::Until(now + bounds.header_read);
        }
        let (bound, expired) =
            if inner.reading_head { (bounds.header_read, Due::HeadTooSlow) } else { (bounds.idle, Due::Idle) };
        let deadline = inner.since + bound;
        if now >= deadline { expired } else { Due::Until(deadline) }
    }
}

/// A request in flight; it ends when dropped (answered, timed out or cancelled).
pub struct Request(Arc<Activity>);

impl Drop for Request {
    fn drop(&mut self) {
        self.0.end();
    }
}

/// A connection's stream, telling its [`Activity`] when bytes arrive.
pub struct Watched<S> {
    stream: S,
    activity: Arc<Activity>,
}

impl<S> Watched<S> {
    /// Watches `stream`.
    pub fn new(stream: S, activity: Arc<Activity>) -> Watched<S> {
        Watched { stream, activity }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.received();
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

/// The app of one connection: each request marks the connection busy for
/// as long as its answer is being made.
#[derive(Clone)]
pub struct Tracked<S> {
    inner: S,
    activity: Arc<Activity>,
}

impl<S> Tracked<S> {
    /// Wraps `inner` for the connection of `activity`.
    pub fn new(inner: S, activity: Arc<Activity>) -> Tracked<S> {
        Tracked { inner, activity }
    }
}

impl<S, R> tower::Service<R> for Tracked<S>
where
    S: tower::Service<R>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: R) -> Self::Future {
        let in_flight = self.activity.begin();
        let answer = self.inner.call(request);
        Box::pin(async move {
            let answered = answer.await;
            drop(in_flight);
            answered
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn bounds() -> Bounds {
        Bounds { header_read: Duration::from_secs(10), idle: Duration::from_secs(120), max_connections: 1 }
    }

    #[test]
    fn an_idle_connection_lives_the_idle_bound_from_its_last_answer() {
        let t0 = Instant::now();
        let a = Activity::new(t0, true);
        assert_eq!(a.check(t0, &bounds()), Due::Until(t0 + Duration::from_secs(120)));
        assert_eq!(a.check(t0 + Duration::from_secs(120), &bounds()), Due::Idle);
        let request = a.begin();
        assert!(matches!(a.check(t0 + Duration::from_secs(500), &bounds()), Due::Until(_)), "busy is never idle");
        drop(request);
        let Due::Until(next) = a.check(Instant::now(), &bounds()) else { panic!("just answered") };
        assert!(next >= t0 + Duration::from_secs(120), "the idle clock restarts at the answer");
    }

    #[test]
    fn bytes_after_an_answer_start_the_header_clock_and_the_dispatch_stops_it() {
        let a = Activity::new(Instant::now(), true);
        a.received();
        let later = Instant::now() + Duration::from_secs(11);
        assert_eq!(a.check(later, &bounds()), Due::HeadTooSlow);
        let _request = a.begin();
        assert!(matches!(a.check(later, &bounds()), Due::Until(_)));
    }

    #[test]
    fn a_request_body_read_while_busy_starts_no_head() {
        let a = Activity::new(Instant::now(), true);
        let request = a.begin();
        a.received();
        drop(request);
        let later = Instant::now() + Duration::from_secs(11);
        assert!(matches!(a.check(later, &bounds()), Due::Until(_)), "idle, not a slow head");
    }

    #[test]
    fn http2_frames_between_requests_are_not_heads() {
        let a = Activity::new(Instant::now(), false);
        a.received();
        let later = Instant::now() + Duration::from_secs(11);
        assert!(matches!(a.check(later, &bounds()), Due::Until(_)));
    }
}
