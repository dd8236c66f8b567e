//! One test per kubelet timing rule the simulation applies.
//!
//! Over 400 lines: 23 tests, one per rule, each a probe setup, a run and the
//! times the kubelet gives, with the why in a comment; together they are the
//! list of rules the simulation claims, read best in one place.

use crate::model::{ProbeKind, ProbeTiming, SleepSeconds};

use super::checks::ProbeCheck;
use super::kubelet::{Run, World, simulate};
use super::pod::{ContainerModel, ProbeModel};
use super::termination::delete;
use super::timeline::{EventKind, total};

const S: i64 = 1000;

fn probe(
    kind: ProbeKind,
    check: ProbeCheck,
    delay: i64,
    period: i64,
    timeout: i64,
    success: i64,
    failure: i64,
) -> ProbeModel {
    let timing = ProbeTiming { initial_delay: delay, period, timeout, success, failure };
    ProbeModel { kind, timing, check, grace: None }
}

fn container(probes: Vec<ProbeModel>) -> ContainerModel {
    ContainerModel::with_probes(probes)
}

/// The seconds at which events of `kind` happened (shared with lifecycle_tests.rs).
pub(super) fn times(run: &Run, kind: EventKind) -> Vec<i64> {
    run.events.iter().filter(|e| e.kind == kind).map(|e| e.at_ms / S).collect()
}

/// A boot of `boot_s` seconds (and as long after each restart), watched for `horizon_s`.
pub(super) fn boot(model: &ContainerModel, boot_s: i64, horizon_s: i64) -> Run {
    simulate(
        model,
        World { boot_ms: boot_s * S, restart_boot_ms: boot_s * S, horizon_ms: horizon_s * S, ..World::default() },
    )
}

#[test]
fn first_check_at_initial_delay_then_every_period() {
    let m = container(vec![probe(ProbeKind::Liveness, ProbeCheck::Local, 5, 10, 1, 1, 3)]);
    // The app never answers: failures at 5, 15, 25, the third kills.
    let run = boot(&m, 1000, 26);
    assert_eq!(times(&run, EventKind::ProbeFailed), vec![5, 15, 25]);
    assert_eq!(run.first_restart_ms, Some(25 * S));
}

#[test]
fn startup_probe_holds_liveness_and_readiness_until_it_succeeds() {
    let m = container(vec![
        probe(ProbeKind::Startup, ProbeCheck::Local, 0, 10, 1, 1, 30),
        probe(ProbeKind::Liveness, ProbeCheck::Local, 0, 1, 1, 1, 1),
        probe(ProbeKind::Readiness, ProbeCheck::Local, 0, 5, 1, 1, 1),
    ]);
    // Liveness (failureThreshold 1, every second) would kill a 95 s boot at
    // once; the startup probe (first seen at 1 s) holds it until its check at
    // 101 s passes.
    let run = boot(&m, 95, 200);
    assert_eq!(run.restarts, 0);
    assert_eq!(times(&run, EventKind::StartupSucceeded), vec![101]);
    assert!(
        run.events.iter().filter(|e| e.kind == EventKind::ProbeFailed).all(|e| e.probe == Some(ProbeKind::Startup))
    );
    // Readiness runs on its own grid from the container's start: 101 is on it.
    assert_eq!(times(&run, EventKind::Ready), vec![101]);
    assert_eq!(total(&run.unready), 101 * S);
}

#[test]
fn failure_threshold_counts_consecutive_failures() {
    let m = container(vec![probe(ProbeKind::Liveness, ProbeCheck::Local, 0, 1, 1, 1, 3)]);
    // A 2 s pause fails two checks in a row: one short of the threshold.
    let pause =
        |d: i64| World { steady_phase: Some(0), pause: Some((0, d * S)), horizon_ms: 60 * S, ..World::default() };
    let run = simulate(&m, pause(2));
    assert_eq!(times(&run, EventKind::ProbeTimedOut), vec![1]);
    assert_eq!(run.restarts, 0);
    // 4 s: the checks at 0, 1, 2 time out (answered at 4, more than 1 s later).
    let run = simulate(&m, pause(4));
    assert_eq!(run.restarts, 1);
    assert_eq!(run.first_restart_ms, Some(3 * S));
}

