//! Finding the pod spec inside any pod-bearing object.
//!
//! Over 400 lines: `Workload` and `ContainerView`, which every rule reads, and
//! finding their pod spec (built-in kinds, declared and known custom resources,
//! `*` patterns) share private helpers (`slots`, `walk`, `Location`); the tests
//! (about 80 lines) place a pod spec in every kind.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, PodSpec};
use serde::Deserialize;
use serde_json::Value;

use super::command::simple_commands;
use super::duration::parse_seconds;
use super::pointer::join;
use super::typed::PodSpecFields;
use crate::error::ModelError;

/// A pod spec and where it sits in its object.
#[derive(Debug, Clone)]
pub struct Workload {
    /// `kind` of the object (`Deployment`, `Pod`, ...); empty when unset.
    pub kind: String,
    /// `metadata.namespace`
    pub namespace: Option<String>,
    /// `metadata.name`
    pub name: Option<String>,
    /// Pointer to the pod template (the object holding `metadata` and `spec`);
    /// empty for a Pod, whose template is the object itself.
    pub template_pointer: String,
    /// Pointer to the pod spec.
    pub spec_pointer: String,
    /// The pod spec, typed; only the fields rules read are filled in
    /// (containers' names, images, commands, ports, env, resources, probes,
    /// lifecycle, restart policy; the pod's grace period, restart policy and readiness gates).
    pub spec: PodSpec,
    /// Labels of the pod template.
    pub labels: BTreeMap<String, String>,
    /// Annotations of the object and of its pod template (template wins).
    pub annotations: BTreeMap<String, String>,
    /// Where each `lifeguard.dev/` annotation was read (object or template).
    lifeguard_annotations: BTreeMap<String, String>,
    /// Whether the pod is meant to run until deleted (not a Job, CronJob or
    /// a pod with `restartPolicy` Never/OnFailure).
    pub long_running: bool,
    /// Probes the object's controller adds to the pod where the template
    /// has none (KubeRay's), and whose: no rule reports them missing.
    pub injected_probes: Option<&'static str>,
    /// A Deployment's rollout settings; `None` for any other kind.
    pub rollout: Option<super::Rollout>,
    /// Probed containers, computed once (every rule walks them).
    slots: Vec<Slot>,
}

/// Where a probed container sits.
#[derive(Debug, Clone)]
struct Slot {
    index: usize,
    sidecar: bool,
    pointer: String,
}

fn slots(spec: &PodSpec, spec_pointer: &str) -> Vec<Slot> {
    let main = spec.containers.iter().enumerate().map(|(i, _)| Slot {
        index: i,
        sidecar: false,
        pointer: join(spec_pointer, &["containers", &i.to_string()]),
    });
    let sidecars = spec
        .init_containers
        .iter()
        .flatten()
        .enumerate()
        .filter(|(_, c)| c.restart_policy.as_deref() == Some("Always"))
        .map(|(i, _)| Slot {
            index: i,
            sidecar: true,
            pointer: join(spec_pointer, &["initContainers", &i.to_string()]),
        });
    main.chain(sidecars).collect()
}

/// A container the kubelet probes: a regular container or a sidecar
/// (an init container with `restartPolicy: Always`).
#[derive(Debug, Clone, Copy)]
pub struct ContainerView<'a> {
    /// The container.
    pub container: &'a Container,
    /// Pointer to the container within the object.
    pub pointer: &'a str,
    /// Whether it is a sidecar init container.
    pub sidecar: bool,
}

