//! Which of lifeguard's findings each peer reports anything equivalent
//! for, object by object, and what the peers report that lifeguard has no
//! rule for (data for future rules, not a target).

use std::collections::{BTreeMap, BTreeSet};

use super::reports::{Flag, Object};
use super::tools::Tool;

/// A peer's check that reports, on an object, what one of lifeguard's rules
/// reports on it. Only these: the peers' other probe checks ask for what
/// lifeguard deliberately does not (a liveness probe on every container).
pub const EQUIVALENTS: &[(&str, Tool, &str)] = &[
    ("probe-endpoint-reused", Tool::KubeScore, "pod-probes-identical"),
    ("probe-endpoint-reused", Tool::Kyverno, "probes-different"),
    ("readiness-probe-missing", Tool::KubeScore, "pod-probes: Container is missing a readinessProbe"),
    ("readiness-probe-missing", Tool::Kyverno, "require-probes"),
    ("readiness-probe-missing", Tool::Checkov, "CKV_K8S_9"),
];

/// One of lifeguard's rules on the inputs.
#[derive(Debug, PartialEq, Eq)]
pub struct RuleCoverage {
    /// The rule.
    pub rule: &'static str,
    /// The objects lifeguard reports it on.
    pub objects: usize,
    /// Of those, how many each peer reports an equivalent check on; `None`
    /// where the peer has no equivalent check.
    pub peers: Vec<(Tool, Option<usize>)>,
}

/// Coverage of each of `rules` by each peer, from every tool's flags.
pub fn by_rule(rules: &[&'static str], flags: &BTreeMap<Tool, BTreeSet<Flag>>) -> Vec<RuleCoverage> {
    let empty = BTreeSet::new();
    let lifeguard = flags.get(&Tool::Lifeguard).unwrap_or(&empty);
    rules
        .iter()
        .map(|&rule| {
            let objects: BTreeSet<&Object> = lifeguard.iter().filter(|f| f.check == rule).map(|f| &f.object).collect();
            let peers = Tool::PEERS
                .iter()
                .map(|&peer| {
                    let checks: Vec<&str> =
                        EQUIVALENTS.iter().filter(|(r, t, _)| *r == rule && *t == peer).map(|(_, _, c)| *c).collect();
                    if checks.is_empty() {
                        return (peer, None);
                    }
                    let theirs = flags.get(&peer).unwrap_or(&empty);
                    let found = objects
                        .iter()
                        .filter(|o| theirs.iter().any(|f| checks.contains(&f.check.as_str()) && f.object.same(o)))
                        .count();
                    (peer, Some(found))
                })
                .collect();
            RuleCoverage { rule, objects: objects.len(), peers }
        })
        .collect()
}

/// Each peer check that is no equivalent of a lifeguard rule, with the
/// number of objects it reports, most first.
pub fn unmatched(flags: &BTreeMap<Tool, BTreeSet<Flag>>) -> Vec<(Tool, String, usize)> {
    let mut counts: BTreeMap<(Tool, &str), usize> = BTreeMap::new();
    for peer in Tool::PEERS {
        for flag in flags.get(&peer).into_iter().flatten() {
            if !EQUIVALENTS.iter().any(|(_, t, c)| *t == peer && *c == flag.check) {
                *counts.entry((peer, flag.check.as_str())).or_default() += 1;
            }
        }
    }
    let mut out: Vec<(Tool, String, usize)> =
        counts.into_iter().map(|((tool, check), n)| (tool, check.to_owned(), n)).collect();
    out.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| (a.0, &a.1).cmp(&(b.0, &b.1))));
    out
}
