//! A validated, ready-to-use policy: the file's values plus their compiled
//! forms (regex and glob sets, exemptions, custom rules).
//!
//! Building a [`Policy`] either yields a complete policy or an error, never a
//! half-applied one, so a server can keep its old policy on a bad reload.
//!
//! Over 400 lines: each compiled setting appears four times, as a field, in the
//! empty policy, as a query method and in `compile`, and one file keeps the
//! four in step; the tests are about 50 lines.

use std::collections::BTreeMap;

use globset::GlobSet;
use regex::RegexSet;

use super::custom::CompiledCustom;
use super::error::Invalid;
use super::exempt::CompiledExemption;
use super::file::{API_VERSION, AdmissionMode, KIND, Metadata, PodTemplates, PolicyFile, RuleConfig};
use super::validate::{BuiltInRules, glob_set, regex_reason};
use crate::finding::Severity;
use crate::model::DeclaredPodKind;
use crate::settings::Settings;

/// A validated policy the rules and the engine read.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Rule parameters.
    pub settings: Settings,
    /// Findings at or above this severity deny an object (webhook enforce
    /// mode) and fail `lifeguard lint` by default.
    pub deny_severity: Severity,
    /// The webhook's mode on its plain `/validate` path.
    pub mode: AdmissionMode,
    /// Where the policy came from (`pack default`, a file name), for messages.
    pub origin: String,
    pub(crate) metadata: Option<Metadata>,
    pub(crate) rules: BTreeMap<String, RuleConfig>,
    pub(crate) exemptions: Vec<CompiledExemption>,
    pub(crate) custom: Vec<CompiledCustom>,
    pub(crate) dependency_paths: RegexSet,
    /// `slowBootImages` without a `/`, matched against the repository name.
    pub(crate) slow_boot_names: RegexSet,
    /// `slowBootImages` with a `/`, matched against the repository path.
    pub(crate) slow_boot_paths: RegexSet,
    pub(crate) database_images: RegexSet,
    pub(crate) readiness_paths: RegexSet,
    pub(crate) local_health_paths: RegexSet,
    /// `localHealthImages` without a `/`, matched against the repository name.
    pub(crate) local_health_names: RegexSet,
    /// `localHealthImages` with a `/`, matched against the repository path.
    pub(crate) local_health_image_paths: RegexSet,
    pub(crate) drain_env: GlobSet,
    pub(crate) shutdown_env: GlobSet,
    /// `podTemplates`, as written (for `to_file`) and as the model reads them.
    pub(crate) pod_templates: Vec<PodTemplates>,
    pub(crate) declared: Vec<DeclaredPodKind>,
}

/// An empty policy file (`apiVersion` and `kind` only) with these parameters.
pub(crate) fn file_with(settings: Settings) -> PolicyFile {
    PolicyFile {
        api_version: API_VERSION.to_owned(),
        kind: KIND.to_owned(),
        metadata: None,
        extends: None,
        deny_severity: None,
        mode: None,
        parameters: settings,
        rules: BTreeMap::new(),
        exemptions: Vec::new(),
        custom_rules: Vec::new(),
        pod_templates: Vec::new(),
    }
}

impl Policy {
    pub(crate) fn empty(settings: Settings) -> Policy {
        Policy {
            settings,
            deny_severity: Severity::Error,
            mode: AdmissionMode::default(),
            origin: String::new(),
            metadata: None,
            rules: BTreeMap::new(),
            exemptions: Vec::new(),
            custom: Vec::new(),
            pod_templates: Vec::new(),
            declared: Vec::new(),
            dependency_paths: RegexSet::empty(),
            slow_boot_names: RegexSet::empty(),
            slow_boot_paths: RegexSet::empty(),
            database_images: RegexSet::empty(),
            readiness_paths: RegexSet::empty(),
            local_health_paths: RegexSet::empty(),
            local_health_names: RegexSet::empty(),
            local_health_image_paths: RegexSet::empty(),
            drain_env: GlobSet::empty(),
            shutdown_env: GlobSet::empty(),
        }
    }

    /// The policy's `metadata.name`, if any.
    pub fn name(&self) -> Option<&str> {
        self.metadata.as_ref().and_then(|m| m.name.as_deref())
    }

    /// Whether a rule (built-in or custom) runs.
    pub fn is_enabled(&self, rule: &str) -> bool {
        self.rules.get(rule).and_then(|r| r.enabled) != Some(false)
    }

    /// The severity the policy forces on a rule's findings, if any.
    pub fn severity_override(&self, rule: &str) -> Option<Severity> {
        self.rules.get(rule).and_then(|r| r.severity)
    }