impl ContainerView<'_> {
    /// The container's name (`<unnamed>` when empty).
    pub fn name(&self) -> &str {
        if self.container.name.is_empty() { "<unnamed>" } else { &self.container.name }
    }

    /// Pointer to a field below the container.
    pub fn at(&self, tokens: &[&str]) -> String {
        join(self.pointer, tokens)
    }

    /// The container's image, or "" when unset.
    pub fn image(&self) -> &str {
        self.container.image.as_deref().unwrap_or("")
    }

    /// GPUs requested or limited (`nvidia.com/gpu`, `amd.com/gpu`, any `*/gpu`).
    pub fn gpu_resource(&self) -> Option<&str> {
        let res = self.container.resources.as_ref()?;
        [res.limits.as_ref(), res.requests.as_ref()]
            .into_iter()
            .flatten()
            .flat_map(|m| m.iter())
            .find(|(k, q)| (k.ends_with("/gpu") || k.as_str() == "gpu") && q.0.trim() != "0")
            .map(|(k, _)| k.as_str())
    }

    /// Whether the container declares any port.
    pub fn declares_ports(&self) -> bool {
        self.container.ports.as_ref().is_some_and(|p| !p.is_empty())
    }

    /// Whether the container's own command does nothing but `sleep`
    /// (`sleep infinity`, `sh -c "sleep 3600"`): a debug or toolbox pod
    /// started from a serving image, not the server.
    pub fn only_sleeps(&self) -> bool {
        let Some(command) = self.container.command.as_ref().filter(|c| !c.is_empty()) else {
            return false;
        };
        let argv: Vec<String> = command.iter().chain(self.container.args.iter().flatten()).cloned().collect();
        let programs = simple_commands(&argv);
        !programs.is_empty() && programs.iter().all(|p| p.program == "sleep")
    }

    /// Plain `value` of the first env var whose name matches, with its name.
    pub fn env_seconds(&self, matches: impl Fn(&str) -> bool) -> Option<(String, i64)> {
        self.container
            .env
            .iter()
            .flatten()
            .filter(|e| matches(&e.name))
            .find_map(|e| e.value.as_deref().and_then(parse_seconds).map(|s| (e.name.clone(), s)))
    }
}

/// Where one pod template and its spec live in an object.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Location {
    template: String,
    spec: String,
    /// Whether its kind runs the pods until deleted (the restart policy
    /// has the last word).
    long_running: bool,
    injected_probes: Option<&'static str>,
}

/// Where the pod templates live in an object: a built-in kind's one place,
/// a known custom resource's templates that are there, else
/// `/spec/template` when it holds containers (an Argo Rollout, a Knative
/// Service, a CloneSet).
fn template_locations(object: &Value, kind: &str, declared: &[super::DeclaredPodKind]) -> Vec<Location> {
    if let Some(k) = super::pod_kind(kind) {
        let long_running = !matches!(kind, "Job" | "CronJob");
        let (template, spec) = (k.template.to_owned(), k.spec.to_owned());
        return vec![Location { template, spec, long_running, injected_probes: None }];
    }
    let api_version = object.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    // A policy's declaration comes first: it may read a kind lifeguard
    // knows differently (a fork, a newer version's template).
    let group = super::group_of(api_version);
    if let Some(d) = declared.iter().find(|d| d.kind == kind && d.group == group) {
        let specs = d.templates.iter().flat_map(|pattern| pod_specs(object, pattern, None));
        return specs
            .map(|(template, spec)| Location { template, spec, long_running: d.long_running, injected_probes: None })
            .collect();
    }
    if let Some(k) = super::custom_pod_kind(kind, api_version) {
        let mut out = Vec::new();
        for t in k.templates {
            for (template, spec) in pod_specs(object, t.template, Some(t.inline)) {
                let (long_running, injected_probes) = (t.long_running, t.injected_probes);
                out.push(Location { template, spec, long_running, injected_probes });
            }
        }
        return out;
    }
    match walk(object, "/spec/template/spec/containers") {
        Some(_) => vec![Location {
            template: "/spec/template".to_owned(),
            spec: "/spec/template/spec".to_owned(),
            long_running: true,
            injected_probes: None,
        }],
        None => Vec::new(),
    }
}

/// The templates `pattern` names in `object` that hold a pod spec, each as
/// `(template, spec)`: the spec is the template itself when `inline`
/// (`None`: when the template's own fields hold `containers`), else its
/// `spec`. A template without containers (a KServe predictor that names
/// only its model) has no pod spec to read.
fn pod_specs<'o>(
    object: &'o Value,
    pattern: &str,
    inline: Option<bool>,
) -> impl Iterator<Item = (String, String)> + 'o {
    expand(object, pattern).into_iter().filter_map(move |template| {
        let holds = |pointer: &str| lookup(object, pointer).and_then(|v| v.get("containers")).is_some();
        let spec =
            if inline.unwrap_or_else(|| holds(&template)) { template.clone() } else { join(&template, &["spec"]) };
        holds(&spec).then_some((template, spec))
    })
}

/// The pointers a pattern names in `object`: each `*` token stands for
/// every item of a list or every value of a map, in order.
fn expand(object: &Value, pattern: &str) -> Vec<String> {
    let mut found = vec![(String::new(), object)];
    for token in pattern.split('/').skip(1) {
        let mut next = Vec::new();
        for (at, value) in found {
            match (token, value) {
                ("*", Value::Array(items)) => {
                    next.extend(items.iter().enumerate().map(|(i, v)| (join(&at, &[&i.to_string()]), v)));
                }
                ("*", Value::Object(map)) => next.extend(map.iter().map(|(k, v)| (join(&at, &[k]), v))),
                (_, Value::Object(map)) => next.extend(map.get(token).map(|v| (join(&at, &[token]), v))),
                _ => {}
            }
        }
        found = next;
    }
    found.into_iter().map(|(at, _)| at).collect()
}

