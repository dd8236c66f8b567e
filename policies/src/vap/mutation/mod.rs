//! `lifeguard export map`: the fixes of the rules `export vap` covers, as a
//! MutatingAdmissionPolicy and its binding, for the API server to apply in
//! process: the fixes `lifeguard fix` and the webhook's `/mutate` make,
//! where CEL computes them exactly from the container's own spec and the
//! policy's constants ([`coverage`] says where).
//!
//! It matches what `/mutate` patches: the same kinds, CREATE, an UPDATE
//! that changes the pod template of a kind whose template may change, and
//! an UPDATE of a Pod or a Job that lifeguard fixed, where the fixes only
//! put back what is stored (their pod spec cannot change: `build::RESTORING`);
//! never `kube-system`, a controller-owned object or one being deleted; a rule in the object's `lifeguard.dev/ignore`
//! annotation, or under an exemption, is not fixed. The findings come from
//! the same CEL as the ValidatingAdmissionPolicies' (`crate::cel::fragments`, the
//! rules' checks, `crate::cel::exemptions`), so the two exports never disagree on
//! what they find.
//!
//! One mutation per fix, a JSON Patch below `variables.podSpecPath`, so one
//! expression serves every kind the slot matches. The mutations run in
//! order, each on the object as the ones before left it, as `lifeguard
//! fix` lints again after each round, so a fix that depends on another's
//! result (a grace period after the preStop rewrite) reads it. Each fix
//! adds its rule to the annotation `lifeguard.dev/mutated`, as `/mutate`
//! does; a fixed object needs no change, so `reinvocationPolicy: IfNeeded`
//! converges.

mod build;
pub mod coverage;
mod custom_kinds;
mod objects;

use serde_json::Value;

use super::carried;
use crate::cel::exemptions;
use crate::cel::kube_version::{KubeVersion, MapApi};
use crate::cel::library::{self, CelError};
use crate::policy::Policy;
use crate::rules::MapExport;
pub use coverage::Carried;
pub use custom_kinds::{FIXED_CUSTOM_KINDS, NOT_FIXED_CUSTOM_KIND};

/// What to export.
#[derive(Debug, Clone)]
pub struct MapOptions {
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
    /// The custom kinds' pod templates fixed, `Kind (group) /pointer`, each
    /// with the object that fixes it (`NAME-fix-2`, ...).
    pub templates: Vec<(String, String)>,
    /// Each custom kind's pod template not fixed, `Kind (group) /pointer`,
    /// and why.
    pub templates_left_out: Vec<(String, String)>,
}

/// The policy's carried rules as a MutatingAdmissionPolicy and its binding.
/// `Err` when an expression needs a CEL library the target release does
/// not admit.
pub fn export(policy: &Policy, options: &MapOptions) -> Result<Export, CelError> {
    let mut out = Export::default();
    let mut mutations = Vec::new();
    let carried = carried::carried(
        policy,
        |rule| match rule.map {
            MapExport::Yes(_, fixes) | MapExport::Partly(_, fixes) => Some(fixes),
            MapExport::NoFix | MapExport::No(_) => None,
        },
        |rule| exemptions::exempt(policy, rule, Some("c.name")),
    );
    out.left_out = carried.left_out;
    for (rule, fixes, exempt) in carried.rules {
        let of_rule = (fixes.0)(rule, policy, &exempt);
        if of_rule.is_empty() {
            out.left_out.push((
                rule.name,
                "its findings are info under the policy, whose fixes are opt-in (fixInfoFindings is off)".to_owned(),
            ));
            continue;
        }
        out.rules.push(rule.name);
        mutations.extend(of_rule.into_iter().map(|fix| build::with_exemptions(fix, &exempt)));
    }
    carried::in_registry_order(&mut out.left_out);
    // Stable: the rest keep the registry's order, in which `lifeguard fix` merges them.
    mutations.sort_by_key(|fix| !fix.as_submitted);
    let (slots, left_out) = custom_kinds::slots(policy);
    for slot in &slots {
        out.objects.extend(objects::pair(&options.name, options.api, policy, slot, &mutations));
        let object = objects::object_name(&options.name, slot);
        out.templates.extend(slot.customs.iter().map(|r| (r.name(), object.clone())));
    }
    out.templates_left_out = left_out;
    library::check(objects::expressions(&out.objects), options.kube_version)?;
    Ok(out)
}

#[cfg(test)]
mod tests;
