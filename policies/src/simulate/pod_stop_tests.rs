//! A deleted pod of several containers: every preStop hook starts at the
//! deletion; the regular containers get SIGTERM after their own hook, the
//! native sidecars only once every regular container and every sidecar
//! after them has exited, in reverse order, all in the one grace period.

use serde_json::{Value, json};

use super::pod_tests::{deployment, of, outcomes, pod_of, times};
use super::{EventKind, PodStop};

const S: i64 = 1000;

fn env(name: &str, value: &str) -> Value {
    json!([{"name": name, "value": value}])
}

/// An app with a 5 s sleep preStop and a 4 s drain, and two native
/// sidecars that stop 1 s after SIGTERM, in a pod of `grace` seconds.
fn meshed(grace: i64) -> Value {
    let mut pod = deployment(
        json!([{"name": "app", "env": env("DRAIN_SECONDS", "4"),
            "lifecycle": {"preStop": {"sleep": {"seconds": 5}}}}]),
        json!([
            {"name": "proxy", "restartPolicy": "Always", "env": env("DRAIN_SECONDS", "1")},
            {"name": "logs", "restartPolicy": "Always", "env": env("DRAIN_SECONDS", "1")},
        ]),
    );
    pod["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = json!(grace);
    pod
}

fn stop(container: &str, sigterm_ms: i64, end_ms: i64, killed: bool) -> PodStop {
    PodStop { container: container.to_owned(), sigterm_ms, end_ms, killed }
}

#[test]
fn sidecars_stop_after_the_app_in_reverse_order() {
    let all = outcomes(&meshed(30), "delete");
    let pod = pod_of(of(&all, "app"));
    // The app: SIGTERM after its hook (5 s), exit after its drain (9 s);
    // then the later sidecar, then the first.
    assert_eq!(
        pod.stops,
        vec![
            stop("app", 5 * S, 9 * S, false),
            stop("logs", 9 * S, 10 * S, false),
            stop("proxy", 10 * S, 11 * S, false)
        ]
    );
    let proxy = of(&all, "proxy");
    let sigterm = proxy.events.iter().find(|e| e.kind == EventKind::Sigterm).expect("a SIGTERM");
    assert_eq!(sigterm.detail, "in its turn, after \"logs\" exited");
    assert_eq!(pod.started_ms, vec![Some(0); 3], "a deletion starts nothing");
}

#[test]
fn the_grace_period_cuts_a_sidecars_wait_and_leaves_it_two_seconds() {
    // Grace 8: the app is killed at 8 s, mid-drain; the sidecars' waits end
    // with it (the timer is what is left of the grace period), so both get
    // SIGTERM at 8 s and SIGKILL 2 s later at the latest. The later one
    // exits 1 s after SIGTERM; the first waited for it past the grace
    // period, so it too has only the 2 s floor.
    let all = outcomes(&meshed(8), "delete");
    let pod = pod_of(of(&all, "app"));
    assert_eq!(
        pod.stops,
        vec![stop("app", 5 * S, 8 * S, true), stop("logs", 8 * S, 9 * S, false), stop("proxy", 8 * S, 9 * S, false)]
    );
    let proxy = of(&all, "proxy");
    let sigterm = proxy.events.iter().find(|e| e.kind == EventKind::Sigterm).expect("a SIGTERM");
    assert_eq!(sigterm.detail, "the grace period ran out before \"logs\" exited");
}

#[test]
fn a_sidecars_own_prestop_runs_from_the_deletion_alongside_the_apps() {
    // The proxy's 12 s preStop outlasts the app (exit at 9 s): it gets
    // SIGTERM after its hook, with no further wait.
    let mut pod = meshed(30);
    pod["spec"]["template"]["spec"]["initContainers"][0]["lifecycle"] = json!({"preStop": {"sleep": {"seconds": 12}}});
    let all = outcomes(&pod, "delete");
    let proxy = of(&all, "proxy");
    assert_eq!(times(&proxy.events, EventKind::PreStop), vec![0]);
    assert_eq!(times(&proxy.events, EventKind::Sigterm), vec![12 * S]);
    assert_eq!(pod_of(proxy).stops.last(), Some(&stop("proxy", 12 * S, 13 * S, false)));
}

#[test]
fn regular_containers_all_stop_at_once_without_a_sidecar() {
    // Two regular containers: no order, each after its own hook; the
    // "proxy" exits at 1 s while the app still drains to 9 s.
    let pod = deployment(
        json!([{"name": "app", "env": env("DRAIN_SECONDS", "4"), "lifecycle": {"preStop": {"sleep": {"seconds": 5}}}},
            {"name": "proxy", "env": env("DRAIN_SECONDS", "1")}]),
        json!([]),
    );
    let all = outcomes(&pod, "delete");
    let stops = &pod_of(of(&all, "app")).stops;
    assert_eq!(stops, &vec![stop("proxy", 0, S, false), stop("app", 5 * S, 9 * S, false)]);
}
