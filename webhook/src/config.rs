//! The command line (every flag also an env var `LIFEGUARD_*`) and the plain
//! [`Config`] it turns into. Tests build a `Config` directly.
//!
//! Over 400 lines: `Cli` alone is about 155 lines, twenty flags each with its
//! `--help` text, env var and default, and `Config` mirrors it field by field;
//! a flag, its check in `into_config` and its tests (about 60 lines in all)
//! stay in view together.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgAction, Parser, ValueEnum};
use thiserror::Error;

/// What to answer when lifeguard cannot judge a request it should judge
/// (an object that does not parse as its kind, the engine timing out).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnError {
    /// Allow it, with a warning that says why (fail open).
    Allow,
    /// Deny it, saying why. `/mutate` still never denies on its own error.
    Deny,
}

/// Time and count bounds of a listener's connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// From the first byte of a request to the end of its headers.
    pub header_read: Duration,
    /// Between requests (and before the first one). Longer than the
    /// client's own idle timeout, so the client closes first and never
    /// sends a request on a connection the server is closing.
    pub idle: Duration,
    /// Connections open at once; more are closed as soon as they are accepted.
    pub max_connections: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            header_read: Duration::from_secs(10),
            idle: Duration::from_secs(120),
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }
}

/// The admission listener's default cap. The API server keeps a few idle
/// connections per webhook host and opens more under bursts; several API
/// servers and a rollout's overlap stay far below this. An idle TLS
/// connection that has served a review holds about 31 KiB (BENCHMARKS.md),
/// so the cap's connections and the server's ~22 MiB under load (about
/// 53 MiB) fit the chart's 128 Mi memory limit with room to spare.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line, for log pipelines.
    Json,
}

/// lifeguard's admission webhook: the probe and lifecycle rules of `lifeguard
/// lint`, enforced where manifests enter the cluster.
///
/// Admission (HTTPS on --listen): POST /validate (the policy's `mode`),
/// /validate/enforce, /validate/warn, /validate/audit and /mutate, with
/// admission.k8s.io/v1 AdmissionReview bodies. Health (plain HTTP on
/// --health-listen): /livez, /readyz, /startupz and /metrics.
///
/// On SIGTERM the server drains: /readyz turns 503 at once, admission goes on
/// for --drain-seconds while endpoints converge, then in-flight requests get
/// --shutdown-budget-seconds to finish and the process exits 0. Set the pod's
/// terminationGracePeriodSeconds to at least drain + shutdown budget + a
/// few seconds.
#[derive(Debug, Parser)]
#[command(name = "lifeguard-webhook", version, max_term_width = 100)]
pub struct Cli {
    /// PEM certificate chain served on --listen. Reloaded when the file
    /// changes (a Secret volume's symlink swap included).
    #[arg(long, env = "LIFEGUARD_TLS_CERT", value_name = "FILE", required_unless_present = "insecure_http")]
    pub tls_cert: Option<PathBuf>,

    /// PEM private key for --tls-cert (PKCS#8, PKCS#1 or SEC1).
    #[arg(long, env = "LIFEGUARD_TLS_KEY", value_name = "FILE", required_unless_present = "insecure_http")]
    pub tls_key: Option<PathBuf>,

    /// Address of the admission server.
    #[arg(long, env = "LIFEGUARD_LISTEN", value_name = "ADDR", default_value = "0.0.0.0:8443")]
    pub listen: SocketAddr,

    /// Address of the health and metrics server (plain HTTP: /livez,
    /// /readyz, /startupz, /metrics). Default 0.0.0.0:8080; with
    /// --insecure-http, port 8080 on --listen's address.
    #[arg(long, env = "LIFEGUARD_HEALTH_LISTEN", value_name = "ADDR")]
    pub health_listen: Option<SocketAddr>,

    /// Policy file or built-in pack (default, strict, gpu-serving), as for
    /// `lifeguard lint`. A file is reloaded when it changes; a bad edit is
    /// logged and the previous policy kept.
    #[arg(long, env = "LIFEGUARD_POLICY", value_name = "FILE|PACK", default_value = "default")]
    pub policy: String,

