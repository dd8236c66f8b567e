//! Reports rendered as the input is linted: text, JSON, SARIF and GitHub
//! commands print finding by finding, so each document's findings are
//! rendered as soon as the document is linted (in input order, see
//! [`crate::pipeline::Keep`]) and dropped. Memory then holds the report's
//! text, not the findings, which take several times as much (their message,
//! help, fix and location, each in its own allocation). JUnit groups test
//! cases by file and object across the whole input, so it keeps them.
//!
//! The output is byte for byte what the whole-outcome renderers give (a
//! test holds them to it); they stay for library callers.

use std::borrow::Cow;
use std::io::Write;
use std::sync::Arc;

use policies::Severity;

use crate::lint::{Located, Outcome};
use crate::report::{Format, github, json, sarif, summary, text};

/// Rendered text is kept in pieces of about this size: one growing buffer
/// would hold up to twice the report while it doubles.
const PIECE: usize = 64 * 1024;

/// What a report rendered as it went keeps: the text, and the counts of the
/// findings it dropped.
#[derive(Debug, Default)]
pub struct Rendered {
    /// The text of the findings, in input order, in pieces.
    pieces: Vec<String>,
    /// Findings rendered: errors, warnings, info.
    by_severity: [usize; 3],
    /// Suppressed findings dropped (they are only counted).
    pub(crate) suppressed: usize,
    /// The most severe finding rendered of each file, in input order.
    worst: Vec<(Arc<str>, Severity)>,
}

fn slot(severity: Severity) -> usize {
    match severity {
        Severity::Error => 0,
        Severity::Warning => 1,
        Severity::Info => 2,
    }
}

impl Rendered {
    /// Findings rendered at `severity`.
    pub fn count(&self, severity: Severity) -> usize {
        self.by_severity[slot(severity)]
    }

    /// Findings rendered.
    pub fn total(&self) -> usize {
        self.by_severity.iter().sum()
    }

    /// Whether a finding of a file for which `fails` holds was rendered.
    pub fn any_fails(&self, fails: impl Fn(&str, Severity) -> bool) -> bool {
        self.worst.iter().any(|(file, worst)| fails(file, *worst))
    }

    // A piece grows as a string does, so a document's few findings take a
    // small one; whole pieces move from one `Rendered` to the next rather
    // than being copied again (see `absorb`).
    fn push_str(&mut self, text: &str) {
        match self.pieces.last_mut() {
            Some(last) if last.len() + text.len() <= PIECE => {
                // Doubling, but never past a piece: a string's own doubling
                // would leave up to half of each piece unused.
                if last.capacity() - last.len() < text.len() {
                    let want = (last.capacity() * 2).clamp(last.len() + text.len(), PIECE);
                    last.reserve_exact(want - last.len());
                }
                last.push_str(text);
            }
            _ => self.pieces.push(text.to_owned()),
        }
    }

    fn note(&mut self, l: &Located) {
        self.by_severity[slot(l.finding.severity)] += 1;
        self.worsen(&l.file, l.finding.severity);
    }

    /// Notes a finding of `file` at `severity`: files come in input order.
    fn worsen(&mut self, file: &Arc<str>, severity: Severity) {
        match self.worst.last_mut() {
            Some((last, worst)) if last == file => *worst = (*worst).max(severity),
            _ => self.worst.push((Arc::clone(file), severity)),
        }
    }

    /// Appends what a later part of the input rendered.
    pub fn absorb(&mut self, part: Rendered) {
        for piece in part.pieces {
            match self.pieces.last() {
                Some(last) if last.len() + piece.len() <= PIECE => self.push_str(&piece),
                _ => self.pieces.push(piece),
            }
        }
        for (count, more) in self.by_severity.iter_mut().zip(part.by_severity) {
            *count += more;
        }
        self.suppressed += part.suppressed;
        for (file, severity) in &part.worst {
            self.worsen(file, *severity);
        }
    }
}

/// The formats printed finding by finding.
#[derive(Debug)]
pub struct Render {
    format: Format,
    /// Whether the text format keeps its styles (see [`Render::plain`]).
    color: bool,
    /// SARIF's rule list, which a custom rule joins at its first finding.
    sarif: sarif::RulesSeen,
    /// Where a text finding is written before it joins the report: one
    /// buffer reused rather than a string per finding.
    scratch: String,
}

impl Render {
    /// `None` for JUnit, which groups test cases by file and object across
    /// the whole input.
    pub fn new(format: Format) -> Option<Render> {
        (format != Format::Junit).then(|| Render {
            format,
            color: true,
            sarif: sarif::RulesSeen::default(),
            scratch: String::new(),
        })
    }

    /// The same renderer, with the text format's styles left out: for a
    /// destination that would strip them (a pipe, a file, `NO_COLOR`), so
    /// the report is written as rendered rather than scanned again.
    pub fn plain(self) -> Render {
        Render { color: false, ..self }
    }

