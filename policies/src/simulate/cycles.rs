//! Restart cycles that repeat: a boot loop or a restart storm runs the same
//! cycle (a container start and what follows up to the next start) again
//! and again, only the CrashLoopBackOff wait growing. Front ends show one
//! cycle and summarise the repeats from this reading.

use std::ops::Range;

use crate::model::ProbeKind;

use super::reading::seconds;
use super::timeline::{Event, EventKind, Span};

/// Consecutive cycles that repeat the cycle just before them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repeat {
    /// The repeated cycles' events: indices into the timeline.
    pub events: Range<usize>,
    /// The first and the last cycle repeated, counting container starts from 1.
    pub cycles: (usize, usize),
    /// From the first repeated cycle's start to the next cycle's start (or
    /// to the last repeated event), ms.
    pub span: Span,
    /// The shortest and the longest back-off waited in them, ms.
    pub backoff_ms: Option<(i64, i64)>,
}

impl Repeat {
    /// `cycles 2-9 the same, back-off 10 s .. 300 s`.
    pub fn summary(&self) -> String {
        let (first, last) = self.cycles;
        let cycles = if first == last { format!("cycle {first}") } else { format!("cycles {first}-{last}") };
        match self.backoff_ms {
            Some((lo, hi)) if lo == hi => format!("{cycles} the same, back-off {} s", seconds(lo)),
            Some((lo, hi)) => format!("{cycles} the same, back-off {} s .. {} s", seconds(lo), seconds(hi)),
            None => format!("{cycles} the same"),
        }
    }
}

/// What a cycle does, relative to its start; back-off waits aside, since they grow.
fn shape(events: &[Event]) -> Vec<(i64, Option<ProbeKind>, EventKind, &str, bool)> {
    let start = events.first().map_or(0, |e| e.at_ms);
    events
        .iter()
        .filter(|e| e.kind != EventKind::BackOff)
        .map(|e| (e.at_ms - start, e.probe, e.kind, e.detail.as_str(), e.past_threshold))
        .collect()
}

/// The runs of cycles of a timeline that repeat the cycle before them, in order.
pub fn repeats(events: &[Event]) -> Vec<Repeat> {
    let starts: Vec<usize> = (0..events.len()).filter(|&i| events[i].kind == EventKind::Started).collect();
    let cycle = |k: usize| starts[k]..starts.get(k + 1).copied().unwrap_or(events.len());
    let mut out = Vec::new();
    let mut k = 0;
    while k < starts.len() {
        let base = shape(&events[cycle(k)]);
        let mut j = k + 1;
        while j < starts.len() && shape(&events[cycle(j)]) == base {
            j += 1;
        }
        if j > k + 1 {
            let range = starts[k + 1]..cycle(j - 1).end;
            let end = starts.get(j).map_or_else(|| events[range.end - 1].at_ms, |&next| events[next].at_ms);
            let delays: Vec<i64> = events[range.clone()].iter().filter_map(|e| e.delay_ms).collect();
            // A cycle that started at once waited 0 s (the kubelet backs off
            // only some restarts: see kubelet/restart.rs).
            let all_waited = delays.len() + 1 >= j - k;
            let backoff_ms = delays
                .iter()
                .fold(None, |acc: Option<(i64, i64)>, &d| Some(acc.map_or((d, d), |(lo, hi)| (lo.min(d), hi.max(d)))));
            let backoff_ms = backoff_ms.map(|(lo, hi)| (if all_waited { lo } else { 0 }, hi));
            out.push(Repeat { span: (events[range.start].at_ms, end), events: range, cycles: (k + 2, j), backoff_ms });
        }
        k = j;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{Repeat, repeats};
    use crate::model::ProbeKind;
    use crate::simulate::timeline::{Event, EventKind};

    /// A boot loop: start, a failure, a kill; back-offs of `waits` seconds between.
    fn boot_loop(waits: &[i64]) -> Vec<Event> {
        let (mut events, mut t) = (Vec::new(), 0);
        for (i, &wait) in std::iter::once(&0).chain(waits).enumerate() {
            if wait > 0 {
                let backoff = Event::new(t, None, EventKind::BackOff, format!("CrashLoopBackOff {wait}s"));
                events.push(Event { delay_ms: Some(wait * 1000), ..backoff });
            }
            t += wait * 1000;
            events.push(Event::new(t, None, EventKind::Started, String::new()));
            let detail = if i < waits.len() { "local 1/1" } else { "local 1/1 (cut)" };
            events.push(Event::new(t + 5000, Some(ProbeKind::Startup), EventKind::ProbeFailed, detail.to_owned()));
            events.push(Event::new(t + 5000, Some(ProbeKind::Startup), EventKind::Kill, String::new()));
            t += 5000;
        }
        events
    }

    #[test]
    fn a_boot_loop_repeats_its_first_cycle_with_growing_back_off() {
        // Cycles 1-4 alike (the first restart is immediate, so cycle 1 has no
        // back-off), cycle 5 differs.
        let events = boot_loop(&[0, 10, 20, 40]);
        let r = repeats(&events);
        assert_eq!(
            r,
            vec![Repeat { events: 3..15, cycles: (2, 4), span: (5000, 90_000), backoff_ms: Some((10_000, 40_000)) }]
        );
        assert_eq!(r[0].summary(), "cycles 2-4 the same, back-off 10 s .. 40 s");
    }

    #[test]
    fn cycles_that_differ_are_not_summarised() {
        assert!(repeats(&boot_loop(&[])).is_empty());
        assert!(repeats(&boot_loop(&[10])).is_empty());
        let r = repeats(&boot_loop(&[0, 0]));
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].summary(), "cycle 2 the same");
    }
}
