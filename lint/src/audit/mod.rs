//! `lifeguard audit`: judges what runs in a cluster now, through the
//! Kubernetes API, with the engine, policy and report formats of `lint`.
//! Namespaces are read one at a time (their Services, then each kind,
//! page by page), each page judged as it comes and dropped, each
//! namespace's findings rendered and dropped: memory holds a page of
//! objects and one namespace's findings, not the cluster.

// A command's edge: it tells the user on stderr what it reads and what failed.
#![allow(clippy::print_stderr)]

pub mod args;
pub mod connect;
pub mod connect_error;
pub mod fetch;
pub mod identity;
pub mod judge;
pub mod policy;
pub mod resources;
pub mod table;
pub mod transport;
pub mod verdicts;
pub mod write;

use crate::stop::Stop;
use std::collections::BTreeMap;
use std::io::Write as _;
use std::time::Duration;

use anyhow::{Context, Result};
use policies::Policy;
use policies::model::DeclaredPodKind;
use serde_json::Value;

pub use args::{AuditArgs, AuditFormat};

use crate::options::FailOn;
use crate::outcome::{Origin, Outcome};
use crate::report::policy_report::Reports;
use crate::report::stream::Render;
use crate::report::{self, Format};
use fetch::{FetchError, Fetcher};
use judge::{Judge, Judged, Row};
use resources::Resource;
use verdicts::Simulation;
use write::Writer;

/// Runs `lifeguard audit`; returns the exit code.
pub fn run(args: AuditArgs) -> Result<u8> {
    args.color.choice(|name| std::env::var(name).ok()).write_global();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().context("starting the runtime")?;
    runtime.block_on(audit(args))
}

/// How the audit's report is written: finding by finding as `lint`'s
/// formats are (`None`: JUnit, which keeps them all), or as a report
/// object per namespace.
enum Output {
    Findings(Option<Render>),
    Reports(Reports),
}

/// What the audit read and could not read.
#[derive(Default)]
struct Reading {
    /// Lists that succeeded.
    lists: usize,
    /// Lists that did not.
    failed: usize,
    /// Per resource (`jobs.batch`), the namespaces where it could not be listed, and why.
    denied: BTreeMap<String, (Vec<String>, String)>,
    /// Other warnings, in order.
    warnings: Vec<String>,
    /// The error that stopped the audit.
    fatal: Option<String>,
}

