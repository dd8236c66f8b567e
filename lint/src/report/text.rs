//! The default, human output. Styles are plain ANSI; the writer strips them
//! when stdout is not a terminal or `NO_COLOR` is set.

use std::fmt::Write as _;

use anstyle::{AnsiColor, Style};
use policies::Severity;

use crate::outcome::{InputError, InputLevel, Located, Origin, Outcome};
use crate::report::summary;

const BOLD: Style = Style::new().bold();
const DIM: Style = Style::new().dimmed();

fn severity_style(s: Severity) -> Style {
    let color = match s {
        Severity::Error => AnsiColor::Red,
        Severity::Warning => AnsiColor::Yellow,
        Severity::Info => AnsiColor::Blue,
    };
    Style::new().fg_color(Some(color.into())).bold()
}

/// Renders one finding:
/// `file:line:col error[rule] Kind/ns/name` then the message and help, indented.
pub fn finding(l: &Located) -> String {
    let mut s = String::new();
    write_finding(&mut s, l, true);
    s
}

/// Appends [`finding`] to `s`, without its styles when `color` is false: a
/// report for a pipe or a file is then written as rendered, not scanned to
/// strip them. Written in place, as a stream's report is rendered finding
/// by finding and a string per finding was a good part of its cost.
pub(crate) fn write_finding(s: &mut String, l: &Located, color: bool) {
    let f = &l.finding;
    let (sev, bold, dim) =
        if color { (severity_style(f.severity), BOLD, DIM) } else { (Style::new(), Style::new(), Style::new()) };
    if l.origin == Origin::Cluster {
        // A cluster's object has no line: it and the field's pointer locate the finding.
        open(s, bold);
        let _ = write!(s, "{}", l.label());
        close(s, bold);
        s.push(' ');
        styled(s, sev, f.severity.as_str());
        s.push('[');
        styled(s, bold, &f.rule);
        let _ = writeln!(s, "] {}", l.pointer);
    } else {
        // For `helm template` output this names the template; the rendered position follows below.
        let (file, line) = l.shown_at();
        open(s, bold);
        let _ = write!(s, "{file}:{line}:{}", l.template_column());
        close(s, bold);
        s.push(' ');
        styled(s, sev, f.severity.as_str());
        s.push('[');
        styled(s, bold, &f.rule);
        let _ = writeln!(s, "] {}", l.label());
    }
    push_line(s, "  ", &f.located_message());
    if !f.help.is_empty() {
        s.push_str("  ");
        styled(s, dim, "help:");
        push_line(s, " ", &f.help);
    }
    if !f.assumptions.is_empty() {
        s.push_str("  ");
        styled(s, dim, "assumes:");
        push_line(s, " ", &policies::assumption::joined_brief(&f.assumptions));
    }
    let (label, note) = f.fix_labelled();
    s.push_str("  ");
    styled(s, dim, label);
    push_line(s, " ", &note);
    if let Some((label, note)) = helm_note(l) {
        s.push_str("  ");
        open(s, dim);
        s.push_str(label);
        s.push(':');
        close(s, dim);
        push_line(s, " ", &note);
    }
}

// A stream's report writes several pieces per finding: plain text goes in
// without the formatting machinery.
fn open(s: &mut String, style: Style) {
    if style != Style::new() {
        let _ = write!(s, "{style}");
    }
}

fn close(s: &mut String, style: Style) {
    if style != Style::new() {
        let _ = write!(s, "{style:#}");
    }
}

fn styled(s: &mut String, style: Style, text: &str) {
    open(s, style);
    s.push_str(text);
    close(s, style);
}

fn push_line(s: &mut String, before: &str, text: &str) {
    s.push_str(before);
    s.push_str(text);
    s.push('\n');
}

/// For `helm template` output, the other location: the rendered position
/// when the finding is shown in its template, else the template and why
/// its line is not shown. `(label, text)`.
pub fn helm_note(l: &Located) -> Option<(&'static str, String)> {
    let t = l.template.as_ref()?;
    if l.template_line().is_some() {
        return Some(("rendered", format!("{}:{}:{}", l.file, l.line, l.column)));
    }
    // A Kustomize build names the object's own file, not a template.
    let label = if t.is_kustomize() { "source" } else { "template" };
    Some(match t.why_rendered_line() {
        Some(why) => (label, format!("{} ({why}; the rendered line is shown)", t.path)),
        None => (label, t.path.clone()),
    })
}

/// Renders one input error.
pub fn input_error(e: &InputError) -> String {
    input_message(InputLevel::Error, e)
}

/// Renders one message about an input: an error, a warning or a note
/// (warnings and notes never change the exit code).
pub fn input_message(level: InputLevel, e: &InputError) -> String {
    let (sev, label) = (severity_style(level.severity()), level.label());
    let at = match (e.line, e.column) {
        (Some(l), Some(c)) => format!("{}:{l}:{c}", e.file),
        (Some(l), None) => format!("{}:{l}", e.file),
        _ => e.file.clone(),
    };
    format!("{BOLD}{at}{BOLD:#} {sev}{label}{sev:#}: {}\n", e.message)
}

/// Renders the findings alone (`--quiet`).
pub fn findings(out: &Outcome) -> String {
    out.findings.iter().map(finding).collect()
}

/// Renders the whole report: findings, blank line, summary.
pub fn render(out: &Outcome) -> String {
    let mut s = findings(out);
    if out.finding_count() > 0 {
        s.push('\n');
    }
    s.push_str(&summary_line(&summary::line(out)));
    s
}

/// The summary as the text report ends with it.
pub(crate) fn summary_line(line: &str) -> String {
    format!("{BOLD}{line}{BOLD:#}\n")
}

/// [`summary_line`] without its style.
pub(crate) fn plain_summary_line(line: &str) -> String {
    format!("{line}\n")
}
