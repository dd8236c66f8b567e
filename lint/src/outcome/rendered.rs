//! What a report rendered as the input was linted keeps in the outcome: the
//! text, and the counts of the findings it dropped (see
//! [`crate::report::stream`]).

use std::sync::Arc;

use policies::Severity;

use super::located::Located;
use super::tally::Tally;

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
    /// Findings the baseline accepts, dropped once rendered (SARIF's) or counted.
    pub(crate) baselined: usize,
    /// The most severe finding rendered of each file, in input order.
    worst: Vec<(Arc<str>, Severity)>,
    /// The counts of the HTML report's summary (`None` for other formats).
    pub(crate) tally: Option<Tally>,
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
    pub(crate) fn push_str(&mut self, text: &str) {
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

    /// Counts a finding whose text was pushed.
    pub(crate) fn note(&mut self, l: &Located) {
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

    /// The text, in input order.
    pub(crate) fn pieces(&self) -> impl Iterator<Item = &str> {
        self.pieces.iter().map(String::as_str)
    }

    /// Takes the text rendered so far, for a report written as it goes
    /// (`audit`'s namespaces); the counts stay.
    pub(crate) fn take_pieces(&mut self) -> Vec<String> {
        std::mem::take(&mut self.pieces)
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
        self.baselined += part.baselined;
        for (file, severity) in &part.worst {
            self.worsen(file, *severity);
        }
        match (&mut self.tally, part.tally) {
            (Some(mine), Some(more)) => mine.absorb(more),
            (mine, more) => *mine = mine.take().or(more),
        }
    }
}
