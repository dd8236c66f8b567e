//! Which pod templates of custom resources the exports read, and how: the
//! known kinds' ([`crate::model::CUSTOM_POD_KINDS`]) and those the policy
//! declares (`podTemplates`), each where CEL reaches the template as the
//! linter reads it.
//!
//! A policy's variables (`podSpec`, `containers`, ...) hold one pod spec
//! per object, so the templates are split in slots: slot 0 is every kind's
//! first template (the built-in kinds' one, `NAME-deny` and `NAME-warn`),
//! slot `k` the `k+1`-th of the kinds that have one (`NAME-deny-K+1`). A
//! template behind a `*` (every item of a list, every value of a map: Ray's
//! worker groups, a training job's replicas) is not one pod spec but any
//! number, which per-object variables cannot hold: it is left out, and
//! said so.

use crate::model::{CUSTOM_POD_KINDS, TemplatePath};
use crate::policy::Policy;

/// Where a reached template keeps its pod spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SpecAt {
    /// Under the template's `spec`.
    Under,
    /// In the template's own fields (KServe's components).
    Inline,
    /// Inline when the template's own fields hold `containers`, else under
    /// its `spec` (a declared kind, as the linter reads it).
    Either,
}

/// One pod template of a custom kind that CEL reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reached {
    /// The kind (`LeaderWorkerSet`).
    pub(crate) kind: String,
    /// Its API group.
    pub(crate) group: String,
    /// Its resource (`leaderworkersets`).
    pub(crate) resource: String,
    /// The JSON pointer of the template.
    pub(crate) pointer: String,
    /// The template as a CEL path (`object.spec.leaderWorkerTemplate.leaderTemplate`).
    pub(crate) path: String,
    /// Where its pod spec is.
    pub(crate) spec: SpecAt,
    /// Whether its pods run until deleted (the restart policy has the last word).
    pub(crate) long_running: bool,
}

impl Reached {
    /// `Kind (group) /pointer`, as the exports' headers name it.
    pub(crate) fn name(&self) -> String {
        format!("{} ({}) {}", self.kind, self.group, self.pointer)
    }

    /// A CEL condition that holds for an object of this kind and group.
    pub(crate) fn is_kind(&self) -> String {
        let group = if self.group.is_empty() {
            "!object.apiVersion.contains('/')".to_owned()
        } else {
            format!("object.apiVersion.startsWith({})", super::fragments::quoted(&format!("{}/", self.group)))
        };
        format!("(object.kind == {} && {group})", super::fragments::quoted(&self.kind))
    }

    /// The pod spec, in CEL.
    pub(crate) fn spec(&self) -> String {
        let t = &self.path;
        match self.spec {
            SpecAt::Under => format!("{t}.spec"),
            SpecAt::Inline => t.clone(),
            SpecAt::Either => format!("(has({t}.containers) ? {t} : {t}.spec)"),
        }
    }

    /// Whether the template is there and its pod spec holds `containers`
    /// (the linter reads no other), in CEL.
    pub(crate) fn has_containers(&self) -> String {
        let present = super::fragments::present;
        let t = &self.path;
        match self.spec {
            SpecAt::Under => format!("({})", present(&format!("{t}.spec.containers"))),
            SpecAt::Inline => format!("({})", present(&format!("{t}.containers"))),
            SpecAt::Either => {
                format!("({} || {})", present(&format!("{t}.containers")), present(&format!("{t}.spec.containers")))
            }
        }
    }
}

/// One slot: the objects `NAME-deny`/`NAME-warn` (slot 0, with the
/// built-in kinds) or `NAME-deny-K`/`NAME-warn-K` (slot `K-1`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Slot {
    /// 0 for every kind's first template.
    pub(crate) index: usize,
    /// Whether the built-in kinds are read here (slot 0).
    pub(crate) builtins: bool,
    /// The custom kinds' templates read here, one per kind.
    pub(crate) customs: Vec<Reached>,
}

impl Slot {
    /// The built-in kinds alone.
    #[cfg(test)]
    pub(crate) fn builtins_only() -> Slot {
        Slot { index: 0, builtins: true, customs: Vec::new() }
    }

    /// The suffix of its objects' names: `""`, then `-2`, `-3`, ...
    pub(crate) fn suffix(&self) -> String {
        if self.index == 0 { String::new() } else { format!("-{}", self.index + 1) }
    }
}

