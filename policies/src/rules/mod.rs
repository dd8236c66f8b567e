//! The rules: one file per anti-pattern, each with its doc, check, fix and
//! tests, and [`RULES`], the one table that registers them all.

mod exec_probe;
pub(crate) mod grace_period_too_short;
mod ignore_annotation_invalid;
mod init_needs_later_sidecar;
pub(crate) mod liveness_checks_dependency;
pub(crate) mod liveness_too_aggressive;
mod pdb_blocks_eviction;
mod prestop_bridge_missing;
mod prestop_loop_unbounded;
pub(crate) mod prestop_sleep_only;
pub(crate) mod probe_endpoint_reused;
pub(crate) mod probe_invalid;
pub(crate) mod probe_port_unknown;
mod probe_runs_inference;
pub(crate) mod probe_window_too_long;
mod progress_deadline_too_short;
mod proxy_stops_before_drain;
pub(crate) mod readiness_port_only;
mod readiness_probe_missing;
mod rollout_capacity_too_low;
pub(crate) mod startup_budget_too_short;
pub(crate) mod startup_probe_missing;

mod rule;
#[cfg(test)]
pub(crate) mod testing;

pub(crate) use rule::with_fix;
pub use rule::{Checks, Ctx, FixAvailability, Fixes, Harm, HarmShown, MapExport, Related, Rule, VapExport};

pub use crate::docs_link::{RULES_PAGE, docs_url};

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
    &progress_deadline_too_short::RULE,
    &rollout_capacity_too_low::RULE,
    &pdb_blocks_eviction::RULE,
    &grace_period_too_short::RULE,
    &prestop_sleep_only::RULE,
    &prestop_loop_unbounded::RULE,
    &prestop_bridge_missing::RULE,
    &proxy_stops_before_drain::RULE,
    &init_needs_later_sidecar::RULE,
    &ignore_annotation_invalid::RULE,
];

/// Looks a rule up by name.
pub fn find(name: &str) -> Option<&'static Rule> {
    RULES.iter().copied().find(|r| r.name == name)
}
