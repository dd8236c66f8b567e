//! The workload's settings, read from its environment.
//!
//! Parsing takes a lookup function instead of reading the process
//! environment, so the unit tests can feed it values without touching (and
//! racing on) the real environment of the test binary.
//!
//! Over 400 lines: fifteen settings, each a documented field and a parse in
//! `from_lookup`, and the unit tests (about 150 lines) that feed them values
//! sit beside the parsers they pin down.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// Every setting of the serving workload (what each does: main.rs).
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `PORT`: where the HTTP server listens (0.0.0.0).
    pub port: u16,
    /// `GRPC_PORT`: where the gRPC health service listens (0.0.0.0), if
    /// anywhere; bound with `PORT`.
    pub grpc_port: Option<u16>,
    /// `BOOT_SECONDS`: how long after start the port is bound.
    pub boot: Duration,
    /// `STATE_DIR`: survives container restarts; holds the incarnation count
    /// and the marker that makes PAUSE and WEDGE one-shot.
    pub state_dir: Option<PathBuf>,
    /// `PAUSE`: a window in which every handler holds its request.
    pub pause: Option<Pause>,
    /// `WEDGE_AFTER`: from then on every request hangs for good.
    pub wedge_after: Option<Duration>,
    /// `CRASH_AFTER`: the process exits by itself then.
    pub crash_after: Option<Duration>,
    /// `CRASH_CODE`: the code it exits with.
    pub crash_code: i32,
    /// `DEPENDENCY`: `host:port` the dependency-checking handlers GET.
    pub dependency: Option<String>,
    /// `DEPENDENCY_TIMEOUT_SECONDS`: how long such a check waits for it.
    pub dependency_timeout: Duration,
    /// `PRESTOP_SECONDS`: how long the `/prestop` hook takes.
    pub prestop: Duration,
    /// `REQUEST_SECONDS`: how long `/` takes.
    pub request: Duration,
    /// `DRAIN_SECONDS`: how long it keeps serving after SIGTERM.
    pub drain: Duration,
    /// `IGNORE_SIGTERM`: log SIGTERM/SIGINT and carry on.
    pub ignore_sigterm: bool,
    /// `PROXY_TO`: `host:port` every connection to `PORT` is forwarded to,
    /// byte for byte, instead of being served: a proxy beside the app.
    pub proxy_to: Option<String>,
}

/// `PAUSE=AFTER:DURATION`, both in seconds after listening.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pause {
    /// When the pause starts, after listening.
    pub after: Duration,
    /// How long it lasts.
    pub duration: Duration,
}

impl Config {
    /// How long a request arriving `since_listening` after the port was
    /// bound is held by the pause, if the pause is armed (one-shot: see
    /// main.rs) and under way then.
    pub fn pause_hold(&self, armed: bool, since_listening: Duration) -> Option<Duration> {
        let pause = self.pause.filter(|_| armed)?;
        let end = pause.after + pause.duration;
        (since_listening >= pause.after && since_listening < end).then(|| end - since_listening)
    }

    /// Whether a request arriving `since_listening` after the port was bound
    /// hangs for good, if the wedge is armed.
    pub fn wedged(&self, armed: bool, since_listening: Duration) -> bool {
        armed && self.wedge_after.is_some_and(|after| since_listening >= after)
    }
}

/// A variable with a value the workload cannot use. A test that sets a
/// wrong value must see it at once, not a workload quietly running with a
/// default.
#[derive(Debug, Clone, PartialEq)]
pub struct EnvError {
    /// The variable.
    pub var: &'static str,
    /// Its value, `None` when it is required and missing.
    pub value: Option<String>,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for EnvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.value {
            Some(value) => write!(f, "{}={value:?}: {}", self.var, self.reason),
            None => write!(f, "{}: {}", self.var, self.reason),
        }
    }
}

impl std::error::Error for EnvError {}

