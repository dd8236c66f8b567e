//! Readiness gates (`spec.readinessGates`): the pod is Ready, and so in
//! the Service's endpoints, only when its containers are ready and every
//! gate's condition is True (status/generate.go, `GeneratePodReadyCondition`).
//! Another controller (a load balancer's, typically) sets those conditions;
//! the simulation cannot see it, so when they become True is an assumption:
//! stated (`--readiness-gates-seconds`, [`ANNOTATION_READINESS_GATES`]),
//! else taken as at once, and the timeline says so. Once True they stay
//! True: the kubelet keeps other controllers' conditions across container
//! restarts (kubelet_pods.go, `generateAPIPodStatus`), and when one is set
//! it syncs the pod at once (kubelet.go, `HandlePodReconcile`).

use crate::model::ANNOTATION_READINESS_GATES;
use crate::model::parse_seconds;

const MS: i64 = 1000;

/// When a pod's readiness gates become True, as stated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateDelay {
    /// This many seconds after the containers are first ready.
    After(i64),
    /// Never: nothing sets them, and the pod never joins the endpoints.
    Never,
}

/// A `--readiness-gates-seconds` value or annotation that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{given:?}: expected whole seconds (a duration like 30s, 1m) or never")]
pub struct GateDelayError {
    /// The text given.
    pub given: String,
}

impl GateDelay {
    /// Reads `never` or a duration (`30`, `30s`, `1m30s`).
    pub fn parse(text: &str) -> Result<GateDelay, GateDelayError> {
        let text = text.trim();
        if text == "never" {
            return Ok(GateDelay::Never);
        }
        parse_seconds(text).map(GateDelay::After).ok_or_else(|| GateDelayError { given: text.to_owned() })
    }
}

/// A pod's readiness gates and when they become True.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReadinessGates {
    /// The gates' condition types, in the spec's order; empty without gates.
    pub conditions: Vec<String>,
    /// When they become True; `None`: unstated, taken as at once.
    pub stated: Option<GateDelay>,
}

impl ReadinessGates {
    /// The condition types for a line: `a, b`.
    fn names(&self) -> String {
        self.conditions.join(", ")
    }

    /// Whether they are stated never to become True.
    pub fn never(&self) -> bool {
        !self.conditions.is_empty() && self.stated == Some(GateDelay::Never)
    }

    fn gate_word(&self) -> &'static str {
        if self.conditions.len() == 1 { "readiness gate" } else { "readiness gates" }
    }
}

/// The gates over one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum GateClock {
    /// No gates, or they are True.
    Open,
    /// Unstated: taken as True when the containers are first ready.
    Unstated,
    /// True this long after the containers are first ready.
    Pending(i64),
    /// True from this time on.
    At(i64),
    /// Never True.
    Never,
}

/// What the gates make of containers that just became ready.
pub(super) enum Admission {
    /// The pod is in the endpoints; the event's detail.
    In(String),
    /// It waits for its gates; the detail of the `container-ready` event.
    Waiting(String),
}

impl GateClock {
    /// The gates at the run's start: a pod long running (`steady`) has them
    /// True unless they never are.
    pub(super) fn new(gates: &ReadinessGates, steady: bool) -> GateClock {
        match gates.stated {
            _ if gates.conditions.is_empty() => GateClock::Open,
            Some(GateDelay::Never) => GateClock::Never,
            _ if steady => GateClock::Open,
            Some(GateDelay::After(s)) if s <= 0 => GateClock::Open,
            Some(GateDelay::After(s)) => GateClock::Pending(s * MS),
            None => GateClock::Unstated,
        }
    }

    /// When the gates become True, if that is still to come at a known time.
    pub(super) fn due(self) -> Option<i64> {
        match self {
            GateClock::At(t) => Some(t),
            _ => None,
        }
    }

    /// Whether the gates never let the pod in.
    pub(super) fn never(self) -> bool {
        self == GateClock::Never
    }

    /// The containers became ready at `at`.
    pub(super) fn containers_ready(&mut self, at: i64, gates: &ReadinessGates) -> Admission {
        let (word, names) = (gates.gate_word(), gates.names());
        match *self {
            GateClock::Open => Admission::In(String::new()),
            GateClock::Unstated => {
                *self = GateClock::Open;
                Admission::In(format!(
                    "{word} {names} taken as True at once; state when with --readiness-gates-seconds or the \
                     {ANNOTATION_READINESS_GATES} annotation"
                ))
            }
            GateClock::At(t) if at >= t => {
                *self = GateClock::Open;
                Admission::In(String::new())
            }
            GateClock::At(t) => Admission::Waiting(format!("{word} {names} True at {} s, as stated", t / MS)),
            GateClock::Pending(delay) => {
                *self = GateClock::At(at + delay);
                Admission::Waiting(format!("{word} {names} True {} s later, as stated", delay / MS))
            }
            GateClock::Never => Admission::Waiting(format!("{word} {names} never True, as stated")),
        }
    }

    /// The gates become True at their time; the detail of the event that
    /// puts ready containers in the endpoints.
    pub(super) fn open(&mut self, gates: &ReadinessGates) -> String {
        *self = GateClock::Open;
        format!("{} {} True", gates.gate_word(), gates.names())
    }
}

#[cfg(test)]
mod tests {
    use super::{Admission, GateClock, GateDelay, ReadinessGates};

    #[test]
    fn reads_seconds_or_never() {
        assert_eq!(GateDelay::parse("never"), Ok(GateDelay::Never));
        assert_eq!(GateDelay::parse(" 30s"), Ok(GateDelay::After(30)));
        assert_eq!(GateDelay::parse("1m"), Ok(GateDelay::After(60)));
        for bad in ["", "soon", "-1", "Never"] {
            let e = GateDelay::parse(bad).expect_err(bad);
            assert!(e.to_string().contains("or never"), "{e}");
        }
    }

    #[test]
    fn a_steady_pod_has_its_gates_true_unless_they_never_are() {
        let gates = |stated| ReadinessGates { conditions: vec!["lb/ready".into()], stated };
        assert_eq!(GateClock::new(&gates(Some(GateDelay::After(20))), true), GateClock::Open);
        assert_eq!(GateClock::new(&gates(Some(GateDelay::Never)), true), GateClock::Never);
        assert_eq!(GateClock::new(&gates(None), false), GateClock::Unstated);
        // Without gates, nothing to wait for whatever is stated.
        let none = ReadinessGates { conditions: vec![], stated: Some(GateDelay::Never) };
        assert_eq!(GateClock::new(&none, false), GateClock::Open);
        // Stated: counted from the first time the containers are ready, kept after.
        let g = gates(Some(GateDelay::After(20)));
        let mut clock = GateClock::new(&g, false);
        assert!(matches!(clock.containers_ready(3_000, &g), Admission::Waiting(d) if d.contains("20 s later")));
        assert_eq!(clock.due(), Some(23_000));
        assert!(matches!(clock.containers_ready(10_000, &g), Admission::Waiting(d) if d.contains("at 23 s")));
        assert_eq!(clock.open(&g), "readiness gate lb/ready True");
        assert!(matches!(clock.containers_ready(40_000, &g), Admission::In(d) if d.is_empty()));
    }
}
