//! The pod-bearing kinds of Kubernetes itself: the one list that says
//! which built-in kinds lifeguard judges, where each keeps its pod
//! template, and how the API serves it. The linter's reader, `audit`'s
//! listing, the exports' match rules and the webhook's tests read it; the
//! chart's webhook rules and audit RBAC are checked against it by a test
//! (`tests/tests/deploy.rs`), as YAML cannot read Rust.
//!
//! Any other kind is a workload only if it has
//! `spec.template.spec.containers` (an Argo Rollout, a CloneSet).

/// One built-in kind that carries a pod spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PodKind {
    /// The kind (`Deployment`).
    pub kind: &'static str,
    /// Its API group (`""` for the core group).
    pub group: &'static str,
    /// Its API version.
    pub version: &'static str,
    /// Its resource, the plural in URLs and admission rules (`deployments`).
    pub resource: &'static str,
    /// The JSON pointer of its pod template (`""` for a Pod, which is one).
    pub template: &'static str,
    /// The JSON pointer of its pod spec.
    pub spec: &'static str,
}

const fn kind(
    kind: &'static str,
    group: &'static str,
    resource: &'static str,
    template: &'static str,
    spec: &'static str,
) -> PodKind {
    PodKind { kind, group, version: "v1", resource, template, spec }
}

const TEMPLATE: &str = "/spec/template";
const TEMPLATE_SPEC: &str = "/spec/template/spec";

/// Every built-in pod-bearing kind, in the order `audit` reads them (the
/// controllers people write first, bare Pods and PodTemplates last).
pub const POD_KINDS: [PodKind; 9] = [
    kind("Deployment", "apps", "deployments", TEMPLATE, TEMPLATE_SPEC),
    kind("StatefulSet", "apps", "statefulsets", TEMPLATE, TEMPLATE_SPEC),
    kind("DaemonSet", "apps", "daemonsets", TEMPLATE, TEMPLATE_SPEC),
    kind("ReplicaSet", "apps", "replicasets", TEMPLATE, TEMPLATE_SPEC),
    kind("ReplicationController", "", "replicationcontrollers", TEMPLATE, TEMPLATE_SPEC),
    kind("Job", "batch", "jobs", TEMPLATE, TEMPLATE_SPEC),
    kind("CronJob", "batch", "cronjobs", "/spec/jobTemplate/spec/template", "/spec/jobTemplate/spec/template/spec"),
    kind("Pod", "", "pods", "", "/spec"),
    kind("PodTemplate", "", "podtemplates", "/template", "/template/spec"),
];

/// The built-in pod-bearing kind named `kind`, if it is one.
pub fn pod_kind(kind: &str) -> Option<&'static PodKind> {
    POD_KINDS.iter().find(|k| k.kind == kind)
}

/// Whether `kind` is a built-in pod-bearing kind: an object of any other
/// kind is a workload only if it has `/spec/template/spec/containers` (the
/// loader's skim relies on this).
pub fn names_pod_kind(kind: &str) -> bool {
    pod_kind(kind).is_some()
}

/// [`POD_KINDS`]' resources by API group and version, the groups by name
/// (the core group first) and each group's in [`POD_KINDS`]' order: the
/// shape of an admission rule's `apiGroups`, `apiVersions` and `resources`.
pub fn resources_by_group() -> Vec<((&'static str, &'static str), Vec<&'static str>)> {
    let mut groups: std::collections::BTreeMap<(&'static str, &'static str), Vec<&'static str>> = Default::default();
    for k in &POD_KINDS {
        groups.entry((k.group, k.version)).or_default().push(k.resource);
    }
    groups.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_resources_are_unique_and_every_spec_is_under_its_template() {
        for (i, a) in POD_KINDS.iter().enumerate() {
            for b in &POD_KINDS[i + 1..] {
                assert_ne!(a.kind, b.kind);
                assert_ne!((a.group, a.resource), (b.group, b.resource));
            }
            assert_eq!(a.spec, format!("{}/spec", a.template), "{}", a.kind);
            assert_eq!(a.resource, format!("{}s", a.kind.to_lowercase()), "{}", a.kind);
        }
    }

    #[test]
    fn groups_hold_every_resource_once() {
        let groups = resources_by_group();
        assert_eq!(groups.iter().map(|((g, _), _)| *g).collect::<Vec<_>>(), ["", "apps", "batch"]);
        assert_eq!(groups.iter().map(|(_, r)| r.len()).sum::<usize>(), POD_KINDS.len());
        assert_eq!(groups[0].1, ["replicationcontrollers", "pods", "podtemplates"]);
    }

    #[test]
    fn only_the_listed_kinds_are_named() {
        assert!(names_pod_kind("CronJob"));
        for other in ["Service", "ConfigMap", "Rollout", "deployment", "Deployments", ""] {
            assert!(!names_pod_kind(other), "{other}");
        }
    }
}
