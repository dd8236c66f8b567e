//! What the API server must store under `export map`: the rules whose
//! fixes it carries on an object (the documented part, `lifeguard export
//! map --explain`), the object as `lifeguard fix --rule ...` leaves the
//! file, and the fields the fixes touch, compared once both are stored.

use std::collections::{BTreeMap, BTreeSet};

use lifeguard::input::{Limits, parse_stream};
use lifeguard_e2e::cluster::webhook::workspace_binary;
use lifeguard_e2e::repo_root;
use policies::model::{ANNOTATION_COLD_START, ANNOTATION_MUTATED, Workload};
use policies::vap::mutation::{Carried, coverage};
use policies::{Batch, Policy, plan_fixes};
use serde_json::{Value, json};

use lifeguard_e2e::vap_parity::readable;

/// An integer annotation of 19 digits or more, which CEL does not read as
/// the linter does.
fn too_long(value: &str) -> bool {
    let digits = value.trim().trim_start_matches(['+', '-']).trim_start_matches('0');
    digits.len() >= 19 && digits.bytes().all(|b| b.is_ascii_digit())
}

/// The rules whose fixes the export makes on `object`: every carried rule,
/// but not startup-probe-missing beside a slow-boot image run by a command
/// of its own with no port or GPU, nor it or startup-budget-too-short with
/// a cold start of 19 digits or more, nor the shutdown rules on a pod whose
/// preStop hooks, drains or budgets CEL does not read as the linter does.
pub(crate) fn carried_rules(object: &Value, policy: &Policy) -> Vec<String> {
    let Some(w) = Workload::from_object(object).ok().flatten() else { return Vec::new() };
    carried_rules_of(&w, policy)
}

/// [`carried_rules`] of one pod template.
pub(crate) fn carried_rules_of(w: &Workload, policy: &Policy) -> Vec<String> {
    let cold_too_long = w.annotations.get(ANNOTATION_COLD_START).is_some_and(|v| too_long(v));
    let unsure = w.containers().any(|c| {
        c.gpu_resource().is_none()
            && c.container.command.as_ref().is_some_and(|c| !c.is_empty())
            && !c.declares_ports()
            && policy.is_slow_boot_image(c.image())
    });
    let shutdown_readable = readable(w, policy, |_| true);
    coverage::coverage()
        .into_iter()
        .filter(|(_, carried)| matches!(carried, Carried::Yes(_) | Carried::Partly(_)))
        .map(|(rule, _)| rule)
        .filter(|rule| match *rule {
            "startup-probe-missing" => !unsure && !cold_too_long,
            "startup-budget-too-short" => !cold_too_long,
            "grace-period-too-short" | "prestop-sleep-only" => shutdown_readable,
            _ => true,
        })
        .map(str::to_owned)
        .collect()
}

/// The rules `lifeguard fix` would fix on `object`: of `rules`, or all.
pub(crate) fn fixed_rules(object: &Value, policy: &Policy, rules: Option<&[String]>) -> BTreeSet<String> {
    let plan = plan_fixes(object, &Batch::default(), policy, rules).ok().flatten();
    plan.into_iter().flat_map(|p| p.applied).map(|a| a.rule).collect()
}

/// `lifeguard fix --policy POLICY --rule R ... -` of `object`: the object as
/// the fixed file holds it.
pub(crate) fn fixed_by_lifeguard(object: &Value, policy: &str, rules: &[String]) -> Value {
    let binary = workspace_binary("lifeguard", "lifeguard").expect("the lifeguard binary");
    let mut args =
        vec!["fix".to_owned(), "--policy".to_owned(), policy.to_owned(), "--fail-on".to_owned(), "never".to_owned()];
    for rule in rules {
        args.extend(["--rule".to_owned(), rule.clone()]);
    }
    args.push("-".to_owned());
    let mut child = std::process::Command::new(binary)
        .args(&args)
        .env_remove("LIFEGUARD_POLICY")
        .current_dir(repo_root())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run lifeguard fix");
    let mut stdin = child.stdin.take().expect("stdin");
    std::io::Write::write_all(&mut stdin, serde_json::to_string_pretty(object).expect("JSON").as_bytes())
        .expect("write the object");
    drop(stdin);
    let out = child.wait_with_output().expect("lifeguard fix");
    // Under --fail-on never a changed stream exits 0 too; only an error fails.
    assert_eq!(out.status.code(), Some(0), "lifeguard fix {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    let (docs, errors) = parse_stream(&text, &Limits::default());
    assert!(errors.is_none(), "{errors:?}: {text}");
    docs.into_iter().next().expect("the fixed object").value
}

/// What the fixes touch, of a stored object: each container's probes and
/// lifecycle (by name, init containers included) and the pod's grace period.
pub(crate) fn touched(stored: &Value) -> Value {
    let Some(w) = Workload::from_object(stored).ok().flatten() else { return Value::Null };
    touched_at(stored, &w.spec_pointer)
}

/// [`touched`] of the pod spec at `spec_pointer`.
pub(crate) fn touched_at(stored: &Value, spec_pointer: &str) -> Value {
    let spec = stored.pointer(spec_pointer).cloned().unwrap_or_default();
    let mut containers = BTreeMap::new();
    for list in ["initContainers", "containers"] {
        for c in spec[list].as_array().into_iter().flatten() {
            let name = c["name"].as_str().unwrap_or_default().to_owned();
            let fields = ["livenessProbe", "readinessProbe", "startupProbe", "lifecycle"].map(|f| (f, c[f].clone()));
            containers.insert(format!("{list}/{name}"), json!(BTreeMap::from(fields)));
        }
    }
    json!({ "terminationGracePeriodSeconds": spec["terminationGracePeriodSeconds"], "containers": containers })
}

/// The rules `lifeguard.dev/mutated` lists on a stored object.
pub(crate) fn mutated(stored: &Value) -> BTreeSet<String> {
    let listed = stored["metadata"]["annotations"][ANNOTATION_MUTATED].as_str().unwrap_or_default();
    listed.split(',').map(str::trim).filter(|r| !r.is_empty()).map(str::to_owned).collect()
}

/// A stored object as a client would send it again: without what the API
/// server sets on its own.
pub(crate) fn resubmittable(stored: &Value) -> Value {
    let mut object = stored.clone();
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        for key in ["uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"] {
            meta.remove(key);
        }
    }
    if let Some(fields) = object.as_object_mut() {
        fields.remove("status");
    }
    object
}
