//! Text positions for editing: the parser counts characters, `String`
//! slicing counts bytes, and edits must keep the file's line endings.

/// Character-to-byte offsets for one text (identity for ASCII, the common case).
pub(crate) struct Offsets<'a> {
    text: &'a str,
    /// Byte offset of every character; empty when the text is ASCII.
    bytes: Vec<usize>,
}

impl<'a> Offsets<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let bytes = if text.is_ascii() { Vec::new() } else { text.char_indices().map(|(b, _)| b).collect() };
        Offsets { text, bytes }
    }

    /// Byte offset of a character index (the text's length past the end).
    pub(crate) fn byte(&self, index: u32) -> usize {
        let i = index as usize;
        if self.bytes.is_empty() {
            i.min(self.text.len())
        } else {
            self.bytes.get(i).copied().unwrap_or(self.text.len())
        }
    }
}

/// The line break the file uses: CRLF when its first line ends with one.
pub(crate) fn newline_of(text: &str) -> &'static str {
    match text.find('\n') {
        Some(i) if i > 0 && text.as_bytes()[i - 1] == b'\r' => "\r\n",
        _ => "\n",
    }
}

/// Byte offset of the start of the line holding `at`.
pub(crate) fn line_start(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].rfind('\n').map_or(0, |i| i + 1)
}

/// Byte offset just past the line break ending the line that holds `at`,
/// or `None` when that line is the last one and has no line break.
pub(crate) fn next_line_start(text: &str, at: usize) -> Option<usize> {
    let at = at.min(text.len());
    text[at..].find('\n').map(|i| at + i + 1)
}

/// The line holding `at`, without its line break.
pub(crate) fn line_at(text: &str, at: usize) -> &str {
    let start = line_start(text, at);
    let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    text[start..end].trim_end_matches('\r')
}

/// The leading spaces and tabs of a line.
pub(crate) fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// Skips whitespace, line breaks, comments and node properties (`&anchor`,
/// `!tag`) from `at`: where a collection's own text starts.
pub(crate) fn skip_properties(text: &str, mut at: usize) -> usize {
    let bytes = text.as_bytes();
    while at < bytes.len() {
        match bytes[at] {
            b' ' | b'\t' | b'\r' | b'\n' => at += 1,
            b'#' => at = next_line_start(text, at).unwrap_or(text.len()),
            b'&' | b'!' => {
                while at < bytes.len() && !matches!(bytes[at], b' ' | b'\t' | b'\r' | b'\n') {
                    at += 1;
                }
            }
            _ => break,
        }
    }
    at
}

/// The anchor name when the text at `at` starts with node properties holding `&name`.
pub(crate) fn anchor_at(text: &str, at: usize) -> Option<&str> {
    let end = skip_properties(text, at);
    text[at.min(end)..end].split_whitespace().find_map(|word| word.strip_prefix('&')).filter(|name| !name.is_empty())
}

/// Whether the line before `at` (skipping blank lines) ends with a block
/// scalar indicator (`|`, `>-`, `|2+`, ...): the value at `at` is then the
/// content of a block scalar, not a plain scalar on its own line.
pub(crate) fn after_block_indicator(text: &str, at: usize) -> bool {
    let mut end = line_start(text, at);
    while end > 0 {
        let start = line_start(text, end - 1);
        let line = text[start..end].trim_end_matches(['\n', '\r']);
        end = start;
        if strip_comment(line).trim().is_empty() {
            continue;
        }
        return opens_block_scalar(line);
    }
    false
}

/// Whether a line's code ends with a block scalar indicator, so that
/// [`after_block_indicator`] takes the lines after it as the scalar's content.
pub(crate) fn opens_block_scalar(line: &str) -> bool {
    let code = strip_comment(line).trim_end();
    let tail = code.trim_end_matches(|c: char| c.is_ascii_digit() || c == '+' || c == '-');
    tail.ends_with('|') || tail.ends_with('>')
}

/// Byte offset just past the bracket closing the flow collection that opens
/// at `open` (`{` or `[`), skipping quoted scalars and comments.
pub(crate) fn flow_end(text: &str, open: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut at = open;
    while at < bytes.len() {
        match bytes[at] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(at + 1);
                }
            }
            b'"' => {
                at += 1;
                while at < bytes.len() && bytes[at] != b'"' {
                    at += if bytes[at] == b'\\' { 2 } else { 1 };
                }
            }
            b'\'' => {
                at += 1;
                while at < bytes.len() {
                    if bytes[at] == b'\'' {
                        if bytes.get(at + 1) == Some(&b'\'') {
                            at += 1;
                        } else {
                            break;
                        }
                    }
                    at += 1;
                }
            }
            b'#' if at > 0 && matches!(bytes[at - 1], b' ' | b'\t' | b'\n' | b'\r') => {
                at = next_line_start(text, at)?;
                continue;
            }
            _ => {}
        }
        at += 1;
    }
    None
}

