//! One test per kubelet rule of the lifecycle the simulation applies: the
//! postStart hook (kuberuntime_container.go, `startContainer`), readiness
//! gates (status/generate.go, `GeneratePodReadyCondition`) and the stop
//! signal (kuberuntime/helpers.go, `getContainerConfigStopSignal`).

use crate::model::{PostStartFailure, ProbeKind, ProbeTiming, SleepSeconds};

use super::checks::ProbeCheck;
use super::gates::{GateDelay, ReadinessGates};
use super::hooks::{HookLength, PostStart};
use super::kubelet::{Run, World, simulate};
use super::kubelet_tests::{boot, times};
use super::pod::{ContainerModel, ProbeModel};
use super::stop_signal::StopSignal;
use super::termination::delete;
use super::timeline::EventKind;
use super::{Assumptions, Scenario, Verdict, run_scenario};

const S: i64 = 1000;

fn probe(kind: ProbeKind, period: i64, failure: i64) -> ProbeModel {
    let timing = ProbeTiming { initial_delay: 0, period, timeout: 1, success: 1, failure };
    ProbeModel { kind, timing, check: ProbeCheck::Local, grace: None }
}

fn hook(seconds: i64) -> PostStart {
    PostStart { length: SleepSeconds::Finite(seconds), source: HookLength::Stated("exec"), fails: None }
}

fn with_hook(probes: Vec<ProbeModel>, hook: PostStart) -> ContainerModel {
    ContainerModel { poststart: Some(hook), ..ContainerModel::with_probes(probes) }
}

fn failing(model: &ContainerModel, horizon_s: i64) -> Run {
    simulate(model, World { poststart_fails: true, horizon_ms: horizon_s * S, ..World::default() })
}

#[test]
fn no_probe_runs_until_the_poststart_hook_ends() {
    // Liveness every 2 s: without a hook first checked at 1 s; behind a 5 s
    // hook at 5 s, and the grid runs from there.
    let m = with_hook(vec![probe(ProbeKind::Liveness, 2, 3)], hook(5));
    let run = boot(&m, 1000, 10);
    assert_eq!(times(&run, EventKind::ProbeFailed), vec![5, 7, 9]);
    // The restarted container runs its hook again.
    assert_eq!(times(&run, EventKind::Kill), vec![9]);
    assert_eq!(times(&run, EventKind::PostStart), vec![0, 9]);
    // initialDelaySeconds counts from the container's start, not the hook's end.
    let mut late = probe(ProbeKind::Liveness, 2, 3);
    late.timing.initial_delay = 8;
    let run = boot(&with_hook(vec![late], hook(5)), 1000, 12);
    assert_eq!(times(&run, EventKind::ProbeFailed), vec![8, 10, 12]);
    // A hook shorter than the relist changes nothing.
    let run = boot(&with_hook(vec![probe(ProbeKind::Liveness, 2, 3)], hook(0)), 1000, 6);
    assert_eq!(times(&run, EventKind::ProbeFailed), vec![1, 3, 5]);
}

#[test]
fn a_long_hook_hides_a_slow_boot_from_liveness() {
    // A 12 s boot against liveness 2 s x 3 is a boot loop without a hook;
    // behind a 15 s hook liveness first checks an app that answers.
    let live = || vec![probe(ProbeKind::Liveness, 2, 3)];
    assert!(boot(&ContainerModel::with_probes(live()), 12, 40).restarts > 0);
    let run = boot(&with_hook(live(), hook(15)), 12, 40);
    assert_eq!(run.restarts, 0);
    assert!(run.booted);
}

#[test]
fn the_container_is_ready_only_once_its_hook_has_ended() {
    // Without a readiness probe: at the hook's end, not at the start.
    let run = boot(&with_hook(vec![], hook(4)), 0, 10);
    assert_eq!(times(&run, EventKind::Ready), vec![4]);
    // With one: readiness runs at once when the kubelet sees the container.
    let run = boot(&with_hook(vec![probe(ProbeKind::Readiness, 10, 1)], hook(4)), 0, 30);
    assert_eq!(times(&run, EventKind::Ready), vec![4]);
    // A restarted container runs its hook again: a crash at 6 s restarts at
    // once, readiness runs when that hook ends, at 10 s.
    let m = with_hook(vec![probe(ProbeKind::Readiness, 10, 1)], hook(4));
    let run = simulate(&m, World { crash_after_ms: Some(6 * S), horizon_ms: 12 * S, ..World::default() });
    assert_eq!(times(&run, EventKind::PostStart), vec![0, 6]);
    assert_eq!(times(&run, EventKind::Ready), vec![4, 10]);
}

