use std::collections::BTreeSet;

use serde_json::json;

use super::*;
use crate::vap::kube_version::OLDEST;

fn options() -> Options {
    Options { name: "lifeguard".to_owned(), api: MapApi::V1, kube_version: OLDEST }
}

fn policy(text: &str) -> Policy {
    Policy::load(&format!("apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\n{text}"), "test").expect("policy")
}

fn carried() -> Vec<&'static str> {
    coverage::coverage()
        .into_iter()
        .filter(|(_, c)| matches!(c, Carried::Yes(_) | Carried::Partly(_)))
        .map(|(r, _)| r)
        .collect()
}

#[test]
fn every_carried_rule_has_a_mutation_and_every_fix_a_variable_of_its_own() {
    let out = export(&Policy::default(), &options()).expect("compiles at the oldest release");
    assert_eq!(out.rules, carried());
    assert!(out.left_out.is_empty(), "{:?}", out.left_out);
    let spec = &out.objects[0]["spec"];
    let names: Vec<&str> =
        spec["variables"].as_array().expect("variables").iter().filter_map(|v| v["name"].as_str()).collect();
    let unique: BTreeSet<&&str> = names.iter().collect();
    assert_eq!(unique.len(), names.len(), "{names:?}");
    // podSpec .. needs, podSpecPath, then one per fix.
    let fixes: Vec<&&str> = names.iter().filter(|n| n.starts_with("fix")).collect();
    let mutations = spec["mutations"].as_array().expect("mutations");
    assert_eq!(fixes.len(), mutations.len());
    for (variable, mutation) in fixes.iter().zip(mutations) {
        let text = mutation.to_string();
        assert!(text.contains(&format!("variables.{variable}")), "{variable}: {text}");
    }
}

#[test]
fn the_rewrite_runs_first_and_the_grace_periods_in_the_registrys_order() {
    let policy = Policy::pack("gpu-serving").expect("pack");
    let out = export(&policy, &options()).expect("compiles");
    let order: Vec<String> = out.objects[0]["spec"]["mutations"]
        .as_array()
        .expect("mutations")
        .iter()
        .map(|m| {
            let text = m.to_string();
            let at = text.find("variables.fix").expect("a fix variable") + "variables.".len();
            text[at..].chars().take_while(|c| c.is_ascii_alphanumeric()).collect()
        })
        .collect();
    assert_eq!(
        order,
        [
            "fixPrestopSleepNative",
            "fixStartupProbeMissing",
            "fixStartupBudget",
            "fixLivenessTooAggressive",
            "fixReadinessWindow",
            "fixLivenessWindow",
            "fixGracePeriod",
            "fixPrestopSleepGrace",
        ]
    );
}

#[test]
fn the_objects_match_what_mutate_patches() {
    let out = export(&Policy::default(), &options()).expect("compiles");
    let [map, binding] = &out.objects[..] else { panic!("two objects: {:?}", out.objects) };
    assert_eq!(map["apiVersion"], "admissionregistration.k8s.io/v1");
    assert_eq!(map["kind"], "MutatingAdmissionPolicy");
    assert_eq!(map["metadata"]["name"], "lifeguard-fix");
    assert_eq!(map["spec"]["reinvocationPolicy"], "IfNeeded");
    assert_eq!(map["spec"]["failurePolicy"], "Ignore");
    let conditions: Vec<&str> = map["spec"]["matchConditions"]
        .as_array()
        .expect("conditions")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(
        conditions,
        [
            "has-a-pod-spec",
            "not-controller-owned",
            "not-being-deleted",
            "update-changes-the-template",
            "update-may-change-the-template"
        ]
    );
    // The same constraints as the ValidatingAdmissionPolicies'.
    assert_eq!(map["spec"]["matchConstraints"], crate::vap::objects::match_constraints());
    assert_eq!(binding["kind"], "MutatingAdmissionPolicyBinding");
    assert_eq!(binding["spec"], json!({"policyName": "lifeguard-fix"}));
    for object in &out.objects {
        assert_eq!(object["metadata"]["labels"][crate::vap::EXPORT_LABEL], "lifeguard");
    }
    let v1beta1 = export(&Policy::default(), &Options { api: MapApi::V1beta1, ..options() }).expect("compiles");
    assert_eq!(v1beta1.objects[0]["apiVersion"], "admissionregistration.k8s.io/v1beta1");
    assert_eq!(v1beta1.objects[1]["apiVersion"], "admissionregistration.k8s.io/v1beta1");
    assert_eq!(v1beta1.objects[0]["spec"], map["spec"]);
}