/// What the exports read of the custom kinds: the slots, each template
/// carried (`Kind (group) /pointer`), and each left out with why.
#[derive(Debug, Clone, Default)]
pub(crate) struct Templates {
    /// Slot 0 first; always at least it.
    pub(crate) slots: Vec<Slot>,
    /// `Kind (group) /pointer` of each template left out, and why.
    pub(crate) left_out: Vec<(String, String)>,
}

/// Why a template behind a `*` is left out.
pub(crate) const WILDCARD: &str = "behind a `*`: any number of pod specs, where an admission policy's variables hold one; lint and the webhook judge it";

/// The templates of the known custom kinds and of the kinds `policy`
/// declares, split in slots; a declaration takes precedence over the known
/// table for its kind, as in the linter.
pub(crate) fn templates(policy: &Policy) -> Templates {
    let mut out = Templates::default();
    let mut by_kind: Vec<Vec<Reached>> = Vec::new();
    let declared = policy.declared_pod_kinds();
    for d in declared {
        let resource = d.resource.clone();
        let mut reached = Vec::new();
        for pointer in &d.templates {
            let name = format!("{} ({}) {pointer}", d.kind, d.group);
            let Some(resource) = resource.clone() else {
                out.left_out.push((
                    name,
                    "the policy names no resource for the kind (podTemplates' `resource`), which admission rules match by"
                        .to_owned(),
                ));
                continue;
            };
            match cel_path(pointer) {
                Ok(path) => reached.push(Reached {
                    kind: d.kind.clone(),
                    group: d.group.clone(),
                    resource,
                    pointer: pointer.clone(),
                    path,
                    spec: SpecAt::Either,
                    long_running: d.long_running,
                }),
                Err(why) => out.left_out.push((name, why)),
            }
        }
        by_kind.push(reached);
    }
    for k in CUSTOM_POD_KINDS.iter().filter(|k| !declared.iter().any(|d| d.kind == k.kind && d.group == k.group)) {
        let mut reached = Vec::new();
        for t in k.templates {
            let name = format!("{} ({}) {}", k.kind, k.group, t.template);
            match cel_path(t.template) {
                Ok(path) => reached.push(known(k.kind, k.group, k.resource, t, path)),
                Err(why) => out.left_out.push((name, why)),
            }
        }
        by_kind.push(reached);
    }
    let slots = by_kind.iter().map(Vec::len).max().unwrap_or(0).max(1);
    out.slots = (0..slots)
        .map(|index| Slot {
            index,
            builtins: index == 0,
            customs: by_kind.iter().filter_map(|reached| reached.get(index).cloned()).collect(),
        })
        .collect();
    out
}

fn known(kind: &str, group: &str, resource: &str, t: &TemplatePath, path: String) -> Reached {
    Reached {
        kind: kind.to_owned(),
        group: group.to_owned(),
        resource: resource.to_owned(),
        pointer: t.template.to_owned(),
        path,
        spec: if t.inline { SpecAt::Inline } else { SpecAt::Under },
        // KubeRay's injected probes change nothing the exports check: no
        // covered rule reads `injected_probes` (only readiness-probe-missing,
        // which needs the Services and is not covered, and `simulate`).
        long_running: t.long_running,
    }
}

