//! `--format html` of `lint` and `audit`: one self-contained page (see
//! [`page`]) with every finding (its place, rule linked to its docs,
//! message, help and the fix note the text report prints) and a summary.
//! `audit --simulate` adds its workloads' verdicts and timelines among the
//! findings, as `simulate --format html` draws them
//! ([`crate::report::simulate::html`]).
//!
//! Findings are rendered as they stream by, as the text and JSON reports
//! are ([`crate::report::stream`]); only counts are kept for the summary
//! ([`crate::outcome::tally`]), which is written after the findings and shown above them
//! by the page's style (a flex column that puts it first).
//!
//! A finding carries its fix note, not the diff `fix --diff` prints: the
//! diff is of a whole file as fixed, which takes the fixer's own run over
//! it (parse, lint, patch, diff), and lint streams documents, not files.

pub(crate) mod escape;
pub(crate) mod page;

use std::io::Write;

use policies::Severity;

use crate::outcome::tally::{Counts, PLACES, Tally};
use crate::outcome::{InputError, InputLevel, Located, Origin, Outcome};
use crate::report::{summary, text};
use escape::push_escaped;
use policies::rules::docs_url;

/// Appends one finding as an `<article>` whose `data-severity` and
/// `data-rule` the page's filters read.
pub(crate) fn write_finding(s: &mut String, l: &Located) {
    let f = &l.finding;
    s.push_str("<article class=\"item finding ");
    s.push_str(page::class(Some(f.severity)));
    s.push_str("\" data-severity=\"");
    s.push_str(f.severity.as_str());
    s.push_str("\" data-rule=\"");
    push_escaped(s, &f.rule);
    s.push_str("\">\n<h3>");
    page::badge(s, Some(f.severity));
    s.push(' ');
    // A custom rule of a policy file has no page to link to.
    if policies::rules::find(&f.rule).is_some() {
        s.push_str("<a class=\"rule\" href=\"");
        push_escaped(s, &docs_url(&f.rule));
        s.push_str("\">");
        push_escaped(s, &f.rule);
        s.push_str("</a>");
    } else {
        s.push_str("<span class=\"rule\">");
        push_escaped(s, &f.rule);
        s.push_str("</span>");
    }
    s.push_str(" \u{b7} ");
    push_escaped(s, &l.object());
    s.push_str("</h3>\n<p class=\"where\">");
    if l.origin == Origin::File {
        let (file, line) = l.shown_at();
        s.push_str("<code>");
        push_escaped(s, &format!("{file}:{line}:{}", l.column));
        s.push_str("</code> ");
    }
    if let Some(container) = &f.container {
        s.push_str("container <code>");
        push_escaped(s, container);
        s.push_str("</code> ");
    }
    s.push_str("at <code>");
    push_escaped(s, &l.pointer);
    s.push_str("</code></p>\n<p class=\"message\">");
    push_escaped(s, &f.located_message());
    s.push_str("</p>\n");
    if !f.help.is_empty() {
        labelled(s, "help", "help:", &f.help);
    }
    if !f.assumptions.is_empty() {
        labelled(s, "assumes", "assumes:", &policies::assumption::joined(&f.assumptions));
    }
    let (label, note) = f.fix_labelled();
    labelled(s, "fix", label, &note);
    if let Some((label, note)) = text::helm_note(l) {
        labelled(s, "helm", &format!("{label}:"), &note);
    }
    s.push_str("</article>\n");
}

fn labelled(s: &mut String, class: &str, label: &str, text: &str) {
    s.push_str("<p class=\"");
    s.push_str(class);
    s.push_str("\"><span class=\"label\">");
    push_escaped(s, label);
    s.push_str("</span> ");
    push_escaped(s, text);
    s.push_str("</p>\n");
}

/// An input error, warning or note (a chart that did not render, a
/// duplicate key, a file with no object to check: what the text report
/// prints on stderr), as an item of its section.
fn input_diagnostic(s: &mut String, e: &InputError, level: InputLevel) {
    let (label, severity) = (level.label(), level.severity());
    s.push_str("<article class=\"item ");
    s.push_str(&label.replace(' ', "-"));
    s.push(' ');
    s.push_str(page::class(Some(severity)));
    s.push_str("\">\n<h3>");
    page::badge(s, Some(severity));
    s.push(' ');
    s.push_str(label);
    s.push_str(" \u{b7} <code>");
    let at = match (e.line, e.column) {
        (Some(l), Some(c)) => format!("{}:{l}:{c}", e.file),
        (Some(l), None) => format!("{}:{l}", e.file),
        _ => e.file.clone(),
    };
    push_escaped(s, &at);
    s.push_str("</code></h3>\n<p class=\"message\">");
    push_escaped(s, &e.message);
    s.push_str("</p>\n</article>\n");
}

/// The page's title: what ran.
fn title(out: &Outcome) -> &'static str {
    match out.origin {
        Origin::Cluster => "lifeguard audit",
        Origin::File => "lifeguard lint",
    }
}

