//! Prometheus metrics, served as text on the health port's `/metrics`.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::review::Summary;

/// Labels of a reviewed request.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// `validate` or `mutate`.
    pub endpoint: String,
    /// `enforce`, `warn`, `audit`, or `none` for `/mutate` and HTTP errors.
    pub mode: String,
    /// `allowed`, `warned` (findings sent back as warnings), `audited`
    /// (audit mode's findings, in the audit annotations only), `denied`,
    /// `patched`, `skipped`, `error`, or the HTTP status of a request that
    /// got no review (`400`, `413`, `408`).
    pub verdict: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RuleLabels {
    rule: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EndpointLabels {
    endpoint: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ListenerLabels {
    listener: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ClosedLabels {
    listener: String,
    reason: String,
}

/// One listener's connection series (handles into the registered families).
#[derive(Clone, Debug, Default)]
pub struct ConnectionMetrics {
    /// Connections open now.
    pub open: Gauge,
    /// Connections closed at accept because the cap was reached.
    pub refused: Counter,
    /// Connections closed because a request's headers took too long.
    pub header_timeouts: Counter,
    /// Connections closed after the idle bound.
    pub idle_closes: Counter,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReloadLabels {
    what: String,
    result: String,
}

/// What is reloaded from files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reloaded {
    /// The serving certificate and key.
    Certificate,
    /// The policy file.
    Policy,
}

/// Every metric the server exports.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    findings: Family<RuleLabels, Counter>,
    duration: Family<EndpointLabels, Histogram, fn() -> Histogram>,
    in_flight: Gauge,
    reloads: Family<ReloadLabels, Counter>,
    cert_expiry: Gauge,
    self_test_ok: Gauge,
    log_lines_dropped: Counter,
    connections_open: Family<ListenerLabels, Gauge>,
    connections_refused: Family<ListenerLabels, Counter>,
    connections_closed: Family<ClosedLabels, Counter>,
    /// Serialises the catch-up of `log_lines_dropped` between scrapes.
    catch_up: std::sync::Mutex<()>,
}

fn latency_histogram() -> Histogram {
    // 0.25 ms to about 4 s: the fast path is well under a millisecond and
    // the API server gives up after the webhook's timeoutSeconds.
    Histogram::new(exponential_buckets(0.000_25, 2.0, 15))
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Registers every metric under `lifeguard_webhook_`.
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("lifeguard_webhook");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register("requests", "Admission requests by endpoint, mode and verdict", requests.clone());
        let findings = Family::<RuleLabels, Counter>::default();
        registry.register("findings", "Findings reported in admission reviews, by rule", findings.clone());
        let duration = Family::<EndpointLabels, Histogram, fn() -> Histogram>::new_with_constructor(latency_histogram);
        registry.register("request_duration_seconds", "Time to answer an admission request", duration.clone());
        let in_flight = Gauge::default();
        registry.register("in_flight_requests", "Admission requests being answered", in_flight.clone());
        let reloads = Family::<ReloadLabels, Counter>::default();
        registry.register("reloads", "Certificate and policy reloads, by result", reloads.clone());
        let cert_expiry = Gauge::default();
        registry.register(
            "certificate_expiry_timestamp_seconds",
            "notAfter of the serving certificate, as a Unix time",
            cert_expiry.clone(),
        );
        let self_test_ok = Gauge::default();
        registry.register("self_test_ok", "1 when the last self-test review succeeded", self_test_ok.clone());
        let log_lines_dropped = Counter::default();
        registry.register(
            "log_lines_dropped",
            "Log lines dropped because stdout was not read fast enough",
            log_lines_dropped.clone(),
        );
        let connections_open = Family::<ListenerLabels, Gauge>::default();
        registry.register("connections", "Open connections, by listener", connections_open.clone());
        let connections_refused = Family::<ListenerLabels, Counter>::default();
        registry.register(
            "connections_refused",
            "Connections closed as soon as accepted because the listener's cap was reached",
            connections_refused.clone(),
        );
        let connections_closed = Family::<ClosedLabels, Counter>::default();
        registry.register(
            "connections_closed",
            "Connections the server closed on a bound: header_timeout (a request's headers too slow) or idle_timeout",
            connections_closed.clone(),
        );
        Metrics {
            registry,
            requests,
            findings,
            duration,
            in_flight,
            reloads,
            cert_expiry,
            self_test_ok,
            log_lines_dropped,
            connections_open,
            connections_refused,
            connections_closed,
            catch_up: std::sync::Mutex::default(),
        }
    }

    /// Counts one answered review.
    pub fn reviewed(&self, summary: &Summary, seconds: f64) {
        let mode = summary.mode.map_or("none", |m| m.as_str());
        self.request(summary.endpoint, mode, summary.verdict.as_str(), seconds);
        if summary.endpoint == "validate" {
            for rule in &summary.rules {
                self.findings.get_or_create(&RuleLabels { rule: rule.clone() }).inc();
            }
        }
    }

    /// Counts one request, reviewed or refused with an HTTP status.
    pub fn request(&self, endpoint: &str, mode: &str, verdict: &str, seconds: f64) {
        let labels =
            RequestLabels { endpoint: endpoint.to_owned(), mode: mode.to_owned(), verdict: verdict.to_owned() };
        self.requests.get_or_create(&labels).inc();
        self.duration.get_or_create(&EndpointLabels { endpoint: endpoint.to_owned() }).observe(seconds);
    }

    /// The in-flight gauge (incremented for the life of a guard).
    pub fn in_flight(&self) -> InFlight {
        self.in_flight.inc();
        InFlight(self.in_flight.clone())
    }

    /// The connection series of `listener` (`admission` or `health`).
    pub fn connections(&self, listener: &str) -> ConnectionMetrics {
        let of = || ListenerLabels { listener: listener.to_owned() };
        let closed = |reason: &str| ClosedLabels { listener: listener.to_owned(), reason: reason.to_owned() };
        // One at a time: a family's guard held over a second lookup of the
        // same family deadlocks.
        let open = self.connections_open.get_or_create(&of()).clone();
        let refused = self.connections_refused.get_or_create(&of()).clone();
        let header_timeouts = self.connections_closed.get_or_create(&closed("header_timeout")).clone();
        let idle_closes = self.connections_closed.get_or_create(&closed("idle_timeout")).clone();
        ConnectionMetrics { open, refused, header_timeouts, idle_closes }
    }

    /// Counts a reload attempt.
    pub fn reload(&self, what: Reloaded, ok: bool) {
        let what = match what {
            Reloaded::Certificate => "certificate",
            Reloaded::Policy => "policy",
        };
        let labels = ReloadLabels { what: what.to_owned(), result: if ok { "success" } else { "failure" }.to_owned() };
        self.reloads.get_or_create(&labels).inc();
    }

    /// Records the serving certificate's expiry.
    pub fn certificate_expiry(&self, unix_seconds: i64) {
        self.cert_expiry.set(unix_seconds);
    }

    /// Records the self-test result.
    pub fn self_test(&self, ok: bool) {
        self.self_test_ok.set(i64::from(ok));
    }

    /// The Prometheus text exposition.
    pub fn encode(&self) -> String {
        // The log writer keeps its own count; the counter catches up at each scrape.
        if let Ok(_one_at_a_time) = self.catch_up.lock() {
            let dropped = crate::logging::dropped_lines();
            self.log_lines_dropped.inc_by(dropped.saturating_sub(self.log_lines_dropped.get()));
        }
        let mut out = String::new();
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
        out
    }
}

/// Decrements the in-flight gauge when dropped (also on panic or timeout).
pub struct InFlight(Gauge);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.dec();
    }
}
