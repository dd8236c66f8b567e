//! Random cases: pods nobody chose, within what the test workload can
//! enact and the model can say. Case `k` of seed `S` is drawn from a
//! generator of its own, seeded from `S` and `k` alone, so any one case is
//! made again without the others (`LIFEGUARD_RANDOM_SEED=S
//! LIFEGUARD_RANDOM_CASE=k`).
//!
//! What a case draws: one scenario (a boot, a dependency stall, a pause, a
//! wedge, a crash loop, a deletion, a postStart hook that succeeds or
//! fails); liveness, readiness and startup probes, each present or not,
//! with an `httpGet` (the workload's `/livez`, `/readyz`, `/healthz`), a
//! `tcpSocket` or a `grpc` handler, a period of 1-3 s, a failure threshold
//! of 1-4, a timeout and an initial delay; for a deletion, the preStop hook
//! (none, a sleep, an exec or an httpGet of a stated length), the drain and
//! the grace period, sometimes the deletion's own; for a boot, sometimes a
//! second container whose readiness comes later, or a native sidecar whose
//! startup probe holds the app; for a deletion, sometimes other containers
//! stopped with it (a regular one, native sidecars), each with its own
//! drain and sometimes a preStop sleep.
//!
//! Two limits of docs/simulate.md shape what is drawn or watched, and only
//! those: a liveness or startup probe with `failureThreshold: 1` is held
//! back a second (a probe before the app listens), and a loop of kills is
//! watched up to its first back-off, a crash loop or a failing postStart
//! hook up to its second (jitter).
//!
//! Over 400 lines: `case` (about 190 lines) draws every part of a case from one
//! generator, an arm per scenario, so its odds and limits read as one
//! distribution; the two tests (about 45 lines) pin replay and coverage beside
//! it.

use serde_json::{Value, json};

use super::case::{Act, Case, Others, container, other, s};
use super::lifecycle::poststart;
use super::predicted::Predicted;

/// The seed of a random run (`cargo bench --bench node_random`, or the
/// node suite's fixed sample when set).
pub const SEED_ENV: &str = "LIFEGUARD_RANDOM_SEED";
/// One case of the seed alone.
pub const CASE_ENV: &str = "LIFEGUARD_RANDOM_CASE";

/// How long any case is watched at most, in seconds.
const LONGEST_WINDOW: u64 = 40;

/// splitmix64's finaliser: spreads a seed's bits, so that seeds and case
/// numbers that differ in one bit give unrelated generators.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A string that lives as long as the run: a case's name and texts are
/// `&'static str`, as the matrix's literals are, and a run makes at most a
/// few hundred.
pub(super) fn kept(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

/// What a case does.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Behaviour {
    Boot,
    Stall,
    Pause,
    Wedge,
    Crash,
    Delete,
    PostStart,
    PostStartFail,
}

/// The probes a case may draw, with the handler each may use.
struct Draw<'a> {
    rng: &'a mut fastrand::Rng,
    /// Words for the case's `what`.
    said: Vec<String>,
}

