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

/// Where a custom resource keeps one of its pod templates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TemplatePath {
    /// JSON pointer of the template (the object holding `metadata` and
    /// `spec`); a `*` token stands for every item of a list or every value
    /// of a map (`/spec/workerGroupSpecs/*/template`).
    pub template: &'static str,
    /// Whether the pod spec's fields sit in the template itself (KServe's
    /// predictor: `containers` beside the component's own fields) rather
    /// than under its `spec`.
    pub inline: bool,
    /// Whether its pods run until deleted (a server, a Ray node) rather
    /// than to completion (a training replica, a job's submitter).
    pub long_running: bool,
    /// Probes its controller adds where the template has none, and whose:
    /// the pod the kubelet runs has them, so no rule reports them missing.
    pub injected_probes: Option<&'static str>,
}

const fn serving(template: &'static str) -> TemplatePath {
    TemplatePath { template, inline: false, long_running: true, injected_probes: None }
}

const fn batch(template: &'static str) -> TemplatePath {
    TemplatePath { template, inline: false, long_running: false, injected_probes: None }
}

const fn inline(template: &'static str) -> TemplatePath {
    TemplatePath { template, inline: true, long_running: true, injected_probes: None }
}

/// KubeRay's operator adds a liveness and a readiness probe (an `exec` of
/// `wget` to the raylet's and the dashboard's health endpoints) to the Ray
/// container of each head and worker group that declares none, unless the
/// operator runs with `ENABLE_PROBES_INJECTION=false` (on by default since
/// v1.1.0; ray-operator/controllers/ray/common/pod.go).
pub const KUBERAY_PROBES: &str =
    "KubeRay adds liveness and readiness probes to the Ray container (ENABLE_PROBES_INJECTION, on by default)";

const fn ray_node(template: &'static str) -> TemplatePath {
    TemplatePath { template, inline: false, long_running: true, injected_probes: Some(KUBERAY_PROBES) }
}

/// A custom resource people run GPU serving, batch or training on, and
/// where its project's CRD keeps its pod templates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CustomPodKind {
    /// The kind (`LeaderWorkerSet`).
    pub kind: &'static str,
    /// Its API group (`leaderworkerset.x-k8s.io`): a kind of the same name
    /// in another group is not read as this one.
    pub group: &'static str,
    /// Its resource, the plural in URLs (`leaderworkersets`).
    pub resource: &'static str,
    /// Its pod templates, in the order the controller creates their pods.
    pub templates: &'static [TemplatePath],
    /// The Go module and version whose CRD schema the paths are read from.
    pub source: &'static str,
}

/// Ray's head and worker groups, under `base` (a RayCluster's `spec`, a
/// RayService's `rayClusterConfig`, ...), made by KubeRay ([`ray_node`]) or
/// by a controller that runs KubeRay without its probes ([`serving`]:
/// AIBrix installs it with `ENABLE_PROBES_INJECTION=false`).
macro_rules! ray_groups {
    ($made:ident, $base:literal) => {
        [$made(concat!($base, "/headGroupSpec/template")), $made(concat!($base, "/workerGroupSpecs/*/template"))]
    };
}

