//! Which limit of docs/simulate.md a random case's disagreement is, if
//! any: a case sits on a limit when simulate's own timeline puts it there,
//! and its disagreement is the limit's only when the limit's account of it
//! agrees with what the kubelet did. A boot's account is simulate run
//! again with the boot moved as the limit says the node moves it; a crash
//! loop's is the one restart at once more the limit says the kubelet makes.
//! Anything else stays a disagreement.

use super::case::{Case, period_of};
use super::compare::judge;
use super::observed::Observed;
use super::predicted::{Predicted, simulate};
use super::random::kept;
use super::run::Outcome;

/// A check at the very moment a boot ends (docs/simulate.md, Limits).
const BOOT_END: &str = "a check at the moment a boot ends";
/// The first check's phase (docs/simulate.md, Limits).
const PHASE: &str = "the first check's phase";
/// A crash a probe sees before the kubelet's relist (docs/simulate.md,
/// Limits).
const CRASH_SEEN_BY_PROBE: &str = "a crash a probe sees before the relist";

/// The limit `outcome`'s disagreement is, if its account agrees with the
/// node; `None` for a case that agrees, was not watched, or disagrees
/// otherwise.
pub fn on_limit(case: &Case, outcome: &Outcome) -> Option<&'static str> {
    let observed = outcome.observed.as_ref().ok()?;
    if outcome.wrong.is_empty() || !observed.outside.is_empty() {
        return None;
    }
    if case.scenario.starts_with("crash") {
        return crash_seen_by_probe(case, &outcome.predicted, observed).then_some(CRASH_SEEN_BY_PROBE);
    }
    let boot: u64 = case.scenario.strip_prefix("boot:")?.strip_suffix('s')?.parse().ok()?;
    let (limit, boots) = boot_limit(case, &outcome.predicted, boot)?;
    let dir = tempfile::tempdir().ok()?;
    let watched = Case { observe: outcome.window, ..case.clone() };
    let explained = boots.into_iter().any(|moved| {
        let moved = Case { scenario: kept(format!("boot:{moved}s")), ..watched.clone() };
        judge(&moved, &simulate(&moved, &outcome.pod, dir.path()), observed).is_empty()
    });
    explained.then_some(limit)
}

/// The boot limit simulate's timeline puts a boot case on, and the boots
/// that limit's account gives the node:
/// - a check at the moment the boot ends, which the node refuses: the app
///   boots from its process's start, a little after the runtime's start the
///   kubelet counts from, so on the probes' whole-second grid the boot is a
///   second longer;
/// - a first kill less than a period before the boot ends: the kubelet's
///   checks come up to a period after the model's earliest, which on that
///   grid is the boot 1 .. period-1 s shorter.
fn boot_limit(case: &Case, predicted: &Predicted, boot: u64) -> Option<(&'static str, Vec<u64>)> {
    let at = |t: f64, names: &[&str]| predicted.events.iter().any(|(u, e)| *u == t && names.contains(&e.as_str()));
    let mut healthy = predicted.events.iter().filter(|(_, e)| e == "app-healthy").map(|(t, _)| *t);
    if healthy.any(|t| at(t, &["startup-succeeded", "in-endpoints", "container-ready"])) {
        return Some((BOOT_END, vec![boot + 1]));
    }
    let period = period_of(case);
    let first_kill = predicted.events.iter().find(|(_, e)| e == "restart").map(|(t, _)| *t);
    if first_kill.is_some_and(|k| k < boot as f64 && boot as f64 <= k + period) {
        let shorter = (1..period as u64).filter_map(|d| boot.checked_sub(d)).collect();
        return Some((PHASE, shorter));
    }
    None
}

/// Whether a crash loop sits on the relist limit and the node did what
/// that limit says: with a liveness or startup probe that kills at one
/// failure, a check that falls after the app's exit and before the
/// kubelet's relist has seen it (up to 1 s) finds the container still
/// running in the kubelet's status, so it is killed and started again in
/// one sync, its back-off judged by the container that exited before it
/// (`computePodActions`, `doBackOff`): one restart at once more than
/// simulate's, and every back-off one exit later.
fn crash_seen_by_probe(case: &Case, predicted: &Predicted, observed: &Observed) -> bool {
    let kills_at_once = ["livenessProbe", "startupProbe"].iter().any(|k| case.container[*k]["failureThreshold"] == 1);
    let run: Option<f64> = case.scenario.strip_prefix("crash:").and_then(|s| s.strip_suffix('s')?.parse().ok());
    let (true, Some(run)) = (kills_at_once, run) else { return false };
    // simulate's restarts at once: its starts before its first back-off.
    let first_backoff = predicted.backoffs.first().map_or(f64::MAX, |(start, delay)| start - delay);
    let said = predicted.events.iter().filter(|(t, e)| e == "started" && *t > 0.0 && *t <= first_backoff).count();
    // The node's: each restart within a run and the tolerance of the start
    // before it.
    let tolerance = period_of(case) + 2.0;
    let mut previous = 0.0;
    let mut seen = 0;
    for restart in &observed.restarts {
        if restart - previous > run + tolerance {
            break;
        }
        seen += 1;
        previous = *restart;
    }
    seen == said + 1
}
