//! The variables of an exported policy, and the ratchet of `NAME-deny`:
//! on UPDATE, a validation fails only for a finding the object did not
//! have before, matched as the webhook matches them, by rule and container
//! (an object's own finding by rule), whatever its check or severity. So
//! an existing workload with a finding can still be rolled (an image bump,
//! a new env var) while a new finding is refused.
//!
//! The old object is read by the same CEL as the new one, written once:
//! `variables.objects` is `[object]`, or on an UPDATE the ratchet judges
//! `[object, oldObject]`, and every variable is a list with a value per
//! side (`variables.containers[0]` the object's containers,
//! `variables.containers[1]` the old object's). Each rule with a check in
//! the policy has a list of its findings on the old object
//! (`oldProbePortUnknown`), read by all of its checks, the warning ones too.

use crate::cel::check::{Validation, variable_name};
use crate::cel::fragments;
use crate::cel::templates::Slot;
use crate::cel::text::{old_name, on_old_object, on_side};
use crate::policy::Policy;

/// A policy's variables, in order (a variable reads only those before it),
/// and the ratchet's list of each rule's findings on the old object.
#[derive(Debug, Clone, Default)]
pub(crate) struct Variables {
    pub(crate) list: Vec<(String, String)>,
    /// The slot's variables, each a list by side.
    pub(crate) sided: Vec<&'static str>,
    /// Each ratcheted rule and the name of its list.
    old: Vec<(&'static str, String)>,
}

impl Variables {
    /// The variable of `rule`'s findings on the old object, when ratcheted.
    pub(crate) fn old(&self, rule: &str) -> Option<&str> {
        self.old.iter().find(|(r, _)| *r == rule).map(|(_, name)| name.as_str())
    }
}

/// The variables of a policy carrying `validations`; with `ratchet`, the
/// old object is read too, by every check (in `all`) of their rules.
pub(crate) fn variables(
    policy: &Policy,
    slot: &Slot,
    validations: &[&Validation],
    all: &[Validation],
    ratchet: bool,
) -> Variables {
    let base = crate::vap::variables::variables(policy, slot);
    let mut out = Variables { sided: base.iter().map(|(name, _)| *name).collect(), ..Variables::default() };
    let objects = if ratchet {
        // The old object had the slot's pod spec: its side reads nothing that is not there.
        format!(
            "request.operation == 'UPDATE' && ({}) ? [object, oldObject] : [object]",
            on_old_object(&fragments::has_pod_spec(slot))
        )
    } else {
        "[object]".to_owned()
    };
    out.list.push(("objects".to_owned(), objects));
    out.list.push(("sides".to_owned(), "size(variables.objects) == 2 ? [0, 1] : [0]".to_owned()));
    for (name, expression) in &base {
        out.list.push((
            (*name).to_owned(),
            format!("variables.sides.map(s, {})", on_side(expression, &out.sided, "s", true)),
        ));
    }
    let mut rules: Vec<&'static str> = validations.iter().map(|v| v.rule).collect();
    rules.dedup();
    let read: Vec<&Validation> =
        if ratchet { all.iter().filter(|v| rules.contains(&v.rule)).collect() } else { validations.to_vec() };
    out.list.extend(read.iter().map(|v| v.found_on_sides(&out.sided)));
    if ratchet {
        for rule in rules {
            let name = old_name(&variable_name(rule, 0));
            let lists: Vec<String> = read.iter().filter(|v| v.rule == rule).map(|v| v.on_old_object()).collect();
            out.list.push((name.clone(), format!("size(variables.sides) == 2 ? {} : []", lists.join(" + "))));
            out.old.push((rule, name));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn variable(policy: &Value, name: &str) -> Option<String> {
        policy["spec"]["variables"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|v| v["name"] == name)
            .and_then(|v| v["expression"].as_str())
            // The layout changes only whitespace: compared without it.
            .map(|e| e.split_whitespace().collect::<String>())
    }

    fn bare(e: &str) -> String {
        e.split_whitespace().collect()
    }

    #[test]
    fn each_variable_has_a_value_per_side_and_each_rule_a_list_of_its_findings_on_the_old_object() {
        let policy = Policy::default();
        let export = |ratchet: bool| {
            crate::vap::export(
                &policy,
                &crate::vap::VapOptions {
                    mode: crate::policy::AdmissionMode::Enforce,
                    name: "lifeguard".to_owned(),
                    kube_version: crate::cel::kube_version::OLDEST,
                    ratchet,
                },
            )
            .expect("export")
        };
        let out = export(true);
        let (deny, warn) = (&out.objects[0], &out.objects[2]);
        let objects = variable(deny, "objects").unwrap_or_default();
        assert!(objects.starts_with(&bare("request.operation == 'UPDATE' && (oldObject.kind == 'Pod' ?")), "{objects}");
        assert!(objects.ends_with(&bare("? [object, oldObject] : [object]")), "{objects}");
        assert_eq!(
            variable(deny, "containers").unwrap_or_default(),
            bare(
                "variables.sides.map(s, variables.podSpec[s].containers + (has(variables.podSpec[s].initContainers) ? \
                 variables.podSpec[s].initContainers.filter(c, has(c.restartPolicy) && c.restartPolicy == 'Always') : []))"
            )
        );
        assert!(variable(deny, "podSpec").unwrap_or_default().starts_with(&bare(
            "variables.sides.map(s, variables.objects[s].kind == 'Pod' ? variables.objects[s].spec"
        )));
        // probe-endpoint-reused has checks in both policies: its list on the
        // old object reads them all, the warning's too.
        let reused = variable(deny, "oldProbeEndpointReused").unwrap_or_default();
        let checks = |p: &Value| {
            p["spec"]["variables"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|v| v["name"].as_str().is_some_and(|n| n.starts_with("probeEndpointReused")))
                .count()
        };
        assert!(checks(warn) >= 1 && checks(deny) > checks(warn), "{} {}", checks(deny), checks(warn));
        assert_eq!(reused.matches("variables.probeEndpointReused").count(), checks(deny), "{reused}");
        assert!(reused.starts_with("size(variables.sides)==2?variables.probeEndpointReused[1]+"), "{reused}");
        // NAME-warn never denies: it reads the object alone.
        assert_eq!(variable(warn, "objects").as_deref(), Some("[object]"));
        assert!(variable(warn, "oldProbeEndpointReused").is_none());
        // Unratcheted, NAME-deny reads the object alone too.
        let off = export(false);
        assert_eq!(variable(&off.objects[0], "objects").as_deref(), Some("[object]"));
        assert!(variable(&off.objects[0], "oldProbeEndpointReused").is_none());
    }
}
