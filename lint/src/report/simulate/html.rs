//! `simulate --format html`: the page `lint --format html` uses, with per
//! object and container a table of its scenarios' verdicts, the text
//! renderer's timeline of each ([`super::text::outcome_lines`]) folded
//! away, and the SVG timelines of [`super::svg`] inline; a summary of the
//! verdicts, worst objects first.
//!
//! A simulation holds its whole run for every format (the timelines are
//! laid out together), so this page is rendered at once as well.
//! `lifeguard audit --simulate --format html` puts the same object
//! sections ([`write_object`]) among its findings, a namespace at a time.

use policies::Severity;
use policies::simulate::{ContainerOutcome, Verdict, WorkloadOutcome, plural, seconds};

use super::text::{label, outcome_lines};
use crate::outcome::Origin;
use crate::report::html::escape::push_escaped;
use crate::report::html::page;
use crate::simulate::read::{SimulateRun, Simulated};

/// How many objects the summary lists, worst first.
const WORST: usize = 10;

/// Renders a whole run as one page.
pub fn render(run: &SimulateRun) -> String {
    let mut s = String::new();
    page::open(&mut s, "lifeguard simulate", "verdict");
    s.push_str("<section class=\"objects\" id=\"objects\">\n<h2>Objects</h2>\n");
    if run.simulated.is_empty() {
        s.push_str("<p>No pod-bearing object to simulate.</p>\n");
    }
    for o in &run.simulated {
        write_object(&mut s, o);
    }
    s.push_str("</section>\n");
    if !run.errors.is_empty() {
        s.push_str("<section class=\"errors\" id=\"input-errors\">\n<h2>Input errors</h2>\n<ul>\n");
        for e in &run.errors {
            s.push_str("<li>");
            page::badge(&mut s, Some(Severity::Error));
            s.push_str(" <code>");
            let at = e.line.map_or_else(|| e.file.clone(), |l| format!("{}:{l}", e.file));
            push_escaped(&mut s, &at);
            s.push_str("</code> ");
            push_escaped(&mut s, &e.message);
            s.push_str("</li>\n");
        }
        s.push_str("</ul>\n</section>\n");
    }
    summary(&mut s, run);
    page::close(&mut s);
    s
}

/// Verdicts by severity: error, warning, info, fine.
type Counts = [usize; 4];

fn slot(v: Verdict) -> usize {
    match v.severity() {
        Some(Severity::Error) => 0,
        Some(Severity::Warning) => 1,
        Some(Severity::Info) => 2,
        None => 3,
    }
}

fn counts(s: &Simulated) -> Counts {
    let mut c = Counts::default();
    for o in &s.simulation.outcomes {
        c[slot(o.verdict)] += 1;
    }
    for o in &s.simulation.workload {
        c[slot(o.verdict)] += 1;
    }
    c
}

/// Appends one simulated object: its place, then per container its
/// verdicts, their timelines as text and its SVG timeline.
pub(crate) fn write_object(s: &mut String, o: &Simulated) {
    let sim = &o.simulation;
    s.push_str("<article class=\"object\">\n<h3>");
    match o.origin {
        Origin::File => push_escaped(s, &format!("{}:{}: {}", o.file, o.line, label(sim))),
        // Among the audit's findings, which are headed `rule · object`.
        Origin::Cluster => push_escaped(s, &format!("simulate \u{b7} {}", label(sim))),
    }
    s.push_str("</h3>\n");
    if let Some(fixed) = &o.fixed {
        s.push_str("<p><span class=\"label\">as <code>lifeguard fix</code> leaves it:</span> ");
        if fixed.fixes.is_empty() {
            s.push_str("no fix applies</p>\n");
        } else {
            s.push_str("</p>\n<ul>\n");
            for f in &fixed.fixes {
                s.push_str("<li>");
                push_escaped(s, f);
                s.push_str("</li>\n");
            }
            s.push_str("</ul>\n");
        }
    }
    // A pod of several containers: its row above its containers, as in the text.
    let mut shown: Option<&[String]> = None;
    for (i, x) in sim.outcomes.iter().enumerate() {
        let Some(pod) = x.pod.as_ref().filter(|p| shown != Some(p.containers.as_slice())) else { continue };
        shown = Some(&pod.containers);
        let same = |y: &&ContainerOutcome| y.pod.as_ref().is_some_and(|p| p.containers == pod.containers);
        let of_pod: Vec<&ContainerOutcome> = sim.outcomes[i..].iter().take_while(same).collect();
        s.push_str("<section class=\"pod\">\n<pre>");
        for line in super::text::pod_lines(&of_pod) {
            push_escaped(s, &line);
            s.push('\n');
        }
        s.push_str("</pre>\n</section>\n");
    }
    // Outcomes come grouped by container, in the manifest's order.
    let mut i = 0;
    while let Some(first) = sim.outcomes.get(i) {
        let end =
            sim.outcomes[i..].iter().position(|x| x.pointer != first.pointer).map_or(sim.outcomes.len(), |n| i + n);
        container(s, o, i..end);
        i = end;
    }
    workload(s, o);
    s.push_str("</article>\n");
}

