//! The controllers' steps on replica times given outright.

use super::deployment::{self, Strategy};
use super::drain::{self, Budget};
use super::replicas::ReplicaTimes;
use super::run::{ControllerRun, StepKind};
use super::stateful_set;

const S: i64 = 1000;

fn times(ready: Option<i64>, gone: i64) -> ReplicaTimes {
    ReplicaTimes { ready_after_ms: ready.map(|r| r * S), gone_after_ms: gone * S }
}

fn deployment(replicas: i64, strategy: Strategy, deadline: Option<i64>, t: ReplicaTimes) -> ControllerRun {
    deployment::roll(deployment::Plan { replicas, strategy, min_ready_ms: 0, deadline_ms: deadline.map(|d| d * S) }, t)
}

/// `(at s, pod)` of the steps of a kind.
fn steps(run: &ControllerRun, kind: StepKind) -> Vec<(i64, String)> {
    run.steps.iter().filter(|s| s.kind == kind).map(|s| (s.at_ms / S, s.pod.clone().unwrap_or_default())).collect()
}

#[test]
fn a_rolling_update_without_surge_takes_one_out_and_waits_for_its_replacement() {
    let run = deployment(3, Strategy::Rolling { surge: 0, unavailable: 1 }, None, times(Some(8), 1));
    assert_eq!(run.complete_ms, Some(24 * S));
    assert_eq!(run.lowest_available().map(|c| c.available), Some(2));
    let created: Vec<i64> = steps(&run, StepKind::Created).iter().map(|(t, _)| *t).collect();
    assert_eq!(created, [0, 8, 16]);
    assert_eq!(steps(&run, StepKind::Deleted).len(), 3);
}

#[test]
fn a_surge_keeps_every_replica_available() {
    let run = deployment(3, Strategy::Rolling { surge: 1, unavailable: 0 }, None, times(Some(8), 1));
    assert_eq!(run.lowest_available().map(|c| c.available), Some(3));
    assert_eq!(run.complete_ms, Some(24 * S));
    // Four pods at most: the surge.
    assert_eq!(run.capacity.iter().map(|c| c.pods).max(), Some(4));
}

#[test]
fn surge_and_unavailable_together_replace_two_at_a_time() {
    // 25% of 4 each way: one surge, one out, so two new pods boot at once.
    let run = deployment(4, Strategy::Rolling { surge: 1, unavailable: 1 }, None, times(Some(8), 1));
    assert_eq!(steps(&run, StepKind::Created).iter().filter(|(t, _)| *t == 0).count(), 2);
    assert_eq!(run.lowest_available().map(|c| c.available), Some(3));
    assert_eq!(run.complete_ms, Some(16 * S));
}

#[test]
fn recreate_deletes_every_pod_and_creates_the_new_ones_once_all_are_gone() {
    let run = deployment(2, Strategy::Recreate, None, times(Some(8), 5));
    assert_eq!(steps(&run, StepKind::Created), [(5, "new-1".to_owned()), (5, "new-2".to_owned())]);
    assert_eq!(run.lowest_ready().map(|c| (c.ready, c.at_ms)), Some((0, 0)));
    assert_eq!(run.complete_ms, Some(13 * S));
}

#[test]
fn a_boot_longer_than_the_progress_deadline_exceeds_it_and_completes_after() {
    let run = deployment(1, Strategy::Rolling { surge: 1, unavailable: 0 }, Some(10), times(Some(24), 1));
    assert_eq!(run.deadline_exceeded_ms, [10 * S]);
    assert_eq!(run.complete_ms, Some(24 * S));
    // Ready at the deadline's very moment: in time.
    let run = deployment(1, Strategy::Rolling { surge: 1, unavailable: 0 }, Some(600), times(Some(600), 1));
    assert!(run.deadline_exceeded_ms.is_empty(), "{:?}", run.deadline_exceeded_ms);
    // Each step's progress restarts the clock: three 8 s boots under 10 s never exceed it.
    let run = deployment(3, Strategy::Rolling { surge: 0, unavailable: 1 }, Some(10), times(Some(8), 1));
    assert!(run.deadline_exceeded_ms.is_empty(), "{:?}", run.deadline_exceeded_ms);
}

