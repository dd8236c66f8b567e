//! `lifeguard export vap` and `lifeguard export map`: the policy's rules
//! that CEL expresses, exactly or in the part `--explain` describes, as
//! ValidatingAdmissionPolicies the API server enforces itself, and their
//! fixes as a MutatingAdmissionPolicy it applies itself (the objects are
//! built by `policies::vap`; this prints them).
//!
//! Over 400 lines: `vap` and `map` share their arguments, policy loading,
//! comment header, name check and size warning, so they stay one file; the clap
//! definitions with their `--help` text take about 115 lines, and each
//! command's run, mostly the header it prints, about 60.

// A command's edge: usage and policy errors go to the user on stderr.
#![allow(clippy::print_stderr)]

pub mod alerts;

use crate::stop::Stop;
use anyhow::Result;
use clap::{Subcommand, ValueEnum};
use policies::Policy;
use policies::policy::AdmissionMode;
use policies::vap::kube_version::{self, KubeVersion, MapApi};
use policies::vap::mutation::{self, Carried};
use policies::vap::{self, Covered};

use crate::options::POLICY_NAME;
use crate::policy_source::PolicySource;

/// `lifeguard export` subcommands.
#[derive(Debug, Subcommand)]
pub enum ExportCommand {
    /// Print two ValidatingAdmissionPolicies and their bindings, NAME-deny
    /// (the rules at or above denySeverity) and NAME-warn (the rest), carrying
    /// the rules CEL can check, exactly or in part (never reporting what the
    /// linter does not), and a pair more (NAME-deny-2, ...) per further pod
    /// template of the custom kinds. The same objects in every mode, the
    /// bindings' actions set by it, so an apply replaces another mode's export.
    Vap(VapArgs),
    /// Print a MutatingAdmissionPolicy NAME-fix and its binding carrying the
    /// fixes `lifeguard fix` makes for the rules `export vap` covers, where
    /// CEL computes them exactly from the container's own spec and the
    /// policy's constants, one mutation per fix (and NAME-fix-2 for a
    /// LeaderWorkerSet's workers).
    Map(MapArgs),
    /// Print PrometheusRule objects (prometheus-operator's CRD) with, per
    /// long-running workload of the manifests, an alert on its pods running
    /// and not Ready past its startup window (the one the rules and fixes
    /// use) or the policy's alertRecoverySeconds, on kube-state-metrics'
    /// series.
    Alerts(alerts::AlertsArgs),
}

/// The flags both exports take.
#[derive(Debug, clap::Args)]
pub struct CommonArgs {
    /// Policy file or built-in pack (`default`, `strict`, `gpu-serving`);
    /// default: the nearest `.lifeguard.yaml` or `.lifeguard.yml` from the
    /// current directory up to the repository root, else `default`.
    #[arg(long, env = "LIFEGUARD_POLICY", value_name = "FILE|PACK", value_parser = POLICY_NAME, hide_possible_values = true)]
    pub policy: Option<String>,
    /// The Kubernetes release of the cluster (MAJOR.MINOR, 1.34 or later):
    /// the newest API version it serves, and only the CEL functions its API
    /// server admits in a new expression.
    #[arg(long, value_name = "X.Y", default_value = "1.34", value_parser = parse_kube_version)]
    pub kube_version: KubeVersion,
}

/// `lifeguard export vap` flags.
#[derive(Debug, clap::Args)]
pub struct VapArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// The bindings' actions. `enforce`: Deny at or above the policy's
    /// denySeverity, Warn below; `warn`: Warn; `audit`: Audit. Default: the
    /// policy's `mode`.
    #[arg(long, value_enum)]
    pub mode: Option<Mode>,
    /// Prefix of the objects' names (NAME-deny, NAME-warn) and the value of
    /// their `lifeguard.dev/export` label.
    #[arg(long, default_value = "lifeguard")]
    pub name: String,
    /// On UPDATE, NAME-deny judges only the findings the old object did not
    /// have (same rule, same container), so existing workloads keep rolling;
    /// `--ratchet=false` judges the whole object.
    #[arg(
        long,
        value_name = "BOOL",
        action = clap::ArgAction::Set,
        num_args = 0..=1,
        require_equals = true,
        default_value_t = true,
        default_missing_value = "true"
    )]
    pub ratchet: bool,
    /// List every rule as covered, partly covered (and what it misses) or
    /// not, and why, instead of the objects.
    #[arg(long)]
    pub explain: bool,
}

