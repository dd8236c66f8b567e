//! The rules an export carries, for both exports: each rule of the
//! registry the export takes, enabled by the policy and with exemptions
//! CEL expresses exactly; every other one it takes is left out, with why.

use crate::policy::Policy;
use crate::rules::{RULES, Rule};

/// What an export carries of the registry, and what it leaves out.
pub(super) struct Carried<T, E> {
    /// Each rule carried, what the export takes of it, and its exemptions' CEL.
    pub(super) rules: Vec<(&'static Rule, T, E)>,
    /// Each rule the export takes but cannot carry, and why.
    pub(super) left_out: Vec<(&'static str, String)>,
}

/// The rules of the registry `take` takes (what the export carries of
/// each: its checks, its fixes), with `exempt`'s CEL of their exemptions.
pub(super) fn carried<T, E>(
    policy: &Policy,
    take: impl Fn(&'static Rule) -> Option<T>,
    exempt: impl Fn(&str) -> Result<E, String>,
) -> Carried<T, E> {
    let mut out = Carried { rules: Vec::new(), left_out: Vec::new() };
    for rule in RULES {
        let Some(taken) = take(rule) else { continue };
        if !policy.is_enabled(rule.name) {
            out.left_out.push((rule.name, "disabled by the policy".to_owned()));
            continue;
        }
        // A check or a fix that ignored an exemption would act where the
        // linter suppresses the finding.
        match exempt(rule.name) {
            Ok(exempt) => out.rules.push((rule, taken, exempt)),
            Err(why) => out.left_out.push((rule.name, format!("{why} cannot be expressed in CEL exactly"))),
        }
    }
    out
}

/// `left_out` in the registry's order, in which each export looks at the rules.
pub(super) fn in_registry_order(left_out: &mut [(&'static str, String)]) {
    left_out.sort_by_key(|(name, _)| RULES.iter().position(|r| r.name == *name));
}