#[test]
fn a_check_answered_after_its_timeout_fails_and_within_it_passes() {
    let timed = |timeout: i64| {
        let m = container(vec![probe(ProbeKind::Liveness, ProbeCheck::Local, 0, 10, timeout, 1, 1)]);
        simulate(&m, World { steady_phase: Some(0), pause: Some((0, 3 * S)), horizon_ms: 60 * S, ..World::default() })
    };
    // The check at 0 is answered at 3 s.
    let short = timed(1);
    assert_eq!(times(&short, EventKind::ProbeTimedOut), vec![1]);
    assert_eq!(short.restarts, 1);
    assert_eq!(timed(3).restarts, 0);
}

#[test]
fn readiness_needs_success_threshold_and_never_restarts() {
    let m = container(vec![probe(ProbeKind::Readiness, ProbeCheck::Dependency, 0, 1, 1, 2, 1)]);
    let run =
        simulate(&m, World { steady_phase: Some(0), stall: Some((0, 3 * S)), horizon_ms: 60 * S, ..World::default() });
    assert_eq!(run.restarts, 0);
    // Fails at 0 and 1 (timed out at 1 and 2); the check at 2 is answered
    // when the stall ends at 3, within its 1 s timeout, and the one at 3
    // passes too: back in at 3.
    assert_eq!(times(&run, EventKind::Unready), vec![1]);
    assert_eq!(times(&run, EventKind::Ready), vec![3]);
    assert_eq!(total(&run.unready), 2 * S);
}

#[test]
fn crash_loop_back_off_doubles_from_10_to_300_seconds() {
    let m = container(vec![probe(ProbeKind::Liveness, ProbeCheck::Local, 0, 1, 1, 1, 1)]);
    let run = boot(&m, 100_000, 3000);
    let waits: Vec<String> =
        run.events.iter().filter(|e| e.kind == EventKind::BackOff).map(|e| e.detail.clone()).collect();
    let expected: Vec<String> =
        [10, 20, 40, 80, 160, 300, 300].iter().map(|s| format!("CrashLoopBackOff {s}s")).collect();
    assert_eq!(&waits[..7], &expected[..]);
    // The first two restarts are immediate: the kubelet judges a kill's
    // restart by the container that exited before it, and the first has
    // none, the second no back-off yet. Each container is first probed 1 s
    // after it starts: killed at 1, 2 and 3, started at 1 and 2, then 10 s
    // after the third exit.
    assert_eq!(times(&run, EventKind::Started)[..4], [0, 1, 2, 13]);
    assert_eq!(run.max_backoff_ms, 300 * S);
}

#[test]
fn restart_policy_never_leaves_the_container_stopped() {
    let mut m = container(vec![probe(ProbeKind::Liveness, ProbeCheck::Local, 0, 1, 1, 1, 1)]);
    m.restarts = false;
    let run = boot(&m, 100, 300);
    assert_eq!(run.restarts, 1);
    assert_eq!(times(&run, EventKind::NotRestarted), vec![1]);
    assert!(!run.booted);
}

#[test]
fn port_and_process_checks_pass_while_the_process_is_wedged() {
    for check in [ProbeCheck::PortOnly, ProbeCheck::ProcessOnly] {
        let m = container(vec![probe(ProbeKind::Liveness, check, 0, 1, 1, 1, 1)]);
        let run =
            simulate(&m, World { steady_phase: Some(0), wedge_from: Some(0), horizon_ms: 60 * S, ..World::default() });
        assert_eq!(run.restarts, 0, "{check:?}");
    }
}

#[test]
fn grace_is_counted_from_deletion_with_prestop_inside_it() {
    let mut m = container(vec![]);
    m.prestop = Some(SleepSeconds::Finite(25));
    m.shutdown = 20;
    let run = delete(&m, 2 * S, 0);
    assert_eq!(times(&run, EventKind::Sigterm), vec![25]);
    assert_eq!(times(&run, EventKind::Sigkill), vec![30]);
    assert_eq!(run.cut_ms, Some(15 * S));
    m.grace = 45;
    let run = delete(&m, 2 * S, 0);
    assert!(!run.sigkill);
    assert_eq!(times(&run, EventKind::Exited), vec![45]);
}

#[test]
fn a_kill_waits_for_the_grace_period_when_the_process_is_wedged() {
    let m = container(vec![probe(ProbeKind::Liveness, ProbeCheck::Local, 0, 10, 1, 1, 3)]);
    let run =
        simulate(&m, World { steady_phase: Some(0), wedge_from: Some(0), horizon_ms: 200 * S, ..World::default() });
    // Timeouts at 1, 11, 21: killed at 21, SIGKILL 30 s later, restarted at once.
    assert_eq!(run.first_restart_ms, Some(21 * S));
    assert_eq!(times(&run, EventKind::Sigkill), vec![51]);
    assert_eq!(times(&run, EventKind::Started), vec![51]);
    assert!(run.sigkill);
}

