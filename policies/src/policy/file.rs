//! The policy file as written: `apiVersion: lifeguard.dev/v1alpha1`,
//! `kind: Policy`. These types are the file format: serde reads them (every
//! struct refuses unknown keys) and the committed JSON Schema is derived from
//! them, so the schema, the parser and the docs cannot drift apart.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::finding::Severity;
// The label selector operators are the engine's own, which the
// PodDisruptionBudgets read with a workload use too.
pub use crate::model::LabelOperator;
use crate::settings::Settings;

/// The only `apiVersion` this build reads.
pub const API_VERSION: &str = "lifeguard.dev/v1alpha1";
/// The only `kind`.
pub const KIND: &str = "Policy";

/// A lifeguard policy: rule parameters, per-rule switches and severities,
/// exemptions and custom rules. Used alike by `lifeguard lint`,
/// `lifeguard fix` and the admission webhook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(title = "lifeguard Policy")]
pub struct PolicyFile {
    /// Always `lifeguard.dev/v1alpha1`.
    #[schemars(extend("const" = "lifeguard.dev/v1alpha1"))]
    pub api_version: String,
    /// Always `Policy`.
    #[schemars(extend("const" = "Policy"))]
    pub kind: String,
    /// A name and description, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// The built-in pack this file starts from (`default`, `strict`,
    /// `gpu-serving`); `default` when unset. The file overrides single values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extends: Option<String>,
    /// Findings at or above this severity deny an object in the webhook's
    /// enforce mode and make `lifeguard lint` exit 1 (unless `--fail-on` is given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deny_severity: Option<Severity>,
    /// The admission webhook's mode on its plain `/validate` path (`enforce`
    /// when unset); `/validate/enforce`, `/validate/warn` and
    /// `/validate/audit` choose one explicitly. The linter ignores it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<AdmissionMode>,
    /// Thresholds and lists the built-in rules read. Several rules share a
    /// parameter (one drain budget serves `grace-period-too-short` and
    /// `prestop-sleep-only`), so parameters are not nested under rules.
    #[serde(default)]
    pub parameters: Settings,
    /// Per rule (built-in or custom, by name): whether it runs and the
    /// severity of its findings.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rules: BTreeMap<String, RuleConfig>,
    /// Findings that do not count for some workloads, each with a reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exemptions: Vec<Exemption>,
    /// House rules: a JSONPath and a predicate, reported like built-in findings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub custom_rules: Vec<CustomRule>,
    /// Custom resources whose pod templates lifeguard reads, beside the
    /// built-in kinds and the custom resources it knows: one entry per kind.
    /// `lint` warns where an object holds `containers` at a path nothing
    /// declares, with the entry to add.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pod_templates: Vec<PodTemplates>,
}

/// Where one kind of custom resource keeps its pod templates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodTemplates {
    /// The kind (`SandboxTemplate`).
    pub kind: String,
    /// Its API group (`extensions.agents.x-k8s.io`), any version; `""` for
    /// the core group.
    pub group: String,
    /// JSON pointers of its pod templates (`/spec/podTemplate`), `*` for
    /// every item of a list or value of a map (`/spec/groups/*/template`).
    /// A template whose own fields hold `containers` is a pod spec inline;
    /// else its `spec` is the pod spec.
    pub templates: Vec<String>,
    /// Its resource, the plural in URLs and admission rules
    /// (`sandboxtemplates`): `export vap` matches the kind only when it is
    /// given, as a plural cannot be told from the kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// Whether its pods run to completion (a job's) rather than until
    /// deleted (a server's); false when unset.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub run_to_completion: bool,
}

/// What the admission webhook does with an object's findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AdmissionMode {
    /// Deny when a finding is at or above `denySeverity`; warn for the rest.
    #[default]
    Enforce,
    /// Allow; every finding becomes a warning the client prints.
    Warn,
    /// Allow; findings go to the audit annotations and the webhook's log only.
    Audit,
}

impl AdmissionMode {
    /// Every mode, in the order of the webhook's paths.
    pub const ALL: [AdmissionMode; 3] = [AdmissionMode::Enforce, AdmissionMode::Warn, AdmissionMode::Audit];