#[test]
fn a_new_pod_that_is_never_ready_stalls_the_rollout_with_the_old_pods_kept() {
    let run = deployment(3, Strategy::Rolling { surge: 1, unavailable: 0 }, Some(600), times(None, 1));
    assert_eq!(run.complete_ms, None);
    assert_eq!(run.deadline_exceeded_ms, [600 * S]);
    assert_eq!(run.lowest_available().map(|c| c.available), Some(3));
    assert_eq!(run.stuck.as_deref(), Some("1 new pod is never Ready; the controller keeps 3 old"));
}

fn stateful(replicas: i64, unavailable: i64, partition: i64, parallel: bool, t: ReplicaTimes) -> ControllerRun {
    let plan = stateful_set::Plan { replicas, unavailable, partition, parallel, min_ready_ms: 0 };
    stateful_set::roll(plan, "web", t)
}

#[test]
fn a_stateful_set_replaces_the_highest_ordinal_first_each_once_the_last_is_gone() {
    let run = stateful(3, 1, 0, false, times(Some(8), 2));
    let deleted = steps(&run, StepKind::Deleted);
    let order: Vec<&str> = deleted.iter().map(|(_, p)| p.as_str()).collect();
    assert_eq!(order, ["web-2", "web-1", "web-0"]);
    assert_eq!(deleted.iter().map(|(t, _)| *t).collect::<Vec<_>>(), [0, 10, 20]);
    assert_eq!(steps(&run, StepKind::Created)[0], (2, "web-2".to_owned()));
    assert_eq!(run.complete_ms, Some(30 * S));
    assert_eq!(run.lowest_available().map(|c| c.available), Some(2));
}

#[test]
fn ordered_ready_creates_two_taken_out_in_ordinal_order_each_after_the_one_before() {
    let run = stateful(3, 2, 0, false, times(Some(8), 2));
    let deleted: Vec<(i64, String)> = steps(&run, StepKind::Deleted);
    assert_eq!(deleted[..2], [(0, "web-2".to_owned()), (0, "web-1".to_owned())]);
    let created = steps(&run, StepKind::Created);
    assert_eq!(created[..2], [(2, "web-1".to_owned()), (10, "web-2".to_owned())]);
    assert_eq!(run.lowest_available().map(|c| c.available), Some(1));
    // Parallel creates both at once.
    let parallel = stateful(3, 2, 0, true, times(Some(8), 2));
    assert_eq!(steps(&parallel, StepKind::Created)[..2], [(2, "web-1".to_owned()), (2, "web-2".to_owned())]);
}

#[test]
fn a_partition_keeps_the_lower_ordinals() {
    let run = stateful(3, 1, 2, false, times(Some(8), 2));
    assert_eq!(steps(&run, StepKind::Deleted), [(0, "web-2".to_owned())]);
    assert_eq!(run.complete_ms, Some(10 * S));
}

fn budget(desired: i64) -> Budget {
    Budget { label: "PodDisruptionBudget/web".to_owned(), desired_healthy: desired }
}

#[test]
fn a_sound_budget_waits_for_the_replacement_before_the_next_eviction() {
    let run = drain::drain(2, &[budget(1)], times(Some(6), 1));
    assert_eq!(steps(&run, StepKind::Evicted), [(0, "pod-1".to_owned()), (6, "pod-2".to_owned())]);
    let refused = steps(&run, StepKind::EvictionRefused);
    assert_eq!(refused, [(1, "pod-2".to_owned())]);
    assert_eq!(run.lowest_ready().map(|c| c.ready), Some(1));
    assert_eq!(run.complete_ms, Some(7 * S));
}

#[test]
fn a_budget_that_wants_every_replica_blocks_the_drain_for_ever() {
    let run = drain::drain(2, &[budget(2)], times(Some(6), 1));
    assert_eq!(run.complete_ms, None);
    assert!(steps(&run, StepKind::Evicted).is_empty());
    let stuck = run.stuck.unwrap_or_default();
    assert!(stuck.contains("allows no disruption: 2 healthy, 2 wanted"), "{stuck}");
    let two = drain::drain(2, &[budget(0), budget(0)], times(Some(6), 1));
    assert!(two.stuck.unwrap_or_default().contains("more than one PodDisruptionBudget"));
}

#[test]
fn without_a_budget_a_slow_boot_loses_every_replica_in_a_node_by_node_drain() {
    let run = drain::drain(3, &[], times(Some(30), 1));
    assert_eq!(steps(&run, StepKind::Evicted).iter().map(|(t, _)| *t).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(run.lowest_ready().map(|c| (c.ready, c.at_ms / S)), Some((0, 2)));
    assert_eq!(run.end_ms, 32 * S);
}