/// The custom resources lifeguard reads the pod templates of. Any other
/// kind is a workload only if it has `/spec/template/spec/containers` (an
/// Argo Rollout, a Knative Service, an OpenKruise CloneSet).
pub const CUSTOM_POD_KINDS: &[CustomPodKind] = &[
    CustomPodKind {
        kind: "LeaderWorkerSet",
        group: "leaderworkerset.x-k8s.io",
        resource: "leaderworkersets",
        templates: &[
            serving("/spec/leaderWorkerTemplate/leaderTemplate"),
            serving("/spec/leaderWorkerTemplate/workerTemplate"),
        ],
        source: "sigs.k8s.io/lws v0.7.0, api/leaderworkerset/v1 (LeaderWorkerTemplate)",
    },
    CustomPodKind {
        kind: "RayCluster",
        group: "ray.io",
        resource: "rayclusters",
        templates: &ray_groups!(ray_node, "/spec"),
        source: "github.com/ray-project/kuberay/ray-operator v1.3.2, apis/ray/v1 (RayClusterSpec)",
    },
    CustomPodKind {
        kind: "RayService",
        group: "ray.io",
        resource: "rayservices",
        templates: &ray_groups!(ray_node, "/spec/rayClusterConfig"),
        source: "github.com/ray-project/kuberay/ray-operator v1.3.2, apis/ray/v1 (RayServiceSpec)",
    },
    CustomPodKind {
        kind: "RayJob",
        group: "ray.io",
        resource: "rayjobs",
        templates: &[
            ray_node("/spec/rayClusterSpec/headGroupSpec/template"),
            ray_node("/spec/rayClusterSpec/workerGroupSpecs/*/template"),
            batch("/spec/submitterPodTemplate"),
        ],
        source: "github.com/ray-project/kuberay/ray-operator v1.3.2, apis/ray/v1 (RayJobSpec)",
    },
    CustomPodKind {
        kind: "InferenceService",
        group: "serving.kserve.io",
        resource: "inferenceservices",
        templates: &[
            inline("/spec/predictor"),
            inline("/spec/predictor/workerSpec"),
            inline("/spec/transformer"),
            inline("/spec/explainer"),
        ],
        source: "github.com/kserve/kserve v0.14.1, pkg/apis/serving/v1beta1 (PredictorSpec, its workerSpec, TransformerSpec and ExplainerSpec inline a PodSpec)",
    },
    CustomPodKind {
        kind: "PyTorchJob",
        group: "kubeflow.org",
        resource: "pytorchjobs",
        templates: &[batch("/spec/pytorchReplicaSpecs/*/template")],
        source: "github.com/kubeflow/training-operator v1.9.3, pkg/apis/kubeflow.org/v1 (ReplicaSpec)",
    },
    CustomPodKind {
        kind: "TFJob",
        group: "kubeflow.org",
        resource: "tfjobs",
        templates: &[batch("/spec/tfReplicaSpecs/*/template")],
        source: "github.com/kubeflow/training-operator v1.9.3, pkg/apis/kubeflow.org/v1 (ReplicaSpec)",
    },
    CustomPodKind {
        kind: "MPIJob",
        group: "kubeflow.org",
        resource: "mpijobs",
        templates: &[batch("/spec/mpiReplicaSpecs/*/template")],
        source: "github.com/kubeflow/mpi-operator v0.6.0, pkg/apis/kubeflow/v2beta1 (ReplicaSpec)",
    },
    CustomPodKind {
        kind: "JobSet",
        group: "jobset.x-k8s.io",
        resource: "jobsets",
        templates: &[batch("/spec/replicatedJobs/*/template/spec/template")],
        source: "sigs.k8s.io/jobset v0.10.1, api/jobset/v1alpha2 (ReplicatedJob's JobTemplateSpec)",
    },
    CustomPodKind {
        kind: "RayClusterFleet",
        group: "orchestration.aibrix.ai",
        resource: "rayclusterfleets",
        templates: &ray_groups!(serving, "/spec/template/spec"),
        source: "github.com/vllm-project/aibrix v0.5.0, api/orchestration/v1alpha1 (RayClusterFleet's template is a RayClusterSpec)",
    },
    CustomPodKind {
        kind: "StormService",
        group: "orchestration.aibrix.ai",
        resource: "stormservices",
        templates: &[serving("/spec/template/spec/roles/*/template")],
        source: "github.com/vllm-project/aibrix v0.5.0, api/orchestration/v1alpha1 (StormServiceSpec's RoleSetTemplateSpec, RoleSpec)",
    },
];

/// A kind a policy declares the pod templates of (`podTemplates`): a
/// custom resource beside those of [`CUSTOM_POD_KINDS`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclaredPodKind {
    /// The kind (`SandboxTemplate`).
    pub kind: String,
    /// Its API group, any version.
    pub group: String,
    /// JSON pointers of its pod templates, `*` for every item of a list or
    /// value of a map. A template holding `containers` itself is read as
    /// a pod spec inline; else its `spec` is the pod spec.
    pub templates: Vec<String>,
    /// Its resource, the plural in admission rules, where the policy names
    /// it (the exports match the kind only then).
    pub resource: Option<String>,
    /// Whether its pods run until deleted rather than to completion.
    pub long_running: bool,
}

/// The group of an `apiVersion` (`""` for the core group).
pub fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

/// The custom pod-bearing kind of an object's `kind` and `apiVersion`'s
/// group, if lifeguard reads it.
pub fn custom_pod_kind(kind: &str, api_version: &str) -> Option<&'static CustomPodKind> {
    let group = group_of(api_version);
    CUSTOM_POD_KINDS.iter().find(|k| k.kind == kind && k.group == group)
}

/// Whether some custom pod-bearing kind is named `kind`, whatever its
/// group (the loader's skim builds such a document whole).
pub fn names_custom_pod_kind(kind: &str) -> bool {
    CUSTOM_POD_KINDS.iter().any(|k| k.kind == kind)
}

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
    fn custom_kinds_are_unique_and_known_by_their_group() {
        for (i, a) in CUSTOM_POD_KINDS.iter().enumerate() {
            for b in &CUSTOM_POD_KINDS[i + 1..] {
                assert_ne!((a.group, a.kind), (b.group, b.kind));
            }
            assert!(pod_kind(a.kind).is_none(), "{} is not a built-in kind", a.kind);
            assert_eq!(a.resource, format!("{}s", a.kind.to_lowercase()), "{}", a.kind);
            assert!(a.templates.iter().all(|t| t.template.starts_with("/spec/")), "{}", a.kind);
        }
        assert!(custom_pod_kind("LeaderWorkerSet", "leaderworkerset.x-k8s.io/v1").is_some());
        assert!(custom_pod_kind("RayCluster", "ray.io/v1").is_some());
        // The same kind in another group is not read as this one.
        assert!(custom_pod_kind("RayCluster", "example.com/v1").is_none());
        assert!(custom_pod_kind("RayCluster", "v1").is_none());
        assert!(names_custom_pod_kind("StormService"));
    }

    #[test]
    fn only_the_listed_kinds_are_named() {
        assert!(names_pod_kind("CronJob"));
        for other in ["Service", "ConfigMap", "Rollout", "deployment", "Deployments", ""] {
            assert!(!names_pod_kind(other), "{other}");
        }
    }
}
