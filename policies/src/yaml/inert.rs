//! A document no rule reads (a CRD, a ConfigMap, RBAC), recognised from
//! its top-level `kind` and read without the event parser: the scanner was
//! most of a lint's time on inputs of large CRDs, though the lean read
//! ([`super::skim`]) builds nothing of them.
//!
//! What such a document gives the linter is its kind (counted among the
//! kinds of a file with no workload) and where its root starts and ends
//! (for its Helm template), and its errors and repeated keys. So it is
//! taken without the parser only when [`super::block_check`] shows it reads
//! without either; anything else is for the parser, which reports it as
//! before.

use serde_json::{Value, json};

use super::block_check;
use super::block_tokens::one_line_scalar;
use super::limits::Limits;
use super::scalar;
use super::source::{Document, Mark, Node};

/// The document of `text` (one part of a stream, starting at a line's start,
/// `origin` being the lines and characters before it) when its top-level
/// `kind` is one `inert` says no rule reads and it reads without error or
/// repeated key: its value holds only its `kind`, its position tree only
/// the root's span. `None`: the caller parses it.
pub fn read_inert(text: &str, origin: Mark, limits: &Limits, inert: impl Fn(&str) -> bool) -> Option<Document> {
    let kind = top_level_kind(text)?;
    if !inert(&kind) || text.len() > limits.max_document_chars {
        return None;
    }
    let chars = plain_chars(text)?;
    let block = block_check::check(text, limits.max_depth)?;
    // The check's root `kind` is the one found above, or the text is not
    // what it looked like.
    let (written, style) = block.kind?;
    (resolve(written, style)? == kind).then_some(())?;
    let at = |(offset, line): (usize, usize)| Mark {
        line: origin.line.saturating_add(clamp(line + 1)),
        col: 0,
        index: origin.index.saturating_add(clamp(text[..offset].chars().count())),
    };
    let root_start = at(block.root);
    // The parser ends the root where the text ends, on a line of its own.
    let lines = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    let last_line_open = !text.is_empty() && !text.ends_with('\n');
    let end = Mark {
        line: origin.line.saturating_add(clamp(lines + 1 + usize::from(last_line_open))),
        col: 0,
        index: origin.index.saturating_add(clamp(chars)),
    };
    Some(Document {
        value: json!({ "kind": kind }),
        root: Node { start: root_start, end, key: None, kids: Vec::new() },
        start: block.marker.map_or(root_start, at),
        duplicate_keys: Vec::new(),
    })
}

fn clamp(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// The `kind` of the first line that starts with `kind:`, resolved as the
/// loader resolves it, when it is a string written on that line.
fn top_level_kind(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let at = if bytes.starts_with(b"kind:") { 0 } else { memchr::memmem::find(bytes, b"\nkind:")? + 1 };
    let line = &text[at + "kind:".len()..];
    let line = &line[..memchr::memchr(b'\n', line.as_bytes()).unwrap_or(line.len())];
    let value = line.strip_prefix(' ')?.trim_start_matches(' ');
    let (written, style, escaped) = one_line_scalar(value)?;
    if escaped {
        return None;
    }
    resolve(written, style)
}

fn resolve(written: &str, style: saphyr_parser::ScalarStyle) -> Option<String> {
    match scalar::resolve(written, style, None) {
        Ok(Value::String(kind)) => Some(kind),
        _ => None,
    }
}

/// The characters of `text`, when it holds none that the parser may read
/// otherwise than as text: a carriage return, a control character, a byte
/// order mark, a Unicode line break or a non-character. Each check is a
/// pass the compiler vectorises: this runs over every byte of a large CRD.
fn plain_chars(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    // Bitwise, not short-circuit, so that it runs on whole vectors.
    let refused = |b: u8| (u8::from(b < 0x20) & u8::from(b != b'\n') & u8::from(b != b'\t')) | u8::from(b == 0x7f);
    if bytes.chunks(256).any(|chunk| chunk.iter().fold(0, |acc, &b| acc | refused(b)) != 0) {
        return None;
    }
    for i in memchr::memchr3_iter(0xc2, 0xe2, 0xef, bytes) {
        let next = |n: usize| bytes.get(i + n).copied().unwrap_or(0);
        let refused = match bytes[i] {
            // C1 controls and NEL (U+0080-U+009F).
            0xc2 => (0x80..=0x9f).contains(&next(1)),
            // U+2028 and U+2029, Unicode's line and paragraph separators.
            0xe2 => next(1) == 0x80 && (next(2) == 0xa8 || next(2) == 0xa9),
            // U+FEFF (a byte order mark), U+FFFE and U+FFFF.
            _ => (next(1) == 0xbb && next(2) == 0xbf) || (next(1) == 0xbf && next(2) >= 0xbe),
        };
        if refused {
            return None;
        }
    }
    Some(text.chars().count())
}