/// Words CEL reserves, which the API server escapes in field names
/// (`__namespace__`): a template under one is left out rather than escaped.
const RESERVED: [&str; 21] = [
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// `object.a.b` for the pointer `/a/b`, or why CEL cannot name it as a
/// chain of fields: a `*`, a list index, a token that is not an identifier.
fn cel_path(pointer: &str) -> Result<String, String> {
    let mut out = "object".to_owned();
    for token in pointer.split('/').skip(1) {
        if token == "*" {
            return Err(WILDCARD.to_owned());
        }
        let ident = token.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            && token.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && !RESERVED.contains(&token);
        if !ident {
            return Err(format!(
                "its pointer's token {token:?} is not a field name CEL reads as written (a list index, an escape, a `-`, a reserved word)"
            ));
        }
        out.push('.');
        out.push_str(token);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(yaml: &str) -> Policy {
        Policy::load(yaml, "test.yaml").unwrap_or_else(|e| panic!("{e}"))
    }

    fn carried(slot: &Slot) -> Vec<String> {
        slot.customs.iter().map(|r| format!("{} {}", r.kind, r.pointer)).collect()
    }

    #[test]
    fn each_known_kind_s_reachable_templates_take_one_slot_each_in_order() {
        let t = templates(&Policy::default());
        assert_eq!(t.slots.len(), 4, "KServe's four components");
        assert!(t.slots[0].builtins && !t.slots[1].builtins);
        assert_eq!(
            carried(&t.slots[0]),
            [
                "LeaderWorkerSet /spec/leaderWorkerTemplate/leaderTemplate",
                "RayCluster /spec/headGroupSpec/template",
                "RayService /spec/rayClusterConfig/headGroupSpec/template",
                "RayJob /spec/rayClusterSpec/headGroupSpec/template",
                "InferenceService /spec/predictor",
                "RayClusterFleet /spec/template/spec/headGroupSpec/template",
            ]
        );
        // A RayJob's submitter is its second reachable template: its workers are a list.
        assert_eq!(
            carried(&t.slots[1]),
            [
                "LeaderWorkerSet /spec/leaderWorkerTemplate/workerTemplate",
                "RayJob /spec/submitterPodTemplate",
                "InferenceService /spec/predictor/workerSpec",
            ]
        );
        assert_eq!(carried(&t.slots[3]), ["InferenceService /spec/explainer"]);
        let submitter = &t.slots[1].customs[1];
        assert!(!submitter.long_running && submitter.spec == SpecAt::Under);
        assert_eq!(t.slots[0].customs[4].spec, SpecAt::Inline);
        // Every `*` template is said to be left out, with why.
        let left: Vec<&str> = t.left_out.iter().map(|(name, _)| name.as_str()).collect();
        assert!(left.contains(&"RayCluster (ray.io) /spec/workerGroupSpecs/*/template"), "{left:?}");
        assert!(left.contains(&"PyTorchJob (kubeflow.org) /spec/pytorchReplicaSpecs/*/template"), "{left:?}");
        assert!(left.contains(&"JobSet (jobset.x-k8s.io) /spec/replicatedJobs/*/template/spec/template"), "{left:?}");
        assert!(t.left_out.iter().all(|(_, why)| why == WILDCARD));
        let known: usize = CUSTOM_POD_KINDS.iter().map(|k| k.templates.len()).sum();
        let reached: usize = t.slots.iter().map(|s| s.customs.len()).sum();
        assert_eq!(reached + t.left_out.len(), known, "every template carried or said to be left out");
    }

    #[test]
    fn a_declared_kind_is_read_with_its_resource_and_said_to_be_left_out_without_one() {
        let t = templates(&policy(
            "apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\npodTemplates:\n\
             - {kind: SandboxTemplate, group: extensions.agents.x-k8s.io, resource: sandboxtemplates, templates: [/spec/podTemplate, /spec/groups/*/pod, /spec/my-pod]}\n\
             - {kind: Fleet, group: example.com, templates: [/spec/pod], runToCompletion: true}\n\
             - {kind: LeaderWorkerSet, group: leaderworkerset.x-k8s.io, resource: leaderworkersets, templates: [/spec/only], runToCompletion: true}\n",
        ));
        let sandbox = &t.slots[0].customs[0];
        assert_eq!((sandbox.kind.as_str(), sandbox.path.as_str()), ("SandboxTemplate", "object.spec.podTemplate"));
        assert_eq!((sandbox.spec, sandbox.long_running), (SpecAt::Either, true));
        assert_eq!(
            sandbox.spec(),
            "(has(object.spec.podTemplate.containers) ? object.spec.podTemplate : object.spec.podTemplate.spec)"
        );
        // The declaration replaces the known table's entry for its kind.
        let lws: Vec<&Reached> =
            t.slots.iter().flat_map(|s| &s.customs).filter(|r| r.kind == "LeaderWorkerSet").collect();
        assert_eq!(lws.len(), 1);
        assert_eq!((lws[0].pointer.as_str(), lws[0].long_running), ("/spec/only", false));
        let why = |name: &str| t.left_out.iter().find(|(n, _)| n == name).map(|(_, w)| w.as_str()).unwrap_or_default();
        assert!(why("Fleet (example.com) /spec/pod").contains("names no resource"));
        assert_eq!(why("SandboxTemplate (extensions.agents.x-k8s.io) /spec/groups/*/pod"), WILDCARD);
        assert!(why("SandboxTemplate (extensions.agents.x-k8s.io) /spec/my-pod").contains("\"my-pod\""));
    }

    #[test]
    fn a_kind_is_told_by_its_group_too() {
        let t = templates(&Policy::default());
        assert_eq!(
            t.slots[0].customs[1].is_kind(),
            "(object.kind == 'RayCluster' && object.apiVersion.startsWith('ray.io/'))"
        );
        assert_eq!(Slot::builtins_only().suffix(), "");
        assert_eq!(t.slots[2].suffix(), "-3");
    }
}