/// `lifeguard export map` flags.
#[derive(Debug, clap::Args)]
pub struct MapArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Prefix of the objects' name (NAME-fix) and the value of their
    /// `lifeguard.dev/export` label.
    #[arg(long, default_value = "lifeguard")]
    pub name: String,
    /// The API version to write: `v1` (served from Kubernetes 1.36, the
    /// default there), or `v1beta1` (1.34 to 1.39, with the API server's
    /// feature gate MutatingAdmissionPolicy and runtime config
    /// admissionregistration.k8s.io/v1beta1 on). Before 1.36 it must be asked for.
    #[arg(long, value_enum)]
    pub map_api: Option<MapApiArg>,
    /// List every rule's fix as carried, partly carried (and what is left)
    /// or not, and why, instead of the objects.
    #[arg(long)]
    pub explain: bool,
}

/// `--map-api`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MapApiArg {
    /// admissionregistration.k8s.io/v1.
    V1,
    /// admissionregistration.k8s.io/v1beta1.
    V1beta1,
}

/// `--kube-version`: `MAJOR.MINOR`, 1.34 or later.
fn parse_kube_version(text: &str) -> Result<KubeVersion, String> {
    text.parse().map_err(|e: kube_version::KubeVersionError| e.to_string())
}

/// `--mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// Deny at or above denySeverity, warn below.
    Enforce,
    /// Warn only.
    Warn,
    /// Audit annotations only.
    Audit,
}

/// Runs an `export` subcommand; returns the exit code.
pub fn run(command: ExportCommand, write_stdout: impl Fn(&str) -> Result<()>) -> Result<u8> {
    match command {
        ExportCommand::Vap(args) => run_vap(args, write_stdout),
        ExportCommand::Map(args) => run_map(args, write_stdout),
        ExportCommand::Alerts(args) => alerts::run(args, write_stdout),
    }
}

/// The policy `--policy` names (or the one found from here), and where it
/// came from; a usage error when it does not load.
fn load_policy(args: &CommonArgs) -> Result<(Policy, PolicySource)> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let source = match &args.policy {
        None => crate::policy_discovery::source_for(None, &cwd),
        Some(_) => PolicySource::choose(args.policy.as_deref(), &cwd),
    };
    match source.load() {
        Ok(policy) => Ok((policy, source)),
        Err(e) => Err(Stop::usage(format!("invalid policy: {e}"))),
    }
}

fn run_vap(args: VapArgs, write_stdout: impl Fn(&str) -> Result<()>) -> Result<u8> {
    if args.explain {
        write_stdout(&explain())?;
        return Ok(0);
    }
    if let Some(bad) = invalid_name(&args.name) {
        return Err(Stop::usage(format!("--name {:?}: {bad}", args.name)));
    }
    let (policy, source) = load_policy(&args.common)?;
    let mode = match args.mode {
        Some(Mode::Enforce) => AdmissionMode::Enforce,
        Some(Mode::Warn) => AdmissionMode::Warn,
        Some(Mode::Audit) => AdmissionMode::Audit,
        None => policy.mode,
    };
    let kube = args.common.kube_version;
    let options = vap::VapOptions { mode, name: args.name.clone(), kube_version: kube, ratchet: args.ratchet };
    let export = match vap::export(&policy, &options) {
        Ok(export) => export,
        Err(e) => {
            return Err(Stop::usage(format!("--kube-version {kube}: {e}")));
        }
    };
    let mut header = vec![
        format!(
            "Generated by `lifeguard export vap` from {} (mode {}, Kubernetes {kube} or later): regenerate it when the \
             policy changes, its severities and parameters are compiled in. Rules: {}.",
            source.describe(),
            mode.as_str(),
            rule_list(&export.rules),
        ),
        "`lifeguard export vap --explain` says which rules an admission policy can carry, and why.".to_owned(),
    ];
    header.extend(export.left_out.iter().map(|(rule, why)| format!("Left out: {rule} ({why}).")));
    header.extend(export.templates.iter().map(|(template, objects)| format!("Judged: {template} (by {objects}).")));
    header.extend(export.templates_left_out.iter().map(|(template, why)| format!("Not judged: {template} ({why}).")));
    header.push(if args.ratchet {
        format!(
            "Ratcheted: on UPDATE, {name}-deny judges only the findings the old object did not have (same rule, same \
             container), so existing workloads keep rolling; `--ratchet=false` judges the whole object.",
            name = args.name
        )
    } else {
        format!("Not ratcheted (--ratchet=false): on UPDATE, {name}-deny judges the whole object.", name = args.name)
    });
    header.push(format!(
        "Every mode writes the same objects, {name}-deny (the rules at or above denySeverity) and {name}-warn (the \
         rest), and a -2, -3, ... pair of them for the further pod templates of the custom kinds above; the mode sets \
         their bindings' actions, so applying this over another mode's export replaces it. Remove them:",
        name = args.name,
    ));
    let mut text: String = header.iter().map(|line| comment(line)).collect();
    text.push_str(&format!(
        "# kubectl delete validatingadmissionpolicybindings,validatingadmissionpolicies -l {label}={name}\n",
        name = args.name,
        label = vap::EXPORT_LABEL,
    ));
    for line in bindings(&export.bindings) {
        eprintln!("lifeguard: {line}");
    }
    warn_if_too_large_for_client_side_apply(&export.objects);
    for object in &export.objects {
        text.push_str("---\n");
        text.push_str(&policies::yaml::to_yaml(object));
    }
    write_stdout(&text)?;
    Ok(0)
}