    /// Renders a document's findings into its outcome's text and drops
    /// them, with what only the report would read (the suppressed findings,
    /// the objects' records); the counts stay.
    pub(crate) fn document(&mut self, out: &mut Outcome) {
        let mut rendered = Rendered::default();
        for l in &out.findings {
            match self.format {
                Format::Json => rendered.push_str(&json_entry(&json::JsonFinding::new(l))),
                Format::Github => rendered.push_str(&github::finding(l)),
                Format::Sarif => rendered.push_str(&self.sarif.result_entry(l)),
                _ => {
                    self.scratch.clear();
                    text::write_finding(&mut self.scratch, l, self.color);
                    rendered.push_str(&self.scratch);
                }
            }
            rendered.note(l);
        }
        rendered.suppressed = out.suppressed.len();
        out.findings = Vec::new();
        out.suppressed = Vec::new();
        out.linted = Vec::new();
        out.rendered.absorb(rendered);
    }

    /// Appends to a JSON report entries that are not findings (`lifeguard
    /// audit --simulate`'s verdicts), after the findings rendered so far;
    /// other formats leave them out. They are not counted as findings.
    pub(crate) fn json_entries(&mut self, out: &mut Outcome, entries: &[serde_json::Value]) {
        if self.format != Format::Json {
            return;
        }
        let mut rendered = Rendered::default();
        for e in entries {
            rendered.push_str(&json_entry(e));
        }
        out.rendered.absorb(rendered);
    }

    /// Writes the whole report of `out` (whose findings were rendered as
    /// they came, and any it still holds after them): what the format's
    /// `render` gives for the same findings. `quiet`: text without its summary.
    pub fn write(mut self, out: &Outcome, quiet: bool, w: &mut dyn Write) -> std::io::Result<()> {
        let pieces = out.rendered.pieces.iter().map(String::as_str);
        match self.format {
            Format::Sarif => {
                let held: Vec<String> = out.findings.iter().map(|l| self.sarif.result_entry(l)).collect();
                sarif::write_streamed(out, self.sarif, pieces.chain(held.iter().map(String::as_str)), w)
            }
            Format::Json => {
                let held = out.findings.iter().map(|l| Cow::Owned(json_entry(&json::JsonFinding::new(l))));
                let errors = out.errors.iter().map(|e| Cow::Owned(json_entry(&json::JsonInputError::new(e))));
                let mut entries = pieces.map(Cow::Borrowed).chain(held).chain(errors).peekable();
                if entries.peek().is_none() {
                    return w.write_all(b"[]\n");
                }
                w.write_all(b"[")?;
                write_entries(entries, w)?;
                w.write_all(b"\n]\n")
            }
            Format::Github => {
                for piece in pieces {
                    w.write_all(piece.as_bytes())?;
                }
                for l in &out.findings {
                    w.write_all(github::finding(l).as_bytes())?;
                }
                for e in &out.errors {
                    w.write_all(github::input_error(e).as_bytes())?;
                }
                Ok(())
            }
            _ => {
                for piece in pieces {
                    w.write_all(piece.as_bytes())?;
                }
                for l in &out.findings {
                    self.scratch.clear();
                    text::write_finding(&mut self.scratch, l, self.color);
                    w.write_all(self.scratch.as_bytes())?;
                }
                if quiet {
                    return Ok(());
                }
                if out.finding_count() > 0 {
                    w.write_all(b"\n")?;
                }
                let line = summary::line(out);
                let line = if self.color { text::summary_line(&line) } else { text::plain_summary_line(&line) };
                w.write_all(line.as_bytes())
            }
        }
    }
}

/// One entry of the JSON array as `to_string_pretty` prints it inside the
/// array (indented one level), after its separator (`,` and a newline).
fn json_entry(entry: &impl serde::Serialize) -> String {
    indented(&serde_json::to_string_pretty(entry).unwrap_or_else(|_| "null".to_owned()), "  ")
}

/// Writes array entries made by [`indented`] (and pieces of them), each
/// after its separator, but for the first: the array's first item has none.
pub(crate) fn write_entries(entries: impl Iterator<Item = impl AsRef<str>>, w: &mut dyn Write) -> std::io::Result<()> {
    for (i, entry) in entries.enumerate() {
        let entry = entry.as_ref();
        w.write_all(if i == 0 { entry.strip_prefix(',').unwrap_or(entry) } else { entry }.as_bytes())?;
    }
    Ok(())
}

/// A value printed by `to_string_pretty` as it is printed inside an array
/// whose items sit at `indent`, after its separator (`,` and a newline).
/// Pretty JSON holds no raw newline inside a string, so every line is
/// indented as the nested value's would be.
pub(crate) fn indented(pretty: &str, indent: &str) -> String {
    let mut s = String::with_capacity(pretty.len() + (pretty.len() / 8 + 2) * indent.len());
    s.push(',');
    for line in pretty.split('\n') {
        s.push('\n');
        s.push_str(indent);
        s.push_str(line);
    }
    s
}
