use std::collections::BTreeSet;

use serde_json::json;

use super::*;
use crate::cel::kube_version::OLDEST;

fn options() -> MapOptions {
    MapOptions { name: "lifeguard".to_owned(), api: MapApi::V1, kube_version: OLDEST }
}

/// An expression as laid out, on one line: each line break and its indent a space.
fn one_line(expression: &str) -> String {
    expression.lines().map(str::trim_start).collect::<Vec<_>>().join(" ")
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
fn the_rewrites_run_first_and_the_grace_periods_in_the_registrys_order() {
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
            // A re-apply's exec beside the native action first: the rewrite reads the hook it leaves.
            "fixPrestopExecBesideNative",
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
    // The built-in kinds' pair first (a LeaderWorkerSet's workers' after it).
    let [map, binding, ..] = &out.objects[..] else { panic!("two objects at least") };
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
    // The same kinds as the ValidatingAdmissionPolicies of the slot, but
    // the custom kinds whose containers an ApplyConfiguration cannot merge.
    let vap = crate::vap::export(
        &Policy::default(),
        &crate::vap::VapOptions {
            mode: crate::policy::AdmissionMode::Enforce,
            name: "lifeguard".to_owned(),
            kube_version: OLDEST,
            ratchet: true,
        },
    )
    .expect("compiles");
    let rules = |o: &Value| o["spec"]["matchConstraints"]["resourceRules"].as_array().cloned().unwrap_or_default();
    let fixed = rules(map);
    assert_eq!(fixed[..], rules(&vap.objects[0])[..5], "the built-in kinds, then LeaderWorkerSet, then KubeRay's");
    assert_eq!(fixed[3]["resources"], json!(["leaderworkersets"]));
    assert_eq!(fixed[4]["resources"], json!(["rayclusters", "rayservices", "rayjobs"]));
    assert_eq!(fixed.len(), 5, "not KServe's, nor AIBrix's");
    assert_eq!(
        map["spec"]["matchConstraints"]["namespaceSelector"],
        vap.objects[0]["spec"]["matchConstraints"]["namespaceSelector"]
    );
    assert_eq!(binding["kind"], "MutatingAdmissionPolicyBinding");
    assert_eq!(binding["spec"], json!({"policyName": "lifeguard-fix"}));
    for object in &out.objects {
        assert_eq!(object["metadata"]["labels"][crate::vap::EXPORT_LABEL], "lifeguard");
    }
    let v1beta1 = export(&Policy::default(), &MapOptions { api: MapApi::V1beta1, ..options() }).expect("compiles");
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
        .map(one_line)
        .expect("text");
    assert!(variable.starts_with("'liveness-too-aggressive' in variables.ignored ? [] : "), "{variable}");
    assert!(variable.contains("c.name.matches('^istio-proxy$')"), "{variable}");
}

#[test]
fn every_pack_compiles_at_the_oldest_release() {
    for pack in crate::policy::PACKS.iter().map(|p| p.name) {
        let policy = Policy::pack(pack).expect("pack");
        export(&policy, &options()).unwrap_or_else(|e| panic!("{pack}: {e}"));
        let vap = crate::vap::VapOptions {
            mode: crate::policy::AdmissionMode::Enforce,
            name: "lifeguard".to_owned(),
            kube_version: OLDEST,
            ratchet: true,
        };
        crate::vap::export(&policy, &vap).unwrap_or_else(|e| panic!("{pack}: {e}"));
    }
}

#[test]
fn the_templates_of_leaderworkerset_and_kuberay_are_fixed_and_every_other_custom_template_is_said_to_be_left_out() {
    let out = export(&Policy::default(), &options()).expect("compiles");
    let names: Vec<&str> = out.objects.iter().filter_map(|o| o["metadata"]["name"].as_str()).collect();
    assert_eq!(names, ["lifeguard-fix", "lifeguard-fix", "lifeguard-fix-2", "lifeguard-fix-2"]);
    let fixed: Vec<(&str, &str)> = out.templates.iter().map(|(t, o)| (t.as_str(), o.as_str())).collect();
    assert_eq!(
        fixed,
        [
            ("LeaderWorkerSet (leaderworkerset.x-k8s.io) /spec/leaderWorkerTemplate/leaderTemplate", "lifeguard-fix"),
            ("RayCluster (ray.io) /spec/headGroupSpec/template", "lifeguard-fix"),
            ("RayService (ray.io) /spec/rayClusterConfig/headGroupSpec/template", "lifeguard-fix"),
            ("RayJob (ray.io) /spec/rayClusterSpec/headGroupSpec/template", "lifeguard-fix"),
            ("LeaderWorkerSet (leaderworkerset.x-k8s.io) /spec/leaderWorkerTemplate/workerTemplate", "lifeguard-fix-2"),
            ("RayJob (ray.io) /spec/submitterPodTemplate", "lifeguard-fix-2"),
        ]
    );
    // Every other known template is named, with why.
    let known: usize = crate::model::CUSTOM_POD_KINDS.iter().map(|k| k.templates.len()).sum();
    assert_eq!(out.templates.len() + out.templates_left_out.len(), known, "{:?}", out.templates_left_out);
    let why = |t: &str| out.templates_left_out.iter().find(|(n, _)| n == t).map(|(_, w)| w.as_str());
    assert_eq!(why("InferenceService (serving.kserve.io) /spec/predictor"), Some(NOT_FIXED_CUSTOM_KIND));
    assert_eq!(
        why("RayClusterFleet (orchestration.aibrix.ai) /spec/template/spec/headGroupSpec/template"),
        Some(NOT_FIXED_CUSTOM_KIND)
    );
    assert_eq!(why("RayCluster (ray.io) /spec/workerGroupSpecs/*/template"), Some(crate::cel::templates::WILDCARD));
    // The second policy matches LeaderWorkerSets and RayJobs alone and writes into the workers' or the submitter's pod spec.
    let workers = &out.objects[2]["spec"];
    let rules = &workers["matchConstraints"]["resourceRules"];
    assert_eq!(rules.as_array().map(Vec::len), Some(2));
    assert_eq!(rules[0]["resources"], json!(["leaderworkersets"]));
    assert_eq!(rules[1]["resources"], json!(["rayjobs"]));
    let path = workers["variables"].as_array().into_iter().flatten().find(|v| v["name"] == "podSpecPath");
    assert_eq!(
        path.and_then(|v| v["expression"].as_str()).map(one_line).map(Value::String),
        Some(json!(
            "(object.kind == 'LeaderWorkerSet' && object.apiVersion.startsWith('leaderworkerset.x-k8s.io/')) ? \
             '/spec/leaderWorkerTemplate/workerTemplate/spec' : '/spec/submitterPodTemplate/spec'"
        ))
    );
    // Its mutations write below that path, whatever the kind: one
    // expression, no branch by kind.
    for mutation in workers["mutations"].as_array().into_iter().flatten() {
        assert_eq!(mutation["patchType"], "JSONPatch", "{mutation}");
        let expression = mutation.pointer("/jsonPatch/expression").and_then(Value::as_str).unwrap_or_default();
        assert!(expression.contains("path: variables.podSpecPath + '/"), "{expression}");
        assert!(!expression.contains("object.kind"), "{expression}");
    }
}

#[test]
fn a_declared_kind_is_not_fixed_even_where_it_redeclares_a_leaderworkerset() {
    let policy = crate::Policy::load(
        "apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\npodTemplates:\n\
         - {kind: LeaderWorkerSet, group: leaderworkerset.x-k8s.io, resource: leaderworkersets, templates: [/spec/x]}\n",
        "test.yaml",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let out = export(&policy, &options()).expect("compiles");
    assert!(!out.templates.iter().any(|(t, _)| t.starts_with("LeaderWorkerSet")), "{:?}", out.templates);
    assert!(
        out.templates_left_out.iter().any(|(t, why)| t == "LeaderWorkerSet (leaderworkerset.x-k8s.io) /spec/x"
            && why.starts_with("a declared kind's")),
        "{:?}",
        out.templates_left_out
    );
    for object in out.objects.iter().filter(|o| o["kind"] == "MutatingAdmissionPolicy") {
        let rules = &object["spec"]["matchConstraints"]["resourceRules"];
        let groups: Vec<&Value> = rules.as_array().into_iter().flatten().map(|r| &r["apiGroups"][0]).collect();
        assert!(!groups.contains(&&json!("leaderworkerset.x-k8s.io")), "{groups:?}");
    }
}