impl Config {
    /// Reads every setting through `lookup` (the process environment in
    /// main). An empty value counts as unset, so a pod template can clear a
    /// setting by setting it to `""`.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Config, EnvError> {
        let get = |var: &'static str| lookup(var).filter(|v| !v.is_empty()).map(|v| (var, v));
        let seconds_or = |var: &'static str, default: Duration| match get(var) {
            Some((var, value)) => parse_seconds(&value).map_err(|reason| EnvError { var, value: Some(value), reason }),
            None => Ok(default),
        };
        let optional_seconds = |var: &'static str| match get(var) {
            Some((var, value)) => {
                parse_seconds(&value).map(Some).map_err(|reason| EnvError { var, value: Some(value), reason })
            }
            None => Ok(None),
        };

        let port = match get("PORT") {
            Some((var, value)) => parse_port(&value).map_err(|reason| EnvError { var, value: Some(value), reason })?,
            None => {
                return Err(EnvError { var: "PORT", value: None, reason: "required (the port to listen on)".into() });
            }
        };
        let grpc_port = match get("GRPC_PORT") {
            Some((var, value)) => {
                Some(parse_port(&value).map_err(|reason| EnvError { var, value: Some(value), reason })?)
            }
            None => None,
        };
        if grpc_port == Some(port) {
            return Err(EnvError {
                var: "GRPC_PORT",
                value: lookup("GRPC_PORT"),
                reason: "must differ from PORT (the HTTP server has it)".into(),
            });
        }
        let pause = match get("PAUSE") {
            Some((var, value)) => {
                Some(parse_pause(&value).map_err(|reason| EnvError { var, value: Some(value), reason })?)
            }
            None => None,
        };
        let crash_code = match get("CRASH_CODE") {
            Some((var, value)) => value.trim().parse::<i32>().map_err(|e| EnvError {
                var,
                value: Some(value.clone()),
                reason: format!("not an exit code (a 32-bit integer): {e}"),
            })?,
            None => 1,
        };
        let dependency = match get("DEPENDENCY") {
            Some((var, value)) => {
                split_host_port(&value).map_err(|reason| EnvError { var, value: Some(value.clone()), reason })?;
                Some(value)
            }
            None => None,
        };
        let dependency_timeout = seconds_or("DEPENDENCY_TIMEOUT_SECONDS", Duration::from_secs(30))?;
        if dependency_timeout.is_zero() {
            // A zero socket timeout is an error in std (it would mean "no
            // timeout" to the OS), and a check that cannot wait is no check.
            return Err(EnvError {
                var: "DEPENDENCY_TIMEOUT_SECONDS",
                value: lookup("DEPENDENCY_TIMEOUT_SECONDS"),
                reason: "must be more than 0".into(),
            });
        }
        let proxy_to = match get("PROXY_TO") {
            Some((var, value)) => {
                split_host_port(&value).map_err(|reason| EnvError { var, value: Some(value.clone()), reason })?;
                Some(value)
            }
            None => None,
        };
        let ignore_sigterm = match get("IGNORE_SIGTERM") {
            Some((var, value)) => parse_flag(&value).map_err(|reason| EnvError { var, value: Some(value), reason })?,
            None => false,
        };

        Ok(Config {
            port,
            grpc_port,
            boot: seconds_or("BOOT_SECONDS", Duration::ZERO)?,
            state_dir: get("STATE_DIR").map(|(_, v)| PathBuf::from(v)),
            pause,
            wedge_after: optional_seconds("WEDGE_AFTER")?,
            crash_after: optional_seconds("CRASH_AFTER")?,
            crash_code,
            dependency,
            dependency_timeout,
            prestop: seconds_or("PRESTOP_SECONDS", Duration::ZERO)?,
            request: seconds_or("REQUEST_SECONDS", Duration::ZERO)?,
            drain: seconds_or("DRAIN_SECONDS", Duration::ZERO)?,
            ignore_sigterm,
            proxy_to,
        })
    }
}

/// The longest time a setting may give: 10^9 s (about 31 years) is "never"
/// for a test, and the cap keeps `Instant + Duration` from overflowing.
pub const MAX_SECONDS: f64 = 1e9;

/// Seconds as a decimal (`0`, `2.5`, `1e-3`): finite, not negative, at most
/// [`MAX_SECONDS`].
pub fn parse_seconds(value: &str) -> Result<Duration, String> {
    let seconds: f64 = value.trim().parse().map_err(|e| format!("not a number of seconds: {e}"))?;
    if !(0.0..=MAX_SECONDS).contains(&seconds) {
        return Err(format!("seconds must be from 0 to {MAX_SECONDS}"));
    }
    Duration::try_from_secs_f64(seconds).map_err(|e| format!("not a number of seconds: {e}"))
}

