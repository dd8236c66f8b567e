//! Which rules' fixes `export map` carries, and why the others are left to
//! `lifeguard fix` and the webhook. One entry per rule of the registry, no
//! default: a new rule must say what its fix does here (the tests fail
//! until it does). The carried rules' entries live with their CEL, in the
//! rule's file of `export vap`.

use crate::rules::{FixAvailability, RULES};
use crate::vap::{
    grace_period_too_short, liveness_too_aggressive, prestop_sleep_only, probe_window_too_long,
    startup_budget_too_short, startup_probe_missing,
};

/// How far a rule's fix is carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carried {
    /// Every fix `lifeguard fix` makes; the text says how.
    Yes(&'static str),
    /// The fix where the text says; elsewhere the object is left as it
    /// came, for the webhook or `lifeguard fix`.
    Partly(&'static str),
    /// The rule has no automatic fix (the registry says why).
    NoFix,
    /// Left out; why.
    No(&'static str),
}

/// Every rule's entry, in the registry's order.
const ENTRIES: &[(&str, Carried)] = &[
    (
        "probe-invalid",
        Carried::No(
            "its one fix (adding -f to a pgrep exec probe) needs the command line read, which CEL does not do exactly",
        ),
    ),
    ("probe-port-unknown", Carried::NoFix),
    ("probe-endpoint-reused", Carried::NoFix),
    ("liveness-checks-dependency", Carried::NoFix),
    ("startup-probe-missing", startup_probe_missing::CARRIED),
    ("startup-budget-too-short", startup_budget_too_short::CARRIED),
    ("liveness-too-aggressive", liveness_too_aggressive::CARRIED),
    ("probe-window-too-long", probe_window_too_long::CARRIED),
    ("readiness-port-only", Carried::NoFix),
    ("readiness-probe-missing", Carried::NoFix),
    ("exec-probe", Carried::NoFix),
    ("probe-runs-inference", Carried::NoFix),
    ("grace-period-too-short", grace_period_too_short::CARRIED),
    ("prestop-sleep-only", prestop_sleep_only::CARRIED),
    ("prestop-loop-unbounded", Carried::NoFix),
    (
        "prestop-bridge-missing",
        Carried::No("its fix depends on the Services that select the pod, which an admission policy cannot see"),
    ),
    ("ignore-annotation-invalid", Carried::NoFix),
];

/// One rule's entry; `None` for a rule without one (a test fails then).
pub fn of(rule: &str) -> Option<Carried> {
    ENTRIES.iter().find(|(name, _)| *name == rule).map(|(_, carried)| *carried)
}

/// Every registered rule with its entry, in the registry's order (a rule
/// without an entry counts as not carried).
pub fn coverage() -> Vec<(&'static str, Carried)> {
    RULES.iter().map(|r| (r.name, of(r.name).unwrap_or(Carried::No("no entry in the export's coverage")))).collect()
}

/// Why a rule with [`Carried::NoFix`] has none: its own words.
pub fn no_fix_reason(rule: &str) -> Option<&'static str> {
    match crate::rules::find(rule)?.fix {
        FixAvailability::NoFix(why) => Some(why),
        FixAvailability::Fix(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vap::coverage::{self as vap_coverage, Covered};

    #[test]
    fn every_rule_of_the_registry_has_an_entry_and_no_other() {
        for rule in RULES {
            assert!(of(rule.name).is_some(), "{}: no entry in export map's coverage", rule.name);
        }
        for (name, _) in ENTRIES {
            assert!(crate::rules::find(name).is_some(), "{name}: not a rule");
        }
        assert_eq!(ENTRIES.len(), RULES.len());
    }

    #[test]
    fn only_rules_with_a_fix_that_the_vap_covers_are_carried() {
        for rule in RULES {
            let carried = of(rule.name).expect("an entry");
            let has_fix = matches!(rule.fix, FixAvailability::Fix(_));
            match carried {
                Carried::NoFix => assert!(!has_fix, "{}: has a fix, say whether it is carried", rule.name),
                Carried::Yes(_) | Carried::Partly(_) => {
                    assert!(has_fix, "{}", rule.name);
                    // The findings come from the VAP's CEL.
                    assert!(!matches!(vap_coverage::of(rule.name), Covered::No(_)), "{}", rule.name);
                }
                Carried::No(_) => {}
            }
        }
    }
}
