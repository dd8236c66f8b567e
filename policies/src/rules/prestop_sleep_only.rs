//! `prestop-sleep-only` (placeholder until written).

use crate::finding::{Finding, Severity};
use crate::model::Workload;
use crate::rules::{Ctx, FixAvailability, Rule};

pub(crate) static RULE: Rule = Rule {
    name: "prestop-sleep-only",
    severity: Severity::Warning,
    summary: "TODO",
    doc: "TODO",
    fix: FixAvailability::NoFix("TODO"),
    check,
};

fn check(_w: &Workload, _ctx: &Ctx<'_>, _out: &mut Vec<Finding>) {}