/// What the API server allows of an object's annotations in all
/// (`TotalAnnotationSizeLimitB`, 256 KiB).
pub const ANNOTATIONS_LIMIT: usize = 256 * 1024;

/// The bytes an object's annotations take once a client-side `kubectl
/// apply` has stored it: its own, and `last-applied-configuration`, the
/// whole object as Go's encoder writes it (`<`, `>` and `&` as `\u003c`...,
/// six bytes each), under its key.
pub fn client_side_apply_annotations(object: &serde_json::Value) -> usize {
    let json = object.to_string();
    let escaped = json.len() + 5 * json.chars().filter(|c| matches!(c, '<' | '>' | '&')).count();
    let own: usize = object
        .pointer("/metadata/annotations")
        .and_then(serde_json::Value::as_object)
        .map(|a| a.iter().map(|(k, v)| k.len() + v.as_str().map_or(0, str::len)).sum())
        .unwrap_or(0);
    "kubectl.kubernetes.io/last-applied-configuration".len() + escaped + own
}

/// Warns of each object a client-side `kubectl apply` would be refused
/// ("metadata.annotations: Too long"): a policy's CEL grows with its
/// exemptions, and the refusal does not say what to do instead.
pub(super) fn warn_if_too_large_for_client_side_apply(objects: &[serde_json::Value]) {
    for object in objects {
        let size = client_side_apply_annotations(object);
        if size >= ANNOTATIONS_LIMIT {
            let name = object.pointer("/metadata/name").and_then(serde_json::Value::as_str).unwrap_or_default();
            eprintln!(
                "lifeguard: warning: {name} is too large for a client-side `kubectl apply`: its last-applied copy \
                 would take the object's annotations to {size} bytes, over the API server's {ANNOTATIONS_LIMIT}; \
                 install it with `kubectl apply --server-side`"
            );
        }
    }
}

fn run_map(args: MapArgs, write_stdout: impl Fn(&str) -> Result<()>) -> Result<u8> {
    if args.explain {
        write_stdout(&explain_map())?;
        return Ok(0);
    }
    if let Some(bad) = invalid_name(&args.name) {
        return Err(Stop::usage(format!("--name {:?}: {bad}", args.name)));
    }
    let kube = args.common.kube_version;
    let asked = args.map_api.map(|api| match api {
        MapApiArg::V1 => MapApi::V1,
        MapApiArg::V1beta1 => MapApi::V1beta1,
    });
    let api = kube_version::map_api(kube, asked).map_err(|e| Stop::usage(e.to_string()))?;
    let (policy, source) = load_policy(&args.common)?;
    let options = mutation::MapOptions { name: args.name.clone(), api, kube_version: kube };
    let export = match mutation::export(&policy, &options) {
        Ok(export) => export,
        Err(e) => {
            return Err(Stop::usage(format!("--kube-version {kube}: {e}")));
        }
    };
    let marked: Vec<String> = export
        .rules
        .iter()
        .map(|r| match mutation::coverage::of(r) {
            Some(Carried::Partly(_)) => format!("{r} (partly)"),
            _ => (*r).to_owned(),
        })
        .collect();
    let mut header = vec![
        format!(
            "Generated by `lifeguard export map` from {} ({}, Kubernetes {kube} or later): regenerate it when the \
             policy changes, its parameters are compiled in. Fixes of: {}.",
            source.describe(),
            api.api_version(),
            if marked.is_empty() { "none".to_owned() } else { marked.join(", ") },
        ),
        "`lifeguard export map --explain` says which fixes a mutating admission policy can carry, and why.".to_owned(),
    ];
    header.extend(export.left_out.iter().map(|(rule, why)| format!("Left out: {rule} ({why}).")));
    header.extend(export.templates.iter().map(|(template, object)| format!("Fixed: {template} (by {object}).")));
    header.extend(export.templates_left_out.iter().map(|(template, why)| format!("Not fixed: {template} ({why}).")));
    let mut text: String = header.iter().map(|line| comment(line)).collect();
    text.push_str(&format!(
        "# Remove them: kubectl delete mutatingadmissionpolicybindings,mutatingadmissionpolicies -l {label}={name}\n",
        name = args.name,
        label = vap::EXPORT_LABEL,
    ));
    warn_if_too_large_for_client_side_apply(&export.objects);
    for object in &export.objects {
        text.push_str("---\n");
        text.push_str(&policies::yaml::to_yaml(object));
    }
    write_stdout(&text)?;
    Ok(0)
}

