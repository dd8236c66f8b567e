//! Whose endpoints a verdict's line speaks of and for how long: the
//! Services of the input that select the pod (none: the replicas' readiness
//! alone, and no line says "zero endpoints"), and a span read from the
//! figures the outcome shows under the line.

use crate::model::services_verb;

use super::reading::{Reading, seconds};

/// How long the pod's replicas are all out of endpoints at once, from the
/// figures the outcome shows: one replica as long as its offset keeps it
/// out (the best and the worst offset's); several, hit at once by a
/// stall, at least as long as every offset is out together (their probes
/// spread over the offsets) and at most as long as the worst offset is
/// (their probes in step).
pub(crate) fn zero_span(r: &Reading) -> (i64, i64) {
    let (best, worst) = (r.best.unready_ms, r.worst.unready_ms);
    match r.at_once_ms {
        Some(at_once) => (at_once, worst.max(at_once)),
        None => (best.min(worst), best.max(worst)),
    }
}

/// `for 13.5-15 s`, `for up to 11 s` (none when their probes fall apart), `for 3 s`.
pub(crate) fn for_span((lo, hi): (i64, i64)) -> String {
    match (lo, hi) {
        _ if lo == hi => format!("for {} s", seconds(hi)),
        (0, _) => format!("for up to {} s", seconds(hi)),
        _ => format!("for {}-{} s", seconds(lo), seconds(hi)),
    }
}

/// Said instead of a Service that loses its endpoints when none of the
/// input selects the pod: readiness still takes it out of any.
pub(crate) const NO_SERVICE: &str = "no Service in the input selects the pod";

/// `Service/orders has zero endpoints` (or `have`, for several), when
/// Services of the input select the pod.
pub(crate) fn zero_endpoints(r: &Reading) -> Option<String> {
    (!r.services.is_empty()).then(|| format!("{} zero endpoints", services_verb(&r.services, "has", "have")))
}

/// How long a boot keeps the pod out of the endpoints: `out of endpoints
/// for 21 s`; of a pod of several containers, the pod's time and what held
/// it out, `the pod is out of endpoints for 12 s (held out by container
/// "proxy")`.
pub(crate) fn out_for(r: &Reading, ms: i64) -> String {
    match &r.pod {
        Some(pod) if pod.out_ms > 0 => {
            format!("the pod is out of endpoints for {} s (held out by {})", seconds(pod.out_ms), pod.held_by)
        }
        Some(_) => "the pod is out of endpoints for 0 s".to_owned(),
        None => format!("out of endpoints for {} s", seconds(ms)),
    }
}

/// What a line about one container adds of its pod of several containers
/// in a stall that hits them all: `; the pod is out of endpoints for up to
/// 12 s (held out by container "proxy")`, where another container held it
/// out; empty where the line's own container alone did, or nothing did.
pub(crate) fn pod_clause(r: &Reading) -> String {
    match &r.pod {
        Some(pod) if pod.out_ms > 0 && pod.others_hold => {
            format!("; the pod is out of endpoints for up to {} s (held out by {})", seconds(pod.out_ms), pod.held_by)
        }
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::{for_span, zero_span};
    use crate::simulate::ScenarioKind;
    use crate::simulate::verdict::tests::unready;
    use crate::simulate::verdict::{Figures, Reading, Verdict, judge};

    /// A stall that restarts every offset: each out of endpoints for
    /// `best` and `worst` ms, all of them at once for `at_once` ms.
    fn storm(best: i64, worst: i64, at_once: i64, replicas: i64, services: &[&str]) -> Reading {
        let restarted =
            |unready_ms: i64, at: i64| Figures { restarts: 1, restart_at_ms: Some(at), unready_ms, sigkill: false };
        Reading {
            best: restarted(best, 2_500),
            worst: restarted(worst, 1_000),
            zero_endpoints_ms: if replicas > 1 { at_once } else { worst },
            at_once_ms: (replicas > 1).then_some(at_once),
            replicas,
            services: services.iter().map(|s| (*s).to_owned()).collect(),
            ..Reading::default()
        }
    }

    #[test]
    fn spans_read_as_people_say_them() {
        assert_eq!(for_span((3_000, 3_000)), "for 3 s");
        assert_eq!(for_span((0, 11_000)), "for up to 11 s");
        assert_eq!(for_span((13_500, 15_000)), "for 13.5-15 s");
        // One replica: its best and worst offsets, in order whatever harm ranked them.
        let r = Reading {
            best: Figures { unready_ms: 9_000, ..Figures::default() },
            worst: Figures { unready_ms: 4_000, restarts: 1, ..Figures::default() },
            ..Reading::default()
        };
        assert_eq!(zero_span(&r), (4_000, 9_000));
        let several = Reading { at_once_ms: Some(2_000), ..r };
        assert_eq!(zero_span(&several), (2_000, 4_000));
    }

    #[test]
    fn the_zero_endpoints_of_a_storm_span_the_figures_shown_from_every_offset_at_once_to_the_worst() {
        // Each offset out 15 s, all 20 of them at once 13.5 s: the replicas
        // share at least 13.5 s, and 15 s when their probes are in step.
        let (v, line) = judge(ScenarioKind::Stall(10), &storm(15_000, 15_000, 13_500, 6, &["Service/orders"]));
        assert_eq!(v, Verdict::RestartStorm);
        assert_eq!(
            line,
            "restart storm: all 6 replicas restart (at 1-2.5 s) and Service/orders has zero endpoints for 13.5-15 s"
        );
        // Offsets out 11 s each but never all at once: up to 11 s, never "for 0 s".
        let (_, line) = judge(ScenarioKind::Stall(10), &storm(11_000, 11_000, 0, 3, &["Service/a", "Service/b"]));
        assert!(line.ends_with("and Service/a, Service/b have zero endpoints for up to 11 s"), "{line}");
        // One replica: as long as its offset keeps it out, the best's to the worst's.
        let (_, line) = judge(ScenarioKind::Stall(120), &storm(614_000, 619_000, 0, 1, &["Service/llm"]));
        assert!(line.ends_with("and Service/llm has zero endpoints for 614-619 s"), "{line}");
        // The first restart's times in order, whichever offset comes first.
        let mut early_best = storm(614_000, 619_000, 0, 1, &[]);
        early_best.best.restart_at_ms = Some(25_500);
        early_best.worst.restart_at_ms = Some(26_000);
        let (_, line) = judge(ScenarioKind::Stall(120), &early_best);
        assert!(line.contains("(at 25.5-26 s)"), "{line}");
    }

    #[test]
    fn without_a_service_that_selects_the_pod_no_line_speaks_of_zero_endpoints() {
        let cases = [
            (ScenarioKind::Stall(10), storm(15_000, 15_000, 13_500, 6, &[])),
            (ScenarioKind::Stall(120), storm(614_000, 619_000, 0, 1, &[])),
            (ScenarioKind::Stall(120), unready(109_000, 3)),
            (ScenarioKind::Pause(5), unready(4_000, 1)),
        ];
        for (kind, reading) in cases {
            let (_, line) = judge(kind, &reading);
            assert!(!line.contains("zero endpoints") && !line.contains("the Service"), "{line}");
            assert!(line.contains("(no Service in the input selects the pod)"), "{line}");
        }
        let (_, line) = judge(ScenarioKind::Stall(10), &storm(15_000, 15_000, 13_500, 6, &[]));
        assert_eq!(
            line,
            "restart storm: all 6 replicas restart (at 1-2.5 s) and are all unready at once for 13.5-15 s (no Service in the input selects the pod)"
        );
    }
}