/// A line without its trailing comment (a `#` after whitespace, outside quotes).
fn strip_comment(line: &str) -> &str {
    &line[..comment_start(line).unwrap_or(line.len())]
}

/// Byte offset of the `#` that starts a line's comment, if it has one.
pub(crate) fn comment_start(line: &str) -> Option<usize> {
    let (mut single, mut double) = (false, false);
    let mut prev = ' ';
    // The last character outside whitespace: a quote opens a scalar only
    // where a token starts (`don't` is plain text).
    let mut last = None;
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let token_start = last.is_none_or(|l| matches!(l, ':' | '-' | '[' | '{' | ',' | '?'));
        match c {
            '\'' if single => {
                // `''` is a quote inside a single-quoted scalar.
                if chars.peek().is_some_and(|(_, n)| *n == '\'') {
                    chars.next();
                } else {
                    single = false;
                }
            }
            '\\' if double => {
                chars.next();
            }
            '"' if double => double = false,
            '\'' if !double && token_start => single = true,
            '"' if !single && !double && token_start => double = true,
            '#' if !single && !double && (prev == ' ' || prev == '\t' || i == 0) => return Some(i),
            _ => {}
        }
        if !c.is_whitespace() {
            last = Some(c);
        }
        prev = c;
    }
    None
}

/// The comments in `text[from..to]`, in order, trimmed: whole comment lines
/// and the comments that end lines. A `#` line inside a block scalar counts
/// too: keeping it as a comment costs nothing, losing a real one costs the
/// reason a value was chosen.
pub(crate) fn comments_in(text: &str, from: usize, to: usize) -> Vec<&str> {
    let to = to.min(text.len());
    let from = from.min(to);
    text[from..to]
        .split('\n')
        .filter_map(|line| {
            let line = line.trim_end_matches('\r');
            let at = comment_start(line)?;
            Some(line[at..].trim())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_count_characters() {
        let text = "é: 1\nb: 2";
        let o = Offsets::new(text);
        assert_eq!(o.byte(1), 2);
        assert_eq!(&text[o.byte(5)..], "b: 2");
        assert_eq!(o.byte(99), text.len());
    }

    #[test]
    fn lines() {
        let text = "a: 1\r\nb: 2";
        assert_eq!(newline_of(text), "\r\n");
        assert_eq!(newline_of("a\nb"), "\n");
        assert_eq!(next_line_start(text, 1), Some(6));
        assert_eq!(next_line_start(text, 7), None);
        assert_eq!(line_at(text, 2), "a: 1");
        assert_eq!(indent_of("  - x"), "  ");
    }

    #[test]
    fn flow_ends() {
        let text = "c: [\"a]\", 'b''}', {x: 1}]   # [c]\n";
        assert_eq!(flow_end(text, 3), Some(text.find("   #").unwrap_or(0)));
        assert_eq!(flow_end("{a: # }\n 1}", 0), Some(11));
        assert_eq!(flow_end("[1, 2", 0), None);
    }

    #[test]
    fn comments_in_a_span() {
        let text = "a:\n  # why\n  b: [x, \"#no\"]  # because\n  c: 'it''s # not'\n  d: don't  # plain\n  e: \"a\\\\\"  # after\n";
        assert_eq!(comments_in(text, 3, text.len()), vec!["# why", "# because", "# plain", "# after"]);
        assert_eq!(comments_in(text, 0, 2), Vec::<&str>::new());
    }

    #[test]
    fn properties_and_indicators() {
        let text = "a: &x !!map # c\n  b: 1\n";
        assert_eq!(&text[skip_properties(text, 3)..], "b: 1\n");
        assert_eq!(anchor_at(text, 3), Some("x"));
        assert_eq!(anchor_at("a: {b: 1}", 3), None);
        let block = "s: |-  # note\n\n  text\n";
        assert!(after_block_indicator(block, block.find("text").unwrap_or(0)));
        let plain = "s:\n  text\n";
        assert!(!after_block_indicator(plain, 5));
    }
}