    /// Names of the policy's custom rules.
    pub fn custom_rule_names(&self) -> impl Iterator<Item = &str> {
        self.custom.iter().map(|c| c.spec.name.as_str())
    }

    /// Whether findings at this severity deny an object.
    pub fn denies(&self, severity: Severity) -> bool {
        severity >= self.deny_severity
    }

    /// Whether an HTTP path is known to aggregate dependency checks.
    pub fn is_dependency_path(&self, path: &str) -> bool {
        self.dependency_paths.is_match(path)
    }

    /// Whether an HTTP path is a readiness endpoint by its name.
    pub fn is_readiness_path(&self, path: &str) -> bool {
        self.readiness_paths.is_match(path)
    }

    /// Whether an image is a known slow booter. A pattern without `/` is
    /// matched against the repository name only (`vllm-openai` of
    /// `vllm/vllm-openai:v0.6.3`), so an organisation such as `vllm-project`
    /// does not make each of its images a model server; a pattern with `/`
    /// against the repository path without registry host and tag
    /// (`tensorflow/serving`).
    pub fn is_slow_boot_image(&self, image: &str) -> bool {
        let (path, name) = crate::model::image_repository(image);
        self.slow_boot_names.is_match(name) || self.slow_boot_paths.is_match(path)
    }

    /// Whether an HTTP path reports the process itself (`localHealthPaths`).
    pub fn is_local_health_path(&self, path: &str) -> bool {
        self.local_health_paths.is_match(path)
    }

    /// Whether an image's health handler reports the process itself
    /// (`localHealthImages`, read as `slowBootImages` is).
    pub fn is_local_health_image(&self, image: &str) -> bool {
        let (path, name) = crate::model::image_repository(image);
        self.local_health_names.is_match(name) || self.local_health_image_paths.is_match(path)
    }

    /// Whether an image is a database, cache or queue server.
    pub fn is_database_image(&self, image: &str) -> bool {
        self.database_images.is_match(image)
    }

    /// Whether an env var name holds a drain time.
    pub fn is_drain_env(&self, name: &str) -> bool {
        self.drain_env.is_match(name)
    }

    /// Whether an env var name holds a shutdown budget.
    pub fn is_shutdown_env(&self, name: &str) -> bool {
        self.shutdown_env.is_match(name)
    }

    /// The kinds `podTemplates` declares, as the model reads them.
    pub fn declared_pod_kinds(&self) -> &[DeclaredPodKind] {
        &self.declared
    }

    /// Whether no rule of this policy reads an object of `kind`: it is no
    /// pod-bearing kind lifeguard knows ([`crate::yaml::inert_kind`]) or this
    /// policy declares, no Service and no `List`.
    pub fn reads_nothing_of(&self, kind: &str) -> bool {
        crate::yaml::inert_kind(kind) && !self.declared.iter().any(|d| d.kind == kind)
    }

    /// The policy as a file: every parameter, the rule switches, exemptions
    /// and custom rules, with `extends` resolved. Loading it gives the same policy.
    pub fn to_file(&self) -> PolicyFile {
        PolicyFile {
            metadata: self.metadata.clone(),
            deny_severity: Some(self.deny_severity),
            mode: Some(self.mode),
            rules: self.rules.clone(),
            exemptions: self.exemptions.iter().map(|e| e.spec.clone()).collect(),
            custom_rules: self.custom.iter().map(|c| c.spec.clone()).collect(),
            pod_templates: self.pod_templates.clone(),
            ..file_with(self.settings.clone())
        }
    }
}