async fn audit(args: AuditArgs) -> Result<u8> {
    let timeout = Duration::from_secs(args.request_timeout);
    let connected = connect::connect(args.kubeconfig.as_deref(), args.context.as_deref(), timeout)
        .await
        .map_err(|e| Stop::usage(e.to_string()))?;
    let fetcher = Fetcher::new(connected.client, timeout, args.page_size);
    let (policy, policy_name) =
        policy::load(args.policy.as_deref(), &fetcher).await.map_err(|e| Stop::usage(e.to_string()))?;
    // As for `lint`: a mistyped `--select` would otherwise run no rule and
    // pass the whole cluster.
    if let Some(e) = crate::options::unknown_selected([&policy], &args.select, &args.ignore) {
        return Err(Stop::usage(e.to_string()));
    }
    let policy =
        crate::options::select_rules(policy, &args.select, &args.ignore).map_err(|e| Stop::usage(e.to_string()))?;
    if args.verbose {
        eprintln!("lifeguard: auditing {} with {policy_name}", connected.describe);
    }
    let namespaces = namespaces(&args, &fetcher).await.map_err(|e| Stop::usage(e.to_string()))?;
    let mut reading = Reading::default();
    let kinds = kinds(&args, policy.declared_pod_kinds(), &fetcher, &mut reading)
        .await
        .map_err(|e| Stop::usage(e.to_string()))?;
    if args.verbose {
        let names: Vec<String> = kinds.iter().map(Resource::name).collect();
        eprintln!("lifeguard: reading {} in {} namespaces", names.join(", "), namespaces.len());
    }

    let plain =
        args.output_file.is_none() && anstream::AutoStream::choice(&std::io::stdout()) == anstream::ColorChoice::Never;
    // Every result of the run is stamped with its start.
    let started = std::time::SystemTime::now();
    let mut output = match args.format {
        AuditFormat::Findings(format) => {
            Output::Findings(Render::new(format).map(|r| if plain { r.plain() } else { r }))
        }
        AuditFormat::Reports(kind) => Output::Reports(Reports::new(kind, &policy, started)),
    };
    let mut writer = args.write_reports.map(|kind| Writer::new(&fetcher, Reports::new(kind, &policy, started)));
    if let Some(writer) = &writer {
        if let Err(e) = writer.check_served().await {
            return Err(Stop::usage(e.to_string()));
        }
    }
    // Opened now: the findings are written as each namespace is judged, so
    // memory does not grow with the cluster (SARIF, HTML and JUnit, whole
    // documents, are written at the end).
    let mut sink = match &args.output_file {
        Some(path) => crate::output::Sink::file(path)?,
        None => crate::output::Sink::stdout(plain),
    };
    let mut total = Outcome { origin: Origin::Cluster, policy: Some(policy_name.clone()), ..Outcome::default() };
    let mut rows: Vec<Row> = Vec::new();
    let html = args.format == AuditFormat::Findings(Format::Html);
    let mut simulation = args.simulate.then(|| {
        let simulation = Simulation::new(&args.scenarios);
        // The page draws each workload's timelines; no other format needs their events.
        if html { simulation.keeping_timelines() } else { simulation }
    });
    // JUnit groups cases across the whole report, so it keeps the findings.
    for name in namespaces {
        let failed_before = reading.failed;
        let read = Read { fetcher: &fetcher, kinds: &kinds, selector: args.selector.as_deref(), policy: &policy };
        // Without a report object to build, each page's findings are
        // rendered as it is judged: a namespace's findings are not held.
        let per_page = match &mut output {
            Output::Findings(Some(render)) if writer.is_none() => Some(render),
            _ => None,
        };
        let (judged, objects) = read.namespace(&name, &mut reading, simulation.as_mut(), per_page).await;
        if reading.fatal.is_some() {
            break;
        }
        if args.verbose {
            eprintln!("lifeguard: namespace {name}: {objects} objects");
        }
        let Judged { outcome: mut part, row, verdicts, workloads } = judged;
        let timelines = simulation.as_mut().map(Simulation::take_kept).unwrap_or_default();
        if let Some(writer) = &mut writer {
            // A namespace read in part would lose the results of what was not read.
            if reading.failed == failed_before {
                let reports = writer.reports.objects(&name, &workloads, &part.findings, &verdicts);
                if let Err(e) = writer.write(&name, &reports).await {
                    reading.fatal = Some(e.to_string());
                }
            } else {
                reading
                    .warnings
                    .push(format!("the report of namespace {name} was not written: not all of it could be read"));
            }
        }
        match &mut output {
            Output::Findings(Some(render)) => {
                render.document(&mut part);
                render.json_entries(&mut part, &verdicts);
                render.html_part(&mut part, &verdicts::html(timelines));
            }
            Output::Findings(None) => {}
            Output::Reports(reports) => reports.namespace(&mut part, &name, &workloads, &verdicts),
        }
        total.files += 1;
        total.absorb(part);
        match &mut output {
            Output::Findings(Some(render)) => sink.write_with(|w| render.stream(&mut total, w)),
            Output::Findings(None) => {}
            Output::Reports(_) => sink.write_with(|w| report::policy_report::stream(&mut total, w)),
        }
        rows.push(row);
        if reading.fatal.is_some() {
            break;
        }
    }

    let mut stderr = anstream::stderr();
    let simulated = simulation.as_ref().map(Simulation::render);
    let not_simulated = simulation.as_ref().map(|s| s.errors.as_slice()).unwrap_or_default();
    for w in warnings(&reading).iter().chain(not_simulated) {
        writeln!(stderr, "lifeguard: warning: {w}").context("writing to stderr")?;
    }
    let flag = args.fail_on.map(FailOn::severity);
    let threshold = flag.unwrap_or(Some(policy.deny_severity));
    let rules_run = report::junit::rules_run(&policy);
    let text = args.format == AuditFormat::Findings(Format::Text);
    let quiet = args.quiet;
    let color = !plain && args.output_file.is_none();
    let write_report = |w: &mut dyn std::io::Write| -> std::io::Result<()> {
        match output {
            Output::Findings(Some(render)) => render.write(&total, true, w)?,
            Output::Findings(None) => {
                w.write_all(report::junit::render(&total, &rules_run, &|_| threshold).as_bytes())?;
            }
            Output::Reports(_) => report::policy_report::write(&total, w)?,
        }
        // The verdicts were asked for: printed even with --quiet.
        if let Some(section) = simulated.as_deref().filter(|_| text) {
            if total.finding_count() > 0 {
                w.write_all(b"\n")?;
            }
            w.write_all(section.as_bytes())?;
        }
        if text && !quiet {
            if total.finding_count() > 0 || simulated.is_some() {
                w.write_all(b"\n")?;
            }
            w.write_all(table::render(&rows).as_bytes())?;
            w.write_all(b"\n")?;
            let line = report::summary::line(&total);
            let line = if color { report::text::summary_line(&line) } else { report::text::plain_summary_line(&line) };
            w.write_all(line.as_bytes())?;
        }
        Ok(())
    };
    sink.write_with(write_report);
    sink.finish()?;
    if !quiet && (!text || args.output_file.is_some()) {
        if let Some(section) = simulated.as_deref().filter(|_| !text) {
            writeln!(stderr, "{section}").context("writing to stderr")?;
        }
        write!(stderr, "{}", table::render(&rows)).context("writing to stderr")?;
        writeln!(stderr, "{}", report::summary::line(&total)).context("writing to stderr")?;
    }
    if let Some(writer) = writer.as_ref().filter(|_| !quiet) {
        writeln!(
            stderr,
            "lifeguard: wrote {} {} in {} namespace{} ({} removed: parts no longer needed, or namespaces with no workload left)",
            writer.written,
            writer.reports.kind().crd(),
            writer.namespaces,
            if writer.namespaces == 1 { "" } else { "s" },
            writer.removed
        )
        .context("writing to stderr")?;
    }
    if let Some(fatal) = &reading.fatal {
        writeln!(stderr, "lifeguard: error: {fatal}; the audit stopped (what was read before is reported)")
            .context("writing to stderr")?;
        return Ok(2);
    }
    if reading.lists == 0 {
        writeln!(stderr, "lifeguard: error: nothing could be read from {}", connected.describe)
            .context("writing to stderr")?;
        return Ok(2);
    }
    Ok(total.exit_code(threshold))
}

