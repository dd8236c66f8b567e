//! The variables of a slot's policy objects: the pod's (its spec,
//! metadata, containers and their facts, from [`crate::cel::fragments`]),
//! then those a rule's checks share (`probe-endpoint-reused`'s handlers).

use crate::cel::templates::Slot;
use crate::policy::Policy;

/// Every variable of the slot's objects, in the order they are declared.
pub(crate) fn variables(policy: &Policy, slot: &Slot) -> Vec<(&'static str, String)> {
    let mut all = crate::cel::fragments::pod_variables(policy, slot);
    all.extend(crate::rules::probe_endpoint_reused::cel::variables(policy));
    all
}