    /// PEM CA bundle: require API server client certificates signed by it.
    #[arg(long, env = "LIFEGUARD_CLIENT_CA", value_name = "FILE")]
    pub client_ca: Option<PathBuf>,

    /// Seconds to keep admitting after SIGTERM (with /readyz at 503) while
    /// Service endpoints converge.
    #[arg(long, env = "LIFEGUARD_DRAIN_SECONDS", value_name = "SECONDS", default_value = "5", value_parser = seconds)]
    pub drain_seconds: Duration,

    /// Seconds in-flight requests get to finish once the listener closes.
    #[arg(
        long,
        env = "LIFEGUARD_SHUTDOWN_BUDGET_SECONDS",
        value_name = "SECONDS",
        default_value = "10",
        value_parser = seconds
    )]
    pub shutdown_budget_seconds: Duration,

    /// What to answer when a request that should be judged cannot be
    /// (it matches the webhook configuration's failurePolicy in spirit).
    #[arg(long, env = "LIFEGUARD_ON_ERROR", value_enum, default_value_t = OnError::Allow)]
    pub on_error: OnError,

    /// Largest request body accepted; larger ones get 413.
    #[arg(long, env = "LIFEGUARD_MAX_BODY_BYTES", value_name = "BYTES", default_value_t = 8 * 1024 * 1024)]
    pub max_body_bytes: usize,

    /// Time limit for one request, body included. Keep it below the webhook
    /// configuration's timeoutSeconds so lifeguard answers before the API
    /// server gives up.
    #[arg(
        long,
        env = "LIFEGUARD_REQUEST_TIMEOUT_SECONDS",
        value_name = "SECONDS",
        default_value = "4",
        value_parser = seconds
    )]
    pub request_timeout_seconds: Duration,

    /// Admission connections open at once; one accepted beyond it is
    /// closed at once (counted in lifeguard_webhook_connections_refused_total).
    #[arg(
        long,
        env = "LIFEGUARD_MAX_CONNECTIONS",
        value_name = "N",
        default_value_t = DEFAULT_MAX_CONNECTIONS
    )]
    pub max_connections: usize,

    /// Time from a request's first byte to the end of its headers; a slower
    /// client's connection is closed.
    #[arg(
        long,
        env = "LIFEGUARD_HEADER_READ_TIMEOUT_SECONDS",
        value_name = "SECONDS",
        default_value = "10",
        value_parser = seconds
    )]
    pub header_read_timeout_seconds: Duration,

    /// Time a connection may wait for its next request before it is
    /// closed. Keep it above the API server's 90 s, so the client always
    /// closes an idle connection first and never sends a request on one
    /// being closed.
    #[arg(
        long,
        env = "LIFEGUARD_IDLE_TIMEOUT_SECONDS",
        value_name = "SECONDS",
        default_value = "120",
        value_parser = seconds
    )]
    pub idle_timeout_seconds: Duration,

    /// Log line format.
    #[arg(long, env = "LIFEGUARD_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// On UPDATE, enforce denies only findings the old object did not have
    /// (same rule, same container); `--ratchet=false` denies them all.
    #[arg(
        long,
        env = "LIFEGUARD_RATCHET",
        value_name = "BOOL",
        action = ArgAction::Set,
        num_args = 0..=1,
        require_equals = true,
        default_value_t = true,
        default_missing_value = "true"
    )]
    pub ratchet: bool,

    /// Also judge and mutate objects a controller owns (Pods of a
    /// ReplicaSet, ReplicaSets of a Deployment, Jobs of a CronJob). Off by
    /// default: their template was judged where a person wrote it, and a
    /// deny there stops a rollout half way.
    #[arg(long, env = "LIFEGUARD_INCLUDE_CONTROLLED")]
    pub include_controlled: bool,

    /// How often the certificate and policy files are checked for changes.
    #[arg(
        long,
        env = "LIFEGUARD_RELOAD_INTERVAL_SECONDS",
        value_name = "SECONDS",
        default_value = "2",
        value_parser = seconds
    )]
    pub reload_interval_seconds: Duration,

    /// How often /readyz's self-test runs a review through the engine; a
    /// result older than three intervals makes /readyz fail.
    #[arg(
        long,
        env = "LIFEGUARD_SELF_TEST_INTERVAL_SECONDS",
        value_name = "SECONDS",
        default_value = "5",
        value_parser = seconds
    )]
    pub self_test_interval_seconds: Duration,

    /// Serve admission over plain HTTP. For local development only: the API
    /// server calls webhooks over HTTPS. The health port then defaults to
    /// --listen's address (port 8080), so a server on loopback stays there.
    #[arg(long, env = "LIFEGUARD_INSECURE_HTTP", conflicts_with_all = ["tls_cert", "tls_key", "client_ca"])]
    pub insecure_http: bool,
}