/// The workload scenarios: a verdict per scenario (and as fixed), the
/// timeline as text folded away, and the capacity pictures.
fn workload(s: &mut String, o: &Simulated) {
    let sim = &o.simulation;
    if sim.workload.is_empty() && sim.not_simulated.is_empty() {
        return;
    }
    s.push_str("<section class=\"workload\">\n<h4>workload</h4>\n");
    s.push_str("<table class=\"verdicts\">\n<tr><th>scenario</th><th>verdict</th><th>how</th>");
    if o.fixed.is_some() {
        s.push_str("<th>as fixed</th>");
    }
    s.push_str("</tr>\n");
    for (k, x) in sim.workload.iter().enumerate() {
        row_open(s, x.verdict, &x.scenario);
        workload_verdict(s, x);
        s.push_str("</td><td>");
        push_escaped(s, &x.how);
        s.push_str("</td>");
        if let Some(fixed) = &o.fixed {
            s.push_str("<td>");
            if let Some(after) = fixed.simulation.workload.get(k) {
                workload_verdict(s, after);
            }
            s.push_str("</td>");
        }
        s.push_str("</tr>\n");
    }
    for n in &sim.not_simulated {
        s.push_str("<tr><td>");
        push_escaped(s, &n.scenario);
        s.push_str("</td><td colspan=\"2\">not simulated: ");
        push_escaped(s, &n.why);
        s.push_str("</td></tr>\n");
    }
    s.push_str("</table>\n");
    if sim.workload.is_empty() {
        s.push_str("</section>\n");
        return;
    }
    s.push_str("<details>\n<summary>steps as text</summary>\n<pre>");
    for x in &sim.workload {
        for l in super::workload::lines(x) {
            push_escaped(s, &l);
            s.push('\n');
        }
    }
    s.push_str("</pre>\n</details>\n<figure>\n");
    s.push_str(&super::svg::render_workload(o));
    s.push_str("</figure>\n</section>\n");
}

fn workload_verdict(s: &mut String, x: &WorkloadOutcome) {
    verdict_cell(s, x.verdict, &x.message, &x.assumptions);
}

