//! Whether `/mutate` may patch an UPDATE. A patch on an UPDATE is not free
//! the way it is on a CREATE: where the kind makes the pod spec immutable
//! (a Pod's probes, a Job's template) the API server rejects the whole
//! update with 422, and `failurePolicy` cannot help since lifeguard's call
//! succeeded; where the template may change, patching it on an update that
//! did not touch it (a relabel, a scale) starts a rollout nobody asked for.
//! So an UPDATE is patched only when the update itself changes the pod
//! template of a kind whose template may change: that update rolls the pods
//! anyway, and the fixes ride along with it.
//!
//! A Pod or a Job that lifeguard fixed is the exception: a GitOps re-apply
//! of its file sends the file's values back over the fixed ones, which the
//! API server refuses; there the fixes are made only where they put back
//! the old object's value (`super::restore` says why that never makes an
//! update refused that would have been accepted).

use serde_json::Value;

use policies::model::ANNOTATION_MUTATED as MUTATED_ANNOTATION;

/// How an UPDATE may be patched.
#[derive(Debug, PartialEq, Eq)]
pub enum Patching<'o> {
    /// With every fix: the update changes a template that may change.
    All,
    /// Only with the operations that restore this old object's values
    /// (`super::restore`): a Pod or a Job lifeguard fixed.
    Restoring(&'o Value),
}

/// How an UPDATE from `old` to `new` may be patched, or why not at all.
/// `template_pointer` is where the engine found the pod template.
pub fn may_patch<'o>(
    kind: &str,
    template_pointer: &str,
    new: &Value,
    old: Option<&'o Value>,
) -> Result<Patching<'o>, String> {
    if let Some(why) = immutable_template(kind) {
        // Where lifeguard wrote it on CREATE: the object's own metadata
        // (never a Job's template's).
        let fixed =
            old.filter(|old| old.pointer("/metadata/annotations").and_then(|a| a.get(MUTATED_ANNOTATION)).is_some());
        return match fixed {
            Some(old) => Ok(Patching::Restoring(old)),
            None => Err(why.to_owned()),
        };
    }
    let Some(old) = old else {
        // Without the old object there is no telling what the update
        // changed: leave it alone rather than risk an unasked rollout.
        return Err("the UPDATE carries no oldObject to compare the pod template with".to_owned());
    };
    if template(new, template_pointer) == template(old, template_pointer) {
        return Err("the update does not change the pod template (patching it would start a rollout)".to_owned());
    }
    Ok(Patching::All)
}

/// Kinds whose pod spec the API server's update validation freezes at
/// creation for the fields fixes touch (probes, lifecycle, grace period).
fn immutable_template(kind: &str) -> Option<&'static str> {
    match kind {
        "Pod" => Some("a Pod's containers and probes cannot change after creation"),
        // A suspended Job may change scheduling fields of its template,
        // never its containers.
        "Job" => Some("a Job's pod template cannot change after creation"),
        _ => None,
    }
}

fn template<'v>(object: &'v Value, pointer: &str) -> Option<&'v Value> {
    if pointer.is_empty() { Some(object) } else { object.pointer(pointer) }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn deployment(labels: Value, replicas: u32, image: &str) -> Value {
        json!({"kind": "Deployment", "metadata": {"name": "d", "labels": labels},
               "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "c", "image": image}]}}}})
    }

    #[test]
    fn relabel_and_scale_leave_the_template_alone() {
        let old = deployment(json!({}), 1, "a");
        let relabelled = deployment(json!({"team": "x"}), 1, "a");
        let scaled = deployment(json!({}), 5, "a");
        for new in [&relabelled, &scaled] {
            let why = may_patch("Deployment", "/spec/template", new, Some(&old));
            assert!(why.is_err_and(|w| w.contains("does not change the pod template")));
        }
    }

    #[test]
    fn a_template_change_may_carry_the_fixes() {
        let old = deployment(json!({}), 1, "a");
        let new = deployment(json!({}), 1, "b");
        assert_eq!(may_patch("Deployment", "/spec/template", &new, Some(&old)), Ok(Patching::All));
        let cron = |image: &str| json!({"kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}}}}});
        let t = "/spec/jobTemplate/spec/template";
        assert_eq!(may_patch("CronJob", t, &cron("b"), Some(&cron("a"))), Ok(Patching::All));
        assert!(may_patch("CronJob", t, &cron("a"), Some(&cron("a"))).is_err());
        // Without the old object nothing is known about the change.
        assert!(may_patch("Deployment", "/spec/template", &new, None).is_err());
    }

    #[test]
    fn pods_and_jobs_lifeguard_did_not_fix_are_never_patched_on_update() {
        let pod = |image: &str| json!({"kind": "Pod", "spec": {"containers": [{"name": "c", "image": image}]}});
        // Even an allowed image change: the fixes would touch probes, which are immutable.
        assert!(may_patch("Pod", "", &pod("b"), Some(&pod("a"))).is_err_and(|w| w.contains("Pod")));
        let job = |image: &str| json!({"kind": "Job", "spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}}});
        assert!(may_patch("Job", "/spec/template", &job("b"), Some(&job("a"))).is_err_and(|w| w.contains("Job")));
        assert!(may_patch("Pod", "", &pod("a"), None).is_err());
    }

    #[test]
    fn pods_and_jobs_lifeguard_fixed_are_only_restored() {
        let fixed = json!({"kind": "Pod", "metadata": {"annotations": {"lifeguard.dev/mutated": "r"}}, "spec": {}});
        assert_eq!(may_patch("Pod", "", &fixed, Some(&fixed)), Ok(Patching::Restoring(&fixed)));
        let job = json!({"kind": "Job", "metadata": {"annotations": {"lifeguard.dev/mutated": "r"}}, "spec": {"template": {}}});
        assert_eq!(may_patch("Job", "/spec/template", &job, Some(&job)), Ok(Patching::Restoring(&job)));
        // Only the object's own annotation says lifeguard fixed it.
        let template =
            json!({"kind": "Job", "spec": {"template": {"metadata": {"annotations": {"lifeguard.dev/mutated": "r"}}}}});
        assert!(may_patch("Job", "/spec/template", &template, Some(&template)).is_err());
    }
}
