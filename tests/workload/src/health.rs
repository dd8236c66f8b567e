//! What a health check answers, decided once for both protocols: the HTTP
//! endpoints (`/livez`, `/readyz`, `/healthz`) and the gRPC health service
//! (`grpc.health.v1.Health/Check`, see grpc.rs) ask the same two questions,
//! so a scenario the HTTP probes see is what the gRPC probes see too.
//!
//! 1. [`gate`]: does the pause hold the request, or the wedge hang it?
//! 2. [`decide`]: is the check asked for healthy?
//!
//! Each front end only maps the answers onto its wire (200/503, or
//! SERVING/NOT_SERVING) and logs them.

use std::time::Duration;

use crate::config::Config;
use crate::dependency;

/// Which health check a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Local only: healthy while the process answers (`/livez`, gRPC
    /// `liveness`).
    Liveness,
    /// Unhealthy once draining, else the dependency if set (`/readyz`, gRPC
    /// `""` and `readiness`).
    Readiness,
    /// The dependency if set, draining or not: one handler shared by liveness
    /// and readiness, the anti-pattern (`/healthz`, gRPC `healthz`).
    Shared,
}

impl Check {
    /// The check an HTTP path routes to, if any.
    pub fn of_path(path: &str) -> Option<Check> {
        match path {
            "/livez" => Some(Check::Liveness),
            "/readyz" => Some(Check::Readiness),
            "/healthz" => Some(Check::Shared),
            _ => None,
        }
    }

    /// The check a gRPC health `service` names, if any. `""` is the server
    /// as a whole (a `grpc` probe without `service`), which answers as
    /// readiness does: a Service's endpoints follow it.
    pub fn of_grpc_service(service: &str) -> Option<Check> {
        match service {
            "" | "readiness" => Some(Check::Readiness),
            "liveness" => Some(Check::Liveness),
            "healthz" => Some(Check::Shared),
            _ => None,
        }
    }
}

/// A check's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// 200 / SERVING when true, 503 / NOT_SERVING when false.
    pub healthy: bool,
    /// Why, for the HTTP body: `ok`, `draining`, or the dependency's verdict.
    pub why: String,
    /// The dependency check's verdict, when one was made (a log field).
    pub dependency: Option<String>,
}

impl Verdict {
    fn ok() -> Verdict {
        Verdict { healthy: true, why: "ok".to_owned(), dependency: None }
    }
}

/// What happens to a request before it is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// The wedge: never answered.
    Hang,
    /// Answered, after the pause's hold if it is under way.
    Answer {
        /// How long the pause holds it first.
        held: Option<Duration>,
    },
}

/// The wedge and the pause for a request arriving `since_listening` after
/// the port was bound, when the one-shot behaviours are `armed` in this
/// incarnation. The wedge wins: a hung process does not come back.
pub fn gate(config: &Config, armed: bool, since_listening: Duration) -> Gate {
    if config.wedged(armed, since_listening) {
        Gate::Hang
    } else {
        Gate::Answer { held: config.pause_hold(armed, since_listening) }
    }
}

/// Answers `check`. Blocks while the dependency is asked (up to
/// `DEPENDENCY_TIMEOUT_SECONDS`), as a handler that checks it does.
pub fn decide(check: Check, config: &Config, draining: bool) -> Verdict {
    decide_with(check, config, draining, dependency::check)
}

