//! `lifeguard audit` flags, parsed once into plain values.

use std::path::PathBuf;

use policies::simulate::Scenario;

use clap::ValueEnum as _;
use clap::builder::PossibleValue;

use crate::options::{FailOn, POLICY_NAME, RULE_NAME};
use crate::report::Format;
use crate::report::policy_report::ReportKind;

/// Output formats of `lifeguard audit`: those of `lint`, and the report
/// objects of the cluster's namespaces, which only an audit has (their
/// results name workloads by uid).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditFormat {
    /// A format `lint` shares.
    Findings(Format),
    /// A report object per namespace.
    Reports(ReportKind),
}

/// `lint`'s formats, then the report objects: from their enums, so a
/// format `lint` gains is audit's too.
static VARIANTS: std::sync::LazyLock<Vec<AuditFormat>> = std::sync::LazyLock::new(|| {
    let findings = Format::value_variants().iter().copied().map(AuditFormat::Findings);
    findings.chain(ReportKind::value_variants().iter().copied().map(AuditFormat::Reports)).collect()
});

impl clap::ValueEnum for AuditFormat {
    fn value_variants<'a>() -> &'a [Self] {
        &VARIANTS
    }

    // Each variant's name and help are its own enum's: written once.
    fn to_possible_value(&self) -> Option<PossibleValue> {
        match self {
            AuditFormat::Findings(f) => f.to_possible_value(),
            AuditFormat::Reports(k) => k.to_possible_value(),
        }
    }
}

/// `lifeguard audit` flags.
#[derive(Debug, Clone, clap::Args)]
pub struct AuditArgs {
    /// The kubeconfig file. Default: `KUBECONFIG` (several files joined by
    /// `:` are merged, as kubectl merges them), else `~/.kube/config`, else
    /// the pod's service account when run in a cluster.
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use. Default: its current context.
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// Audit only this namespace (repeatable or comma-separated).
    #[arg(long, short = 'n', value_name = "NAMESPACE", value_delimiter = ',', conflicts_with = "all_namespaces")]
    pub namespace: Vec<String>,
    /// Audit every namespace (the default without `--namespace`); needs `list` on namespaces.
    #[arg(long, short = 'A')]
    pub all_namespaces: bool,
    /// Audit only workloads whose labels match this selector (`app=web,tier!=cache`),
    /// as `kubectl get -l` selects them. Services are read whole: the selector
    /// narrows what is judged, not what it is judged with.
    #[arg(long, short = 'l', value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// Audit only these kinds (repeatable or comma-separated): `Deployment`,
    /// `deployments`, `deployments.apps` or, for a custom resource,
    /// `rollouts.argoproj.io`. Default: every pod-bearing kind, custom
    /// resources with a pod template included.
    #[arg(long, value_name = "KIND", value_delimiter = ',')]
    pub kinds: Vec<String>,
    /// Policy file, built-in pack (`default`, `strict`, `gpu-serving`), or the
    /// policy a cluster's ConfigMap holds: `configmap:NAMESPACE/NAME` (its
    /// `policy.yaml` key, as the webhook's chart writes it). Default: the
    /// nearest `.lifeguard.yaml` from the current directory, else `default`.
    #[arg(long, env = "LIFEGUARD_POLICY", value_name = "FILE|PACK|configmap:NS/NAME", value_parser = POLICY_NAME, hide_possible_values = true)]
    pub policy: Option<String>,
    /// Run only these rules (repeatable or comma-separated).
    #[arg(long, value_name = "RULE", value_delimiter = ',', value_parser = RULE_NAME, hide_possible_values = true)]
    pub select: Vec<String>,
    /// Do not run these rules (repeatable or comma-separated); wins over `--select`.
    #[arg(long, value_name = "RULE", value_delimiter = ',', value_parser = RULE_NAME, hide_possible_values = true)]
    pub ignore: Vec<String>,
    /// Also run each workload through `lifeguard simulate`'s scenarios and
    /// report its verdicts (`restart-storm`, `boot-loop`,
    /// `sigkill-in-flight`, ...): a section of the text report, an entry
    /// per container and scenario in JSON (`rule` is `simulate`). Verdicts
    /// do not change the exit code.
    #[arg(long)]
    pub simulate: bool,
    /// With `--simulate`, a scenario to run instead of the standard set
    /// (repeatable): `boot[:DURATION]`, `stall:DURATION`, `pause:DURATION`,
    /// `wedge`, `delete`, `crash[:AFTER]`.
    #[arg(long = "scenario", value_name = "S", value_parser = parse_scenario, requires = "simulate")]
    pub scenarios: Vec<Scenario>,
    /// Output format.
    ///
    /// `openreports` and `policyreport` print a report object per namespace
    /// with a workload judged, as YAML for `kubectl apply -f -` (see
    /// docs/audit.md).
    #[arg(long, value_enum, default_value_t = AuditFormat::Findings(Format::Text))]
    pub format: AuditFormat,
    /// Also write each namespace's report to the cluster with server-side
    /// apply (field manager `lifeguard`): a rerun replaces it, and a
    /// namespace with no workload left loses it. Needs the CRD, and a whole
    /// audit (not narrowed by `--selector` or `--kinds`), as the report
    /// replaces the namespace's.
    #[arg(long, value_enum, value_name = "KIND", conflicts_with_all = ["selector", "kinds"])]
    pub write_reports: Option<ReportKind>,
    /// Exit 1 when a finding has at least this severity. Default: the
    /// policy's `denySeverity` (`error` in the default policy).
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOn>,
    /// Write the report to this file instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,
    /// How long one request to the API server may take, in seconds, retries
    /// not included: an API server that stops answering fails the audit
    /// within this time instead of hanging it.
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub request_timeout: u64,
    /// Objects asked for in one page of a LIST.
    #[arg(long, value_name = "N", default_value_t = 500, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub page_size: u32,
    /// Print only the findings: no per-namespace table, no summary line.
    #[arg(long, short)]
    pub quiet: bool,
    /// Also say, on stderr, what is read and how many objects each LIST gave.
    #[arg(long, short, conflicts_with = "quiet")]
    pub verbose: bool,
    /// When to colour the output.
    #[arg(long, value_enum, default_value_t = crate::options::ColorWhen::Auto, value_name = "WHEN")]
    pub color: crate::options::ColorWhen,
}

fn parse_scenario(s: &str) -> Result<Scenario, String> {
    Scenario::parse(s).map_err(|e| e.to_string())
}