impl Draw<'_> {
    /// A probe's timing around `handler`; a liveness or startup probe
    /// that fails at its first refusal is held back a second (Limits: a
    /// probe before the app listens).
    fn probe(&mut self, kind: &str, handler: Value, shown: &str) -> Value {
        let period = self.rng.u64(1..=3);
        let failures = self.rng.u64(1..=4);
        let timeout = self.rng.u64(1..=period.min(2));
        let mut delay = [0, 0, 0, 1, 2, 4][self.rng.usize(0..6)];
        if failures == 1 && delay == 0 && kind != "readinessProbe" {
            delay = 1;
        }
        let mut p = handler;
        p["periodSeconds"] = json!(period);
        p["failureThreshold"] = json!(failures);
        p["timeoutSeconds"] = json!(timeout);
        if delay > 0 {
            p["initialDelaySeconds"] = json!(delay);
        }
        let word = kind.trim_end_matches("Probe");
        let from = if delay > 0 { format!(" from {delay} s") } else { String::new() };
        self.said.push(format!("{word} {shown} {period}s x{failures} (timeout {timeout}){from}"));
        p
    }

    /// An httpGet, tcpSocket or grpc handler for `kind`: `path` is the
    /// workload's endpoint an httpGet asks; `other` allows a tcpSocket or
    /// a grpc one instead.
    fn handler(&mut self, path: &str, other: bool) -> (Value, String) {
        let roll = self.rng.u8(0..10);
        if other && roll == 0 {
            return (json!({"tcpSocket": {"port": "http"}}), "tcpSocket".to_owned());
        }
        if other && roll == 1 {
            // The health service answers `liveness` as /livez and
            // `readiness` as /readyz (the port is the case's, set by pod_for).
            let service = if path == "/livez" { "liveness" } else { "readiness" };
            return (json!({"grpc": {"port": 0, "service": service}}), format!("grpc {service}"));
        }
        (json!({"httpGet": {"path": path, "port": "http"}}), format!("httpGet {path}"))
    }
}

/// For a deletion, sometimes other containers stopped with the case's
/// own: a regular one, one or two native sidecars, or both, each draining
/// for 0-3 s at SIGTERM and sometimes after a preStop sleep (shorter than
/// the grace period, which the API server requires); what simulate reads
/// of their stops is the drain's env var and the hook, as of the app's.
fn draw_stopping_others(draw: &mut Draw<'_>, others: &mut Others, pod_grace: u64) {
    let names: &[(&str, bool)] = match draw.rng.u8(0..10) {
        0..2 => &[("aux", false)],
        2..4 => &[("proxy", true)],
        4..5 => &[("proxy", true), ("logs", true)],
        5..6 => &[("aux", false), ("proxy", true)],
        _ => return,
    };
    for &(name, sidecar) in names {
        let mut c = other(name, &[]);
        let drain = draw.rng.u64(0..=3);
        if drain > 0 {
            if let Some(env) = c["env"].as_array_mut() {
                env.push(json!({"name": "DRAIN_SECONDS", "value": drain.to_string()}));
            }
        }
        let sleep = (draw.rng.u8(0..3) == 0 && pod_grace > 1).then(|| draw.rng.u64(1..pod_grace.min(4)));
        if let Some(seconds) = sleep {
            c["lifecycle"] = json!({"preStop": {"sleep": {"seconds": seconds}}});
        }
        let kind = if sidecar { "native sidecar" } else { "container" };
        let hook = sleep.map(|s| format!(" after a {s} s preStop sleep")).unwrap_or_default();
        draw.said.push(format!("a {kind} {name} draining {drain} s{hook}"));
        if sidecar {
            others.sidecars.push(c);
        } else {
            others.containers.push(c);
        }
    }
}

