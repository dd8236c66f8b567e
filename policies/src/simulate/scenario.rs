//! Scenarios: what happens to the pod, written `boot:430s`, `stall:2s`,
//! `pause:3s`, `wedge`, `delete`, `crash:5s` or `poststart-fail`; or to
//! the workload, `rollout` or `drain`.

use crate::model::parse_seconds;

/// What happens to the pod in a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScenarioKind {
    /// The container starts and the app answers only after this many
    /// seconds; `None` takes the declared cold start (or the policy's GPU
    /// boot for a model server, else 0).
    Boot(Option<i64>),
    /// Every dependency a probe checks is slow or failing for this many
    /// seconds, on every replica at once.
    Stall(i64),
    /// The process answers nothing for this many seconds (a GC pause, CPU
    /// throttling).
    Pause(i64),
    /// The process hangs for good.
    Wedge,
    /// The pod is deleted while serving.
    Delete,
    /// The app exits by itself (code 1) this many seconds after each start
    /// of its container: a crash loop, and what the restart policy and the
    /// back-off make of it.
    Crash(i64),
    /// The container's postStart hook fails when it ends, at every start:
    /// the kubelet kills the container (`FailedPostStartHook`) and restarts
    /// it under the restart policy and the back-off.
    PostStartFail,
    /// The workload's controller rolls out a new pod template over every
    /// replica (a Deployment's or StatefulSet's rolling update or
    /// `Recreate`).
    Rollout,
    /// The nodes that hold the workload's pods are drained one after
    /// another, each eviction against the PodDisruptionBudgets of the input.
    Drain,
}

impl ScenarioKind {
    /// Whether it happens to the workload, whose controller runs it over
    /// the pod model, rather than to one pod.
    pub fn is_workload(self) -> bool {
        matches!(self, ScenarioKind::Rollout | ScenarioKind::Drain)
    }
}

/// A scenario and how it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scenario {
    /// What happens.
    pub kind: ScenarioKind,
    /// The scenario as given (`stall:2s`), the `scenario` field of the output.
    pub label: String,
}

/// A scenario that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("scenario {given:?}: {problem}")]
pub struct ScenarioError {
    /// The text given.
    pub given: String,
    /// What is wrong with it.
    pub problem: String,
}

/// The scenarios run when none is named.
pub const STANDARD: &[&str] = &["boot", "stall:2m", "pause:5s", "wedge", "delete"];

impl Scenario {
    /// Reads `boot[:DURATION]`, `stall:DURATION`, `pause:DURATION`, `wedge`,
    /// `delete`, `crash[:AFTER]`, `poststart-fail`, `rollout` or `drain` (durations as `30`,
    /// `30s`, `2m`, `1m30s`).
    pub fn parse(given: &str) -> Result<Scenario, ScenarioError> {
        let err = |problem: &str| ScenarioError { given: given.to_owned(), problem: problem.to_owned() };
        let (name, duration) = match given.split_once(':') {
            Some((name, d)) => (name, Some(d)),
            None => (given, None),
        };
        let seconds = |d: Option<&str>| -> Result<i64, ScenarioError> {
            let d = d.ok_or_else(|| err("needs a duration, e.g. stall:2s"))?;
            parse_seconds(d).ok_or_else(|| err("the duration is not whole seconds or a duration like 2s, 1m30s"))
        };
        let kind = match name {
            "boot" => ScenarioKind::Boot(duration.map(|d| seconds(Some(d))).transpose()?),
            "stall" => ScenarioKind::Stall(seconds(duration)?),
            "pause" => ScenarioKind::Pause(seconds(duration)?),
            "wedge" | "delete" | "poststart-fail" | "rollout" | "drain" if duration.is_some() => {
                return Err(err("takes no duration"));
            }
            "wedge" => ScenarioKind::Wedge,
            "delete" => ScenarioKind::Delete,
            "poststart-fail" => ScenarioKind::PostStartFail,
            "rollout" => ScenarioKind::Rollout,
            "drain" => ScenarioKind::Drain,
            "crash" => ScenarioKind::Crash(duration.map(|d| seconds(Some(d))).transpose()?.unwrap_or(0)),
            _ => {
                return Err(err(
                    "unknown scenario; use boot[:DURATION], stall:DURATION, pause:DURATION, wedge, delete, \
                     crash[:AFTER], poststart-fail, rollout or drain",
                ));
            }
        };
        Ok(Scenario { kind, label: given.to_owned() })
    }

    /// The standard set ([`STANDARD`]).
    pub fn standard() -> Vec<Scenario> {
        STANDARD.iter().filter_map(|s| Scenario::parse(s).ok()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::{Scenario, ScenarioKind};

    #[test]
    fn reads_every_scenario() {
        let kind = |s: &str| Scenario::parse(s).map(|s| s.kind);
        assert_eq!(kind("boot"), Ok(ScenarioKind::Boot(None)));
        assert_eq!(kind("boot:7m10s"), Ok(ScenarioKind::Boot(Some(430))));
        assert_eq!(kind("stall:2s"), Ok(ScenarioKind::Stall(2)));
        assert_eq!(kind("pause:3"), Ok(ScenarioKind::Pause(3)));
        assert_eq!(kind("wedge"), Ok(ScenarioKind::Wedge));
        assert_eq!(kind("delete"), Ok(ScenarioKind::Delete));
        assert_eq!(kind("crash"), Ok(ScenarioKind::Crash(0)));
        assert_eq!(kind("crash:5s"), Ok(ScenarioKind::Crash(5)));
        assert_eq!(kind("poststart-fail"), Ok(ScenarioKind::PostStartFail));
        assert_eq!(kind("rollout"), Ok(ScenarioKind::Rollout));
        assert_eq!(kind("drain"), Ok(ScenarioKind::Drain));
        assert_eq!(Scenario::parse("stall:2s").map(|s| s.label), Ok("stall:2s".to_owned()));
        assert_eq!(Scenario::standard().len(), super::STANDARD.len());
    }

    #[test]
    fn rejects_what_it_cannot_read() {
        for bad in
            ["stall", "stall:x", "pause:-1", "wedge:3s", "crash:x", "crashes", "poststart-fail:3s", "rollout:3s", ""]
        {
            let e = Scenario::parse(bad).expect_err(bad);
            assert!(e.to_string().starts_with(&format!("scenario {bad:?}: ")), "{e}");
        }
    }
}
