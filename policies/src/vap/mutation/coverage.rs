//! Which rules' fixes `export map` carries, and why the others are left to
//! `lifeguard fix` and the webhook, as each rule declares it in the
//! registry ([`crate::rules::Rule::map`]: no default, so a new rule says
//! what its fix does or does not compile).

use crate::rules::{FixAvailability, MapExport, RULES, Rule, find};

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

impl Carried {
    /// What `rule` declares.
    fn declared(rule: &Rule) -> Carried {
        match rule.map {
            MapExport::Yes(how, _) => Carried::Yes(how),
            MapExport::Partly(what, _) => Carried::Partly(what),
            MapExport::NoFix => Carried::NoFix,
            MapExport::No(why) => Carried::No(why),
        }
    }
}

/// One rule's entry; `None` for a name that is no built-in rule.
pub fn of(rule: &str) -> Option<Carried> {
    find(rule).map(Carried::declared)
}

/// Every registered rule with its entry, in the registry's order.
pub fn coverage() -> Vec<(&'static str, Carried)> {
    RULES.iter().map(|r| (r.name, Carried::declared(r))).collect()
}

/// Why a rule with [`Carried::NoFix`] has none: its own words.
pub fn no_fix_reason(rule: &str) -> Option<&'static str> {
    match find(rule)?.fix {
        FixAvailability::NoFix(why) => Some(why),
        FixAvailability::Fix(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vap::coverage::{self as vap_coverage, Covered};

    #[test]
    fn only_rules_with_a_fix_that_the_vap_covers_are_carried() {
        for rule in RULES {
            let carried = Carried::declared(rule);
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