/// Case `k` of `seed`.
pub fn case(seed: u64, k: u64) -> Case {
    let mut rng = fastrand::Rng::with_seed(mix(mix(seed) ^ k));
    let behaviour = match rng.u8(0..100) {
        0..20 => Behaviour::Boot,
        20..35 => Behaviour::Stall,
        35..47 => Behaviour::Pause,
        47..57 => Behaviour::Wedge,
        57..67 => Behaviour::Crash,
        67..87 => Behaviour::Delete,
        87..93 => Behaviour::PostStart,
        _ => Behaviour::PostStartFail,
    };
    let mut draw = Draw { rng: &mut rng, said: Vec::new() };
    let mut env: Vec<(&str, String)> = Vec::new();
    let mut checks: Vec<String> = Vec::new();
    let stall = behaviour == Behaviour::Stall;
    if stall {
        env.push(("DEPENDENCY", s("127.0.0.1:0")));
    }
    // What each httpGet probe reaches, stated as a user would: the
    // workload's /livez is local, /readyz and /healthz check the
    // dependency when it has one.
    let reach = |path: &str| if stall && path != "/livez" { "dependency" } else { "local" };
    let mut probes: Vec<(&str, Value)> = Vec::new();
    let mut grpc = false;
    for (kind, chance, paths) in [
        ("startupProbe", 4, &["/livez"][..]),
        ("livenessProbe", 9, &["/livez", "/livez", "/healthz"][..]),
        ("readinessProbe", 9, &["/readyz", "/readyz", "/healthz"][..]),
    ] {
        if draw.rng.u8(0..10) >= chance {
            continue;
        }
        let path = paths[draw.rng.usize(0..paths.len())];
        // A stall's probes ask over HTTP: a tcpSocket or grpc handler
        // would not say what it reaches.
        let (handler, shown) = draw.handler(path, !stall && kind != "startupProbe");
        grpc |= handler["grpc"].is_object();
        if handler["httpGet"].is_object() {
            checks.push(format!("{}={}", kind.trim_end_matches("Probe"), reach(path)));
        }
        probes.push((kind, draw.probe(kind, handler, &shown)));
    }
    if grpc {
        env.push(("GRPC_PORT", s("0")));
    }
    // When the pod is started and ready: past every initial delay and a
    // period of each probe, so a disruption finds it serving.
    let settled = 4 + probes
        .iter()
        .map(|(_, p)| p["initialDelaySeconds"].as_u64().unwrap_or(0) + p["periodSeconds"].as_u64().unwrap_or(1))
        .max()
        .unwrap_or(0);
    let mut annotations = json!({});
    if !checks.is_empty() {
        annotations["lifeguard.dev/probe-checks"] = json!(checks.join(","));
    }
    let mut grace = Some(5);
    let mut lifecycle = None;
    let mut others = Others::none();
    let (scenario, act, observe, doing) = match behaviour {
        Behaviour::Boot => {
            let boot = draw.rng.u64(0..=12);
            env.push(("BOOT_SECONDS", boot.to_string()));
            // simulate's boot is every container's: the other one boots as long.
            let booting = |mut c: Value| {
                if let Some(env) = c["env"].as_array_mut() {
                    env.push(json!({"name": "BOOT_SECONDS", "value": boot.to_string()}));
                }
                c
            };
            match draw.rng.u8(0..10) {
                0..2 => {
                    let delay = draw.rng.u64(2..=10);
                    let ready = json!({"httpGet": {"path": "/readyz", "port": "http"}, "periodSeconds": 1,
                        "failureThreshold": 1, "timeoutSeconds": 1, "initialDelaySeconds": delay});
                    others.containers.push(booting(other("slow", &[("readinessProbe", ready)])));
                    draw.said.push(format!("a second container ready from {delay} s"));
                }
                2..4 => {
                    let delay = draw.rng.u64(1..=6);
                    let startup = json!({"httpGet": {"path": "/livez", "port": "http"}, "periodSeconds": 1,
                        "failureThreshold": 20, "timeoutSeconds": 1, "initialDelaySeconds": delay});
                    others.sidecars.push(booting(other("proxy", &[("startupProbe", startup)])));
                    draw.said.push(format!("a native sidecar started at {delay} s"));
                }
                _ => {}
            }
            (format!("boot:{boot}s"), Act::Boot, (boot + 20).min(LONGEST_WINDOW), format!("{boot} s boot"))
        }
        Behaviour::Stall => {
            let seconds = draw.rng.u64(1..=6);
            (format!("stall:{seconds}s"), Act::Stall(seconds), seconds + 12, format!("{seconds} s dependency stall"))
        }
        Behaviour::Pause => {
            let seconds = draw.rng.u64(1..=10);
            env.push(("PAUSE", format!("{settled}:{seconds}")));
            (format!("pause:{seconds}s"), Act::Own("paused"), seconds + 12, format!("{seconds} s pause"))
        }
        Behaviour::Wedge => {
            env.push(("WEDGE_AFTER", settled.to_string()));
            (s("wedge"), Act::Own("wedged"), 25, s("a wedge"))
        }
        Behaviour::Crash => {
            let after = draw.rng.u64(1..=8);
            env.push(("CRASH_AFTER", after.to_string()));
            (format!("crash:{after}s"), Act::Boot, 35, format!("exits {after} s after each start"))
        }
        Behaviour::Delete => {
            let pod_grace = draw.rng.u64(2..=12);
            grace = Some(pod_grace);
            annotations["lifeguard.dev/shutdown-budget-seconds"] = json!("0");
            let drain = [0, 0, 1, 2, 3, 5, 8][draw.rng.usize(0..7)];
            if drain > 0 {
                env.push(("DRAIN_SECONDS", drain.to_string()));
            }
            let hook = match draw.rng.u8(0..4) {
                // The API server refuses a sleep as long as the grace period.
                1 if pod_grace > 1 => {
                    let seconds = draw.rng.u64(1..pod_grace);
                    lifecycle = Some(json!({"preStop": {"sleep": {"seconds": seconds}}}));
                    format!("a sleep preStop of {seconds} s")
                }
                2 => {
                    let seconds = draw.rng.u64(1..=pod_grace + 4);
                    annotations["lifeguard.dev/prestop-seconds"] = json!(seconds.to_string());
                    lifecycle = Some(json!({"preStop": {"exec": {"command":
                        ["/lifeguard-test-workload", "prestop", seconds.to_string()]}}}));
                    format!("an exec preStop of {seconds} s (stated)")
                }
                3 => {
                    let seconds = draw.rng.u64(1..=pod_grace + 4);
                    annotations["lifeguard.dev/prestop-seconds"] = json!(seconds.to_string());
                    env.push(("PRESTOP_SECONDS", seconds.to_string()));
                    // With the host's network a hook without `host` fails
                    // at once (docs/simulate.md, Limits): named.
                    lifecycle = Some(json!({"preStop": {"httpGet":
                        {"host": "127.0.0.1", "path": "/prestop", "port": "http"}}}));
                    format!("an httpGet preStop of {seconds} s (stated)")
                }
                _ => s("no preStop"),
            };
            draw_stopping_others(&mut draw, &mut others, pod_grace);
            let own = (draw.rng.u8(0..5) == 0).then(|| draw.rng.u64(1..=pod_grace));
            let effective = own.unwrap_or(pod_grace);
            let what = match own {
                Some(g) => format!("deletion with --grace-period={g}: {hook}, grace {pod_grace}, a {drain} s drain"),
                None => format!("deletion: {hook}, grace {pod_grace}, a {drain} s drain"),
            };
            (s("delete"), Act::Delete(own), (effective + 5).min(LONGEST_WINDOW), what)
        }
        Behaviour::PostStart => {
            let seconds = draw.rng.u64(1..=6);
            let boot = draw.rng.u64(0..=5);
            env.push(("BOOT_SECONDS", boot.to_string()));
            annotations["lifeguard.dev/poststart-seconds"] = json!(seconds.to_string());
            lifecycle = Some(poststart(seconds, 0));
            let what = format!("{boot} s boot behind an exec postStart hook of {seconds} s (stated)");
            (format!("boot:{boot}s"), Act::Boot, boot.max(seconds) + 15, what)
        }
        Behaviour::PostStartFail => {
            let seconds = draw.rng.u64(1..=5);
            annotations["lifeguard.dev/poststart-seconds"] = json!(seconds.to_string());
            lifecycle = Some(poststart(seconds, 1));
            let what = format!("an exec postStart hook that fails after {seconds} s (stated)");
            (s("poststart-fail"), Act::Boot, 30, what)
        }
    };
    let mut c = container(&env, &probes);
    if let Some(lifecycle) = lifecycle {
        c["lifecycle"] = lifecycle;
    }
    let what = std::iter::once(doing).chain(draw.said).collect::<Vec<_>>().join("; ");
    Case {
        name: kept(format!("random-{seed}-{k}")),
        annotations,
        what: kept(what),
        scenario: kept(scenario),
        container: c,
        grace,
        act,
        observe,
        others,
    }
}

