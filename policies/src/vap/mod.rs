//! `lifeguard export vap`: the rules CEL can express, as
//! ValidatingAdmissionPolicies (`admissionregistration.k8s.io/v1`) and
//! their bindings, for the API server to enforce in process: no webhook to
//! run. Every mode writes the same objects (`objects`), so applying one
//! mode's export over another's replaces it.
//! A rule is carried exactly, or partly ([`Covered::Partly`]): then only
//! the part CEL reads as the linter does, so it never reports what the
//! linter would not.
//!
//! The policy's severities and parameters are compiled in as constants,
//! so the export is regenerated when the policy changes. What the objects
//! match mirrors what the webhook judges: every pod-bearing kind it
//! registers for, CREATE and UPDATE (an UPDATE only when it changes the pod
//! template), never a controller-owned object, an object being deleted or
//! `kube-system`; a rule listed in the object's `lifeguard.dev/ignore`
//! annotation with a reason is not checked.

mod carried;
pub mod coverage;
pub mod mutation;
mod objects;
mod ratchet;
pub(crate) mod variables;

use serde_json::Value;

use crate::cel::{exemptions, templates};
use crate::policy::{AdmissionMode, Policy};
use crate::rules::VapExport;

pub use crate::cel::check::Validation;
pub use crate::cel::kube_version::{self, KubeVersion, MapApi};
pub use crate::cel::library::{self as cel_library, CelError};
pub use coverage::{Covered, coverage};
pub use objects::EXPORT_LABEL;
use objects::Group;

/// What to export.
#[derive(Debug, Clone)]
pub struct VapOptions {
    /// The bindings' actions: `enforce`, `Deny` for the rules at or above
    /// `denySeverity` (`NAME-deny`) and `Warn` for the rest (`NAME-warn`);
    /// `warn`, `Warn` for both; `audit`, `Audit` for both.
    pub mode: AdmissionMode,
    /// The prefix of the objects' names (`NAME-deny`, `NAME-warn`) and the
    /// value of their [`EXPORT_LABEL`].
    pub name: String,
    /// The release whose CEL environment the expressions must compile in.
    pub kube_version: KubeVersion,
    /// Whether `NAME-deny` judges an UPDATE only by the findings its old
    /// object did not have (by rule and container, as the webhook's
    /// ratchet), or the whole object.
    pub ratchet: bool,
}

/// The export: its objects, and the covered rules it leaves out (disabled
/// by the policy, or under an exemption whose globs CEL cannot express),
/// and the custom kinds' pod templates it reads and those it does not.
#[derive(Debug, Clone, Default)]
pub struct Export {
    /// The ValidatingAdmissionPolicies `NAME-deny` and `NAME-warn`, each
    /// followed by its binding, then `NAME-deny-2` and `NAME-warn-2` (the
    /// second pod template of the custom kinds that have one), ...: the same
    /// names in every mode, so an export applied over another replaces it.
    pub objects: Vec<Value>,
    /// Each covered rule left out, and why.
    pub left_out: Vec<(&'static str, String)>,
    /// The rules in the objects.
    pub rules: Vec<&'static str>,
    /// The custom kinds' pod templates judged, `Kind (group) /pointer`,
    /// each with the objects that judge it (`NAME-deny-2`, ...).
    pub templates: Vec<(String, String)>,
    /// Each custom kind's pod template not judged, `Kind (group) /pointer`,
    /// and why.
    pub templates_left_out: Vec<(String, String)>,
    /// What each binding does, and where.
    pub bindings: Vec<Bound>,
}

/// What one binding does, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    /// The binding's name (its policy's).
    pub name: String,
    /// Its action: `Deny`, `Warn` or `Audit`.
    pub action: &'static str,
    /// The namespaces it judges, as its policy's `namespaceSelector`.
    pub namespaces: Value,
    /// The rules its policy carries.
    pub rules: Vec<&'static str>,
    /// Whether an UPDATE is judged only by the findings the old object did not have.
    pub ratcheted: bool,
}

