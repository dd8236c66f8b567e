//! Cutting a stream at its document markers, so that its documents can be
//! parsed on several cores and still report the stream's own positions.
//!
//! A line that starts with `---`, then a blank or the end of the line, at
//! column 0 ([`starts_document`], YAML's rule), starts a document wherever
//! it appears outside a quoted scalar or a flow collection. A part that is cut inside one of those does not parse alone
//! (the quote or bracket is left open), so the caller, which parses each
//! part, falls back to reading the whole stream in one piece whenever a part
//! fails. Directives (`%YAML`, `%TAG`) apply to the document after them,
//! which a part parsed alone would not see: a stream with a line starting
//! `%` is not cut at all.

use memchr::memmem;
use policies::yaml::Mark;
use policies::yaml::markers::starts_document;

/// One document's text (or the whole stream, when it is not cut) and where
/// it starts in the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    /// Byte range in the stream.
    pub start: usize,
    /// End of the byte range (exclusive).
    pub end: usize,
    /// Lines (`line`) and characters (`index`) of the stream before the part.
    pub origin: Mark,
}

/// The parts of `text`, in order, covering all of it.
pub fn parts(text: &str) -> Vec<Part> {
    let mut cuts = vec![0];
    // The cut runs on one thread before any part is parsed: memchr's
    // searches are several times faster than `str`'s on a large stream.
    let bytes = text.as_bytes();
    if !(text.starts_with('%') || memmem::find(bytes, b"\n%").is_some()) {
        cuts.extend(memmem::find_iter(bytes, b"\n---").map(|at| at + 1).filter(|&at| starts_document(&text[at..])));
    }
    cuts.push(text.len());
    let mut origin = Mark::default();
    let mut out = Vec::with_capacity(cuts.len() - 1);
    for pair in cuts.windows(2) {
        let (start, end) = (pair[0], pair[1]);
        if start == end {
            continue;
        }
        out.push(Part { start, end, origin });
        let part = &text[start..end];
        let clamp = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
        origin.line = origin.line.saturating_add(clamp(memchr::memchr_iter(b'\n', part.as_bytes()).count()));
        origin.index = origin.index.saturating_add(clamp(part.chars().count()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<&str> {
        parts(text).iter().map(|p| &text[p.start..p.end]).collect()
    }

    #[test]
    fn cuts_at_markers_in_column_zero_only() {
        let text = "a: 1\n---\nb: |\n  ---\n--- # c\nc: 3\n---x: 4\n----\n---\r\nd: é\n---";
        assert_eq!(
            texts(text),
            ["a: 1\n", "---\nb: |\n  ---\n", "--- # c\nc: 3\n---x: 4\n----\n", "---\r\nd: é\n", "---"]
        );
        let p = parts(text);
        assert_eq!((p[1].origin.line, p[1].origin.index), (1, 5));
        assert_eq!((p[4].origin.line, p[4].origin.index), (10, text.chars().count() as u32 - 3));
    }

    #[test]
    fn a_directive_keeps_the_stream_whole() {
        assert_eq!(texts("%YAML 1.2\n---\na: 1\n---\nb: 2\n").len(), 1);
        assert_eq!(texts("a: 1\n...\n%TAG ! tag:x,2000:\n---\nb: 2\n").len(), 1);
        assert_eq!(texts("").len(), 0);
    }
}