/// The cases of `seed` a run makes: `only` alone if given, else `0..count`.
pub fn cases(seed: u64, count: u64, only: Option<u64>) -> Vec<Case> {
    match only {
        Some(k) => vec![case(seed, k)],
        None => (0..count).map(|k| case(seed, k)).collect(),
    }
}

/// The window a case is watched for, from what simulate said of it: up to
/// the first back-off of a loop of kills, the second of a crash loop or a
/// failing postStart hook, where the kubelet's jitter makes what follows
/// fall either way (docs/simulate.md, Limits: jitter).
pub fn window(case: &Case, predicted: &Predicted) -> u64 {
    let own_exit = case.scenario.starts_with("crash") || case.scenario == "poststart-fail";
    let watched = if own_exit { 2 } else { 1 };
    let after = predicted.backoffs.get(watched - 1).map(|(start, delay)| start + delay / 2.0 + 1.0);
    match after {
        Some(t) => case.observe.min(t.ceil() as u64),
        None => case.observe,
    }
}

/// The seed and the one case the environment asks for, else `seed`.
pub fn from_env(seed: u64) -> (u64, Option<u64>) {
    let read = |var: &str| std::env::var(var).ok().and_then(|v| v.trim().parse::<u64>().ok());
    (read(SEED_ENV).unwrap_or(seed), read(CASE_ENV))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_is_made_again_from_its_seed_and_number_alone() {
        let first = case(7, 12);
        let again = case(7, 12);
        assert_eq!(first.what, again.what);
        assert_eq!(first.scenario, again.scenario);
        assert_eq!(first.annotations, again.annotations);
        // Ports are the process's own; everything else is the seed's.
        let without_ports = |c: &Case| {
            let mut c = c.container.clone();
            c["ports"] = Value::Null;
            c["env"] = json!(c["env"].as_array().map(|e| e.iter().filter(|v| v["name"] != "PORT").count()));
            c
        };
        assert_eq!(without_ports(&first), without_ports(&again));
        assert_ne!(case(7, 13).what, first.what, "two cases of a seed differ");
        assert_ne!(case(8, 12).what, first.what, "two seeds differ");
    }

    #[test]
    fn a_hundred_cases_draw_every_behaviour_and_keep_the_limits() {
        let all = cases(1, 100, None);
        for scenario in ["boot", "stall", "pause", "wedge", "crash", "delete", "poststart-fail"] {
            assert!(all.iter().any(|c| c.scenario.starts_with(scenario)), "no {scenario} case in 100");
        }
        assert!(all.iter().any(|c| !c.others.sidecars.is_empty()), "no native sidecar in 100");
        assert!(all.iter().any(|c| !c.others.containers.is_empty()), "no second container in 100");
        for c in &all {
            assert!(c.observe <= LONGEST_WINDOW, "{}: watched {} s", c.name, c.observe);
            for kind in ["startupProbe", "livenessProbe"] {
                let p = &c.container[kind];
                if p["failureThreshold"] == 1 {
                    assert!(p["initialDelaySeconds"].as_u64() >= Some(1), "{}: {kind} not held back", c.name);
                }
            }
        }
        let deleted_with_others = |c: &&Case| matches!(c.act, Act::Delete(_)) && !c.others.names().is_empty();
        assert!(all.iter().filter(deleted_with_others).any(|c| !c.others.sidecars.is_empty()), "no deleted sidecar");
        assert!(all.iter().filter(deleted_with_others).any(|c| !c.others.containers.is_empty()), "no deleted second");
    }
}