/// A TCP port; 0 is refused because the tests must know where it listens
/// (0 would make the kernel pick one).
pub fn parse_port(value: &str) -> Result<u16, String> {
    match value.trim().parse::<u16>() {
        Ok(0) => Err("port 0 is not allowed (the kernel would pick one)".to_owned()),
        Ok(port) => Ok(port),
        Err(e) => Err(format!("not a port (1-65535): {e}")),
    }
}

/// `AFTER:DURATION`, both seconds.
pub fn parse_pause(value: &str) -> Result<Pause, String> {
    let (after, duration) =
        value.split_once(':').ok_or_else(|| "expected AFTER:DURATION in seconds, e.g. 10:30".to_owned())?;
    let after = parse_seconds(after).map_err(|e| format!("AFTER: {e}"))?;
    let duration = parse_seconds(duration).map_err(|e| format!("DURATION: {e}"))?;
    Ok(Pause { after, duration })
}

/// `host:port` (an IPv6 host in brackets: `[::1]:80`).
pub fn split_host_port(value: &str) -> Result<(&str, u16), String> {
    let (host, port) = value.rsplit_once(':').ok_or_else(|| "expected host:port".to_owned())?;
    if host.is_empty() {
        return Err("expected host:port, the host is empty".to_owned());
    }
    let port = parse_port(port)?;
    Ok((host, port))
}

