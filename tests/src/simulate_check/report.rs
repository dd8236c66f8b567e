//! A disagreement as a random run reports it: the case (how to make it
//! again, what it is, its spec), what is wrong, and the two timelines side
//! by side in time, simulate's and the workload's log.

use std::fmt::Write as _;

use serde_json::json;

use super::case::Case;
use super::random::{CASE_ENV, SEED_ENV};
use super::run::Outcome;

/// The report of case `k` of `seed`.
pub fn disagreement(seed: u64, k: u64, case: &Case, outcome: &Outcome) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "case {} ({SEED_ENV}={seed} {CASE_ENV}={k}): {}", case.name, case.what);
    let _ = writeln!(
        out,
        "  scenario {}, verdict {}, watched {} s: {}",
        case.scenario,
        outcome.predicted.verdict,
        outcome.window,
        outcome.wrong.join("; ")
    );
    let spec = &outcome.pod["spec"];
    let shown = json!({
        "annotations": outcome.pod["metadata"]["annotations"],
        "terminationGracePeriodSeconds": spec["terminationGracePeriodSeconds"],
        "initContainers": spec["initContainers"],
        "containers": spec["containers"],
    });
    let _ = writeln!(out, "  pod: {shown}");
    let _ = writeln!(out, "  simulate:");
    for line in &outcome.predicted.timeline {
        let _ = writeln!(out, "    {line}");
    }
    match &outcome.observed {
        Ok(o) => {
            let _ = writeln!(out, "  the kubelet (the workload's log; #incarnation):");
            for line in &o.timeline {
                let _ = writeln!(out, "    {line}");
            }
            let ready: Vec<String> =
                o.readiness.iter().map(|(t, r)| format!("{} {t:.1}", if *r { "in" } else { "out" })).collect();
            let _ = writeln!(out, "  the pod's Ready as watched: {}", ready.join(", "));
        }
        Err(why) => {
            let _ = writeln!(out, "  not watched: {why}");
        }
    }
    out
}
