//! Which objects lifeguard judges: an object that carries a pod spec, sent
//! whole (not a subresource), not being deleted and (unless asked) not
//! owned by a controller. The webhook lets everything else through
//! untouched, `audit` counts the controlled objects and moves on, and the
//! exports' match conditions say the same in CEL (`vap::objects`, one
//! condition per [`OutOfScope`] reason): lifeguard never stands between the
//! cluster and its own controllers, deletions or `kubectl exec`.
//!
//! A manifest read from a file carries none of the fields the API server
//! sets (`ownerReferences` of a controller, `deletionTimestamp`): `lint`,
//! `fix` and `simulate` judge every object as written, and only the pod
//! spec decides ([`crate::model::Workload::from_object`], over
//! [`crate::model::POD_KINDS`]).

use std::fmt;

use serde_json::Value;

use crate::model::{Workload, controller_of};

/// What a caller judges beyond the default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Scope {
    /// Judge objects a controller owns too (the webhook's
    /// `--include-controlled`): by default they are judged where their
    /// template is written.
    pub include_controlled: bool,
}

/// Why an object is not judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutOfScope {
    /// A request for a subresource (`status`, `exec`, `scale`, ...).
    Subresource(String),
    /// `metadata.deletionTimestamp` is set.
    BeingDeleted,
    /// A controller owns it (`ReplicaSet/web-5d8f`).
    Controlled(String),
    /// It has no pod spec to judge.
    NoPodSpec,
}

impl OutOfScope {
    /// One of each reason, in the order the exports state them as match
    /// conditions (`vap::objects`, which must say each in CEL; a test holds
    /// this list to every reason).
    pub const ALL: [OutOfScope; 4] = [
        OutOfScope::NoPodSpec,
        OutOfScope::Controlled(String::new()),
        OutOfScope::BeingDeleted,
        OutOfScope::Subresource(String::new()),
    ];
}

impl fmt::Display for OutOfScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OutOfScope::Subresource(sub) => write!(f, "subresource {sub} is not judged"),
            OutOfScope::BeingDeleted => f.write_str("the object is being deleted"),
            OutOfScope::Controlled(owner) => {
                write!(f, "controlled by {owner}, whose template is judged where it is written")
            }
            OutOfScope::NoPodSpec => f.write_str("the object carries no pod spec"),
        }
    }
}

impl Scope {
    /// Whether a request for `subresource` (none, or empty, for the object
    /// itself) is judged: a subresource never is.
    pub fn whole(subresource: Option<&str>) -> Result<(), OutOfScope> {
        match subresource.filter(|s| !s.is_empty()) {
            Some(sub) => Err(OutOfScope::Subresource(sub.to_owned())),
            None => Ok(()),
        }
    }

    /// Whether `object` is judged, by what can be told without reading its
    /// pod spec; the engine reads that next, and [`Scope::judges`] reads it
    /// too.
    pub fn admits(&self, object: &Value) -> Result<(), OutOfScope> {
        if object.pointer("/metadata/deletionTimestamp").is_some_and(|t| !t.is_null()) {
            return Err(OutOfScope::BeingDeleted);
        }
        if !self.include_controlled
            && let Some(owner) = controller_of(object)
        {
            return Err(OutOfScope::Controlled(owner));
        }
        Ok(())
    }

    /// [`Scope::admits`], and whether the object carries a pod spec; an
    /// object of a pod-bearing kind whose pod spec does not read is in
    /// scope and broken: the engine's error.
    pub fn judges(&self, object: &Value) -> Result<Result<(), OutOfScope>, crate::error::ModelError> {
        if let Err(why) = self.admits(object) {
            return Ok(Err(why));
        }
        Ok(match Workload::from_object(object)? {
            Some(_) => Ok(()),
            None => Err(OutOfScope::NoPodSpec),
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod(meta: Value) -> Value {
        json!({"kind": "Pod", "metadata": meta, "spec": {"containers": [{"name": "c", "image": "x"}]}})
    }

    #[test]
    fn all_lists_every_reason_once() {
        // Adding a reason breaks this match until it is placed in `ALL`.
        let place = |reason: &OutOfScope| match reason {
            OutOfScope::NoPodSpec => 0,
            OutOfScope::Controlled(_) => 1,
            OutOfScope::BeingDeleted => 2,
            OutOfScope::Subresource(_) => 3,
        };
        let places: Vec<usize> = OutOfScope::ALL.iter().map(place).collect();
        assert_eq!(places, (0..OutOfScope::ALL.len()).collect::<Vec<_>>());
    }

    #[test]
    fn controller_owned_objects_are_out_unless_included() {
        let owned = pod(json!({"name": "p", "ownerReferences": [
            {"kind": "ReplicaSet", "name": "rs", "controller": false},
            {"kind": "ReplicaSet", "name": "web-1", "controller": true}]}));
        let why = Scope::default().admits(&owned);
        assert_eq!(why, Err(OutOfScope::Controlled("ReplicaSet/web-1".into())));
        assert_eq!(
            why.map_err(|e| e.to_string()),
            Err("controlled by ReplicaSet/web-1, whose template is judged where it is written".into())
        );
        assert_eq!(Scope { include_controlled: true }.admits(&owned), Ok(()));
        let not_controller = pod(json!({"name": "p", "ownerReferences": [{"kind": "X", "name": "y"}]}));
        assert_eq!(Scope::default().admits(&not_controller), Ok(()));
    }

    #[test]
    fn subresources_deletions_and_objects_without_pods_are_out() {
        let scope = Scope::default();
        let plain = pod(json!({"name": "p"}));
        assert_eq!(Scope::whole(Some("status")), Err(OutOfScope::Subresource("status".into())));
        assert_eq!(Scope::whole(Some("")), Ok(()));
        assert_eq!(Scope::whole(None), Ok(()));
        let deleting = pod(json!({"name": "p", "deletionTimestamp": "2026-01-01T00:00:00Z"}));
        assert_eq!(scope.admits(&deleting), Err(OutOfScope::BeingDeleted));
        let cm = json!({"kind": "ConfigMap", "metadata": {"name": "c"}});
        assert_eq!(scope.judges(&cm), Ok(Err(OutOfScope::NoPodSpec)));
        assert_eq!(scope.judges(&plain), Ok(Ok(())));
        let broken =
            json!({"kind": "Pod", "spec": {"containers": [{"name": "c", "livenessProbe": {"periodSeconds": "ten"}}]}});
        assert!(scope.judges(&broken).is_err_and(|e| e.pointer.contains("periodSeconds")));
        // Without reading the pod spec (the engine reads it next), only the cheap checks run.
        assert_eq!(scope.admits(&broken), Ok(()));
    }
}