/// Writes the whole page: the findings rendered so far (`pieces`), those
/// `out` still holds (counted into `tally` here), the input errors, then
/// the summary.
pub(crate) fn write_streamed<'a>(
    out: &Outcome,
    mut tally: Tally,
    pieces: impl Iterator<Item = &'a str>,
    w: &mut dyn Write,
) -> std::io::Result<()> {
    let mut s = String::new();
    page::open(&mut s, title(out), "rule");
    s.push_str("<section class=\"findings\" id=\"findings\">\n<h2>Findings</h2>\n");
    if out.finding_count() == 0 {
        s.push_str("<p>No findings.</p>\n");
    }
    w.write_all(s.as_bytes())?;
    for piece in pieces {
        w.write_all(piece.as_bytes())?;
    }
    let mut s = String::new();
    for l in &out.findings {
        s.clear();
        write_finding(&mut s, l);
        w.write_all(s.as_bytes())?;
    }
    tally.document(&out.findings);
    let mut s = String::from("</section>\n");
    // One section per level, each only when it has an item.
    let sections = [
        (
            InputLevel::Error,
            &out.errors,
            "input-errors",
            "Input errors",
            "What they name was not linted; the rest of the input was.",
        ),
        (
            InputLevel::Warning,
            &out.warnings,
            "input-warnings",
            "Input warnings",
            "The input was linted; these never change the exit code.",
        ),
        (
            InputLevel::Note,
            &out.notes,
            "input-notes",
            "Inputs with no object checked",
            "Each says why nothing of it was checked; these never change the exit code.",
        ),
    ];
    for (level, items, id, title, intro) in sections.into_iter().filter(|(_, items, ..)| !items.is_empty()) {
        s.push_str(&format!("<section class=\"errors\" id=\"{id}\">\n<h2>{title}</h2>\n<p>{intro}</p>\n"));
        for e in items {
            input_diagnostic(&mut s, e, level);
        }
        s.push_str("</section>\n");
    }
    summary_section(&mut s, out, &tally);
    page::close(&mut s);
    w.write_all(s.as_bytes())
}

fn counts_cells(s: &mut String, counts: &Counts) {
    for n in counts {
        s.push_str("<td class=\"n\">");
        s.push_str(&n.to_string());
        s.push_str("</td>");
    }
}

const COUNT_HEADS: &str = "<th>\u{2716} errors</th><th>\u{25B2} warnings</th><th>\u{2139} info</th>";

fn summary_section(s: &mut String, out: &Outcome, tally: &Tally) {
    s.push_str("<section class=\"summary\" id=\"summary\">\n<h2>Summary</h2>\n<p class=\"headline\">");
    push_escaped(s, &summary::line(out));
    s.push_str("</p>\n<table class=\"by-severity\">\n<tr><th>severity</th><th>findings</th></tr>\n");
    for severity in [Severity::Error, Severity::Warning, Severity::Info] {
        s.push_str("<tr><td>");
        page::badge(s, Some(severity));
        s.push_str("</td><td class=\"n\">");
        s.push_str(&out.count(severity).to_string());
        s.push_str("</td></tr>\n");
    }
    s.push_str("</table>\n");
    let place = if tally.cluster { "namespace" } else { "file" };
    if !tally.worst().is_empty() {
        s.push_str("<h3>Worst workloads</h3>\n<table class=\"worst\">\n<tr><th>workload</th><th>");
        s.push_str(place);
        s.push_str("</th>");
        s.push_str(COUNT_HEADS);
        s.push_str("</tr>\n");
        for (where_, object, counts) in tally.worst() {
            s.push_str("<tr><td>");
            push_escaped(s, object);
            s.push_str("</td><td><code>");
            push_escaped(s, where_);
            s.push_str("</code></td>");
            counts_cells(s, counts);
            s.push_str("</tr>\n");
        }
        s.push_str("</table>\n");
    }
    let places = tally.places();
    if !places.is_empty() {
        s.push_str("<h3>By ");
        s.push_str(place);
        s.push_str("</h3>\n<table class=\"by-place\">\n<tr><th>");
        s.push_str(place);
        s.push_str("</th>");
        s.push_str(COUNT_HEADS);
        s.push_str("</tr>\n");
        for (name, counts) in places.iter().take(PLACES) {
            s.push_str("<tr><td><code>");
            push_escaped(s, name);
            s.push_str("</code></td>");
            counts_cells(s, counts);
            s.push_str("</tr>\n");
        }
        s.push_str("</table>\n");
        if places.len() > PLACES {
            s.push_str(&format!("<p>and {} more with findings</p>\n", places.len() - PLACES));
        }
    }
    s.push_str("</section>\n");
}

/// Renders a whole outcome (for library callers; `lint` streams it).
pub fn render(out: &Outcome) -> String {
    let mut w = Vec::new();
    // Writing to a Vec does not fail.
    let _ = write_streamed(out, Tally::default(), std::iter::empty(), &mut w);
    String::from_utf8_lossy(&w).into_owned()
}