/// Validates a policy file (without `extends`) and compiles it. Rule names
/// may refer to built-in rules, the file's custom rules and `more_rules`
/// (custom rules of the packs it extends).
pub(crate) fn compile(
    file: PolicyFile,
    more_rules: &[String],
    origin: &str,
    built_in: BuiltInRules<'_>,
) -> Result<Policy, Invalid> {
    if file.api_version != API_VERSION {
        return Err(Invalid::at("/apiVersion", format!("must be {API_VERSION:?}, got {:?}", file.api_version)));
    }
    if file.kind != KIND {
        return Err(Invalid::at("/kind", format!("must be {KIND:?}, got {:?}", file.kind)));
    }
    let s = &file.parameters;
    for (key, value, zero_ok) in [
        ("coldStartMarginPercent", s.cold_start_margin_percent, true),
        ("startupPeriodSeconds", s.startup_period_seconds, false),
        ("gpuBootSeconds", s.gpu_boot_seconds, false),
        ("slowBootInitialDelaySeconds", s.slow_boot_initial_delay_seconds, false),
        ("minLivenessBudgetSeconds", s.min_liveness_budget_seconds, true),
        ("minLivenessTimeoutSeconds", s.min_liveness_timeout_seconds, false),
        ("minLivenessFailureThreshold", s.min_liveness_failure_threshold, false),
        ("prestopMinRemainingSeconds", s.prestop_min_remaining_seconds, true),
        ("prestopBridgeSeconds", s.prestop_bridge_seconds, false),
        ("modelServerDrainSeconds", s.model_server_drain_seconds, true),
        ("maxReadinessWindowSeconds", s.max_readiness_window_seconds, true),
        ("maxLivenessWindowSeconds", s.max_liveness_window_seconds, true),
        ("alertRecoverySeconds", s.alert_recovery_seconds, false),
        ("minRolloutCapacityPercent", s.min_rollout_capacity_percent, true),
    ] {
        positive(key, value, zero_ok)?;
    }
    super::alert_labels::check(&s.alert_severity, &s.alert_labels)?;
    if s.min_rollout_capacity_percent > 100 {
        return Err(Invalid::at(
            "/parameters/minRolloutCapacityPercent",
            format!("must be at most 100, got {}", s.min_rollout_capacity_percent),
        ));
    }
    // A day or more reads as a sleep that never ends: no grace period covers it.
    if s.prestop_bridge_seconds >= crate::model::FOREVER_SECONDS {
        return Err(Invalid::at(
            "/parameters/prestopBridgeSeconds",
            format!("must be less than {} (a day), got {}", crate::model::FOREVER_SECONDS, s.prestop_bridge_seconds),
        ));
    }
    let custom = file
        .custom_rules
        .iter()
        .enumerate()
        .map(|(i, spec)| CompiledCustom::new(spec.clone(), &format!("/customRules/{i}"), built_in))
        .collect::<Result<Vec<_>, _>>()?;
    super::custom::check_names(&custom)?;
    let known = |name: &str| {
        built_in.knows(name) || custom.iter().any(|c| c.spec.name == name) || more_rules.iter().any(|m| m == name)
    };
    for name in file.rules.keys() {
        if !known(name) {
            let pointer = format!("/rules/{}", crate::model::escape_token(name));
            return Err(Invalid::at(pointer, built_in.unknown(name)));
        }
    }
    let exemptions = file
        .exemptions
        .iter()
        .enumerate()
        .map(|(i, spec)| CompiledExemption::new(spec.clone(), &format!("/exemptions/{i}"), &known, built_in))
        .collect::<Result<Vec<_>, _>>()?;
    let declared = pod_templates(&file.pod_templates)?;
    Ok(Policy {
        pod_templates: file.pod_templates.clone(),
        declared,
        dependency_paths: regex_set("dependencyPaths", &s.dependency_paths)?,
        slow_boot_names: slow_boot_set(&s.slow_boot_images, false)?,
        slow_boot_paths: slow_boot_set(&s.slow_boot_images, true)?,
        database_images: regex_set("databaseImages", &s.database_images)?,
        readiness_paths: regex_set("readinessPaths", &s.readiness_paths)?,
        local_health_paths: regex_set("localHealthPaths", &s.local_health_paths)?,
        local_health_names: image_set("localHealthImages", &s.local_health_images, false)?,
        local_health_image_paths: image_set("localHealthImages", &s.local_health_images, true)?,
        drain_env: glob_set("/parameters/drainEnvPatterns", &s.drain_env_patterns)?,
        shutdown_env: glob_set("/parameters/shutdownEnvPatterns", &s.shutdown_env_patterns)?,
        deny_severity: file.deny_severity.unwrap_or(Severity::Error),
        mode: file.mode.unwrap_or_default(),
        origin: origin.to_owned(),
        metadata: file.metadata,
        rules: file.rules,
        exemptions,
        custom,
        settings: file.parameters,
    })
}

