//! Helpers for rule unit tests.

use serde_json::{Value, json};

use crate::finding::Finding;
use crate::model::Batch;
use crate::model::Workload;
use crate::policy::Policy;
use crate::rules::{Ctx, Rule};

/// Runs one rule on one object with the default policy and no other objects.
pub(crate) fn check(rule: &Rule, object: &Value) -> Vec<Finding> {
    check_with(rule, object, &Policy::default(), &Batch::default())
}

/// Runs one rule on one object with a policy and a batch.
pub(crate) fn check_with(rule: &Rule, object: &Value, policy: &Policy, batch: &Batch) -> Vec<Finding> {
    let workload = match Workload::from_object(object) {
        Ok(Some(w)) => w,
        Ok(None) => return Vec::new(),
        Err(e) => panic!("test object does not parse: {e}"),
    };
    let mut out = Vec::new();
    (rule.check)(&workload, &Ctx::new(policy, batch), &mut out);
    out
}

/// A Deployment `web` in namespace `prod` whose pod template has these
/// containers (and app=web labels).
pub(crate) fn deployment(containers: Value) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "prod"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": containers}
            }
        }
    })
}

/// A Deployment with one container `app` built from these fields.
pub(crate) fn one_container(fields: Value) -> Value {
    let mut c = json!({"name": "app", "image": "example/app:1"});
    if let (Some(c), Some(f)) = (c.as_object_mut(), fields.as_object()) {
        for (k, v) in f {
            c.insert(k.clone(), v.clone());
        }
    }
    deployment(json!([c]))
}

/// Rule names of findings, for compact assertions.
pub(crate) fn names(findings: &[Finding]) -> Vec<&str> {
    findings.iter().map(|f| f.rule.as_str()).collect()
}

/// The object with the finding's fix applied (the finding must carry a fix).
pub(crate) fn apply_fix(obj: &Value, f: &Finding) -> Value {
    let mut fixed = obj.clone();
    let fix = f.fix.as_ref().expect("a fix");
    json_patch::patch(&mut fixed, &fix.operations).expect("fix applies");
    fixed
}
