//! The operations `/mutate` keeps on an UPDATE of a kind whose pod template
//! is immutable (a Pod, a Job) when the old object is one lifeguard fixed:
//! those that restore, at the place they write, the old object's value.
//!
//! Why that is safe, from the API server's update validation
//! (`pkg/apis/core/validation` `ValidatePodUpdate`, and for a Job
//! `pkg/apis/batch/validation` `validatePodTemplateUpdate`):
//! - A Pod's spec is copied, the few updatable fields (images,
//!   `activeDeadlineSeconds`, tolerations, scheduling gates, and a
//!   negative grace period set to 1) are replaced by the old pod's, and the
//!   result must be semantically equal to the old spec: a probe, a
//!   lifecycle hook or `terminationGracePeriodSeconds` (all a fix writes)
//!   is accepted only when it equals the old pod's. Containers are matched
//!   by index and may not be added or removed, so a pointer names the same
//!   container in the old object and the new.
//! - A Job's template must be semantically equal to the old one
//!   (`ValidateImmutableField`), except, while suspended, its scheduling
//!   directives, its template's labels and annotations, and with mutable
//!   pod resources its containers' resources: never a probe, a hook or the
//!   grace period. So the same holds for it.
//!
//! Hence an operation that writes the old object's value where the update
//! sent another one turns a refused update into the one the API server
//! already stores, and one anywhere else is left out: where the update
//! already agrees with the old object there is nothing to restore, and a
//! value the old object does not have would only be refused. This is what a
//! GitOps re-apply of a file lifeguard fixed needs: it sends the file's
//! value (liveness `failureThreshold: 1`) back over the fixed one (3), and
//! the fix made again puts back exactly the stored value.
//!
//! The API server defaults what a mutation writes (a probe's
//! `successThreshold`, an `httpGet`'s `scheme`) before it stores it, so an
//! object a fix wrote whole is compared as one the old object's value
//! covers: the same members with the same values, the old object's may
//! have more.

use json_patch::PatchOperation;
use serde_json::Value;

/// The operations of `operations` (applied in order to `new`) that restore
/// the value of `old` at the place they write, each as it applies after the
/// ones kept before it. The place is the path, or the list that holds it
/// (an insertion or a removal shifts the members after it).
pub fn restoring(operations: &[PatchOperation], new: &Value, old: &Value) -> Vec<bool> {
    let mut current = new.clone();
    operations
        .iter()
        .map(|op| {
            let mut next = current.clone();
            if json_patch::patch(&mut next, std::slice::from_ref(op)).is_err() {
                return false;
            }
            let keep = match op {
                // Writes nothing: kept if it holds, as the patch needs it to.
                PatchOperation::Test(_) => true,
                // Moves a value away from `from` too: only where the old
                // object lacks it there.
                PatchOperation::Move(m) => {
                    pointer(old, m.from.as_str()).is_none() && restores(op.path().as_str(), &current, &next, old)
                }
                _ => restores(op.path().as_str(), &current, &next, old),
            };
            if keep {
                current = next;
            }
            keep
        })
        .collect()
}

/// Whether the write at `path`, which made `current` into `next`, puts
/// back the old object's value where the update sent another.
fn restores(path: &str, current: &Value, next: &Value, old: &Value) -> bool {
    let place = match path.rsplit_once('/') {
        Some((parent, _)) if pointer(current, parent).is_some_and(Value::is_array) => parent,
        _ => path,
    };
    let (before, after, stored) = (pointer(current, place), pointer(next, place), pointer(old, place));
    before != stored && covered(stored, after)
}

/// Whether `value` is `stored`, or an object (or list of them) the old
/// object's value covers: what the API server's defaulting makes of it.
fn covered(stored: Option<&Value>, value: Option<&Value>) -> bool {
    match (stored, value) {
        (None, None) => true,
        (Some(stored), Some(value)) => covers(stored, value),
        _ => false,
    }
}

fn covers(stored: &Value, value: &Value) -> bool {
    match (stored, value) {
        (Value::Object(stored), Value::Object(value)) => {
            value.iter().all(|(key, member)| stored.get(key).is_some_and(|s| covers(s, member)))
        }
        (Value::Array(stored), Value::Array(value)) => {
            stored.len() == value.len() && stored.iter().zip(value).all(|(s, v)| covers(s, v))
        }
        _ => stored == value,
    }
}