/// The certificate and key files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// PEM certificate chain.
    pub cert: PathBuf,
    /// PEM private key.
    pub key: PathBuf,
    /// PEM CA bundle that client certificates must chain to, if any.
    pub client_ca: Option<PathBuf>,
}

/// Everything the server needs, parsed once.
#[derive(Debug, Clone)]
pub struct Config {
    /// `None`: plain HTTP (`--insecure-http`).
    pub tls: Option<TlsFiles>,
    /// Admission server address.
    pub listen: SocketAddr,
    /// Health and metrics server address.
    pub health_listen: SocketAddr,
    /// Policy file or pack name.
    pub policy: String,
    /// Admitting on after SIGTERM.
    pub drain: Duration,
    /// For in-flight requests after the listener closes.
    pub shutdown_budget: Duration,
    /// Answer when a request cannot be judged.
    pub on_error: OnError,
    /// Request body limit.
    pub max_body_bytes: usize,
    /// Per-request time limit.
    pub request_timeout: Duration,
    /// The admission listener's connection bounds.
    pub connections: Bounds,
    /// Log format.
    pub log_format: LogFormat,
    /// Ratcheting on UPDATE.
    pub ratchet: bool,
    /// Judge controller-owned objects too.
    pub include_controlled: bool,
    /// File change polling period.
    pub reload_interval: Duration,
    /// Self-test period.
    pub self_test_interval: Duration,
}

/// A command line that parses but cannot run.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// `--tls-cert` without `--tls-key` or the reverse (clap covers most cases).
    #[error("--tls-cert and --tls-key go together (or use --insecure-http for local development)")]
    TlsPair,
    /// A limit of zero.
    #[error("{0} must be greater than zero")]
    Zero(&'static str),
}

impl Cli {
    /// Checks the combination and builds the [`Config`].
    pub fn into_config(self) -> Result<Config, ConfigError> {
        let tls = match (self.insecure_http, self.tls_cert, self.tls_key) {
            (true, _, _) => None,
            (false, Some(cert), Some(key)) => Some(TlsFiles { cert, key, client_ca: self.client_ca }),
            _ => return Err(ConfigError::TlsPair),
        };
        for (name, zero) in [
            ("--max-body-bytes", self.max_body_bytes == 0),
            ("--request-timeout-seconds", self.request_timeout_seconds.is_zero()),
            ("--reload-interval-seconds", self.reload_interval_seconds.is_zero()),
            ("--self-test-interval-seconds", self.self_test_interval_seconds.is_zero()),
            ("--max-connections", self.max_connections == 0),
            ("--header-read-timeout-seconds", self.header_read_timeout_seconds.is_zero()),
            ("--idle-timeout-seconds", self.idle_timeout_seconds.is_zero()),
        ] {
            if zero {
                return Err(ConfigError::Zero(name));
            }
        }
        let health_listen = self.health_listen.unwrap_or_else(|| default_health_listen(tls.is_none(), self.listen));
        Ok(Config {
            tls,
            listen: self.listen,
            health_listen,
            policy: self.policy,
            drain: self.drain_seconds,
            shutdown_budget: self.shutdown_budget_seconds,
            on_error: self.on_error,
            max_body_bytes: self.max_body_bytes,
            request_timeout: self.request_timeout_seconds,
            connections: Bounds {
                header_read: self.header_read_timeout_seconds,
                idle: self.idle_timeout_seconds,
                max_connections: self.max_connections,
            },
            log_format: self.log_format,
            ratchet: self.ratchet,
            include_controlled: self.include_controlled,
            reload_interval: self.reload_interval_seconds,
            self_test_interval: self.self_test_interval_seconds,
        })
    }
}

