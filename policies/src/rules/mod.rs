//! The rules: one file per anti-pattern, each with its doc, check, fix and
//! tests, and [`RULES`], the one table that registers them all.

use crate::engine::Batch;
use crate::finding::{Finding, Fix, Naming, Severity};
use std::cell::OnceCell;

use crate::model::{ShutdownNeed, Workload, shutdown_needs};
use crate::policy::Policy;

mod exec_probe;
pub(crate) mod grace_period_too_short;
mod ignore_annotation_invalid;
pub(crate) mod liveness_checks_dependency;
pub(crate) mod liveness_too_aggressive;
mod prestop_bridge_missing;
mod prestop_loop_unbounded;
pub(crate) mod prestop_sleep_only;
pub(crate) mod probe_endpoint_reused;
pub(crate) mod probe_invalid;
pub(crate) mod probe_port_unknown;
mod probe_runs_inference;
pub(crate) mod probe_window_too_long;
pub(crate) mod readiness_port_only;
mod readiness_probe_missing;
pub(crate) mod startup_budget_too_short;
pub(crate) mod startup_probe_missing;

#[cfg(test)]
pub(crate) mod testing;

/// What a rule's check sees besides the workload. One `Ctx` serves the
/// rules of one workload: what several rules derive from it is kept here.
pub struct Ctx<'a> {
    /// The policy in force.
    pub policy: &'a Policy,
    /// Other objects of the same input (Services).
    pub batch: &'a Batch,
    /// The workload's shutdown needs, read once for the three rules that
    /// weigh them (parsing preStop scripts and env is a good part of a lint).
    needs: OnceCell<Vec<ShutdownNeed>>,
}

impl<'a> Ctx<'a> {
    /// The context for the rules of one workload.
    pub fn new(policy: &'a Policy, batch: &'a Batch) -> Ctx<'a> {
        Ctx { policy, batch, needs: OnceCell::new() }
    }

    /// [`shutdown_needs`] of `w`, the workload this context serves.
    pub fn shutdown_needs(&self, w: &Workload) -> &[ShutdownNeed] {
        self.needs.get_or_init(|| shutdown_needs(w, self.policy))
    }
}

/// Whether and how a rule's findings can be fixed automatically.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixAvailability {
    /// The rule attaches a fix to (some of) its findings; the text says what it does.
    Fix(&'static str),
    /// No safe automatic fix; the text says why.
    NoFix(&'static str),
}

/// A registered rule.
pub struct Rule {
    /// Stable name: the public interface (`probe-endpoint-reused`).
    pub name: &'static str,
    /// Default severity; some findings of a rule may use another one (the doc says when).
    pub severity: Severity,
    /// One line for `lifeguard rules`.
    pub summary: &'static str,
    /// Markdown doc for `lifeguard explain`: why, bad and good examples, the fix.
    pub doc: &'static str,
    /// Whether the rule has an automatic fix.
    pub fix: FixAvailability,
    /// The check.
    pub check: fn(&Workload, &Ctx<'_>, &mut Vec<Finding>),
}

impl Rule {
    /// Builds a finding of this rule (no fix). `message` and `short` do not
    /// name the container: front ends put `container "x": ` before them
    /// ([`Finding::located_message`]). `short` is the fact and the fix in a
    /// few words: with a container name of 20 characters, `rule: container
    /// "x": short` must fit in [`crate::finding::SHORT_LINE_CHARS`], which
    /// leaves `84 - rule.len()` characters, values included.
    pub fn finding(
        &self,
        severity: Severity,
        pointer: String,
        container: Option<&str>,
        message: String,
        short: String,
        help: impl Into<String>,
    ) -> Finding {
        Finding {
            rule: self.name.to_owned(),
            severity,
            message,
            short,
            help: help.into(),
            pointer,
            container: container.map(str::to_owned),
            naming: Naming::Prefix,
            fix: None,
        }
    }
}

/// Attaches a fix to a finding (builder style).
pub(crate) fn with_fix(mut f: Finding, fix: Option<Fix>) -> Finding {
    f.fix = fix;
    f
}

/// Every built-in rule, in the order fixes are merged.
pub static RULES: &[&Rule] = &[
    &probe_invalid::RULE,
    &probe_port_unknown::RULE,
    &probe_endpoint_reused::RULE,
    &liveness_checks_dependency::RULE,
    &startup_probe_missing::RULE,
    &startup_budget_too_short::RULE,
    &liveness_too_aggressive::RULE,
    &probe_window_too_long::RULE,
    &readiness_port_only::RULE,
    &readiness_probe_missing::RULE,
    &exec_probe::RULE,
    &probe_runs_inference::RULE,
    &grace_period_too_short::RULE,
    &prestop_sleep_only::RULE,
    &prestop_loop_unbounded::RULE,
    &prestop_bridge_missing::RULE,
    &ignore_annotation_invalid::RULE,
];

/// Looks a rule up by name.
pub fn find(name: &str) -> Option<&'static Rule> {
    RULES.iter().copied().find(|r| r.name == name)
}