/// `Value::pointer`, by [`walk`] where the pointer has no escapes.
fn lookup<'v>(value: &'v Value, pointer: &str) -> Option<&'v Value> {
    if pointer.contains('~') { value.pointer(pointer) } else { walk(value, pointer) }
}

/// `Value::pointer` for pointers without escapes, without allocating a
/// string per token (it runs for every object of every input).
fn walk<'v>(value: &'v Value, pointer: &str) -> Option<&'v Value> {
    pointer.split('/').skip(1).try_fold(value, |v, token| match v {
        Value::Object(map) => map.get(token),
        Value::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    })
}

impl Workload {
    /// Extracts the (first) pod spec of an object. `Ok(None)` for objects
    /// that carry no pod spec (Services, ConfigMaps, a Deployment without
    /// template, ...). A custom resource with several pod templates (a
    /// LeaderWorkerSet's leader and workers) has [`Workload::all_from_object`].
    pub fn from_object(object: &Value) -> Result<Option<Workload>, ModelError> {
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or_default();
        match template_locations(object, kind, &[]).into_iter().next() {
            Some(at) => Workload::at(object, kind, &at),
            None => Ok(None),
        }
    }

    /// Every pod spec of an object, one workload each, in the order its
    /// kind lists them ([`super::CUSTOM_POD_KINDS`]); empty for an object
    /// without any. The first that cannot be read is the error.
    pub fn all_from_object(object: &Value) -> Result<Vec<Workload>, ModelError> {
        Workload::all_declared(object, &[])
    }

    /// [`Workload::all_from_object`], reading the pod templates of the kinds
    /// a policy declares (`podTemplates`) too.
    pub fn all_declared(object: &Value, declared: &[super::DeclaredPodKind]) -> Result<Vec<Workload>, ModelError> {
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or_default();
        let mut out = Vec::new();
        for at in template_locations(object, kind, declared) {
            out.extend(Workload::at(object, kind, &at)?);
        }
        Ok(out)
    }

    /// The workload of the pod template at `at`.
    fn at(object: &Value, kind: &str, at: &Location) -> Result<Option<Workload>, ModelError> {
        let (template_pointer, spec_pointer) = (at.template.as_str(), at.spec.as_str());
        let Some(spec_value) = lookup(object, spec_pointer) else {
            return Ok(None);
        };
        // The plain deserializer is fast; the path-tracking one only runs to
        // explain a failure.
        let spec: PodSpec = match PodSpecFields::deserialize(spec_value) {
            Ok(fields) => fields.into(),
            Err(plain) => {
                let err = match serde_path_to_error::deserialize::<_, PodSpecFields>(spec_value) {
                    Err(e) => ModelError {
                        pointer: format!("{spec_pointer}{}", path_to_pointer(e.path())),
                        message: crate::wording::plain_words(&e.inner().to_string()),
                    },
                    Ok(_) => ModelError {
                        pointer: spec_pointer.to_owned(),
                        message: crate::wording::plain_words(&plain.to_string()),
                    },
                };
                return Err(err);
            }
        };
        let meta = object.get("metadata");
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
        let template_meta = lookup(object, template_pointer).and_then(|t| t.get("metadata"));
        let mut annotations = string_map(meta.and_then(|m| m.get("annotations")));
        let mut lifeguard_annotations = BTreeMap::new();
        let mut note = |base: &str, map: &BTreeMap<String, String>| {
            for key in map.keys().filter(|k| k.starts_with("lifeguard.dev/")) {
                lifeguard_annotations.insert(key.clone(), join(base, &["metadata", "annotations", key]));
            }
        };
        note("", &annotations);
        if !template_pointer.is_empty() {
            let template = string_map(template_meta.and_then(|m| m.get("annotations")));
            note(template_pointer, &template);
            annotations.extend(template);
        }
        let restart = spec.restart_policy.as_deref().unwrap_or("Always");
        let long_running = at.long_running && restart == "Always";
        Ok(Some(Workload {
            kind: kind.to_owned(),
            namespace: text(meta.and_then(|m| m.get("namespace"))),
            name: text(meta.and_then(|m| m.get("name"))),
            template_pointer: template_pointer.to_owned(),
            spec_pointer: spec_pointer.to_owned(),
            labels: string_map(template_meta.and_then(|m| m.get("labels"))),
            annotations,
            lifeguard_annotations,
            long_running,
            injected_probes: at.injected_probes,
            rollout: super::Rollout::of(object, kind),
            slots: slots(&spec, spec_pointer),
            spec,
        }))
    }