/// Checks `podTemplates` and gives the model's form: each kind once, not a
/// built-in kind (whose template is fixed), with at least one template, each
/// a JSON pointer into the object's `spec`.
fn pod_templates(entries: &[PodTemplates]) -> Result<Vec<DeclaredPodKind>, Invalid> {
    let mut declared: Vec<DeclaredPodKind> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let at = |field: &str| format!("/podTemplates/{i}{field}");
        if e.kind.is_empty() {
            return Err(Invalid::at(at("/kind"), "must name a kind"));
        }
        if crate::model::names_pod_kind(&e.kind) {
            return Err(Invalid::at(
                at("/kind"),
                format!("{} is a built-in kind: its pod template is read already", e.kind),
            ));
        }
        if declared.iter().any(|d| d.kind == e.kind && d.group == e.group) {
            return Err(Invalid::at(at(""), format!("{} in group {:?} is declared twice", e.kind, e.group)));
        }
        if e.templates.is_empty() {
            return Err(Invalid::at(at("/templates"), "must list at least one template"));
        }
        for (j, t) in e.templates.iter().enumerate() {
            if !t.starts_with("/spec/") || t.ends_with('/') || t.contains("//") {
                return Err(Invalid::at(
                    at(&format!("/templates/{j}")),
                    format!("must be a JSON pointer under /spec (`/spec/podTemplate`), got {t:?}"),
                ));
            }
        }
        // The API server refuses an admission rule whose resource is not a
        // lowercase DNS label: a bad one would fail the whole export's apply.
        let label = |r: &str| {
            let ok = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
            r.len() <= 63
                && r.bytes().all(|b| ok(b) || b == b'-')
                && r.bytes().next().is_some_and(ok)
                && r.bytes().last().is_some_and(ok)
        };
        if let Some(resource) = e.resource.as_deref().filter(|r| !label(r)) {
            return Err(Invalid::at(
                at("/resource"),
                format!(
                    "must be the resource's plural as its CRD names it (lowercase, `sandboxtemplates`), got {resource:?}"
                ),
            ));
        }
        declared.push(DeclaredPodKind {
            kind: e.kind.clone(),
            group: e.group.clone(),
            templates: e.templates.clone(),
            resource: e.resource.clone(),
            long_running: !e.run_to_completion,
        });
    }
    Ok(declared)
}

fn positive(key: &'static str, value: i64, zero_ok: bool) -> Result<(), Invalid> {
    if value < 0 || (!zero_ok && value == 0) {
        let want = if zero_ok { "zero or more" } else { "at least 1" };
        return Err(Invalid::at(format!("/parameters/{key}"), format!("must be {want}, got {value}")));
    }
    Ok(())
}

/// The `slowBootImages` patterns with (`paths`) or without a `/`; errors
/// name the pattern's place in the whole list.
fn slow_boot_set(patterns: &[String], paths: bool) -> Result<RegexSet, Invalid> {
    image_set("slowBootImages", patterns, paths)
}

/// An image list's patterns with (`paths`) or without a `/`, as
/// [`slow_boot_set`] reads them.
fn image_set(key: &'static str, patterns: &[String], paths: bool) -> Result<RegexSet, Invalid> {
    regex_set(key, patterns)?;
    RegexSet::new(patterns.iter().filter(|p| p.contains('/') == paths))
        .map_err(|e| Invalid::at(format!("/parameters/{key}"), regex_reason(&e)))
}

fn regex_set(key: &'static str, patterns: &[String]) -> Result<RegexSet, Invalid> {
    for (i, p) in patterns.iter().enumerate() {
        regex::Regex::new(p).map_err(|e| {
            Invalid::at(format!("/parameters/{key}/{i}"), format!("invalid regex {p:?}: {}", regex_reason(&e)))
        })?;
    }
    RegexSet::new(patterns).map_err(|e| Invalid::at(format!("/parameters/{key}"), regex_reason(&e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_settings_compile() {
        assert!(Policy::new(Settings::default()).is_ok());
    }

    #[test]
    fn bad_regex_names_the_key() {
        let settings = Settings { dependency_paths: vec!["^/ok$".into(), "(".into()], ..Settings::default() };
        let err = Policy::new(settings).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.starts_with("parameters.dependencyPaths[1]: invalid regex \"(\""), "{err}");
    }

    #[test]
    fn slow_boot_images_match_the_repository_name_not_the_organisation() {
        let p = Policy::default();
        for image in [
            "vllm/vllm-openai:v0.6.3",
            "nvcr.io/nvidia/tritonserver:24.05-py3",
            "ghcr.io/huggingface/text-generation-inference:2.0",
            "tensorflow/serving:2.14.0",
            "kserve/huggingfaceserver:v0.15.0",
            "nvcr.io/nim/meta/llama-3.1-8b-instruct:1.0",
            "rayproject/ray:2.9.0",
            "ollama/ollama",
        ] {
            assert!(p.is_slow_boot_image(image), "{image}");
        }
        for image in [
            "ghcr.io/vllm-project/semantic-router/extproc:v0.1",
            "vllm-project/router:latest",
            "kserve/kserve-controller:v0.15.0",
            "tensorflow/tensorflow:2.14.0",
            "rayproject/kuberay-operator:v1.1.0",
        ] {
            assert!(!p.is_slow_boot_image(image), "{image}");
        }
    }

    #[test]
    fn env_globs_match_suffixes() {
        let p = Policy::default();
        assert!(p.is_drain_env("AISUITE_DRAIN_SECONDS"));
        assert!(p.is_shutdown_env("APP_SHUTDOWN_TIMEOUT_SECONDS"));
        assert!(!p.is_drain_env("DRAIN_SECONDS_X"));
    }
}