#[test]
fn a_hook_that_never_ends_leaves_the_container_unprobed_and_never_ready() {
    let forever = PostStart { length: SleepSeconds::Forever, source: HookLength::Read, fails: None };
    let m = with_hook(vec![probe(ProbeKind::Liveness, 1, 1), probe(ProbeKind::Readiness, 1, 1)], forever);
    let run = boot(&m, 1000, 120);
    assert_eq!(run.restarts, 0, "liveness never runs");
    assert!(times(&run, EventKind::Ready).is_empty());
    assert!(!run.served);
    let o = run_scenario(&m, &Scenario::parse("boot").expect("valid"), &Assumptions::default());
    assert_eq!(o.verdict, Verdict::OutOfService);
    assert!(o.message.contains("postStart hook never ends"), "{}", o.message);
}

#[test]
fn a_failed_hook_kills_and_the_back_off_is_judged_by_that_exit() {
    let m = with_hook(vec![probe(ProbeKind::Readiness, 2, 1)], hook(3));
    let run = failing(&m, 60);
    // Killed at 3, restarted at once; killed at 6, restarted 10 s later; then 20 s.
    assert_eq!(times(&run, EventKind::Kill), vec![3, 6, 19, 42]);
    assert_eq!(times(&run, EventKind::Started), vec![0, 3, 16, 39]);
    assert_eq!(run.hook_failure, Some("its postStart hook fails"));
    assert!(!run.served, "the kubelet never saw a container running");
    // The kill is a stop like any other: the preStop hook runs first.
    let m = ContainerModel { prestop: Some(SleepSeconds::Finite(2)), ..m };
    let run = failing(&m, 10);
    assert_eq!(times(&run, EventKind::Exited), vec![5, 10]);
}

#[test]
fn a_failed_hook_under_restart_policy_never_leaves_the_container_stopped() {
    let m = ContainerModel { restarts: false, ..with_hook(vec![], hook(3)) };
    let run = failing(&m, 60);
    assert_eq!(times(&run, EventKind::NotRestarted), vec![3]);
    assert!(run.stopped);
    let o = run_scenario(&m, &Scenario::parse("poststart-fail").expect("valid"), &Assumptions::default());
    assert_eq!(o.verdict, Verdict::OutOfService);
    assert!(o.message.contains("leaves it stopped"), "{}", o.message);
}

#[test]
fn hooks_the_kubelet_fails_by_themselves() {
    // An httpGet to the app: refused at once while it boots, taken once it answers.
    let refused = PostStart { fails: Some(PostStartFailure::RefusedWhileBooting), ..hook(0) };
    let m = with_hook(vec![probe(ProbeKind::Readiness, 2, 1)], refused);
    let run = boot(&m, 10, 60);
    assert_eq!(times(&run, EventKind::Kill)[..2], [0, 0]);
    let o = run_scenario(&m, &Scenario::parse("boot:10s").expect("valid"), &Assumptions::default());
    assert_eq!(o.verdict, Verdict::BootLoop);
    let answers = run_scenario(&m, &Scenario::parse("boot:0s").expect("valid"), &Assumptions::default());
    assert_eq!(answers.verdict, Verdict::Ok);
    // A wedge's restart boots again: the hook kills every restarted container.
    let m = ContainerModel { cold_start: 5, ..with_hook(vec![probe(ProbeKind::Liveness, 2, 1)], refused) };
    let wedge = run_scenario(&m, &Scenario::parse("wedge").expect("valid"), &Assumptions::default());
    assert!(wedge.worst.restarts >= 3, "{:?}", wedge.worst);
    assert_eq!(wedge.verdict, Verdict::BootLoop, "not a wedge detected: nothing comes up after it");
    assert!(wedge.message.starts_with("no new container comes up"), "{}", wedge.message);
    // A tcpSocket hook, or an httpGet to a port the container does not
    // declare, always fails, at once, even after a boot of 0 s.
    for fails in [PostStartFailure::Unsupported, PostStartFailure::UnresolvedPort] {
        let never = PostStart { fails: Some(fails), ..hook(0) };
        let run = boot(&with_hook(vec![], never), 0, 30);
        assert_eq!(times(&run, EventKind::Kill)[..2], [0, 0], "{fails:?}");
        assert!(times(&run, EventKind::Ready).is_empty(), "{fails:?}");
    }
}

fn gated(stated: Option<GateDelay>, probes: Vec<ProbeModel>) -> ContainerModel {
    let readiness_gates = ReadinessGates { conditions: vec!["lb.example.com/ready".into()], stated };
    ContainerModel { readiness_gates, ..ContainerModel::with_probes(probes) }
}