    /// The containers the kubelet probes: regular containers, then sidecar
    /// init containers (`restartPolicy: Always`), each with its pointer.
    pub fn containers(&self) -> impl Iterator<Item = ContainerView<'_>> {
        self.slots.iter().filter_map(|slot| {
            let list = if slot.sidecar { self.spec.init_containers.as_deref()? } else { &self.spec.containers };
            Some(ContainerView { container: list.get(slot.index)?, pointer: &slot.pointer, sidecar: slot.sidecar })
        })
    }

    /// Runs `f` on each probed container.
    pub fn for_each_container(&self, f: impl FnMut(ContainerView<'_>)) {
        self.containers().for_each(f);
    }

    /// The init containers that run to completion (any but `restartPolicy:
    /// Always`), each with its pointer: the kubelet never probes them, so
    /// [`Workload::containers`] leaves them out, and the API server refuses
    /// a probe on one.
    pub fn run_to_completion_init_containers(&self) -> impl Iterator<Item = (String, &Container)> {
        self.spec
            .init_containers
            .iter()
            .flatten()
            .enumerate()
            .filter(|(_, c)| c.restart_policy.as_deref() != Some("Always"))
            .map(|(i, c)| (join(&self.spec_pointer, &["initContainers", &i.to_string()]), c))
    }

    /// An annotation read as seconds; `Err` holds the raw value when it is not a duration.
    pub fn annotation_seconds(&self, key: &str) -> Option<Result<i64, String>> {
        self.annotations.get(key).map(|raw| parse_seconds(raw).ok_or_else(|| raw.clone()))
    }

    /// Pointer to an annotation on the pod template (where lifeguard's own
    /// annotations belong).
    pub fn template_annotation_pointer(&self, key: &str) -> String {
        join(&self.template_pointer, &["metadata", "annotations", key])
    }

    /// Pointer to a `lifeguard.dev/` annotation where it was read (the pod
    /// template wins over the object), or where it belongs when absent.
    pub fn annotation_pointer(&self, key: &str) -> String {
        self.lifeguard_annotations.get(key).cloned().unwrap_or_else(|| self.template_annotation_pointer(key))
    }

    /// `terminationGracePeriodSeconds`, defaulted to 30.
    pub fn grace_period(&self) -> i64 {
        self.spec.termination_grace_period_seconds.unwrap_or(30)
    }

    /// `Kind/namespace/name` for messages.
    pub fn display_name(&self) -> String {
        object_label(&self.kind, self.namespace.as_deref(), self.name.as_deref())
    }
}

/// `Kind/namespace/name` (or `Kind/name`), the one way every front end names
/// an object; `<no kind>` and `<unnamed>` stand in for what is missing.
pub fn object_label(kind: &str, namespace: Option<&str>, name: Option<&str>) -> String {
    ObjectLabel { kind, namespace, name }.to_string()
}

/// [`object_label`] written where it is displayed: a report of thousands
/// of findings writes it in place rather than building a string for each.
#[derive(Debug, Clone, Copy)]
pub struct ObjectLabel<'a> {
    /// `kind` (empty when unset).
    pub kind: &'a str,
    /// `metadata.namespace`
    pub namespace: Option<&'a str>,
    /// `metadata.name`
    pub name: Option<&'a str>,
}

impl std::fmt::Display for ObjectLabel<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = if self.kind.is_empty() { "<no kind>" } else { self.kind };
        let name = self.name.unwrap_or("<unnamed>");
        match self.namespace {
            Some(ns) => write!(f, "{kind}/{ns}/{name}"),
            None => write!(f, "{kind}/{name}"),
        }
    }
}

/// [`object_label`] of an object given as JSON.
pub fn object_label_of(object: &Value) -> String {
    let text = |p: &str| object.pointer(p).and_then(Value::as_str);
    object_label(text("/kind").unwrap_or_default(), text("/metadata/namespace"), text("/metadata/name"))
}

fn string_map(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_object)
        .map(|m| m.iter().filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned()))).collect())
        .unwrap_or_default()
}

