//! `lifeguard export map`: the fixes of the rules `export vap` covers, as a
//! MutatingAdmissionPolicy and its binding, for the API server to apply in
//! process: the fixes `lifeguard fix` and the webhook's `/mutate` make,
//! where CEL computes them exactly from the container's own spec and the
//! policy's constants ([`coverage`] says where).
//!
//! It matches what `/mutate` patches: the same kinds, CREATE, and an UPDATE
//! that changes the pod template of a kind whose template may change (never
//! a Pod's or a Job's), never `kube-system`, a controller-owned object or
//! one being deleted; a rule in the object's `lifeguard.dev/ignore`
//! annotation, or under an exemption, is not fixed. The findings come from
//! the same CEL as the ValidatingAdmissionPolicies' (`super::cel`, the
//! rules' checks, `super::exemptions`), so the two exports never disagree on
//! what they find.
//!
//! One mutation per fix: the API server merges an ApplyConfiguration per
//! container, and two fixes of one container in one expression give it the
//! container twice ("duplicate entries for key"). The mutations run in
//! order, each on the object as the ones before left it, as `lifeguard
//! fix` lints again after each round, so a fix that depends on another's
//! result (a grace period after the preStop rewrite) reads it. Each fix
//! adds its rule to the annotation `lifeguard.dev/mutated`, as `/mutate`
//! does; a fixed object needs no change, so `reinvocationPolicy: IfNeeded`
//! converges.

mod build;
pub mod coverage;
mod objects;

use serde_json::Value;

use super::cel_library::{self, CelError};
use super::kube_version::{KubeVersion, MapApi};
use super::{
    exemptions, grace_period_too_short, liveness_too_aggressive, prestop_sleep_only, probe_window_too_long,
    startup_budget_too_short, startup_probe_missing,
};
use crate::finding::Severity;
use crate::policy::Policy;
pub use coverage::Carried;

/// What to export.
#[derive(Debug, Clone)]
pub struct Options {
    /// The objects' name is `NAME-fix`, and NAME the value of their
    /// [`super::EXPORT_LABEL`].
    pub name: String,
    /// The API version to write.
    pub api: MapApi,
    /// The release whose CEL environment the expressions must compile in.
    pub kube_version: KubeVersion,
}

