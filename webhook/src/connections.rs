//! What one listener allows its connections: how long a request's headers
//! may take, how long a connection may sit idle, and how many may be open.
//! A slow or greedy client holds a connection, a task and its buffers for
//! as long as these let it, and no longer.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::config::Bounds;
use crate::metrics::ConnectionMetrics;

/// Go's `http.Transport` closes idle connections after 90 s (the API
/// server's webhook client keeps that default): the idle bound must be longer.
pub const API_SERVER_IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// The health listener's cap: the kubelet's probes (a new connection each,
/// closed at once) and a few scrapers.
pub const HEALTH_MAX_CONNECTIONS: usize = 256;

/// How often "the cap is reached" is logged at most: a flood of refused
/// connections must not become a flood of log lines.
const REFUSAL_LOG_EVERY: Duration = Duration::from_secs(10);

/// A listener's bounds and its connection count.
pub struct Connections {
    /// The bounds.
    pub bounds: Bounds,
    /// Which listener, for log lines.
    pub listener: &'static str,
    open: Arc<AtomicUsize>,
    metrics: ConnectionMetrics,
    refusals: Mutex<Refusals>,
}

#[derive(Default)]
struct Refusals {
    last_logged: Option<Instant>,
    not_logged: u64,
}

/// An open connection's place under the cap, given back when dropped.
pub struct Slot {
    open: Arc<AtomicUsize>,
    metrics: ConnectionMetrics,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.open.fetch_sub(1, Ordering::AcqRel);
        self.metrics.open.dec();
    }
}

impl Slot {
    /// The listener's connection metrics.
    pub fn metrics(&self) -> &ConnectionMetrics {
        &self.metrics
    }
}

impl Connections {
    /// `listener` names it in log lines; `metrics` are its series.
    pub fn new(listener: &'static str, bounds: Bounds, metrics: ConnectionMetrics) -> Connections {
        Connections { bounds, listener, open: Arc::new(AtomicUsize::new(0)), metrics, refusals: Mutex::default() }
    }

    /// A slot for a connection just accepted, or `None` at the cap (the
    /// refusal is counted, and logged at most every ten seconds).
    pub fn admit(&self) -> Option<Slot> {
        let before = self.open.fetch_add(1, Ordering::AcqRel);
        if before < self.bounds.max_connections {
            self.metrics.open.inc();
            return Some(Slot { open: self.open.clone(), metrics: self.metrics.clone() });
        }
        self.open.fetch_sub(1, Ordering::AcqRel);
        self.metrics.refused.inc();
        self.log_refusal(Instant::now());
        None
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }

    fn log_refusal(&self, now: Instant) {
        let Ok(mut refusals) = self.refusals.lock() else { return };
        refusals.not_logged += 1;
        let due = refusals.last_logged.is_none_or(|at| now.duration_since(at) >= REFUSAL_LOG_EVERY);
        if due {
            tracing::warn!(
                listener = self.listener,
                max_connections = self.bounds.max_connections,
                refused = refusals.not_logged,
                "connection cap reached: new connections are closed until open ones end"
            );
            refusals.last_logged = Some(now);
            refusals.not_logged = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connections(max: usize) -> Connections {
        Connections::new("test", Bounds { max_connections: max, ..Bounds::default() }, ConnectionMetrics::default())
    }

    #[test]
    fn the_cap_refuses_beyond_it_and_a_dropped_slot_makes_room() {
        let c = connections(2);
        let a = c.admit().expect("first");
        let _b = c.admit().expect("second");
        assert!(c.admit().is_none());
        assert_eq!(c.open(), 2);
        assert_eq!(c.metrics.refused.get(), 1);
        assert_eq!(c.metrics.open.get(), 2);
        drop(a);
        assert_eq!(c.metrics.open.get(), 1);
        assert!(c.admit().is_some());
    }

    #[test]
    fn refusals_are_logged_at_most_every_ten_seconds_with_their_count() {
        let c = connections(0);
        let t0 = Instant::now();
        c.log_refusal(t0);
        c.log_refusal(t0 + Duration::from_secs(1));
        c.log_refusal(t0 + Duration::from_secs(2));
        let r = c.refusals.lock().expect("lock");
        assert_eq!(r.last_logged, Some(t0));
        assert_eq!(r.not_logged, 2, "two refusals wait for the next line");
        drop(r);
        c.log_refusal(t0 + Duration::from_secs(11));
        assert_eq!(c.refusals.lock().expect("lock").not_logged, 0);
    }

    #[test]
    fn the_idle_bound_outlasts_the_api_servers() {
        assert!(Bounds::default().idle > API_SERVER_IDLE_TIMEOUT);
        assert!(Bounds::default().header_read < Bounds::default().idle);
    }
}