/// [`decide`] with the dependency's check passed in, so the tests need no
/// dependency to run.
fn decide_with(
    check: Check,
    config: &Config,
    draining: bool,
    check_dependency: impl FnOnce(&str, Duration) -> dependency::Outcome,
) -> Verdict {
    match check {
        Check::Liveness => Verdict::ok(),
        Check::Readiness if draining => Verdict { healthy: false, why: "draining".to_owned(), dependency: None },
        Check::Readiness | Check::Shared => match &config.dependency {
            Some(address) => {
                let (status, why) = check_dependency(address, config.dependency_timeout).verdict();
                Verdict { healthy: status == 200, why: why.clone(), dependency: Some(why) }
            }
            None => Verdict::ok(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dependency::Outcome;

    fn config(vars: &[(&str, &str)]) -> Config {
        Config::from_lookup(|name| {
            std::iter::once(&("PORT", "80")).chain(vars).find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned())
        })
        .expect("a valid config")
    }

    fn no_dependency(_: &str, _: Duration) -> Outcome {
        panic!("no dependency is set, none may be checked")
    }

    #[test]
    fn the_paths_and_the_services_name_the_same_checks() {
        for (path, service) in [("/livez", "liveness"), ("/readyz", "readiness"), ("/healthz", "healthz")] {
            assert_eq!(Check::of_path(path), Check::of_grpc_service(service), "{path} and {service:?}");
            assert!(Check::of_path(path).is_some());
        }
        assert_eq!(Check::of_grpc_service(""), Some(Check::Readiness), "the whole server");
        assert_eq!(Check::of_grpc_service("Liveness"), None, "names are exact");
        assert_eq!(Check::of_grpc_service("grpc.health.v1.Health"), None);
        assert_eq!(Check::of_path("/"), None);
        assert_eq!(Check::of_path("/livez/"), None);
    }

    #[test]
    fn without_a_dependency_only_draining_readiness_fails() {
        let c = config(&[]);
        for check in [Check::Liveness, Check::Readiness, Check::Shared] {
            assert_eq!(decide_with(check, &c, false, no_dependency), Verdict::ok(), "{check:?}");
        }
        let draining = decide_with(Check::Readiness, &c, true, no_dependency);
        assert_eq!((draining.healthy, draining.why.as_str()), (false, "draining"));
        assert!(decide_with(Check::Liveness, &c, true, no_dependency).healthy);
        assert!(decide_with(Check::Shared, &c, true, no_dependency).healthy, "the shared handler ignores the drain");
    }

    #[test]
    fn the_dependency_decides_readiness_and_the_shared_check_never_liveness() {
        let c = config(&[("DEPENDENCY", "db:5432"), ("DEPENDENCY_TIMEOUT_SECONDS", "2")]);
        let failing = |address: &str, timeout: Duration| {
            assert_eq!((address, timeout), ("db:5432", Duration::from_secs(2)));
            Outcome::Failed("timed out after 2s".to_owned())
        };
        for check in [Check::Readiness, Check::Shared] {
            let verdict = decide_with(check, &c, false, failing);
            assert!(!verdict.healthy, "{check:?}");
            assert_eq!(verdict.dependency.as_deref(), Some("dependency failed: timed out after 2s"));
            assert_eq!(verdict.why, "dependency failed: timed out after 2s");
        }
        assert_eq!(decide_with(Check::Liveness, &c, false, |_, _| panic!("liveness is local")), Verdict::ok());
        let answering = decide_with(Check::Shared, &c, false, |_, _| Outcome::Answered(204));
        assert!(answering.healthy);
        assert_eq!(answering.dependency.as_deref(), Some("dependency answered 204"));
        // Draining answers at once: the dependency is not asked.
        assert!(!decide_with(Check::Readiness, &c, true, |_, _| panic!("not asked")).healthy);
    }

    #[test]
    fn the_wedge_wins_over_the_pause() {
        let c = config(&[("PAUSE", "1:10"), ("WEDGE_AFTER", "5")]);
        let s = Duration::from_secs;
        assert_eq!(gate(&c, true, Duration::ZERO), Gate::Answer { held: None });
        assert_eq!(gate(&c, true, s(2)), Gate::Answer { held: Some(s(9)) });
        assert_eq!(gate(&c, true, s(6)), Gate::Hang);
        assert_eq!(gate(&c, false, s(6)), Gate::Answer { held: None }, "not armed");
    }
}