/// The widest line of a header's comment (a word longer than that stands alone).
const COMMENT_WIDTH: usize = 118;

/// `text` as `# ` comment lines of at most [`COMMENT_WIDTH`] characters,
/// broken between words, the continuations indented.
pub(super) fn comment(text: &str) -> String {
    let mut out = String::new();
    let mut line = "#".to_owned();
    for word in text.split(' ') {
        if line.len() > 3 && line.len() + 1 + word.len() > COMMENT_WIDTH {
            out.push_str(&line);
            out.push('\n');
            line = "#  ".to_owned();
        }
        line.push(' ');
        line.push_str(word);
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// What the bindings do and where, one line per action, namespaces and
/// rules, naming the bindings (the pairs of every template slot share one).
fn bindings(bound: &[vap::Bound]) -> Vec<String> {
    let mut lines: Vec<(String, Vec<&str>)> = Vec::new();
    for b in bound {
        let what = format!(
            "{}{} in {}: {}",
            b.action,
            if b.ratcheted { " (ratcheted: on UPDATE only a finding the old object did not have)" } else { "" },
            namespaces(&b.namespaces),
            if b.rules.is_empty() { "no rule".to_owned() } else { b.rules.join(", ") },
        );
        match lines.iter_mut().find(|(w, _)| *w == what) {
            Some((_, names)) => names.push(&b.name),
            None => lines.push((what, vec![&b.name])),
        }
    }
    lines.into_iter().map(|(what, names)| format!("binds {}: {what}", names.join(", "))).collect()
}

/// A namespace selector in words: `every namespace`, or its expressions
/// and labels (`kubernetes.io/metadata.name NotIn [kube-system]`).
fn namespaces(selector: &serde_json::Value) -> String {
    let mut parts: Vec<String> = selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let values: Vec<&str> = e["values"].as_array().into_iter().flatten().filter_map(|v| v.as_str()).collect();
            format!(
                "{} {} [{}]",
                e["key"].as_str().unwrap_or_default(),
                e["operator"].as_str().unwrap_or_default(),
                values.join(", ")
            )
        })
        .collect();
    if let Some(labels) = selector["matchLabels"].as_object() {
        parts.extend(labels.iter().map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default())));
    }
    if parts.is_empty() {
        "every namespace".to_owned()
    } else {
        format!("the namespaces where {}", parts.join(" and "))
    }
}

/// Every rule's fix, carried or not, and why.
fn explain_map() -> String {
    let mut text = String::new();
    for (rule, carried) in mutation::coverage::coverage() {
        match carried {
            Carried::Yes(how) => text.push_str(&format!("{rule}: carried: {how}\n")),
            Carried::Partly(what) => text.push_str(&format!("{rule}: partly carried: {what}\n")),
            Carried::NoFix => text.push_str(&format!(
                "{rule}: not carried: no automatic fix ({})\n",
                mutation::coverage::no_fix_reason(rule).unwrap_or("the rule says none")
            )),
            Carried::No(why) => text.push_str(&format!("{rule}: not carried: {why}\n")),
        }
    }
    text
}

/// The exported rules, the partly covered ones marked.
fn rule_list(rules: &[&str]) -> String {
    if rules.is_empty() {
        return "none".to_owned();
    }
    let marked: Vec<String> = rules
        .iter()
        .map(|r| match vap::coverage::of(r) {
            Covered::Partly(_) => format!("{r} (partly)"),
            _ => (*r).to_owned(),
        })
        .collect();
    marked.join(", ")
}

/// Every rule, covered or not, and why.
fn explain() -> String {
    let mut text = String::new();
    for (rule, covered) in vap::coverage() {
        match covered {
            Covered::Yes => text.push_str(&format!("{rule}: covered (exactly the linter's check)\n")),
            Covered::Partly(what) => text.push_str(&format!("{rule}: partly covered: {what}\n")),
            Covered::No(why) => text.push_str(&format!("{rule}: not covered: {why}\n")),
        }
    }
    text
}

/// Why a name is not one the API server accepts: a DNS subdomain with
/// `-deny` appended, and a label's value (63 characters at most).
pub(super) fn invalid_name(name: &str) -> Option<&'static str> {
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.';
    if name.is_empty() || name.len() > 63 {
        Some("must be 1 to 63 characters (it is the value of the lifeguard.dev/export label)")
    } else if !name.chars().all(ok) || !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        Some("lowercase letters, digits, '-' and '.' only, starting with a letter or digit")
    } else if !name.ends_with(|c: char| c.is_ascii_alphanumeric()) {
        Some("must end with a letter or digit")
    } else {
        None
    }
}
