//! Positions as the parser gives them (line 1-based, column in characters)
//! and as LSP wants them (line 0-based, column in UTF-16 code units, the
//! encoding every client supports), and text edits between two versions.

use lsp_types::{Position, Range, TextEdit};
use similar::{DiffOp, TextDiff};

/// Where each line of a text starts, to turn positions around.
#[derive(Debug, Clone)]
pub struct Lines<'a> {
    text: &'a str,
    /// Byte offset of each line's first character.
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    /// Indexes `text`'s lines (`\n`, `\r\n` and a lone `\r` end one, as in YAML).
    pub fn new(text: &'a str) -> Lines<'a> {
        let mut starts = vec![0];
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\n' => starts.push(i + 1),
                b'\r' if bytes.get(i + 1) != Some(&b'\n') => starts.push(i + 1),
                _ => {}
            }
            i += 1;
        }
        Lines { text, starts }
    }

    /// The text of line `line` (0-based), without its line break.
    fn line(&self, line: usize) -> &'a str {
        let start = self.starts.get(line).copied().unwrap_or(self.text.len());
        let end = self.starts.get(line + 1).copied().unwrap_or(self.text.len());
        self.text.get(start..end).unwrap_or_default().trim_end_matches(['\n', '\r'])
    }

    /// The LSP position of the parser's `line` (1-based) and `column`
    /// (0-based, in characters); past the end of the line, its end.
    pub fn position(&self, line: u32, column: u32) -> Position {
        let index = line.saturating_sub(1) as usize;
        let text = self.line(index);
        let units: usize = text.chars().take(column as usize).map(char::len_utf16).sum();
        Position { line: index as u32, character: units as u32 }
    }

    /// The byte offset of an LSP position (clamped to its line and to the text).
    pub fn offset(&self, position: Position) -> usize {
        let index = position.line as usize;
        let Some(&start) = self.starts.get(index) else { return self.text.len() };
        let text = self.line(index);
        let mut units = 0;
        for (at, c) in text.char_indices() {
            if units >= position.character as usize {
                return start + at;
            }
            units += c.len_utf16();
        }
        start + text.len()
    }

    /// The position of a byte offset.
    pub fn position_of_offset(&self, offset: usize) -> Position {
        let line = self.starts.partition_point(|&s| s <= offset).saturating_sub(1);
        let start = self.starts[line];
        let units: usize = self.text.get(start..offset).unwrap_or_default().chars().map(char::len_utf16).sum();
        Position { line: line as u32, character: units as u32 }
    }
}

/// The edits that turn `old` into `new`, a line-level hunk each; `keep`
/// picks the hunks to include by their first old line (0-based; for an
/// insertion, the line it follows).
pub fn edits(old: &str, new: &str, keep: impl Fn(usize) -> bool) -> Vec<TextEdit> {
    let lines = Lines::new(old);
    let diff = TextDiff::from_lines(old, new);
    let (old_lines, new_lines): (Vec<&str>, Vec<&str>) = (diff.old_slices().to_vec(), diff.new_slices().to_vec());
    let byte_of = |slices: &[&str], index: usize| -> usize { slices[..index].iter().map(|s| s.len()).sum() };
    let mut out = Vec::new();
    for op in diff.ops() {
        let (old_range, new_range) = match *op {
            DiffOp::Equal { .. } => continue,
            DiffOp::Delete { old_index, old_len, new_index } => (old_index..old_index + old_len, new_index..new_index),
            DiffOp::Insert { old_index, new_index, new_len } => (old_index..old_index, new_index..new_index + new_len),
            DiffOp::Replace { old_index, old_len, new_index, new_len } => {
                (old_index..old_index + old_len, new_index..new_index + new_len)
            }
        };
        // An insertion belongs with the line it follows: new lines at the
        // end of a document come before the next one's `---`.
        let anchor = if old_range.is_empty() { old_range.start.saturating_sub(1) } else { old_range.start };
        if !keep(anchor) {
            continue;
        }
        let from = byte_of(&old_lines, old_range.start);
        let to = byte_of(&old_lines, old_range.end);
        let text = new_lines[new_range].concat();
        out.push(TextEdit {
            range: Range { start: lines.position_of_offset(from), end: lines.position_of_offset(to) },
            new_text: text,
        });
    }
    out
}

/// `text` with LSP edits applied (as a client applies them: all against
/// the original text, none overlapping).
pub fn apply(text: &str, edits: &[TextEdit]) -> String {
    let lines = Lines::new(text);
    let mut spans: Vec<(usize, usize, &str)> =
        edits.iter().map(|e| (lines.offset(e.range.start), lines.offset(e.range.end), e.new_text.as_str())).collect();
    spans.sort_by_key(|s| (s.0, s.1));
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (from, to, new) in spans {
        out.push_str(text.get(at..from).unwrap_or_default());
        out.push_str(new);
        at = to.max(at);
    }
    out.push_str(text.get(at..).unwrap_or_default());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_utf16_units() {
        let text = "a: é\nb: 𝄞x\r\nc: 1";
        let lines = Lines::new(text);
        // 𝄞 is one character, two UTF-16 units.
        assert_eq!(lines.position(2, 4), Position { line: 1, character: 5 });
        assert_eq!(lines.offset(Position { line: 1, character: 5 }), text.find('x').expect("x"));
        assert_eq!(lines.position(3, 0), Position { line: 2, character: 0 });
        assert_eq!(lines.offset(Position { line: 9, character: 0 }), text.len());
        assert_eq!(lines.position_of_offset(text.find('c').expect("c")), Position { line: 2, character: 0 });
    }

    #[test]
    fn edits_reproduce_the_new_text_and_can_be_narrowed() {
        let old = "a: 1\nb: 2\nc: 3\nd: 4\n";
        let new = "a: 1\nb: 20\nc: 3\nd: 4\ne: 5\n";
        let all = edits(old, new, |_| true);
        assert_eq!(all.len(), 2);
        assert_eq!(apply(old, &all), new);
        let first = edits(old, new, |line| line < 2);
        assert_eq!(apply(old, &first), "a: 1\nb: 20\nc: 3\nd: 4\n");
    }
}