/// prober/prober_manager.go, `UpdatePodStatus`: a container is ready
/// while it runs and its readiness result is Success; the liveness worker
/// is on hold after its kill (prober/worker.go, `doProbe`), the readiness
/// worker goes on.
#[test]
fn a_killed_container_stays_ready_until_it_exits_or_its_readiness_fails() {
    let liveness = probe(ProbeKind::Liveness, ProbeCheck::Local, 0, 3, 1, 1, 1);
    let wedged = |readiness_failures| {
        let mut m =
            container(vec![liveness, probe(ProbeKind::Readiness, ProbeCheck::Local, 0, 3, 1, 1, readiness_failures)]);
        m.grace = 5;
        simulate(&m, World { steady_phase: Some(0), wedge_from: Some(0), horizon_ms: 40 * S, ..World::default() })
    };
    // Killed at 1 s, SIGKILL at 6 s: readiness (4 failures, every 3 s)
    // has failed only twice, so the pod leaves the endpoints at the exit.
    let run = wedged(4);
    assert_eq!(run.first_restart_ms, Some(S));
    assert_eq!(times(&run, EventKind::Sigkill), vec![6]);
    assert_eq!(times(&run, EventKind::Unready), vec![6]);
    // Two readiness failures in a row take it out at 4 s, before the exit.
    let run = wedged(2);
    assert_eq!(times(&run, EventKind::Unready), vec![4]);
    assert_eq!(times(&run, EventKind::Started), vec![6]);
}

#[test]
fn the_phase_offset_moves_the_probe_grid() {
    let m = container(vec![probe(ProbeKind::Liveness, ProbeCheck::Dependency, 0, 10, 1, 1, 1)]);
    // A 2 s stall at phase 0 meets the check at 0; at phase 5 s the next check is at 5, after the stall.
    let at = |phase: i64| {
        simulate(
            &m,
            World { steady_phase: Some(phase), stall: Some((0, 2 * S)), horizon_ms: 60 * S, ..World::default() },
        )
    };
    // Killed at 1 s (timed out), started again at once; the kubelet first
    // probes it a second later, at 2 s, when the stall is over.
    assert_eq!(at(0).restarts, 1);
    assert_eq!(at(5 * S).restarts, 0);
}

#[test]
fn readiness_counts_to_its_threshold_and_then_says_the_container_is_already_unready() {
    let m = container(vec![probe(ProbeKind::Readiness, ProbeCheck::Dependency, 0, 1, 1, 1, 3)]);
    let world = World { steady_phase: Some(0), stall: Some((0, 6 * S)), horizon_ms: 20 * S, ..World::default() };
    let run = simulate(&m, world);
    let failures: Vec<(i64, &str, bool)> = run
        .events
        .iter()
        .filter(|e| e.kind == EventKind::ProbeTimedOut)
        .map(|e| (e.at_ms / S, e.detail.as_str(), e.past_threshold))
        .collect();
    assert_eq!(
        failures,
        vec![
            (1, "dependency 1/3", false),
            (2, "dependency 2/3", false),
            (3, "dependency 3/3", false),
            (4, "dependency; already unready", true),
            (5, "dependency; already unready", true),
        ]
    );
    // The check at 5 s is answered when the stall ends at 6 s: in time.
    assert_eq!(times(&run, EventKind::Unready), vec![3]);
}

#[test]
fn a_back_off_carries_its_wait() {
    let m = container(vec![probe(ProbeKind::Liveness, ProbeCheck::Local, 0, 10, 1, 1, 1)]);
    let run = boot(&m, 1000, 100);
    let waits: Vec<Option<i64>> =
        run.events.iter().filter(|e| e.kind == EventKind::BackOff).map(|e| e.delay_ms).collect();
    // One check every 10 s on the probe's grid (1, 11, 21, ...). The kills
    // at 1, 11 and 21 s restart at once (no exit before the first; then the
    // previous exit is 10 s back, not less than the delay); the kill at 31 s
    // waits 20 s, the first check after it (61 s) kills again, which waits 40 s.
    assert_eq!(waits, vec![Some(20 * S), Some(40 * S)]);
    assert_eq!(times(&run, EventKind::Kill), vec![1, 11, 21, 31, 61]);
}