    /// `enforce`, `warn` or `audit`.
    pub fn as_str(self) -> &'static str {
        match self {
            AdmissionMode::Enforce => "enforce",
            AdmissionMode::Warn => "warn",
            AdmissionMode::Audit => "audit",
        }
    }

    /// Parses `enforce`, `warn` or `audit`.
    pub fn parse(s: &str) -> Option<AdmissionMode> {
        AdmissionMode::ALL.into_iter().find(|m| m.as_str() == s)
    }
}

impl std::fmt::Display for AdmissionMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who the policy is for.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Metadata {
    /// A short name, shown by `lifeguard policy check`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What the policy is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// One rule's switch and severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RuleConfig {
    /// `false` turns the rule off: it does not run and nothing is counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Replaces the severity of every finding of the rule (some rules use
    /// several severities; unset keeps them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
}

/// Findings that do not count for the workloads this matches. Every
/// condition given must match (a list matches when any of its items does);
/// at least one condition is required. Suppressed findings are counted,
/// not hidden.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Exemption {
    /// Why, for reviewers. Required.
    pub reason: String,
    /// Rules exempted (built-in or custom); all rules when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<String>,
    /// Namespace globs (`kube-system`, `team-*`). An object without
    /// `metadata.namespace` matches none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub namespaces: Vec<String>,
    /// Object name globs (`legacy-*`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
    /// A label selector on the pod labels (the pod template's labels; a
    /// Pod's own labels).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// Container name globs; only findings about a matching container are
    /// exempted, pod-level findings never.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub containers: Vec<String>,
}

/// A Kubernetes label selector: every `matchLabels` pair and every
/// expression must hold.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabelSelector {
    /// Labels that must be present with these values.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub match_labels: BTreeMap<String, String>,
    /// Set-based requirements.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_expressions: Vec<LabelRequirement>,
}

/// One set-based label requirement.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabelRequirement {
    /// The label key.
    pub key: String,
    /// How the label's value relates to `values`.
    pub operator: LabelOperator,
    /// Values for `In` and `NotIn`; empty for `Exists` and `DoesNotExist`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

/// A house rule: a JSONPath evaluated on every container (or the pod spec,
/// or the whole object) and a predicate on the values it selects. A finding
/// is reported when the predicate holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CustomRule {
    /// Rule name: lower-case words joined by `-`, not a built-in rule's name.
    pub name: String,
    /// Severity of its findings.
    pub severity: Severity,
    /// The finding's message. `{container}` and `{value}` are replaced by
    /// the container's name and the selected value.
    pub message: String,
    /// A short hint on what to do instead.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub help: String,
    /// What `$` is: each container the kubelet probes (`container`, the
    /// default), the pod spec (`pod`) or the whole object (`object`).
    #[serde(default)]
    pub scope: Scope,
    /// A JSONPath (RFC 9535) from the scope, e.g. `$.resources.limits.memory`.
    pub path: String,
    /// When to report, judged on the values the path selects.
    pub when: Predicate,
}

/// What a custom rule's JSONPath starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Scope {
    /// Each container the kubelet probes: regular containers and sidecar
    /// init containers.
    #[default]
    Container,
    /// The pod spec.
    Pod,
    /// The whole object.
    Object,
}

/// When a custom rule reports. `exists` and `absent` report once per scope;
/// the others report each selected value that satisfies them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Predicate {
    /// The path selects at least one non-null value.
    Exists,
    /// The path selects nothing (or only nulls).
    Absent,
    /// A selected value equals this one (numbers compare by value).
    Equals(Value),
    /// A selected string matches this regex (Rust `regex` syntax, unanchored).
    Matches(String),
    /// A selected number is less than this.
    Lt(f64),
    /// A selected number is at most this.
    Le(f64),
    /// A selected number is greater than this.
    Gt(f64),
    /// A selected number is at least this.
    Ge(f64),
    /// A selected value equals one of these.
    OneOf(Vec<Value>),
}