fn pointer<'v>(object: &'v Value, path: &str) -> Option<&'v Value> {
    if path.is_empty() { Some(object) } else { object.pointer(path) }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ops(patch: Value) -> Vec<PatchOperation> {
        serde_json::from_value(patch).expect("a JSON patch")
    }

    fn pod(threshold: u32, annotations: Value) -> Value {
        json!({"kind": "Pod", "metadata": {"name": "p", "annotations": annotations},
               "spec": {"containers": [{"name": "c", "image": "i",
                   "livenessProbe": {"httpGet": {"path": "/", "port": 80}, "failureThreshold": threshold}}]}})
    }

    #[test]
    fn a_fix_that_puts_back_the_stored_value_is_kept() {
        let old = pod(3, json!({"lifeguard.dev/mutated": "liveness-too-aggressive"}));
        let new = pod(1, json!({"lifeguard.dev/mutated": "liveness-too-aggressive"}));
        let patch = ops(json!([
            {"op": "replace", "path": "/spec/containers/0/livenessProbe/failureThreshold", "value": 3},
            {"op": "add", "path": "/metadata/annotations/lifeguard.dev~1mutated", "value": "liveness-too-aggressive"},
        ]));
        // The annotation is already as stored: nothing to restore there.
        assert_eq!(restoring(&patch, &new, &old), [true, false]);
    }

    #[test]
    fn a_value_the_old_object_does_not_hold_is_left_as_sent() {
        let old = pod(3, json!({}));
        let patch =
            ops(json!([{"op": "replace", "path": "/spec/containers/0/livenessProbe/failureThreshold", "value": 4}]));
        // Another value than the stored one would only be refused.
        assert_eq!(restoring(&patch, &pod(1, json!({})), &old), [false]);
        // The update already agrees with the old object: no change to make.
        let same =
            ops(json!([{"op": "replace", "path": "/spec/containers/0/livenessProbe/failureThreshold", "value": 3}]));
        assert_eq!(restoring(&same, &old, &old), [false]);
    }

    #[test]
    fn a_removal_restores_only_what_the_old_object_lacks() {
        let mut old = pod(3, json!({}));
        let mut new = old.clone();
        new["spec"]["containers"][0]["livenessProbe"]["initialDelaySeconds"] = json!(240);
        let patch = ops(json!([{"op": "remove", "path": "/spec/containers/0/livenessProbe/initialDelaySeconds"}]));
        assert_eq!(restoring(&patch, &new, &old), [true]);
        old["spec"]["containers"][0]["livenessProbe"]["initialDelaySeconds"] = json!(60);
        assert_eq!(restoring(&patch, &new, &old), [false]);
    }

    #[test]
    fn an_object_written_whole_is_covered_by_its_defaulted_stored_value() {
        let mut old = pod(3, json!({}));
        old["spec"]["containers"][0]["startupProbe"] = json!({"httpGet": {"path": "/", "port": 80, "scheme": "HTTP"},
            "periodSeconds": 5, "failureThreshold": 20, "successThreshold": 1, "timeoutSeconds": 1});
        let new = pod(3, json!({}));
        let add = |threshold: u32| {
            ops(json!([{"op": "add", "path": "/spec/containers/0/startupProbe",
                "value": {"httpGet": {"path": "/", "port": 80}, "periodSeconds": 5, "failureThreshold": threshold}}]))
        };
        assert_eq!(restoring(&add(20), &new, &old), [true]);
        assert_eq!(restoring(&add(30), &new, &old), [false]);
    }

    #[test]
    fn an_operation_after_one_left_out_applies_to_what_was_kept() {
        let old = pod(3, json!({}));
        let new = pod(1, json!({}));
        let patch = ops(json!([
            {"op": "add", "path": "/spec/containers/0/startupProbe", "value": {"periodSeconds": 5}},
            {"op": "add", "path": "/spec/containers/0/startupProbe/failureThreshold", "value": 20},
            {"op": "replace", "path": "/spec/containers/0/livenessProbe/failureThreshold", "value": 3},
        ]));
        // The probe is not stored, so its member has nowhere to go.
        assert_eq!(restoring(&patch, &new, &old), [false, false, true]);
    }

    #[test]
    fn a_list_member_counts_as_its_list() {
        let old = json!({"spec": {"tolerations": [{"key": "a"}]}});
        let new = json!({"spec": {"tolerations": [{"key": "a"}, {"key": "b"}]}});
        let remove = ops(json!([{"op": "remove", "path": "/spec/tolerations/1"}]));
        assert_eq!(restoring(&remove, &new, &old), [true]);
        let insert = ops(json!([{"op": "add", "path": "/spec/tolerations/0", "value": {"key": "a"}}]));
        // The stored list's first member, but inserting it shifts the rest.
        assert_eq!(restoring(&insert, &new, &old), [false]);
    }
}