#[test]
fn the_probe_grid_is_kept_across_restarts() {
    // The seed's model server: liveness every 10 s, three failures, a 40 s
    // boot. Checks at 1, 11, 21 kill the first container at 21 s; the next
    // container is seen at 22 s and first checked at the grid's next tick,
    // 31 s: killed at 51 s, then every 30 s, as the kubelet did (restarts at
    // 24.6, 54.6, 84.5 and 114.5 s after creation, tests/tests/node_seed.rs).
    let m = container(vec![probe(ProbeKind::Liveness, ProbeCheck::Local, 0, 10, 1, 1, 3)]);
    let run = boot(&m, 40, 150);
    assert_eq!(times(&run, EventKind::Kill), vec![21, 51, 81, 111, 141]);
    // Each container ran 30 s, longer than the delay: no wait until the
    // fifth kill, whose previous exit is 30 s back, less than 40 s.
    assert_eq!(run.events.iter().filter(|e| e.kind == EventKind::BackOff).count(), 1);
}

#[test]
fn a_crash_restarts_at_once_then_waits_the_whole_delay_from_each_exit() {
    let m = container(vec![probe(ProbeKind::Readiness, ProbeCheck::Local, 0, 2, 1, 1, 1)]);
    let world = World { crash_after_ms: Some(3 * S), horizon_ms: 100 * S, ..World::default() };
    let run = simulate(&m, world);
    // Exits at 3 (restarted at once), 6 (+10 s), 19 (+20 s), 42 (+40 s), and
    // 85, which waits 80 s, past the horizon.
    assert_eq!(times(&run, EventKind::Started), vec![0, 3, 16, 39, 82]);
    assert_eq!(run.restarts, 5);
    assert_eq!(run.max_backoff_ms, 80 * S);
    // A container that is ready and settled still crashes.
    assert!(times(&run, EventKind::Ready).contains(&1));
}

#[test]
fn a_crash_under_restart_policy_never_stays_stopped() {
    let mut m = container(vec![]);
    m.restarts = false;
    let run = simulate(&m, World { crash_after_ms: Some(5 * S), horizon_ms: 60 * S, ..World::default() });
    assert_eq!(times(&run, EventKind::NotRestarted), vec![5]);
    assert_eq!(run.restarts, 0);
}

#[test]
fn the_kubelet_leaves_two_seconds_between_sigterm_and_sigkill_after_a_hook() {
    use super::termination::stop_times;
    // No hook: SIGTERM at once, SIGKILL when the grace period ends.
    assert_eq!(stop_times(None, 30 * S), (0, 30 * S));
    // A 5 s hook in 10 s: SIGTERM at 5, SIGKILL at 10.
    assert_eq!(stop_times(Some(5 * S), 10 * S), (5 * S, 10 * S));
    // The hook's time counts in whole seconds: 5.5 s takes 5 from the grace.
    assert_eq!(stop_times(Some(5_500), 10 * S), (5_500, 10_500));
    // A hook past the grace period: SIGTERM when it ends, SIGKILL 2 s later.
    assert_eq!(stop_times(Some(15 * S), 5 * S), (5 * S, 7 * S));
    // A grace period under 2 s still leaves 2 s.
    assert_eq!(stop_times(None, S), (0, 2 * S));
}

#[test]
fn a_hook_whose_length_is_unknown_is_said_to_be_taken_as_zero() {
    use super::hooks::HookLength;
    let mut m = container(vec![]);
    m.prestop = Some(SleepSeconds::Finite(0));
    m.prestop_length = HookLength::Unknown("exec");
    let run = delete(&m, 2 * S, 0);
    let prestop = run.events.iter().find(|e| e.kind == EventKind::PreStop).expect("a preStop event");
    assert!(prestop.detail.contains("exec of unknown length, taken as 0s"), "{}", prestop.detail);
    m.prestop = Some(SleepSeconds::Finite(8));
    m.prestop_length = HookLength::Stated("httpGet");
    m.grace = 10;
    let run = delete(&m, 2 * S, 0);
    assert_eq!(times(&run, EventKind::Sigterm), vec![8]);
    assert!(!run.sigkill);
}

