//! `lifeguard simulate` flags and the command itself.

// A command's edge: usage errors go to the user on stderr.
#![allow(clippy::print_stderr)]

use crate::stop::Stop;
use std::io::Write;

use anyhow::{Context, Result};
use clap::ValueEnum;
use policies::simulate::{Assumptions, FeatureGates, GateDelay, ProbeChecks, Scenario, VERDICTS, Verdict};

use crate::input::Limits;
use crate::options::{POLICY_NAME, RunArgs};
use crate::simulate::fail_on::FailOnVerdict;

/// Output formats of `simulate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SimulateFormat {
    /// Per object and container, a compact timeline and one verdict line per scenario.
    Text,
    /// One entry per object, container and scenario (the stable fields docs/simulate.md lists).
    Json,
    /// One timeline picture per object and scenario, stacked in one SVG document.
    Svg,
    /// One self-contained HTML page: each container's verdicts with its SVG timelines inline.
    Html,
}

/// `lifeguard simulate` flags.
#[derive(Debug, clap::Args)]
pub struct SimulateArgs {
    /// Files, directories or `-` (stdin). Default: the current directory.
    #[arg(value_name = "PATH")]
    pub paths: Vec<String>,
    /// Scenario to run (repeatable): `boot[:DURATION]`, `stall:DURATION`,
    /// `pause:DURATION`, `wedge`, `delete`, `crash[:AFTER]`,
    /// `poststart-fail`; for the workload, `rollout` (its controller's
    /// rolling update) and `drain` (its nodes drained against its
    /// PodDisruptionBudgets). Default: boot, stall:2m, pause:5s, wedge and delete.
    #[arg(long = "scenario", value_name = "S", value_parser = parse_scenario)]
    pub scenarios: Vec<Scenario>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = SimulateFormat::Text)]
    pub format: SimulateFormat,
    /// Policy file or built-in pack, as for `lint` (its model-server,
    /// drain and dependency settings shape the simulation). Default: for
    /// each file, the nearest `.lifeguard.yaml` or `.lifeguard.yml`, as for `lint`.
    #[arg(long, env = "LIFEGUARD_POLICY", value_name = "FILE|PACK", value_parser = POLICY_NAME, hide_possible_values = true)]
    pub policy: Option<String>,
    /// What the probes really check, comma-separated
    /// `[CONTAINER/]PROBE=local|dependency` (e.g.
    /// `liveness=local,readiness=dependency`); wins over the
    /// `lifeguard.dev/probe-checks` annotation and what lifeguard infers.
    #[arg(long, value_name = "CHECKS", value_parser = parse_checks)]
    pub probe_checks: Option<ProbeChecks>,
    /// Seconds endpoint removal takes to reach every proxy after deletion.
    #[arg(long, value_name = "SECONDS", default_value_t = 2)]
    pub endpoint_propagation_seconds: u32,
    /// The longest request the app admits, in seconds (`delete`).
    #[arg(long, value_name = "SECONDS", default_value_t = 0)]
    pub request_seconds: u32,
    /// How long a preStop hook runs whose length its spec does not show (an
    /// `exec` of a script, an `httpGet`); wins over the
    /// `lifeguard.dev/prestop-seconds` annotation. Unstated, such a hook is
    /// taken as 0 s and the timeline says so.
    #[arg(long, value_name = "SECONDS")]
    pub prestop_seconds: Option<u32>,
    /// How long a postStart hook runs whose length its spec does not show
    /// (an `exec` of a script, an `httpGet`); wins over the
    /// `lifeguard.dev/poststart-seconds` annotation. Unstated, such a hook
    /// is taken as 0 s and the timeline says so.
    #[arg(long, value_name = "SECONDS")]
    pub poststart_seconds: Option<u32>,
    /// When the pod's readiness gates become True: seconds after its
    /// containers are first ready, or `never`; wins over the
    /// `lifeguard.dev/readiness-gates-seconds` annotation. Unstated, they
    /// are taken as True at once and the timeline says so.
    #[arg(long, value_name = "SECONDS|never", value_parser = parse_gate_delay)]
    pub readiness_gates_seconds: Option<GateDelay>,
    /// The cluster's feature gates the simulation reads, as the kubelet's
    /// flag: `ContainerStopSignals=true` (alpha, off by default in 1.37)
    /// sends `lifecycle.stopSignal` instead of SIGTERM.
    #[arg(long, value_name = "NAME=BOOL,...", value_parser = parse_feature_gates)]
    pub feature_gates: Option<FeatureGates>,
    /// The kubelet's CrashLoopBackOff ceiling
    /// (`crashLoopBackOff.maxContainerRestartPeriod` in its configuration).
    #[arg(long, value_name = "SECONDS", default_value_t = 300, value_parser = clap::value_parser!(u32).range(1..=300))]
    pub max_backoff_seconds: u32,
    /// The deletion's own grace period, as `kubectl delete --grace-period`
    /// gives it: it wins over the pod's `terminationGracePeriodSeconds` (`delete`).
    #[arg(long, value_name = "SECONDS")]
    pub delete_grace_seconds: Option<u32>,
    /// The nodes a DaemonSet runs a pod on, for its `rollout` (the manifest
    /// does not say; 3 when not given, and the output says so).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub nodes: Option<u32>,
    /// Exit 1 when a scenario ends in one of these verdicts (comma-separated
    /// or repeatable; `never` never fails). Default: restart-storm,
    /// boot-loop, sigkill-in-flight, rollout-stuck.
    #[arg(long, value_name = "VERDICT", value_delimiter = ',', value_parser = parse_fail_on)]
    pub fail_on: Vec<FailOnVerdict>,
    /// Also run the scenarios on each object as `lifeguard fix` would leave
    /// it, and show both side by side.
    #[arg(long)]
    pub diff_fix: bool,
    /// For `helm template` output: the chart's directory, as for `lint`.
    #[arg(long, value_name = "DIR")]
    pub helm_chart_root: Option<String>,
    /// Write the report to this file instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output_file: Option<std::path::PathBuf>,
    /// The flags `lint` and `fix` share (`--select`/`--ignore` shape the fixes `--diff-fix` applies).
    #[command(flatten)]
    pub run: RunArgs,
}

