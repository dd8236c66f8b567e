//! The termination sequence on deletion: endpoint removal, preStop,
//! SIGTERM, the app's drain and shutdown, SIGKILL at the grace period's end.

use crate::model::SleepSeconds;

use super::kubelet::Run;
use super::pod::ContainerModel;
use super::timeline::{Event, EventKind};

const MS: i64 = 1000;

/// What deletion does: endpoint removal takes `propagation_ms`; preStop
/// runs from deletion, then SIGTERM; the app stops admitting requests at
/// SIGTERM or when no more arrive, finishes those in flight (each up to
/// `request_ms`), drains and shuts down within its declared budgets; SIGKILL
/// comes when `terminationGracePeriodSeconds`, counted from deletion, ends.
pub fn delete(model: &ContainerModel, propagation_ms: i64, request_ms: i64) -> Run {
    let mut run = Run::default();
    let mut event = |at: i64, kind: EventKind, detail: String| {
        run.events.push(Event::new(at, None, kind, detail));
    };
    let grace = model.grace.max(0) * MS;
    event(0, EventKind::Deleted, format!("terminationGracePeriodSeconds {}", model.grace));
    event(propagation_ms, EventKind::EndpointsRemoved, String::new());
    let sigterm = match model.prestop {
        Some(SleepSeconds::Forever) => None,
        Some(SleepSeconds::Finite(s)) => {
            event(0, EventKind::PreStop, format!("sleep {s}s"));
            Some(s * MS)
        }
        None => Some(0),
    };
    let budgets = (model.drain + model.shutdown) * MS;
    if sigterm.is_none() {
        event(0, EventKind::PreStop, "sleep forever".to_owned());
    }
    let work_end = match sigterm {
        Some(term) if term < grace => {
            event(term, EventKind::Sigterm, String::new());
            let last_admitted = propagation_ms.min(term);
            Some((term + budgets).max(last_admitted + request_ms))
        }
        _ => None,
    };
    match work_end {
        Some(end) if end <= grace => {
            event(end, EventKind::WorkDone, String::new());
            event(end, EventKind::Exited, String::new());
        }
        end => {
            // In flight: what the app still had to do when SIGKILL came.
            let left = match end {
                Some(end) => end - grace,
                None => budgets.max(propagation_ms + request_ms - grace),
            };
            run.sigkill = true;
            run.cut_ms = Some(left.max(0));
            event(grace, EventKind::Sigkill, "the grace period ended".to_owned());
        }
    }
    run.events.sort_by_key(|e| e.at_ms);
    run
}
