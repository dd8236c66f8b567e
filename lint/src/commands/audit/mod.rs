//! `lifeguard audit`: its flags (`args.rs`) and its steps: connect and
//! choose what to read ([`start`]), read and judge the namespaces one at a
//! time, writing each one's findings as it goes ([`judge_namespaces`]),
//! then the report's end, the summary and the exit code ([`finish`]). The
//! reading, judging and writing themselves are `crate::audit`'s.

// A command's edge: it tells the user on stderr what it reads and what failed.
#![allow(clippy::print_stderr)]

mod args;

use std::io::Write as _;
use std::time::Duration;

use anyhow::{Context, Result};
use policies::Policy;

pub use args::{AuditArgs, AuditFormat};

use crate::audit::connect::{self, Connected};
use crate::audit::fetch::Fetcher;
use crate::audit::judge::{Judged, Row};
use crate::audit::read::{Read, Reading, kinds, namespaces, warnings};
use crate::audit::resources::Resource;
use crate::audit::verdicts::{self, Simulation};
use crate::audit::write::Writer;
use crate::audit::{policy, table};
use crate::options::FailOn;
use crate::outcome::{Origin, Outcome};
use crate::output::Sink;
use crate::report::policy_report::Reports;
use crate::report::stream::Render;
use crate::report::{self, Format};
use crate::stop::Stop;

/// Runs `lifeguard audit`; returns the exit code.
pub fn run(args: AuditArgs) -> Result<u8> {
    args.color.choice(|name| std::env::var(name).ok()).write_global();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().context("starting the runtime")?;
    runtime.block_on(audit(args))
}

async fn audit(args: AuditArgs) -> Result<u8> {
    let (started, reading) = start(&args).await?;
    let mut run = Run::new(&args, &started, reading).await?;
    judge_namespaces(&args, &started, &mut run).await;
    finish(&args, &started, run)
}

/// What the audit reads, settled before it reads any namespace.
struct Started {
    /// The cluster, as the summary names it.
    describe: String,
    fetcher: Fetcher,
    policy: Policy,
    policy_name: String,
    namespaces: Vec<String>,
    kinds: Vec<Resource>,
}

/// Connects, loads the policy (the cluster's, a file's or a pack) with
/// `--select` and `--ignore`, and lists the namespaces and kinds to read;
/// what could not be discovered is noted in the [`Reading`] it returns.
async fn start(args: &AuditArgs) -> Result<(Started, Reading)> {
    let timeout = Duration::from_secs(args.request_timeout);
    let connected = connect::connect(args.kubeconfig.as_deref(), args.context.as_deref(), timeout)
        .await
        .map_err(|e| Stop::usage(e.to_string()))?;
    let Connected { client, describe, .. } = connected;
    let fetcher = Fetcher::new(client, timeout, args.page_size);
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
        eprintln!("lifeguard: auditing {describe} with {policy_name}");
    }
    let namespaces = namespaces(&args.namespace, &fetcher).await.map_err(|e| Stop::usage(e.to_string()))?;
    let mut reading = Reading::default();
    let kinds = kinds(&args.kinds, policy.declared_pod_kinds(), &fetcher, &mut reading)
        .await
        .map_err(|e| Stop::usage(e.to_string()))?;
    if args.verbose {
        let names: Vec<String> = kinds.iter().map(Resource::name).collect();
        eprintln!("lifeguard: reading {} in {} namespaces", names.join(", "), namespaces.len());
    }
    Ok((Started { describe, fetcher, policy, policy_name, namespaces, kinds }, reading))
}

/// How the audit's report is written: finding by finding as `lint`'s
/// formats are (`None`: JUnit, which keeps them all), or as a report
/// object per namespace.
enum Output {
    Findings(Option<Render>),
    Reports(Reports),
}

/// The report being written, and what the audit has judged so far.
struct Run<'a> {
    output: Output,
    writer: Option<Writer<'a>>,
    sink: Sink,
    plain: bool,
    total: Outcome,
    rows: Vec<Row>,
    simulation: Option<Simulation>,
    reading: Reading,
}