/// The policy's covered rules as admission policies. `Err` when an
/// expression needs a CEL library the target release does not admit.
pub fn export(policy: &Policy, options: &VapOptions) -> Result<Export, CelError> {
    let mut out = Export::default();
    let mut validations = Vec::new();
    let carried = carried::carried(
        policy,
        |rule| match rule.vap {
            VapExport::Yes(checks) | VapExport::Partly(_, checks) => Some(checks),
            VapExport::No(_) => None,
        },
        // By container, and of the object itself.
        |rule| Ok((exemptions::exempt(policy, rule, Some("c.name"))?, exemptions::exempt(policy, rule, None)?)),
    );
    out.left_out = carried.left_out;
    for (rule, checks, (exempt, exempt_object)) in carried.rules {
        out.rules.push(rule.name);
        validations.extend(
            (checks.0)(rule, policy)
                .into_iter()
                .enumerate()
                .map(|(index, check)| check.validation(index, &exempt, &exempt_object)),
        );
    }
    // The same objects in every mode (see `objects`): the policies split by
    // severity, the mode in the bindings' actions; a pair per template slot.
    let (deny, warn): (Vec<&Validation>, Vec<&Validation>) =
        validations.iter().partition(|v| policy.denies(v.severity));
    let reached = templates::templates(policy);
    for slot in &reached.slots {
        // Only NAME-deny may deny: NAME-warn warns of every finding, old or new.
        for (group, group_validations, ratchet) in [(Group::Deny, &deny, options.ratchet), (Group::Warn, &warn, false)]
        {
            let ratchet = ratchet && !group_validations.is_empty();
            let pair = objects::pair(
                group,
                &options.name,
                policy,
                options.mode,
                slot,
                group_validations,
                &validations,
                ratchet,
            );
            out.objects.extend(pair);
            let validations = group_validations;
            let mut rules: Vec<&'static str> = validations.iter().map(|v| v.rule).collect();
            rules.dedup();
            out.bindings.push(Bound {
                name: group.object_name(&options.name, slot),
                action: group.action(options.mode),
                namespaces: objects::match_constraints(slot)["namespaceSelector"].clone(),
                rules,
                ratcheted: ratchet,
            });
        }
        let names = format!("{}-deny{suffix}, {}-warn{suffix}", options.name, options.name, suffix = slot.suffix());
        out.templates.extend(slot.customs.iter().map(|r| (r.name(), names.clone())));
    }
    out.templates_left_out = reached.left_out;
    cel_library::check(objects::expressions(&out.objects), options.kube_version)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::finding::Severity;
    use crate::rules::RULES;

    fn options(mode: AdmissionMode) -> VapOptions {
        VapOptions { mode, name: "lifeguard".to_owned(), kube_version: kube_version::OLDEST, ratchet: true }
    }

    fn export(policy: &Policy, options: &VapOptions) -> Export {
        super::export(policy, options).expect("the oldest supported release compiles it")
    }

    fn names(out: &Export) -> Vec<&str> {
        out.objects.iter().filter_map(|o| o["metadata"]["name"].as_str()).collect()
    }

    /// Every pair's names, slot by slot: the built-in kinds' pair first,
    /// then one per further template of the known custom kinds (KServe's
    /// four components make four slots).
    const NAMES: [&str; 16] = [
        "lifeguard-deny",
        "lifeguard-deny",
        "lifeguard-warn",
        "lifeguard-warn",
        "lifeguard-deny-2",
        "lifeguard-deny-2",
        "lifeguard-warn-2",
        "lifeguard-warn-2",
        "lifeguard-deny-3",
        "lifeguard-deny-3",
        "lifeguard-warn-3",
        "lifeguard-warn-3",
        "lifeguard-deny-4",
        "lifeguard-deny-4",
        "lifeguard-warn-4",
        "lifeguard-warn-4",
    ];

    #[test]
    fn enforce_splits_deny_and_warn_by_the_deny_severity() {
        let out = export(&Policy::default(), &options(AdmissionMode::Enforce));
        assert_eq!(names(&out), NAMES);
        let rules =
            |i: usize| out.objects[i]["metadata"]["annotations"]["lifeguard.dev/rules"].as_str().map(str::to_owned);
        let deny = rules(0).expect("rules");
        assert!(deny.contains("probe-port-unknown") && !deny.contains("liveness-too-aggressive"), "{deny}");
        assert_eq!(out.objects[1]["spec"]["validationActions"], json!(["Deny"]));
        let warn = rules(2).expect("rules");
        assert!(warn.contains("liveness-too-aggressive,") && !warn.contains("probe-port-unknown"), "{warn}");
        // A rule whose findings come at several severities is in both, once each.
        for list in [&deny, &warn] {
            assert_eq!(list.matches("probe-endpoint-reused").count(), 1, "{list}");
        }
        assert_eq!(out.objects[3]["spec"]["validationActions"], json!(["Warn"]));
    }

    #[test]
    fn every_mode_writes_the_same_objects_and_only_the_bindings_actions_differ() {
        let policy = Policy::default();
        let enforce = export(&policy, &options(AdmissionMode::Enforce));
        for (mode, actions) in [
            (AdmissionMode::Enforce, ["Deny", "Warn"]),
            (AdmissionMode::Warn, ["Warn", "Warn"]),
            (AdmissionMode::Audit, ["Audit", "Audit"]),
        ] {
            let out = export(&policy, &options(mode));
            assert_eq!(names(&out), names(&enforce), "{mode:?}");
            // The policies are the mode's neither in name nor in content.
            assert_eq!(out.objects[0], enforce.objects[0], "{mode:?}");
            assert_eq!(out.objects[2], enforce.objects[2], "{mode:?}");
            assert_eq!(out.objects[1]["spec"]["validationActions"], json!([actions[0]]), "{mode:?}");
            assert_eq!(out.objects[3]["spec"]["validationActions"], json!([actions[1]]), "{mode:?}");
            for object in &out.objects {
                let labels = &object["metadata"]["labels"];
                assert_eq!(labels["app.kubernetes.io/managed-by"], "lifeguard");
                assert_eq!(labels[EXPORT_LABEL], "lifeguard");
            }
            assert_eq!(out.objects[1]["metadata"]["annotations"]["lifeguard.dev/mode"], mode.as_str());
        }
    }

    #[test]
    fn a_policy_with_no_rule_below_the_deny_severity_still_writes_the_warn_pair() {
        // denySeverity info: enforce denies every finding, NAME-warn carries
        // nothing, yet must replace what an earlier export named so.
        let mut file = Policy::default().to_file();
        file.deny_severity = Some(Severity::Info);
        let policy = Policy::from_file(file, "test").expect("policy");
        let out = export(&policy, &options(AdmissionMode::Enforce));
        assert_eq!(names(&out), NAMES);
        let warn = &out.objects[2];
        assert_eq!(warn["metadata"]["annotations"]["lifeguard.dev/rules"], "");
        // The API server requires a validation: one that always holds, and no variables to evaluate.
        assert_eq!(warn["spec"]["validations"].as_array().map(Vec::len), Some(1));
        assert_eq!(warn["spec"]["validations"][0]["expression"], "true");
        assert!(warn["spec"].get("variables").is_none());
        assert_eq!(out.objects[3]["spec"]["validationActions"], json!(["Warn"]));
    }

    #[test]
    fn each_slot_matches_its_kinds_and_says_which_templates_it_judges() {
        let out = export(&Policy::default(), &options(AdmissionMode::Enforce));
        let rules = |i: usize| out.objects[i]["spec"]["matchConstraints"]["resourceRules"].clone();
        // The built-in kinds as before, then each custom kind's group, any version.
        let first = rules(0);
        assert_eq!(first[0]["apiGroups"], json!([""]));
        assert_eq!(first[0]["resources"], json!(["replicationcontrollers", "pods", "podtemplates"]));
        assert_eq!(first[2]["apiGroups"], json!(["batch"]));
        assert_eq!(first[3]["apiGroups"], json!(["leaderworkerset.x-k8s.io"]));
        assert_eq!(first[3]["apiVersions"], json!(["*"]));
        assert_eq!(first[4]["resources"], json!(["rayclusters", "rayservices", "rayjobs"]));
        assert_eq!(rules(2), first, "NAME-warn matches what NAME-deny does");
        let second = rules(4);
        let groups: Vec<&Value> = second.as_array().into_iter().flatten().map(|r| &r["apiGroups"][0]).collect();
        assert_eq!(groups, ["leaderworkerset.x-k8s.io", "ray.io", "serving.kserve.io"]);
        assert_eq!(second[1]["resources"], json!(["rayjobs"]));
        assert_eq!(
            out.templates[0],
            (
                "LeaderWorkerSet (leaderworkerset.x-k8s.io) /spec/leaderWorkerTemplate/leaderTemplate".to_owned(),
                "lifeguard-deny, lifeguard-warn".to_owned()
            )
        );
        assert!(out.templates.iter().any(|(t, objects)| t.starts_with("RayJob (ray.io) /spec/submitterPodTemplate")
            && objects == "lifeguard-deny-2, lifeguard-warn-2"));
        assert!(
            out.templates_left_out.iter().any(|(t, _)| t == "TFJob (kubeflow.org) /spec/tfReplicaSpecs/*/template")
        );
        // Every slot's policy carries the same validations.
        for i in [4, 8, 12] {
            assert_eq!(out.objects[i]["spec"]["validations"], out.objects[0]["spec"]["validations"]);
        }
    }

    #[test]
    fn a_disabled_rule_is_left_out() {
        let mut file = Policy::default().to_file();
        file.rules.entry("liveness-too-aggressive".to_owned()).or_default().enabled = Some(false);
        let policy = Policy::from_file(file, "test").expect("policy");
        let out = export(&policy, &options(AdmissionMode::Warn));
        let others: Vec<&str> = coverage()
            .into_iter()
            .filter(|(r, c)| !matches!(c, Covered::No(_)) && *r != "liveness-too-aggressive")
            .map(|(r, _)| r)
            .collect();
        assert_eq!(out.rules, others);
        assert_eq!(out.left_out, [("liveness-too-aggressive", "disabled by the policy".to_owned())]);
    }

    #[test]
    fn every_rule_the_registry_declares_covered_exports_its_checks_and_no_other_does() {
        let out = export(&Policy::default(), &options(AdmissionMode::Warn));
        let declared: Vec<&str> = RULES.iter().filter(|r| !matches!(r.vap, VapExport::No(_))).map(|r| r.name).collect();
        assert_eq!(out.rules, declared);
        let listed: Vec<String> = out
            .objects
            .iter()
            .filter_map(|o| o["metadata"]["annotations"]["lifeguard.dev/rules"].as_str())
            .flat_map(|list| list.split(',').map(str::to_owned))
            .filter(|r| !r.is_empty())
            .collect();
        for rule in RULES {
            let in_objects = listed.iter().any(|r| r == rule.name);
            assert_eq!(in_objects, declared.contains(&rule.name), "{}: its checks in the objects", rule.name);
        }
    }
}