/// `1`/`true` or `0`/`false`; anything else is more likely a typo than a
/// wish for the default.
pub fn parse_flag(value: &str) -> Result<bool, String> {
    match value.trim() {
        "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err("expected 1, true, 0 or false".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(vars: &[(&str, &str)]) -> Result<Config, EnvError> {
        Config::from_lookup(|name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned()))
    }

    #[test]
    fn defaults_with_only_a_port() {
        let c = config(&[("PORT", "8080")]).expect("valid");
        assert_eq!(c.port, 8080);
        assert_eq!(c.grpc_port, None);
        assert_eq!(c.boot, Duration::ZERO);
        assert_eq!(c.pause, None);
        assert_eq!(c.wedge_after, None);
        assert_eq!(c.crash_after, None);
        assert_eq!(c.crash_code, 1);
        assert_eq!(c.dependency, None);
        assert_eq!(c.dependency_timeout, Duration::from_secs(30));
        assert_eq!(c.drain, Duration::ZERO);
        assert!(!c.ignore_sigterm);
        assert_eq!(c.state_dir, None);
    }

    #[test]
    fn every_setting() {
        let c = config(&[
            ("PORT", "9000"),
            ("GRPC_PORT", "9090"),
            ("BOOT_SECONDS", "2.5"),
            ("STATE_DIR", "/state"),
            ("PAUSE", "10:30.5"),
            ("WEDGE_AFTER", "60"),
            ("CRASH_AFTER", "5"),
            ("CRASH_CODE", "-3"),
            ("DEPENDENCY", "127.0.0.1:9001"),
            ("DEPENDENCY_TIMEOUT_SECONDS", "0.5"),
            ("PRESTOP_SECONDS", "3"),
            ("REQUEST_SECONDS", "1"),
            ("DRAIN_SECONDS", "4"),
            ("IGNORE_SIGTERM", "1"),
            ("PROXY_TO", "127.0.0.1:9002"),
        ])
        .expect("valid");
        assert_eq!(c.grpc_port, Some(9090));
        assert_eq!(c.boot, Duration::from_millis(2500));
        assert_eq!(c.state_dir, Some(PathBuf::from("/state")));
        assert_eq!(c.pause, Some(Pause { after: Duration::from_secs(10), duration: Duration::from_millis(30500) }));
        assert_eq!(c.wedge_after, Some(Duration::from_secs(60)));
        assert_eq!(c.crash_after, Some(Duration::from_secs(5)));
        assert_eq!(c.crash_code, -3);
        assert_eq!(c.dependency.as_deref(), Some("127.0.0.1:9001"));
        assert_eq!(c.dependency_timeout, Duration::from_millis(500));
        assert_eq!(c.prestop, Duration::from_secs(3));
        assert_eq!(c.request, Duration::from_secs(1));
        assert_eq!(c.drain, Duration::from_secs(4));
        assert!(c.ignore_sigterm);
        assert_eq!(c.proxy_to.as_deref(), Some("127.0.0.1:9002"));
    }

    #[test]
    fn empty_means_unset() {
        let c = config(&[("PORT", "80"), ("GRPC_PORT", ""), ("PAUSE", ""), ("CRASH_CODE", ""), ("DEPENDENCY", "")])
            .expect("valid");
        assert_eq!((c.grpc_port, c.pause, c.crash_code, c.dependency), (None, None, 1, None));
    }

    #[test]
    fn a_missing_port_names_the_variable() {
        let e = config(&[]).expect_err("PORT is required");
        assert_eq!(e.var, "PORT");
        assert_eq!(e.value, None);
        assert!(e.to_string().starts_with("PORT: required"), "{e}");
    }

    #[test]
    fn bad_values_name_the_variable_and_the_value() {
        for (var, value) in [
            ("PORT", "http"),
            ("PORT", "0"),
            ("PORT", "65536"),
            ("GRPC_PORT", "grpc"),
            ("GRPC_PORT", "0"),
            ("GRPC_PORT", "8080"),
            ("BOOT_SECONDS", "-1"),
            ("BOOT_SECONDS", "NaN"),
            ("BOOT_SECONDS", "inf"),
            ("BOOT_SECONDS", "1e10"),
            ("BOOT_SECONDS", "10s"),
            ("PAUSE", "10"),
            ("PAUSE", "10:"),
            ("PAUSE", "x:10"),
            ("WEDGE_AFTER", "soon"),
            ("CRASH_AFTER", "-0.5"),
            ("CRASH_CODE", "1.5"),
            ("DEPENDENCY", "localhost"),
            ("DEPENDENCY", ":80"),
            ("DEPENDENCY", "db:port"),
            ("PROXY_TO", "app"),
            ("DEPENDENCY_TIMEOUT_SECONDS", "0"),
            ("DRAIN_SECONDS", "forever"),
            ("IGNORE_SIGTERM", "yes"),
        ] {
            let mut vars = vec![("PORT", "8080")];
            vars.retain(|(n, _)| *n != var);
            vars.push((var, value));
            let e = config(&vars).expect_err(&format!("{var}={value} must be refused"));
            assert_eq!(e.var, var, "{var}={value}: {e}");
            assert!(e.to_string().starts_with(&format!("{var}=\"{value}\": ")), "{e}");
        }
    }

    #[test]
    fn pause_parts() {
        assert_eq!(parse_pause("0:1e-3"), Ok(Pause { after: Duration::ZERO, duration: Duration::from_millis(1) }));
        assert_eq!(parse_pause(" 2 : 3 ").map(|p| p.after), Ok(Duration::from_secs(2)));
        assert!(parse_pause("1:2:3").expect_err("two colons").starts_with("DURATION"));
        assert!(parse_pause("-1:2").expect_err("negative").starts_with("AFTER"));
    }

    #[test]
    fn the_pause_holds_requests_inside_its_window_only() {
        let c = config(&[("PORT", "80"), ("PAUSE", "10:5")]).expect("valid");
        let s = Duration::from_secs;
        assert_eq!(c.pause_hold(true, s(9)), None, "before");
        assert_eq!(c.pause_hold(true, s(10)), Some(s(5)), "at the start: the whole pause");
        assert_eq!(c.pause_hold(true, Duration::from_millis(13_500)), Some(Duration::from_millis(1500)));
        assert_eq!(c.pause_hold(true, s(15)), None, "over");
        assert_eq!(c.pause_hold(false, s(12)), None, "not armed (a later incarnation)");
        let none = config(&[("PORT", "80")]).expect("valid");
        assert_eq!(none.pause_hold(true, s(12)), None);
    }

    #[test]
    fn the_wedge_lasts_for_good() {
        let c = config(&[("PORT", "80"), ("WEDGE_AFTER", "3")]).expect("valid");
        let s = Duration::from_secs;
        assert!(!c.wedged(true, Duration::from_millis(2999)));
        assert!(c.wedged(true, s(3)));
        assert!(c.wedged(true, s(3600)));
        assert!(!c.wedged(false, s(3600)), "not armed");
        assert!(!config(&[("PORT", "80")]).expect("valid").wedged(true, s(3600)));
    }

    #[test]
    fn host_and_port() {
        assert_eq!(split_host_port("db.svc:5432"), Ok(("db.svc", 5432)));
        assert_eq!(split_host_port("[::1]:80"), Ok(("[::1]", 80)));
        assert!(split_host_port("db.svc").is_err());
    }
}
