//! One test per kubelet timing rule the simulation applies.

use crate::model::{ProbeKind, ProbeTiming, SleepSeconds};

use super::checks::Check;
use super::kubelet::{Run, World, simulate};
use super::pod::{ContainerModel, ProbeModel};
use super::termination::delete;
use super::timeline::{EventKind, total};

const S: i64 = 1000;

fn probe(
    kind: ProbeKind,
    check: Check,
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

fn times(run: &Run, kind: EventKind) -> Vec<i64> {
    run.events.iter().filter(|e| e.kind == kind).map(|e| e.at_ms / S).collect()
}

fn boot(model: &ContainerModel, boot_s: i64, horizon_s: i64) -> Run {
    simulate(
        model,
        World { boot_ms: boot_s * S, restart_boot_ms: boot_s * S, horizon_ms: horizon_s * S, ..World::default() },
    )
}

#[test]
fn first_check_at_initial_delay_then_every_period() {
    let m = container(vec![probe(ProbeKind::Liveness, Check::Local, 5, 10, 1, 1, 3)]);
    // The app never answers: failures at 5, 15, 25, the third kills.
    let run = boot(&m, 1000, 26);
    assert_eq!(times(&run, EventKind::ProbeFailed), vec![5, 15, 25]);
    assert_eq!(run.first_restart_ms, Some(25 * S));
}

#[test]
fn startup_probe_holds_liveness_and_readiness_until_it_succeeds() {
    let m = container(vec![
        probe(ProbeKind::Startup, Check::Local, 0, 10, 1, 1, 30),
        probe(ProbeKind::Liveness, Check::Local, 0, 1, 1, 1, 1),
        probe(ProbeKind::Readiness, Check::Local, 0, 5, 1, 1, 1),
    ]);
    // Liveness (failureThreshold 1, every second) would kill a 95 s boot at
    // once; the startup probe holds it until its check at 100 s passes.
    let run = boot(&m, 95, 200);
    assert_eq!(run.restarts, 0);
    assert_eq!(times(&run, EventKind::StartupSucceeded), vec![100]);
    assert!(
        run.events.iter().filter(|e| e.kind == EventKind::ProbeFailed).all(|e| e.probe == Some(ProbeKind::Startup))
    );
    // Readiness runs on its own grid from the container's start: 100 is on it.
    assert_eq!(times(&run, EventKind::Ready), vec![100]);
    assert_eq!(total(&run.unready), 100 * S);
}

#[test]
fn failure_threshold_counts_consecutive_failures() {
    let m = container(vec![probe(ProbeKind::Liveness, Check::Local, 0, 1, 1, 1, 3)]);
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
        let m = container(vec![probe(ProbeKind::Liveness, Check::Local, 0, 10, timeout, 1, 1)]);
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
    let m = container(vec![probe(ProbeKind::Readiness, Check::Dependency, 0, 1, 1, 2, 1)]);
    let run =
        simulate(&m, World { steady_phase: Some(0), stall: Some((0, 3 * S)), horizon_ms: 60 * S, ..World::default() });
    assert_eq!(run.restarts, 0);
    // Fails at 0 (timed out at 1), checks at 3 and 4 pass: back in at 4.
    assert_eq!(times(&run, EventKind::Unready), vec![1]);
    assert_eq!(times(&run, EventKind::Ready), vec![4]);
    assert_eq!(total(&run.unready), 3 * S);
}

#[test]
fn crash_loop_back_off_doubles_from_10_to_300_seconds() {
    let m = container(vec![probe(ProbeKind::Liveness, Check::Local, 0, 1, 1, 1, 1)]);
    let run = boot(&m, 100_000, 3000);
    let waits: Vec<String> =
        run.events.iter().filter(|e| e.kind == EventKind::BackOff).map(|e| e.detail.clone()).collect();
    let expected: Vec<String> =
        [10, 20, 40, 80, 160, 300, 300].iter().map(|s| format!("CrashLoopBackOff {s}s")).collect();
    assert_eq!(&waits[..7], &expected[..]);
    // The first restart is immediate: killed at 0, started again at 0.
    assert_eq!(times(&run, EventKind::Started)[..3], [0, 0, 10]);
    assert_eq!(run.max_backoff_ms, 300 * S);
}

#[test]
fn restart_policy_never_leaves_the_container_stopped() {
    let mut m = container(vec![probe(ProbeKind::Liveness, Check::Local, 0, 1, 1, 1, 1)]);
    m.restarts = false;
    let run = boot(&m, 100, 300);
    assert_eq!(run.restarts, 1);
    assert_eq!(times(&run, EventKind::NotRestarted), vec![0]);
    assert!(!run.booted);
}

#[test]
fn port_and_process_checks_pass_while_the_process_is_wedged() {
    for check in [Check::PortOnly, Check::ProcessOnly] {
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
    let m = container(vec![probe(ProbeKind::Liveness, Check::Local, 0, 10, 1, 1, 3)]);
    let run =
        simulate(&m, World { steady_phase: Some(0), wedge_from: Some(0), horizon_ms: 200 * S, ..World::default() });
    // Timeouts at 1, 11, 21: killed at 21, SIGKILL 30 s later, restarted at once.
    assert_eq!(run.first_restart_ms, Some(21 * S));
    assert_eq!(times(&run, EventKind::Sigkill), vec![51]);
    assert_eq!(times(&run, EventKind::Started), vec![51]);
    assert!(run.sigkill);
}

#[test]
fn the_phase_offset_moves_the_probe_grid() {
    let m = container(vec![probe(ProbeKind::Liveness, Check::Dependency, 0, 10, 1, 1, 1)]);
    // A 2 s stall at phase 0 meets the check at 0; at phase 5 s the next check is at 5, after the stall.
    let at = |phase: i64| {
        simulate(
            &m,
            World { steady_phase: Some(phase), stall: Some((0, 2 * S)), horizon_ms: 60 * S, ..World::default() },
        )
    };
    // Killed at 1 s (timed out), started again at once, its first check at
    // 1 s still meets the stall: killed again at 2 s.
    assert_eq!(at(0).restarts, 2);
    assert_eq!(at(5 * S).restarts, 0);
}

#[test]
fn readiness_counts_to_its_threshold_and_then_says_the_container_is_already_unready() {
    let m = container(vec![probe(ProbeKind::Readiness, Check::Dependency, 0, 1, 1, 1, 3)]);
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
            (6, "dependency; already unready", true),
        ]
    );
    assert_eq!(times(&run, EventKind::Unready), vec![3]);
}

#[test]
fn a_back_off_carries_its_wait() {
    let m = container(vec![probe(ProbeKind::Liveness, Check::Local, 0, 10, 1, 1, 1)]);
    let run = boot(&m, 1000, 100);
    let waits: Vec<Option<i64>> =
        run.events.iter().filter(|e| e.kind == EventKind::BackOff).map(|e| e.delay_ms).collect();
    // Kills at 0 (restarted at once), 0, 10, 30 and 70 s.
    assert_eq!(waits, vec![Some(10 * S), Some(20 * S), Some(40 * S), Some(80 * S)]);
}
