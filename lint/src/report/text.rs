//! The default, human output. Styles are plain ANSI; the writer strips them
//! when stdout is not a terminal or `NO_COLOR` is set.

use std::fmt::Write as _;

use anstyle::{AnsiColor, Style};
use policies::Severity;

use crate::lint::{InputError, Located, Outcome};
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
    let f = &l.finding;
    let sev = severity_style(f.severity);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{BOLD}{}:{}:{}{BOLD:#} {sev}{}{sev:#}[{BOLD}{}{BOLD:#}] {}",
        l.file,
        l.line,
        l.column,
        f.severity,
        f.rule,
        l.object()
    );
    let _ = writeln!(s, "  {}", f.message);
    if !f.help.is_empty() {
        let _ = writeln!(s, "  {DIM}help:{DIM:#} {}", f.help);
    }
    s
}

/// Renders one input error.
pub fn input_error(e: &InputError) -> String {
    let sev = severity_style(Severity::Error);
    let at = match (e.line, e.column) {
        (Some(l), Some(c)) => format!("{}:{l}:{c}", e.file),
        (Some(l), None) => format!("{}:{l}", e.file),
        _ => e.file.clone(),
    };
    format!("{BOLD}{at}{BOLD:#} {sev}input error{sev:#}: {}\n", e.message)
}

/// Renders the whole report: findings, blank line, summary.
pub fn render(out: &Outcome) -> String {
    let mut s = String::new();
    for l in &out.findings {
        s.push_str(&finding(l));
    }
    if !out.findings.is_empty() {
        s.push('\n');
    }
    let _ = writeln!(s, "{BOLD}{}{BOLD:#}", summary::line(out));
    s
}