#[test]
fn the_pod_joins_the_endpoints_when_its_gates_are_true_and_stays_out_before() {
    let readiness = || vec![probe(ProbeKind::Readiness, 2, 1)];
    // Unstated: True at once, said on the line.
    let run = boot(&gated(None, readiness()), 0, 10);
    assert_eq!(times(&run, EventKind::Ready), vec![1]);
    let line = run.events.iter().find(|e| e.kind == EventKind::Ready).map(|e| e.detail.clone()).unwrap_or_default();
    assert!(line.contains("taken as True at once"), "{line}");
    // Stated: the container is ready at 1 s, the pod 20 s later.
    let run = boot(&gated(Some(GateDelay::After(20)), readiness()), 0, 40);
    assert_eq!(times(&run, EventKind::ContainerReady), vec![1]);
    assert_eq!(times(&run, EventKind::Ready), vec![21]);
    assert_eq!(super::timeline::total(&run.unready), 21 * S);
}

#[test]
fn gates_that_open_while_the_container_is_not_ready_wait_for_it() {
    // Ready at 1 s, gates True at 6 s; the app crashes at 4 s and is back at
    // once: readiness runs when the kubelet sees it (5 s), before the gates.
    // The pod joins at 6 s; the crash at 8 s takes it out, and the next
    // container (back 10 s later) is in as soon as it is ready, at 19 s:
    // the gates stay True.
    let m = gated(Some(GateDelay::After(5)), vec![probe(ProbeKind::Readiness, 2, 1)]);
    let run = simulate(&m, World { crash_after_ms: Some(4 * S), horizon_ms: 21 * S, ..World::default() });
    assert_eq!(times(&run, EventKind::ContainerReady), vec![1, 5]);
    assert_eq!(times(&run, EventKind::Ready), vec![6, 19]);
    assert_eq!(times(&run, EventKind::Unready), vec![8]);
}

#[test]
fn gates_never_true_keep_every_scenario_out_of_the_endpoints() {
    let m = gated(Some(GateDelay::Never), vec![probe(ProbeKind::Readiness, 2, 1)]);
    let run = boot(&m, 0, 30);
    assert_eq!(times(&run, EventKind::ContainerReady), vec![1]);
    assert!(times(&run, EventKind::Ready).is_empty() && !run.served);
    for scenario in ["boot", "pause:3s", "stall:3s"] {
        let o = run_scenario(&m, &Scenario::parse(scenario).expect("valid"), &Assumptions::default());
        assert_eq!(o.verdict, Verdict::OutOfService, "{scenario}");
        assert!(o.message.contains("readiness gate is never True"), "{scenario}: {}", o.message);
    }
    // A long-running pod with gates stated to take time has them True already.
    let m = gated(Some(GateDelay::After(30)), vec![probe(ProbeKind::Readiness, 2, 1)]);
    let o = run_scenario(&m, &Scenario::parse("pause:1s").expect("valid"), &Assumptions::default());
    assert_eq!(o.verdict, Verdict::Ok);
}

#[test]
fn the_deletion_sends_the_stop_signal_the_gate_lets_through() {
    let m =
        |signal: StopSignal| ContainerModel { stop_signal: signal, drain: 4, ..ContainerModel::with_probes(vec![]) };
    let sigterm = |run: &Run| run.events.iter().find(|e| e.kind == EventKind::Sigterm).cloned();
    let sent = delete(&m(StopSignal::Sent("SIGINT".into())), 2 * S, 0);
    assert_eq!(sigterm(&sent).and_then(|e| e.signal), Some("SIGINT".to_owned()));
    let dropped = delete(&m(StopSignal::Dropped("SIGINT".into())), 2 * S, 0);
    let e = sigterm(&dropped).expect("a SIGTERM");
    assert_eq!(e.signal, None);
    assert!(e.detail.contains("SIGINT is not sent"), "{}", e.detail);
    assert_eq!(times(&dropped, EventKind::Exited), vec![4]);
    // SIGKILL as the stop signal: nothing drains, whatever the grace period.
    let killed = delete(&m(StopSignal::Sent("SIGKILL".into())), 2 * S, 0);
    assert!(sigterm(&killed).is_none());
    assert_eq!(times(&killed, EventKind::Sigkill), vec![0]);
    assert_eq!(killed.cut_ms, Some(4 * S));
    // A liveness kill stops the container the same way.
    let mut live = m(StopSignal::Sent("SIGKILL".into()));
    live.probes = vec![probe(ProbeKind::Liveness, 1, 1)];
    let run = boot(&live, 1000, 1);
    assert_eq!(times(&run, EventKind::Sigkill), vec![1]);
}