#[test]
fn a_disabled_rule_or_one_whose_fixes_are_opt_in_is_left_out() {
    let out = export(
        &policy("rules:\n  liveness-too-aggressive: {enabled: false}\n  probe-window-too-long: {severity: info}\n"),
        &options(),
    )
    .expect("compiles");
    let want: Vec<&str> =
        carried().into_iter().filter(|r| !["liveness-too-aggressive", "probe-window-too-long"].contains(r)).collect();
    assert_eq!(out.rules, want);
    assert_eq!(out.left_out[0], ("liveness-too-aggressive", "disabled by the policy".to_owned()));
    assert_eq!(out.left_out[1].0, "probe-window-too-long");
    assert!(out.left_out[1].1.contains("fixInfoFindings is off"), "{:?}", out.left_out);
    // With fixInfoFindings, an info finding's fix is made.
    let fixing = export(
        &policy("parameters: {fixInfoFindings: true}\nrules:\n  probe-window-too-long: {severity: info}\n"),
        &options(),
    )
    .expect("compiles");
    assert_eq!(fixing.rules, carried());
}

#[test]
fn without_a_rule_the_policy_still_exists_with_a_mutation_that_changes_nothing() {
    let disabled: String = carried().iter().map(|r| format!("  {r}: {{enabled: false}}\n")).collect();
    let out = export(&policy(&format!("rules:\n{disabled}")), &options()).expect("compiles");
    assert!(out.rules.is_empty());
    let spec = &out.objects[0]["spec"];
    assert_eq!(
        spec["mutations"],
        json!([{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "Object{}"}}])
    );
    assert!(spec.get("variables").is_none());
    assert_eq!(out.objects[0]["metadata"]["annotations"]["lifeguard.dev/rules"], "");
}

#[test]
fn an_exemption_applies_to_the_fix_and_the_ignore_annotation_to_the_rule() {
    let out = export(
        &policy("exemptions:\n- reason: proxies\n  containers: [istio-proxy]\n  rules: [liveness-too-aggressive]\n"),
        &options(),
    )
    .expect("compiles");
    let variable = out.objects[0]["spec"]["variables"]
        .as_array()
        .expect("variables")
        .iter()
        .find(|v| v["name"] == "fixLivenessTooAggressive")
        .expect("the fix's variable")["expression"]
        .as_str()
        .expect("text")
        .to_owned();
    assert!(variable.starts_with("'liveness-too-aggressive' in variables.ignored ? [] : "), "{variable}");
    assert!(variable.contains("c.name.matches('^istio-proxy$')"), "{variable}");
}

#[test]
fn every_pack_compiles_at_the_oldest_release() {
    for pack in crate::policy::PACKS.iter().map(|p| p.name) {
        let policy = Policy::pack(pack).expect("pack");
        export(&policy, &options()).unwrap_or_else(|e| panic!("{pack}: {e}"));
        let vap = crate::vap::Options {
            mode: crate::policy::AdmissionMode::Enforce,
            name: "lifeguard".to_owned(),
            kube_version: OLDEST,
        };
        crate::vap::export(&policy, &vap).unwrap_or_else(|e| panic!("{pack}: {e}"));
    }
}
