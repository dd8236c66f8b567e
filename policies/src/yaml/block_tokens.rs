//! The pieces of one line that [`super::block_check`] takes: a sequence
//! entry's dash, a key and its colon, a one-line scalar (plain or quoted),
//! the end of a line. Each answers `None` for what it does not take, valid
//! or not, so that the parser reads it instead.

use saphyr_parser::ScalarStyle;

/// Whether a line's content is a sequence entry: `-`, then a blank or its end.
pub(super) fn is_entry(rest: &str) -> bool {
    rest.strip_prefix('-').is_some_and(|r| r.is_empty() || r.starts_with([' ', '\t']))
}

/// A mapping entry's key and what follows its `:`; `None` when the line
/// is no `key: value` (or `key:`) this check takes.
pub(super) fn key_end(rest: &str) -> Option<(&str, &str)> {
    let bytes = rest.as_bytes();
    let end = match bytes.first()? {
        b'"' | b'\'' => quoted(rest)?.2,
        _ => {
            // The first `: ` (or a `:` ending the line), before any comment.
            let mut at = None;
            for (i, &b) in bytes.iter().enumerate() {
                if b == b'#' && i > 0 && bytes[i - 1] == b' ' {
                    return None;
                }
                if b == b':' && bytes.get(i + 1).is_none_or(|&n| n == b' ') {
                    at = Some(i);
                    break;
                }
            }
            at?
        }
    };
    let key = rest[..end].trim_end_matches(' ');
    let after = rest[end..].trim_start_matches(' ').strip_prefix(':')?;
    (after.is_empty() || after.starts_with(' ')).then_some((key, after))
}

/// A one-line scalar value (plain or quoted): its text as written (quotes
/// and a trailing comment off), its style and whether it holds an escape;
/// `None` when it is no such scalar.
pub(super) fn one_line_scalar(value: &str) -> Option<(&str, ScalarStyle, bool)> {
    one_line(value).map(|(text, style, escaped, _)| (text, style, escaped))
}

/// [`one_line_scalar`], and whether a comment ends its line.
pub(super) fn one_line(value: &str) -> Option<(&str, ScalarStyle, bool, bool)> {
    match value.as_bytes().first()? {
        b'"' | b'\'' => {
            let (text, style, end, escaped) = quoted(value)?;
            end_of_line(&value[end..])?;
            Some((text, style, escaped, value[end..].contains('#')))
        }
        _ => {
            if !plain_start(value) {
                return None;
            }
            let bytes = value.as_bytes();
            let mut end = bytes.len();
            for (i, &b) in bytes.iter().enumerate() {
                match b {
                    b'\t' => return None,
                    b':' if bytes.get(i + 1).is_none_or(|&n| n == b' ') => return None,
                    b'#' if bytes[i - 1] == b' ' => {
                        end = i;
                        break;
                    }
                    _ => {}
                }
            }
            Some((value[..end].trim_end_matches(' '), ScalarStyle::Plain, false, end < bytes.len()))
        }
    }
}