/// The export: its objects, and the carried rules it leaves out.
#[derive(Debug, Clone, Default)]
pub struct Export {
    /// The MutatingAdmissionPolicy `NAME-fix` and its binding.
    pub objects: Vec<Value>,
    /// Each carried rule left out, and why.
    pub left_out: Vec<(&'static str, String)>,
    /// The rules whose fixes the policy carries.
    pub rules: Vec<&'static str>,
}

/// One fix of a rule, as one mutation.
#[derive(Debug, Clone)]
pub(crate) struct Fix {
    /// The rule.
    pub(crate) rule: &'static str,
    /// The variable that lists what it changes, named after the fix.
    pub(crate) variable: &'static str,
    /// Whether it must read the object as submitted, before the other fixes
    /// change it: it runs first.
    pub(crate) as_submitted: bool,
    /// What it changes.
    pub(crate) change: Change,
}

/// What a fix changes, and where.
#[derive(Debug, Clone)]
pub(crate) enum Change {
    /// ApplyConfiguration: fields of each container `c` of
    /// `variables.containers` for which `which` (CEL over `c`) holds; the
    /// policy's exemptions of the rule are added to `which`.
    Containers {
        /// The containers fixed.
        which: String,
        /// The fields set, each on a part of the container (a probe).
        set: Vec<Set>,
    },
    /// JSON Patch: `add` operations below each container `c` for which
    /// `which` holds (exemptions added as for [`Change::Containers`]), where
    /// ApplyConfiguration cannot (an atomic list inside what is written, a
    /// member to remove).
    ContainerPatch {
        /// The containers fixed.
        which: String,
        /// The operations, each on the containers where its own condition holds too.
        ops: Vec<ContainerOp>,
    },
    /// ApplyConfiguration: a field of the pod spec, set to `value` when
    /// `when` holds (CEL over the object, exemptions included by the rule:
    /// which container's finding carries the fix is the rule's to say).
    PodSpec {
        /// When the pod is fixed.
        when: String,
        /// The field.
        field: &'static str,
        /// Its new value (an int).
        value: String,
    },
}

/// A field set by an ApplyConfiguration on a container's `part`.
#[derive(Debug, Clone)]
pub(crate) struct Set {
    /// `livenessProbe`, ...
    pub(crate) part: &'static str,
    /// `failureThreshold`, ...
    pub(crate) field: &'static str,
    /// The value, CEL over `c`.
    pub(crate) value: String,
}

/// A JSON Patch operation below a container.
#[derive(Debug, Clone)]
pub(crate) struct ContainerOp {
    /// The path below the container, a CEL string over `c` (`'/startupProbe'`).
    pub(crate) path: String,
    /// What the operation writes there.
    pub(crate) write: Write,
    /// When this operation applies, CEL over `c` (`true`: always).
    pub(crate) when: String,
}

/// What a [`ContainerOp`] writes.
#[derive(Debug, Clone)]
pub(crate) enum Write {
    /// `add` of a value computed in CEL, over `c`.
    Add(String),
    /// `copy` from another path below the container, a CEL string over `c`:
    /// the object's own values cannot be marshalled into a patch's value
    /// (the API server holds them typed), but a copy moves them as they are.
    Copy(String),
}

/// Whether `lifeguard fix` fixes `rule`'s findings that the rule reports at
/// `severity`: not when the policy makes them info and `fixInfoFindings`
/// is off (an info finding's fix is opt-in).
pub(crate) fn fixes_at(policy: &Policy, rule: &str, severity: Severity) -> bool {
    policy.settings.fix_info_findings || policy.severity_override(rule).unwrap_or(severity) != Severity::Info
}

/// The largest value of an API int32 field: a fix that would pass it is
/// not made.
pub(crate) const I32_MAX: i64 = i32::MAX as i64;

/// `ceil(n / d)` for a constant `d`, as the rules compute it: 0 for `n <= 0`
/// or `d < 1`. `[n].map(x, ...)[0]` binds `x` to `n`, which is written once.
pub(crate) fn ceil_div_by(n: &str, d: i64) -> String {
    if d < 1 {
        return "0".to_owned();
    }
    format!("[int({n})].map(x, x <= 0 ? 0 : (x + {}) / {d})[0]", d - 1)
}

/// `ceil(n / d)` of a constant `n` by `d`, a CEL int of 1 or more.
pub(crate) fn ceil_div_of(n: i64, d: &str) -> String {
    if n <= 0 {
        return "0".to_owned();
    }
    format!("(({n} + {d} - 1) / {d})")
}

/// The largest of CEL ints (each written once).
pub(crate) fn max(values: &[&str]) -> String {
    let ints: Vec<String> = values.iter().map(|v| format!("int({v})")).collect();
    format!("[{}].max()", ints.join(", "))
}

/// The policy's carried rules as a MutatingAdmissionPolicy and its binding.
/// `Err` when an expression needs a CEL library the target release does
/// not admit.
pub fn export(policy: &Policy, options: &Options) -> Result<Export, CelError> {
    let mut out = Export::default();
    let mut fixes = Vec::new();
    for (rule, carried) in coverage::coverage() {
        if !matches!(carried, Carried::Yes(_) | Carried::Partly(_)) {
            continue;
        }
        if !policy.is_enabled(rule) {
            out.left_out.push((rule, "disabled by the policy".to_owned()));
            continue;
        }
        // A fix the linter's exemption suppresses must not be made.
        let exempt = match exemptions::exempt(policy, rule, Some("c.name")) {
            Ok(exempt) => exempt,
            Err(why) => {
                out.left_out.push((rule, format!("{why} cannot be expressed in CEL exactly")));
                continue;
            }
        };
        let of_rule = match rule {
            "startup-probe-missing" => startup_probe_missing::fixes(policy),
            "startup-budget-too-short" => startup_budget_too_short::fixes(policy),
            "liveness-too-aggressive" => liveness_too_aggressive::fixes(policy),
            "probe-window-too-long" => probe_window_too_long::fixes(policy),
            "grace-period-too-short" => grace_period_too_short::fixes(policy, &exempt),
            "prestop-sleep-only" => prestop_sleep_only::fixes(policy, &exempt),
            // The coverage's tests hold every carried rule to a fix here.
            _ => Vec::new(),
        };
        if of_rule.is_empty() {
            out.left_out.push((
                rule,
                "its findings are info under the policy, whose fixes are opt-in (fixInfoFindings is off)".to_owned(),
            ));
            continue;
        }
        out.rules.push(rule);
        fixes.extend(of_rule.into_iter().map(|fix| build::with_exemptions(fix, &exempt)));
    }
    // Stable: the rest keep the registry's order, in which `lifeguard fix` merges them.
    fixes.sort_by_key(|fix| !fix.as_submitted);
    out.objects = objects::pair(&options.name, options.api, policy, &fixes).into();
    cel_library::check(objects::expressions(&out.objects), options.kube_version)?;
    Ok(out)
}

#[cfg(test)]
mod tests;