fn parse_scenario(s: &str) -> Result<Scenario, String> {
    Scenario::parse(s).map_err(|e| e.to_string())
}

fn parse_checks(s: &str) -> Result<ProbeChecks, String> {
    ProbeChecks::parse(s).map_err(|e| e.to_string())
}

fn parse_gate_delay(s: &str) -> Result<GateDelay, String> {
    GateDelay::parse(s).map_err(|e| e.to_string())
}

fn parse_feature_gates(s: &str) -> Result<FeatureGates, String> {
    FeatureGates::parse(s).map_err(|e| e.to_string())
}

fn parse_fail_on(s: &str) -> Result<FailOnVerdict, String> {
    if s == "never" {
        return Ok(FailOnVerdict::Never);
    }
    Verdict::from_name(s).map(FailOnVerdict::Verdict).ok_or_else(|| {
        let names: Vec<&str> = VERDICTS.iter().map(|v| v.name()).collect();
        format!("unknown verdict {s:?}; use never or one of {}", names.join(", "))
    })
}

/// Runs `lifeguard simulate`; returns the exit code.
pub fn run(args: SimulateArgs) -> Result<u8> {
    crate::options::set_color(&args.run);
    let Some(mut resolved) = crate::prepare::prepare(&args.paths, args.policy.as_deref(), &args.run) else {
        return Err(Stop::told());
    };
    if let Some(root) = args.helm_chart_root.as_deref().filter(|root| !std::path::Path::new(root).is_dir()) {
        return Err(Stop::usage(format!("--helm-chart-root {root:?} is not a directory (give the chart's directory)")));
    }
    let scenarios = if args.scenarios.is_empty() { Scenario::standard() } else { args.scenarios.clone() };
    let assumptions = Assumptions {
        endpoint_propagation_seconds: i64::from(args.endpoint_propagation_seconds),
        request_seconds: i64::from(args.request_seconds),
        probe_checks: args.probe_checks.clone().unwrap_or_default(),
        prestop_seconds: args.prestop_seconds.map(i64::from),
        poststart_seconds: args.poststart_seconds.map(i64::from),
        readiness_gates: args.readiness_gates_seconds,
        feature_gates: args.feature_gates.unwrap_or_default(),
        max_backoff_seconds: i64::from(args.max_backoff_seconds),
        delete_grace_seconds: args.delete_grace_seconds.map(i64::from),
        nodes: args.nodes.map(i64::from),
    };
    let options = crate::simulate::read::ReadOptions {
        scenarios: &scenarios,
        assumptions: &assumptions,
        diff_fix: args.diff_fix,
        helm_chart_root: args.helm_chart_root.as_deref(),
    };
    let out = crate::simulate::read::simulate_resolved(&mut resolved, &options, &Limits::default());
    let mut stderr = anstream::stderr();
    for e in &out.errors {
        write!(stderr, "{}", crate::report::text::input_error(e)).context("writing to stderr")?;
    }
    let report = match args.format {
        SimulateFormat::Text => crate::report::simulate::text::render(&out),
        SimulateFormat::Json => crate::report::simulate::json::render(&out),
        SimulateFormat::Svg => crate::report::simulate::svg::render(&out),
        SimulateFormat::Html => crate::report::simulate::html::render(&out),
    };
    match &args.output_file {
        Some(path) => crate::output::write_file_with(path, |w| w.write_all(report.as_bytes()))?,
        None => crate::output::write_stdout(&report)?,
    }
    if out.errors.is_empty() && out.simulated.is_empty() && !args.run.quiet {
        writeln!(stderr, "lifeguard: note: no pod-bearing object to simulate").context("writing to stderr")?;
    }
    Ok(out.exit_code(&args.fail_on))
}
