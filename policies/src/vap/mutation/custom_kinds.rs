//! Which custom kinds' pod templates `export map` fixes: those whose fixes
//! the cluster tests apply through the API server with the kind's CRD
//! installed, each template in the slot `export vap` reads it in; the
//! rest, with why.

use crate::cel::templates::{Slot, SpecAt};
use crate::policy::Policy;

/// The custom kinds whose fixes `tests/tests/cluster_map` applies through
/// the API server with their CRD (of the version
/// [`crate::model::CUSTOM_POD_KINDS`] names) installed: LeaderWorkerSet's
/// (sigs.k8s.io/lws v0.7.0, its chart's CRD) and KubeRay's (ray-operator
/// v1.3.2, config/crd/bases, in v1 and v1alpha1). A JSON Patch needs no
/// more of a CRD than the pod template's place, but a kind is fixed in
/// process only once a test has seen the API server store its fixes.
pub const FIXED_CUSTOM_KINDS: &[(&str, &str)] = &[
    ("LeaderWorkerSet", "leaderworkerset.x-k8s.io"),
    ("RayCluster", "ray.io"),
    ("RayService", "ray.io"),
    ("RayJob", "ray.io"),
];

/// Why `export map` fixes no other custom kind's pod template.
pub const NOT_FIXED_CUSTOM_KIND: &str = "export map fixes a custom kind only once lifeguard's tests have seen the API \
     server store its fixes with the kind's CRD installed, LeaderWorkerSet's and KubeRay's so far; lifeguard fix and \
     the webhook's /mutate fix it";

/// Why `export map` fixes no kind a policy declares.
const DECLARED: &str = "a declared kind's pod spec is the template's own fields or its `spec` by the object, where the \
     export's patch paths are fixed by the template, and its CRD is not known; lifeguard fix and the webhook's /mutate \
     fix it";

/// The template slots `export map` fixes: those of `export vap` with the
/// kinds of [`FIXED_CUSTOM_KINDS`] alone (not one a policy declares: its pod
/// spec's place depends on the object); the templates left out, and why.
pub(super) fn slots(policy: &Policy) -> (Vec<Slot>, Vec<(String, String)>) {
    let reached = crate::cel::templates::templates(policy);
    let mut left_out = reached.left_out;
    let mut slots = Vec::new();
    for mut slot in reached.slots {
        let (kept, not): (Vec<_>, Vec<_>) = slot.customs.into_iter().partition(|r| {
            r.spec != SpecAt::Either && FIXED_CUSTOM_KINDS.iter().any(|(k, g)| *k == r.kind && *g == r.group)
        });
        left_out.extend(not.into_iter().map(|r| {
            let why = if r.spec == SpecAt::Either { DECLARED } else { NOT_FIXED_CUSTOM_KIND };
            (r.name(), why.to_owned())
        }));
        slot.customs = kept;
        if slot.builtins || !slot.customs.is_empty() {
            slots.push(slot);
        }
    }
    // The kept slots are numbered again, so their names run on: NAME-fix, NAME-fix-2, ...
    for (index, slot) in slots.iter_mut().enumerate() {
        slot.index = index;
    }
    (slots, left_out)
}