/// Turns a serde path (`containers[0].ports`) into a JSON pointer suffix.
fn path_to_pointer(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => {
                out.push('/');
                out.push_str(&index.to_string());
            }
            Segment::Map { key } => {
                out.push('/');
                out.push_str(&super::pointer::escape_token(key));
            }
            Segment::Enum { .. } | Segment::Unknown => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_pod_spec_is_found_where_each_kind_keeps_it() {
        let c = serde_json::json!({"containers": [{"name": "c", "image": "x"}]});
        let cases = [
            (serde_json::json!({"kind": "Pod", "spec": c}), "", "/spec"),
            (serde_json::json!({"kind": "PodTemplate", "template": {"spec": c}}), "/template", "/template/spec"),
            (
                serde_json::json!({"kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": {"spec": c}}}}}),
                "/spec/jobTemplate/spec/template",
                "/spec/jobTemplate/spec/template/spec",
            ),
            (
                serde_json::json!({"kind": "Deployment", "spec": {"template": {"spec": c}}}),
                "/spec/template",
                "/spec/template/spec",
            ),
            // Not a built-in kind: found by its template's containers.
            (
                serde_json::json!({"kind": "Rollout", "spec": {"template": {"spec": c}}}),
                "/spec/template",
                "/spec/template/spec",
            ),
        ];
        for (object, template, spec) in cases {
            let w = super::Workload::from_object(&object).ok().flatten().unwrap_or_else(|| panic!("{object}"));
            assert_eq!((w.template_pointer.as_str(), w.spec_pointer.as_str()), (template, spec), "{object}");
        }
        // A built-in kind is not read at another kind's place.
        let misplaced = serde_json::json!({"kind": "CronJob", "spec": {"template": {"spec": c}}});
        assert!(matches!(super::Workload::from_object(&misplaced), Ok(None)));
        let config = serde_json::json!({"kind": "ConfigMap", "data": {"spec": "x"}});
        assert!(matches!(super::Workload::from_object(&config), Ok(None)));
    }

    #[test]
    fn every_pod_template_of_a_known_custom_resource_is_a_workload() {
        let c = serde_json::json!({"containers": [{"name": "c", "image": "x"}]});
        let read = |object: serde_json::Value| -> Vec<(String, bool)> {
            let all = super::Workload::all_from_object(&object).unwrap_or_else(|e| panic!("{object}: {e:?}"));
            all.into_iter().map(|w| (w.spec_pointer, w.long_running)).collect()
        };
        let lws = serde_json::json!({"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
            "spec": {"leaderWorkerTemplate": {"leaderTemplate": {"spec": c}, "workerTemplate": {"spec": c}}}});
        assert_eq!(
            read(lws),
            [
                ("/spec/leaderWorkerTemplate/leaderTemplate/spec".to_owned(), true),
                ("/spec/leaderWorkerTemplate/workerTemplate/spec".to_owned(), true)
            ]
        );
        // Every worker group, and a RayJob's submitter, which runs to completion.
        let job = serde_json::json!({"apiVersion": "ray.io/v1", "kind": "RayJob", "spec": {
            "rayClusterSpec": {"headGroupSpec": {"template": {"spec": c}},
                "workerGroupSpecs": [{"template": {"spec": c}}, {"template": {"spec": c}}]},
            "submitterPodTemplate": {"spec": c}}});
        let read_job = read(job);
        assert_eq!(read_job.len(), 4, "{read_job:?}");
        assert_eq!(read_job[2], ("/spec/rayClusterSpec/workerGroupSpecs/1/template/spec".to_owned(), true));
        assert_eq!(read_job[3], ("/spec/submitterPodTemplate/spec".to_owned(), false));
        // KServe inlines the pod spec; a predictor that names only its model has none.
        let isvc = |predictor: serde_json::Value| {
            serde_json::json!({"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
                "spec": {"predictor": predictor}})
        };
        assert_eq!(read(isvc(c.clone())), [("/spec/predictor".to_owned(), true)]);
        assert!(read(isvc(serde_json::json!({"model": {"modelFormat": {"name": "sklearn"}}}))).is_empty());
        // A training job's replicas, keyed by their type.
        let pytorch = serde_json::json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "spec": {"pytorchReplicaSpecs": {"Master": {"template": {"spec": c}}, "Worker": {"template": {"spec": c}}}}});
        assert_eq!(read(pytorch).len(), 2);
        // The same kind in another group is not read as the known one.
        let other = serde_json::json!({"apiVersion": "example.com/v1", "kind": "RayCluster",
            "spec": {"headGroupSpec": {"template": {"spec": c}}}});
        assert!(read(other).is_empty());
    }
}