/// The namespaces to audit: `--namespace`'s, else every namespace.
async fn namespaces(args: &AuditArgs, fetcher: &Fetcher) -> Result<Vec<String>, String> {
    if !args.namespace.is_empty() {
        let mut named = args.namespace.clone();
        named.dedup();
        return Ok(named);
    }
    let resource = Resource::new("", "v1", "namespaces", "Namespace");
    let mut names = Vec::new();
    fetcher
        .list_all(&resource, |page| {
            names.extend(
                page.iter().filter_map(|n| n.pointer("/metadata/name").and_then(Value::as_str)).map(str::to_owned),
            );
        })
        .await
        .map_err(|e| match e {
            FetchError::Denied { .. } => {
                format!("{e}; name the namespaces to audit with --namespace (-n), or grant `list` on namespaces")
            }
            e => e.to_string(),
        })?;
    names.sort();
    Ok(names)
}

/// The kinds to read: the built-in pod-bearing kinds and the custom
/// resources with a pod template (or declared by the policy's
/// `podTemplates`), narrowed by `--kinds`.
async fn kinds(
    args: &AuditArgs,
    declared: &[DeclaredPodKind],
    fetcher: &Fetcher,
    reading: &mut Reading,
) -> Result<Vec<Resource>, String> {
    let mut all = Resource::built_in();
    let wanted = |r: &Resource| args.kinds.is_empty() || args.kinds.iter().any(|k| r.named_by(k));
    let custom_wanted = args.kinds.is_empty() || args.kinds.iter().any(|k| !all.iter().any(|r| r.named_by(k)));
    if custom_wanted {
        match discover_custom(fetcher, &args.kinds, declared).await {
            Ok(custom) => all.extend(custom),
            // Every later request would be refused the same way.
            Err(e @ FetchError::Refused { .. }) => return Err(e.to_string()),
            Err(e) => reading.warnings.push(format!("custom resources were not discovered: {e}")),
        }
    }
    let unknown: Vec<&String> = args.kinds.iter().filter(|k| !all.iter().any(|r| r.named_by(k))).collect();
    if let Some(k) = unknown.first() {
        let known: Vec<String> = all.iter().map(Resource::name).collect();
        return Err(format!("--kinds {k:?}: no pod-bearing kind of that name is served (known: {})", known.join(", ")));
    }
    Ok(all.into_iter().filter(wanted).collect())
}