fn container(s: &mut String, o: &Simulated, range: std::ops::Range<usize>) {
    let outcomes = &o.simulation.outcomes[range.clone()];
    let Some(first) = outcomes.first() else { return };
    s.push_str("<section class=\"container\">\n<h4>container <code>");
    push_escaped(s, &first.container);
    s.push_str("</code>");
    if o.origin == Origin::File {
        let line = o.container_lines.get(range.start).copied().unwrap_or(o.line);
        s.push_str(&format!(" (line {line})"));
    }
    s.push_str("</h4>\n");
    s.push_str("<table class=\"verdicts\">\n<tr><th>scenario</th><th>verdict</th><th>restarts (worst)</th><th>out of endpoints (worst)</th>");
    if o.fixed.is_some() {
        s.push_str("<th>as fixed</th>");
    }
    s.push_str("</tr>\n");
    for (k, x) in outcomes.iter().enumerate() {
        row_open(s, x.verdict, &x.scenario);
        verdict(s, x);
        s.push_str(&format!(
            "</td><td class=\"n\">{}</td><td class=\"n\">{} s</td>",
            x.worst.restarts,
            seconds(x.worst.unready_ms)
        ));
        if let Some(fixed) = &o.fixed {
            s.push_str("<td>");
            if let Some(after) = fixed.simulation.outcomes.get(range.start + k) {
                verdict(s, after);
            }
            s.push_str("</td>");
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n<details>\n<summary>timelines as text</summary>\n<pre>");
    for x in outcomes {
        for l in outcome_lines(x) {
            push_escaped(s, &l);
            s.push('\n');
        }
    }
    s.push_str("</pre>\n</details>\n<figure>\n");
    // The SVG's strings are escaped by its renderer; it is inline, so no image is fetched.
    s.push_str(&super::svg::render_container(o, &first.container));
    s.push_str("</figure>\n</section>\n");
}

/// A verdict's table row up to its verdict cell: the row's severity and
/// verdict for the page's filters, and the scenario.
fn row_open(s: &mut String, v: Verdict, scenario: &str) {
    s.push_str("<tr class=\"verdict\" data-severity=\"");
    s.push_str(v.severity().map_or("ok", Severity::as_str));
    s.push_str("\" data-rule=\"");
    s.push_str(v.name());
    s.push_str("\"><td>");
    push_escaped(s, scenario);
    s.push_str("</td><td>");
}

fn verdict(s: &mut String, x: &ContainerOutcome) {
    verdict_cell(s, x.verdict, &x.message, &x.assumptions);
}

/// A verdict's badge, its name where the badge does not say it, its line
/// and what it assumes: a container's, or a workload scenario's.
fn verdict_cell(s: &mut String, v: Verdict, message: &str, assumptions: &[policies::Assumption]) {
    page::badge(s, v.severity());
    // The badge already says `ok`; another verdict is named after it.
    if v.severity().is_some() || v.name() != "ok" {
        s.push_str(" <b>");
        s.push_str(v.name());
        s.push_str("</b>");
    }
    s.push_str(": ");
    push_escaped(s, message);
    if !assumptions.is_empty() {
        s.push_str("<br><span class=\"assumes\">assumes: ");
        push_escaped(s, &policies::assumption::joined(assumptions));
        s.push_str("</span>");
    }
}

fn summary(s: &mut String, run: &SimulateRun) {
    let mut total = Counts::default();
    for o in &run.simulated {
        for (t, n) in total.iter_mut().zip(counts(o)) {
            *t += n;
        }
    }
    s.push_str("<section class=\"summary\" id=\"summary\">\n<h2>Summary</h2>\n<p class=\"headline\">");
    let verdicts: usize = total.iter().sum();
    s.push_str(&format!(
        "{} ({} error, {} warning, {} info, {} ok) for {}; {}",
        plural(verdicts as i64, "verdict"),
        total[0],
        total[1],
        total[2],
        total[3],
        plural(run.simulated.len() as i64, "object"),
        plural(run.errors.len() as i64, "input error")
    ));
    s.push_str("</p>\n<table class=\"by-severity\">\n<tr><th>severity</th><th>verdicts</th></tr>\n");
    let severities = [Some(Severity::Error), Some(Severity::Warning), Some(Severity::Info), None];
    for (severity, n) in severities.into_iter().zip(total) {
        s.push_str("<tr><td>");
        page::badge(s, severity);
        s.push_str(&format!("</td><td class=\"n\">{n}</td></tr>\n"));
    }
    s.push_str("</table>\n");
    let mut worst: Vec<(&Simulated, Counts)> =
        run.simulated.iter().map(|o| (o, counts(o))).filter(|(_, c)| c[..3].iter().any(|&n| n > 0)).collect();
    worst.sort_by(|a, b| b.1[..3].cmp(&a.1[..3]));
    if !worst.is_empty() {
        s.push_str("<h3>Worst objects</h3>\n<table class=\"worst\">\n<tr><th>object</th><th>file</th><th>\u{2716} errors</th><th>\u{25B2} warnings</th><th>\u{2139} info</th></tr>\n");
        for (o, c) in worst.iter().take(WORST) {
            s.push_str("<tr><td>");
            push_escaped(s, &label(&o.simulation));
            s.push_str("</td><td><code>");
            push_escaped(s, &format!("{}:{}", o.file, o.line));
            s.push_str(&format!(
                "</code></td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>\n",
                c[0], c[1], c[2]
            ));
        }
        s.push_str("</table>\n");
        if worst.len() > WORST {
            s.push_str(&format!("<p>and {} more with a verdict to read</p>\n", worst.len() - WORST));
        }
    }
    s.push_str("</section>\n");
}
