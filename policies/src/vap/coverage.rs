//! Which rules the export carries, and why the others are left to the
//! linter and the webhook, as each rule declares it in the registry
//! ([`crate::rules::Rule::vap`]). A CEL check must never report what the
//! linter would not: a rule is covered only where its CEL form is exact.

use crate::rules::{RULES, Rule, VapExport, find};

/// How far a rule's CEL form goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Covered {
    /// Exactly the linter's check, for the object alone.
    Yes,
    /// A part of the linter's check, exactly: the CEL form never reports
    /// what the linter does not, and misses what the text says.
    Partly(&'static str),
    /// Left out; why.
    No(&'static str),
}

impl Covered {
    /// What `rule` declares.
    fn declared(rule: &Rule) -> Covered {
        match rule.vap {
            VapExport::Yes(_) => Covered::Yes,
            VapExport::Partly(what, _) => Covered::Partly(what),
            VapExport::No(why) => Covered::No(why),
        }
    }
}

/// Every built-in rule's coverage, in the registry's order.
pub fn coverage() -> Vec<(&'static str, Covered)> {
    RULES.iter().map(|r| (r.name, Covered::declared(r))).collect()
}

/// One rule's coverage (none for a name that is no built-in rule).
pub fn of(rule: &str) -> Covered {
    find(rule).map_or(Covered::No("not a built-in rule"), Covered::declared)
}