impl<'a> Run<'a> {
    /// Opens the output and, with `--write-reports`, checks that the
    /// cluster serves the report kind before anything is read.
    async fn new(args: &AuditArgs, started: &'a Started, reading: Reading) -> Result<Run<'a>> {
        let policy = &started.policy;
        let plain = args.output_file.is_none()
            && anstream::AutoStream::choice(&std::io::stdout()) == anstream::ColorChoice::Never;
        // Every result of the run is stamped with its start.
        let at = std::time::SystemTime::now();
        let output = match args.format {
            AuditFormat::Findings(format) => {
                Output::Findings(Render::new(format).map(|r| if plain { r.plain() } else { r }))
            }
            AuditFormat::Reports(kind) => Output::Reports(Reports::new(kind, policy, at)),
        };
        let writer = args.write_reports.map(|kind| Writer::new(&started.fetcher, Reports::new(kind, policy, at)));
        if let Some(writer) = &writer {
            if let Err(e) = writer.check_served().await {
                return Err(Stop::usage(e.to_string()));
            }
        }
        // Opened now: the findings are written as each namespace is judged, so
        // memory does not grow with the cluster (SARIF, HTML and JUnit, whole
        // documents, are written at the end).
        let sink = match &args.output_file {
            Some(path) => Sink::file(path)?,
            None => Sink::stdout(plain),
        };
        let total =
            Outcome { origin: Origin::Cluster, policy: Some(started.policy_name.clone()), ..Outcome::default() };
        let html = args.format == AuditFormat::Findings(Format::Html);
        let simulation = args.simulate.then(|| {
            let simulation = Simulation::new(&args.scenarios);
            // The page draws each workload's timelines; no other format needs their events.
            if html { simulation.keeping_timelines() } else { simulation }
        });
        Ok(Run { output, writer, sink, plain, total, rows: Vec::new(), simulation, reading })
    }
}

/// Reads and judges each namespace in turn, writes its findings (or its
/// report object) and drops them; stops at an error that ends the audit.
async fn judge_namespaces(args: &AuditArgs, started: &Started, run: &mut Run<'_>) {
    let read = Read {
        fetcher: &started.fetcher,
        kinds: &started.kinds,
        selector: args.selector.as_deref(),
        policy: &started.policy,
    };
    // JUnit groups cases across the whole report, so it keeps the findings.
    for name in &started.namespaces {
        let failed_before = run.reading.failed;
        // Without a report object to build, each page's findings are
        // rendered as it is judged: a namespace's findings are not held.
        let per_page = match &mut run.output {
            Output::Findings(Some(render)) if run.writer.is_none() => Some(render),
            _ => None,
        };
        let (judged, objects) = read.namespace(name, &mut run.reading, run.simulation.as_mut(), per_page).await;
        if run.reading.fatal.is_some() {
            break;
        }
        if args.verbose {
            eprintln!("lifeguard: namespace {name}: {objects} objects");
        }
        let Judged { outcome: mut part, row, verdicts, workloads } = judged;
        let timelines = run.simulation.as_mut().map(Simulation::take_kept).unwrap_or_default();
        if let Some(writer) = &mut run.writer {
            // A namespace read in part would lose the results of what was not read.
            if run.reading.failed == failed_before {
                let reports = writer.reports.objects(name, &workloads, &part.findings, &verdicts);
                if let Err(e) = writer.write(name, &reports).await {
                    run.reading.fatal = Some(e.to_string());
                }
            } else {
                run.reading
                    .warnings
                    .push(format!("the report of namespace {name} was not written: not all of it could be read"));
            }
        }
        match &mut run.output {
            Output::Findings(Some(render)) => {
                render.document(&mut part);
                render.json_entries(&mut part, &verdicts);
                render.html_part(&mut part, &verdicts::html(timelines));
            }
            Output::Findings(None) => {}
            Output::Reports(reports) => reports.namespace(&mut part, name, &workloads, &verdicts),
        }
        run.total.files += 1;
        run.total.absorb(part);
        let total = &mut run.total;
        match &mut run.output {
            Output::Findings(Some(render)) => run.sink.write_with(|w| render.stream(total, w)),
            Output::Findings(None) => {}
            Output::Reports(_) => run.sink.write_with(|w| report::policy_report::stream(total, w)),
        }
        run.rows.push(row);
        if run.reading.fatal.is_some() {
            break;
        }
    }
}

/// Ends the report (the whole document of SARIF, HTML and JUnit, the
/// verdicts and the table of text), tells the warnings, the summary and
/// what was written, and returns the exit code: 2 when the audit stopped
/// or read nothing, else by the findings.
fn finish(args: &AuditArgs, started: &Started, run: Run<'_>) -> Result<u8> {
    let Run { output, writer, mut sink, plain, total, rows, simulation, reading } = run;
    let mut stderr = anstream::stderr();
    let simulated = simulation.as_ref().map(Simulation::render);
    let not_simulated = simulation.as_ref().map(|s| s.errors.as_slice()).unwrap_or_default();
    for w in warnings(&reading).iter().chain(not_simulated) {
        writeln!(stderr, "lifeguard: warning: {w}").context("writing to stderr")?;
    }
    let flag = args.fail_on.map(FailOn::severity);
    let threshold = flag.unwrap_or(Some(started.policy.deny_severity));
    let rules_run = report::junit::rules_run(&started.policy);
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
        writeln!(stderr, "lifeguard: error: nothing could be read from {}", started.describe)
            .context("writing to stderr")?;
        return Ok(2);
    }
    Ok(total.exit_code(threshold))
}