#[test]
fn readiness_runs_at_once_when_the_kubelet_syncs_a_started_container_that_is_not_ready() {
    // Startup every 3 s, readiness every 10 s: the startup probe succeeds at
    // 7 s (checks at 1, 4, 7 against a 5 s boot), and the sync that follows
    // runs readiness at once: Ready at 7 s, not at its grid's 11 s.
    let m = container(vec![
        probe(ProbeKind::Startup, ProbeCheck::Local, 0, 3, 1, 1, 10),
        probe(ProbeKind::Readiness, ProbeCheck::Local, 0, 10, 1, 1, 1),
    ]);
    let run = boot(&m, 5, 60);
    assert_eq!(times(&run, EventKind::StartupSucceeded), vec![7]);
    assert_eq!(times(&run, EventKind::Ready), vec![7]);
    // A restarted container is checked once the kubelet has seen it: a
    // crash at 3 s restarts at once, and readiness runs at 4 s, not at 11 s.
    let m = container(vec![probe(ProbeKind::Readiness, ProbeCheck::Local, 0, 10, 1, 1, 1)]);
    let run = simulate(&m, World { crash_after_ms: Some(3 * S), horizon_ms: 6 * S, ..World::default() });
    assert_eq!(times(&run, EventKind::Ready), vec![1, 4]);
}

/// A container whose probe of `kind` names a port it does not declare.
fn unresolved(probes: Vec<ProbeModel>, kind: ProbeKind) -> ContainerModel {
    let mut m = container(probes);
    m.unresolved = vec![(kind, "tcpSocket port \"postgres\"".to_owned())];
    m
}

#[test]
fn a_check_whose_port_does_not_resolve_errors_every_period_and_counts_neither_way() {
    // Readiness keeps its first value, not ready, however healthy the app.
    let m = unresolved(
        vec![
            probe(ProbeKind::Liveness, ProbeCheck::Local, 0, 10, 1, 1, 3),
            probe(ProbeKind::Readiness, ProbeCheck::Unresolved, 0, 10, 1, 1, 3),
        ],
        ProbeKind::Readiness,
    );
    let run = boot(&m, 0, 45);
    assert_eq!(times(&run, EventKind::ProbeErrored), vec![1, 11, 21, 31, 41]);
    assert!(run.events.iter().all(|e| e.kind != EventKind::Ready && e.kind != EventKind::ProbeFailed));
    assert!(!run.served);
    assert_eq!(total(&run.unready), 45 * S);
    let errored = run.events.iter().find(|e| e.kind == EventKind::ProbeErrored).expect("an errored check");
    assert_eq!(errored.detail, "tcpSocket port \"postgres\" not found; the result is discarded");
    // A pod long running is not ready either: the probe never passed.
    let steady = simulate(&m, World { steady_phase: Some(0), horizon_ms: 30 * S, ..World::default() });
    assert!(!steady.served);
    assert_eq!(total(&steady.unready), 30 * S);
}

#[test]
fn a_liveness_check_that_cannot_be_sent_never_fails_so_a_wedge_is_never_restarted() {
    let m = unresolved(
        vec![
            probe(ProbeKind::Liveness, ProbeCheck::Unresolved, 0, 1, 1, 1, 1),
            probe(ProbeKind::Readiness, ProbeCheck::Local, 0, 1, 1, 1, 1),
        ],
        ProbeKind::Liveness,
    );
    // Its initial value is success: a boot that never answers is not killed.
    let run = boot(&m, 1000, 60);
    assert_eq!(run.restarts, 0);
    let wedged =
        simulate(&m, World { steady_phase: Some(0), wedge_from: Some(0), horizon_ms: 60 * S, ..World::default() });
    assert_eq!(wedged.restarts, 0);
    assert!(times(&wedged, EventKind::ProbeErrored).len() > 50);
}

#[test]
fn a_startup_check_that_cannot_be_sent_holds_liveness_and_readiness_for_good() {
    let m = unresolved(
        vec![
            probe(ProbeKind::Startup, ProbeCheck::Unresolved, 0, 10, 1, 1, 3),
            probe(ProbeKind::Liveness, ProbeCheck::Local, 0, 1, 1, 1, 1),
            probe(ProbeKind::Readiness, ProbeCheck::Local, 0, 1, 1, 1, 1),
        ],
        ProbeKind::Startup,
    );
    // Unknown is neither success nor failure: never started, never killed,
    // and neither liveness nor readiness ever runs, even on a wedge.
    for run in [
        boot(&m, 0, 100),
        simulate(&m, World { steady_phase: Some(0), wedge_from: Some(0), horizon_ms: 100 * S, ..World::default() }),
    ] {
        assert_eq!(run.restarts, 0);
        assert!(!run.served);
        assert!(run.events.iter().filter(|e| e.probe.is_some()).all(|e| e.probe == Some(ProbeKind::Startup)));
        assert!(times(&run, EventKind::ProbeErrored).len() >= 10);
    }
}