/// The custom resources whose schema has a pod template, those whose pod
/// templates the engine knows (a LeaderWorkerSet's, a RayCluster's) or the
/// policy declares, and any that `--kinds` names outright (a schema may
/// leave the template open).
async fn discover_custom(
    fetcher: &Fetcher,
    named: &[String],
    declared: &[DeclaredPodKind],
) -> Result<Vec<Resource>, FetchError> {
    let discovery = fetcher.get_as("/apis", resources::AGGREGATED_DISCOVERY, "discover the API groups", "get").await?;
    let candidates = resources::candidates(&discovery);
    let mut by_version: BTreeMap<String, Vec<Resource>> = BTreeMap::new();
    for c in candidates {
        by_version.entry(c.api_version()).or_default().push(c);
    }
    let mut out = Vec::new();
    for (api_version, resources) in by_version {
        let (outright, rest): (Vec<Resource>, Vec<Resource>) = resources
            .into_iter()
            .partition(|r| r.known_pod_bearing() || r.declared_in(declared) || named.iter().any(|k| r.named_by(k)));
        out.extend(outright);
        if rest.is_empty() {
            continue;
        }
        let path = format!("/openapi/v3/apis/{api_version}");
        let schema =
            fetcher.get_as(&path, "application/json", &format!("read the schema of {api_version}"), "get").await?;
        let kinds = resources::kinds_with_pod_template(&schema);
        out.extend(rest.into_iter().filter(|r| kinds.contains(&r.kind)));
    }
    Ok(out)
}

/// What reading a namespace takes.
struct Read<'a> {
    fetcher: &'a Fetcher,
    kinds: &'a [Resource],
    selector: Option<&'a str>,
    policy: &'a Policy,
}

impl Read<'_> {
    /// Reads and judges one namespace: its Services, PodDisruptionBudgets
    /// and HorizontalPodAutoscalers, then every kind, each
    /// page judged as it is listed. Returns what was judged and how many
    /// objects were read.
    async fn namespace(
        &self,
        name: &str,
        reading: &mut Reading,
        mut simulation: Option<&mut Simulation>,
        mut render: Option<&mut Render>,
    ) -> (Judged, usize) {
        let mut services = Vec::new();
        let services = match self.fetcher.list(&resources::services(), name, None, |page| services.extend(page)).await {
            Ok(_) => {
                reading.lists += 1;
                Some(services)
            }
            Err(e) => {
                note(reading, &resources::services(), name, e);
                None
            }
        };
        let mut judge = Judge::new(name, services.as_deref(), self.policy);
        drop(services);
        // Budgets and autoscalers are context as the Services are; where
        // they cannot be listed, pdb-blocks-eviction judges without them
        // (and the audit says so).
        for resource in resources::disruption_context() {
            match self.fetcher.list(&resource, name, None, |page| judge.add_context(&page)).await {
                Ok(_) => reading.lists += 1,
                Err(e) => note(reading, &resource, name, e),
            }
        }
        let mut objects = 0;
        for kind in self.kinds {
            if reading.fatal.is_some() {
                break;
            }
            let each = |page: Vec<Value>| {
                judge.objects(&page, simulation.as_deref_mut());
                if let Some(render) = render.as_deref_mut() {
                    judge.render(render);
                }
            };
            match self.fetcher.list(kind, name, self.selector, each).await {
                Ok(n) => {
                    reading.lists += 1;
                    objects += n;
                }
                Err(e) => note(reading, kind, name, e),
            }
        }
        (judge.finish(), objects)
    }
}

/// Notes a list that failed: refused lists are warnings (the rest is
/// audited), anything else stops the audit.
fn note(reading: &mut Reading, resource: &Resource, namespace: &str, e: FetchError) {
    reading.failed += 1;
    match e {
        FetchError::Denied { verb, .. } => {
            let entry = reading.denied.entry(resource.name()).or_insert_with(|| (Vec::new(), verb.to_owned()));
            entry.0.push(namespace.to_owned());
        }
        // A custom resource removed while the audit ran.
        FetchError::NotFound { .. } => reading.warnings.push(e.to_string()),
        e => reading.fatal = Some(e.to_string()),
    }
}

fn warnings(reading: &Reading) -> Vec<String> {
    let mut out = reading.warnings.clone();
    for (resource, (namespaces, verb)) in &reading.denied {
        let shown: Vec<&str> = namespaces.iter().take(5).map(String::as_str).collect();
        let more = if namespaces.len() > 5 { format!(" and {} more", namespaces.len() - 5) } else { String::new() };
        let what = if resource == "services" {
            "readiness-probe-missing and prestop-bridge-missing judged their pods as lint does without Services"
        } else if resource == "poddisruptionbudgets.policy" || resource == "horizontalpodautoscalers.autoscaling" {
            "pdb-blocks-eviction judged their pods without them"
        } else {
            "its objects there were not audited"
        };
        out.push(format!(
            "cannot list {resource} in namespace{} {}{more}: the credentials lack `{verb}` on {resource}; {what}",
            if namespaces.len() == 1 { "" } else { "s" },
            shown.join(", "),
        ));
    }
    out
}