/// Whether a plain scalar may start with `text`'s first character (YAML's
/// indicators may not; `-` may, before a non-blank).
pub(super) fn plain_start(text: &str) -> bool {
    let bytes = text.as_bytes();
    match bytes.first() {
        Some(b'-') => bytes.get(1).is_some_and(|b| !matches!(b, b' ' | b'\t')),
        Some(b'?' | b':' | b',' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!' | b'|' | b'>') => false,
        Some(b'\'' | b'"' | b'%' | b'@' | b'`' | b' ' | b'\t') | None => false,
        Some(_) => true,
    }
}

/// A quoted scalar at the start of `text`, closed on the same line: its
/// text as written (quotes off), its style, the byte just past its closing
/// quote, and whether it holds an escape (a doubled `'`, a `\`), whose text
/// then differs from what is written.
pub(super) fn quoted(text: &str) -> Option<(&str, ScalarStyle, usize, bool)> {
    let quote = *text.as_bytes().first()?;
    let style = if quote == b'"' { ScalarStyle::DoubleQuoted } else { ScalarStyle::SingleQuoted };
    match quoted_line(&text[1..], quote)? {
        Quoted::Closed { at, escaped } => Some((&text[1..1 + at], style, at + 2, escaped)),
        Quoted::Open => None,
    }
}

/// How a line of a quoted scalar ends.
pub(super) enum Quoted {
    /// At its closing quote, the byte `at` of the line, having held an
    /// escape or not.
    Closed { at: usize, escaped: bool },
    /// With the scalar still open: it goes on on the next line.
    Open,
}

/// Reads a line of a scalar quoted with `quote` (after the opening quote
/// on its first line); `None` for a tab or an escape this check does not
/// take. An escape is checked as the parser checks it; one that could fail
/// (a code point) is left to the parser.
pub(super) fn quoted_line(line: &str, quote: u8) -> Option<Quoted> {
    let body = line.as_bytes();
    let escape = if quote == b'"' { b'\\' } else { b'\'' };
    let mut escaped = false;
    let mut i = 0;
    loop {
        let Some(next) = memchr::memchr2(quote, escape, &body[i..]) else {
            return (!line.contains('\t')).then_some(Quoted::Open);
        };
        i += next;
        let step = if quote == b'\'' {
            if body.get(i + 1) != Some(&b'\'') {
                break;
            }
            2
        } else if body[i] == b'"' {
            break;
        } else {
            match body.get(i + 1) {
                Some(b'0' | b'a' | b'b' | b't' | b'n' | b'v' | b'f' | b'r' | b'e' | b' ' | b'"' | b'/' | b'\\') => 2,
                Some(b'N' | b'_' | b'L' | b'P') => 2,
                // Two hex digits are any byte; `\u` and `\U` may name no character.
                Some(b'x') if body.get(i + 2..i + 4).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) => 4,
                // An escaped line break: the scalar goes on.
                None => return (!line.contains('\t')).then_some(Quoted::Open),
                _ => return None,
            }
        };
        escaped = true;
        i += step;
    }
    (!line[..i].contains('\t')).then_some(Quoted::Closed { at: i, escaped })
}

/// A line that goes on a multi-line plain scalar (the parser takes any
/// character there but a comment's `#` and a `: `): text with no `: `, no
/// comment and no tab, and, to be sure, no `- ` first.
pub(super) fn plain_continuation(rest: &str) -> Option<()> {
    let bytes = rest.as_bytes();
    if is_entry(rest) {
        return None;
    }
    let mut prev = b' ';
    for (i, &b) in bytes.iter().enumerate() {
        let bad = match b {
            b'\t' => true,
            b'#' => prev == b' ',
            b':' => bytes.get(i + 1).is_none_or(|&n| n == b' '),
            _ => false,
        };
        if bad {
            return None;
        }
        prev = b;
    }
    Some(())
}

/// A one-line flow sequence of scalars (`["", apps]`, `[get, list]`, `[]`)
/// at the start of `value`, then the end of the line; `None` for anything
/// else (a nested collection, a mapping, a `:` or a comment inside).
pub(super) fn flow_sequence(value: &str) -> Option<()> {
    let mut rest = value.strip_prefix('[')?.trim_start_matches(' ');
    if let Some(after) = rest.strip_prefix(']') {
        return end_of_line(after);
    }
    loop {
        let end = match *rest.as_bytes().first()? {
            quote @ (b'"' | b'\'') => match quoted_line(&rest[1..], quote)? {
                Quoted::Closed { at, .. } => at + 2,
                Quoted::Open => return None,
            },
            _ => {
                let end = rest.find([',', ']']).unwrap_or(rest.len());
                let item = rest[..end].trim_end_matches(' ');
                let inside = |b: u8| matches!(b, b':' | b'#' | b'[' | b'{' | b'}' | b'"' | b'\'' | b'\t');
                if !plain_start(item) || item.bytes().any(inside) {
                    return None;
                }
                end
            }
        };
        rest = rest[end..].trim_start_matches(' ');
        match rest.as_bytes().first()? {
            b',' => rest = rest[1..].trim_start_matches(' '),
            b']' => return end_of_line(&rest[1..]),
            _ => return None,
        }
        // No empty entry: `[a, ]` is left to the parser.
        if rest.starts_with([',', ']']) {
            return None;
        }
    }
}

/// Nothing but blanks, then optionally a comment after at least one blank.
pub(super) fn end_of_line(rest: &str) -> Option<()> {
    let trimmed = rest.trim_start_matches(' ');
    (trimmed.is_empty() || (trimmed.starts_with('#') && trimmed.len() < rest.len())).then_some(())
}