/// The health port when `--health-listen` is not given.
pub const DEFAULT_HEALTH_PORT: u16 = 8080;

/// Where the health server listens when `--health-listen` is not given. In
/// a pod it must be reachable by the kubelet, so every interface. With
/// `--insecure-http` it takes `--listen`'s address: a development server
/// started on loopback must not open a port on every interface behind the
/// developer's back, and one deliberately reachable from elsewhere (a
/// container with published ports) keeps its probes reachable too. The
/// health port is then never exposed more widely than admission itself.
fn default_health_listen(insecure: bool, listen: SocketAddr) -> SocketAddr {
    let ip = if insecure { listen.ip() } else { IpAddr::V4(Ipv4Addr::UNSPECIFIED) };
    SocketAddr::new(ip, DEFAULT_HEALTH_PORT)
}

/// Seconds as a non-negative number (`5`, `0.5`), at most a day.
fn seconds(text: &str) -> Result<Duration, String> {
    let value: f64 = text.trim().parse().map_err(|_| format!("expected a number of seconds, got {text:?}"))?;
    if !value.is_finite() || !(0.0..=86_400.0).contains(&value) {
        return Err(format!("expected 0 to 86400 seconds, got {text}"));
    }
    Ok(Duration::from_secs_f64(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Config, String> {
        let cli = Cli::try_parse_from(std::iter::once("lifeguard-webhook").chain(args.iter().copied()))
            .map_err(|e| e.to_string())?;
        cli.into_config().map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_match_the_documented_ones() {
        let c = parse(&["--tls-cert", "c.pem", "--tls-key", "k.pem"]).expect("config");
        assert_eq!(c.listen.to_string(), "0.0.0.0:8443");
        assert_eq!(c.health_listen.to_string(), "0.0.0.0:8080");
        assert_eq!(c.drain, Duration::from_secs(5));
        assert_eq!(c.shutdown_budget, Duration::from_secs(10));
        assert_eq!(c.max_body_bytes, 8 * 1024 * 1024);
        assert_eq!(c.on_error, OnError::Allow);
        assert!(c.ratchet);
        assert!(!c.include_controlled);
        assert_eq!(c.policy, "default");
        assert_eq!(c.connections, Bounds::default());
    }

    #[test]
    fn insecure_http_keeps_the_health_port_on_the_listen_address() {
        let health = |args: &[&str]| parse(args).expect("config").health_listen.to_string();
        assert_eq!(health(&["--insecure-http", "--listen", "127.0.0.1:8443"]), "127.0.0.1:8080");
        assert_eq!(health(&["--insecure-http", "--listen", "[::1]:9443"]), "[::1]:8080");
        assert_eq!(health(&["--insecure-http"]), "0.0.0.0:8080", "admission on every interface: health too");
        let chosen = ["--insecure-http", "--listen", "127.0.0.1:8443", "--health-listen", "0.0.0.0:9090"];
        assert_eq!(health(&chosen), "0.0.0.0:9090", "an explicit address wins");
        let tls = ["--tls-cert", "c.pem", "--tls-key", "k.pem", "--listen", "127.0.0.1:8443"];
        assert_eq!(health(&tls), "0.0.0.0:8080", "with TLS (in a pod) the kubelet must reach it");
    }

    #[test]
    fn ratchet_takes_an_explicit_false() {
        let c = parse(&["--insecure-http", "--ratchet=false"]).expect("config");
        assert!(!c.ratchet);
        assert!(c.tls.is_none());
        assert!(parse(&["--insecure-http", "--ratchet"]).expect("config").ratchet);
    }

    #[test]
    fn tls_is_required_unless_insecure() {
        assert!(parse(&[]).is_err());
        assert!(parse(&["--tls-cert", "c.pem"]).is_err());
        assert!(parse(&["--insecure-http", "--tls-cert", "c.pem"]).is_err());
    }

    #[test]
    fn seconds_take_fractions_and_refuse_nonsense() {
        assert_eq!(seconds("0.25"), Ok(Duration::from_millis(250)));
        assert!(seconds("-1").is_err());
        assert!(seconds("ten").is_err());
        assert!(seconds("inf").is_err());
        assert!(parse(&["--insecure-http", "--request-timeout-seconds", "0"]).is_err());
    }
}
