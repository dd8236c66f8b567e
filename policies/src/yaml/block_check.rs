//! A line-by-line check of a document written in YAML's plain block shape
//! (what `helm template`, `kubectl` and controller-gen write: block mappings
//! and sequences, one-line scalars, block scalars, comments), much cheaper
//! than the event parser, for a document whose values nobody builds.
//!
//! It answers only "this reads without error or warning, and here is its
//! root": the first key at column 0, no repeated key in any mapping, no
//! anchor, alias, tag, merge key, directive, flow collection (but an empty
//! `{}` or `[]`), multi-line flow or quoted scalar, tab outside a block
//! scalar's text or control character, and nesting well under the limit.
//! Anything else, valid or not, is left to the parser: `None` only means
//! "not this shape", so the check may be as strict as it likes, and must
//! never accept what the parser would refuse or warn about.

use std::borrow::Cow;
use std::collections::HashSet;

use saphyr_parser::ScalarStyle;

use super::block_tokens::{
    Quoted, end_of_line, flow_sequence, is_entry, key_end, one_line, plain_continuation, plain_start, quoted,
    quoted_line,
};
use super::markers::is_marker;
use super::scalar::key_text;

/// How long a key the check takes: the parser's simple keys end at 1,024
/// characters; far shorter in practice.
const MAX_KEY: usize = 512;

/// A mapping with more keys than this is checked for repeats with a set.
const SET_AT: usize = 24;

/// What the check found of a document it accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Block<'t> {
    /// Byte offset and 0-based line of the document's `---`, if it has one.
    pub marker: Option<(usize, usize)>,
    /// Byte offset and 0-based line of the root mapping's first key.
    pub root: (usize, usize),
    /// The root's `kind` as written (quotes off) and its style, when it is
    /// a one-line scalar with no escape.
    pub kind: Option<(&'t str, ScalarStyle)>,
}

/// One open block collection.
struct Level<'t> {
    indent: usize,
    seq: bool,
    /// A sequence at its key's own indentation (`key:` then `- item`).
    indentless: bool,
    /// A mapping's keys so far, for repeats.
    keys: Vec<Cow<'t, str>>,
    set: Option<HashSet<Cow<'t, str>>>,
    /// Its place on the pod template's path (`spec`, `template`, `spec`), if on it.
    path: Option<usize>,
}

/// A key (or `-`) whose value starts on a later line.
struct Pending<'t> {
    /// The column of the collection that holds it.
    owner: usize,
    /// A mapping key, whose value may be a sequence at its own indentation.
    key: Option<Cow<'t, str>>,
    /// The path place of the mapping the value would be (see [`Level::path`]).
    path: Option<usize>,
}

/// A block scalar being read: its lines are text, whatever they hold.
struct Scalar {
    /// Its lines are indented more than this.
    owner: usize,
    /// The indentation of its first line of text, once met.
    indent: Option<usize>,
    /// The longest blank line before its first line of text.
    leading: usize,
}

/// A flow scalar whose text may go on over the next lines.
#[derive(Clone, Copy)]
enum Open {
    /// A plain scalar: lines indented more than `owner` go on with it.
    Plain { owner: usize, kind: bool },
    /// A quoted scalar not closed yet: its lines must be indented more than `owner`.
    Quoted { owner: usize, quote: u8, kind: bool },
}

/// The pod template's path from the root, whose `containers` the loader
/// always builds; the check leaves such a document to the parser.
const PATH: [&str; 3] = ["spec", "template", "spec"];

/// Checks `text` (one document: optional comments, an optional `---`, a
/// block mapping at column 0) within `max_depth` levels of nesting.
pub(super) fn check(text: &str, max_depth: usize) -> Option<Block<'_>> {
    let mut checker = Checker { stack: Vec::new(), pending: None, scalar: None, open: None, kind: None, max_depth };
    let mut marker = None;
    let mut root = None;
    let mut offset = 0;
    // memchr's search for the line ends: `str::split` is several times slower.
    let ends = memchr::memchr_iter(b'\n', text.as_bytes()).chain(std::iter::once(text.len()));
    for (line_no, end) in ends.enumerate() {
        let (at, line) = (offset, &text[offset..end]);
        offset = end + 1;
        if let Some(scalar) = &mut checker.scalar {
            if scalar.takes(line)? {
                continue;
            }
            checker.scalar = None;
        }
        let indent = line.bytes().take_while(|&b| b == b' ').count();
        let rest = &line[indent..];
        if let Some(open) = checker.open {
            if checker.goes_on(open, indent, rest)? {
                continue;
            }
            checker.open = None;
        }
        if rest.is_empty() || rest.starts_with('#') {
            continue;
        }
        if indent == 0 && is_marker(rest) {
            // Before the root: at most one `---` with nothing after it but a
            // comment; any other marker ends or starts a document.
            if root.is_none() && marker.is_none() && is_bare_marker(rest) {
                marker = Some((at, line_no));
                continue;
            }
            return None;
        }
        if root.is_none() {
            if indent != 0 || is_entry(rest) {
                return None;
            }
            root = Some((at, line_no));
            checker.node(0, rest, false, Some(0))?;
            continue;
        }
        checker.line(indent, rest)?;
    }
    let Checker { kind, stack, open, .. } = checker;
    // A quoted scalar still open at the end is an error.
    (!stack.is_empty() && !matches!(open, Some(Open::Quoted { .. }))).then_some(())?;
    Some(Block { marker, root: root?, kind })
}

/// `---` alone, or followed by a comment.
fn is_bare_marker(line: &str) -> bool {
    line.strip_prefix("---").is_some_and(|r| {
        let r = r.trim_start_matches(' ');
        r.is_empty() || (r.starts_with('#') && r.len() < line.len() - 3)
    })
}

struct Checker<'t> {
    stack: Vec<Level<'t>>,
    pending: Option<Pending<'t>>,
    scalar: Option<Scalar>,
    open: Option<Open>,
    kind: Option<(&'t str, ScalarStyle)>,
    max_depth: usize,
}

impl Scalar {
    /// Whether `line` is a line of the block scalar (`None`: not this shape).
    fn takes(&mut self, line: &str) -> Option<bool> {
        let spaces = line.bytes().take_while(|&b| b == b' ').count();
        let blank = line[spaces..].is_empty();
        // A line of blanks and tabs: whether it is text or a blank line is
        // subtle, so left to the parser.
        if !blank && line[spaces..].bytes().all(|b| b == b'\t' || b == b' ') {
            return None;
        }
        match self.indent {
            _ if blank => {
                self.leading = self.leading.max(spaces);
                Some(true)
            }
            Some(indent) => Some(spaces >= indent),
            None if spaces > self.owner => {
                // Leading blank lines longer than the text's indentation are an error.
                if self.leading > spaces {
                    return None;
                }
                self.indent = Some(spaces);
                Some(true)
            }
            // An empty block scalar after blank lines longer than its owner's
            // indentation: left to the parser.
            None if self.leading > self.owner => None,
            None => Some(false),
        }
    }
}

impl<'t> Checker<'t> {
    /// Whether a line (`rest` after `indent` spaces) goes on the open
    /// scalar; `None` for a line this check does not take there. The root's
    /// `kind` on several lines is left to the parser.
    fn goes_on(&mut self, open: Open, indent: usize, rest: &str) -> Option<bool> {
        match open {
            // A blank line folds into the scalar, or ends it if nothing follows.
            _ if rest.is_empty() => Some(true),
            Open::Plain { owner, kind } if indent > owner => {
                (!kind).then_some(())?;
                plain_continuation(rest)?;
                Some(true)
            }
            Open::Plain { .. } => Some(false),
            Open::Quoted { owner, quote, kind } => {
                (indent > owner && !kind).then_some(())?;
                match quoted_line(rest, quote)? {
                    Quoted::Open => Some(true),
                    Quoted::Closed { at, .. } => {
                        end_of_line(&rest[at + 1..])?;
                        self.open = None;
                        Some(true)
                    }
                }
            }
        }
    }

    /// A line with content at column `indent`.
    fn line(&mut self, indent: usize, rest: &'t str) -> Option<()> {
        if rest.starts_with('\t') {
            return None;
        }
        let entry = is_entry(rest);
        if let Some(p) = self.pending.take() {
            let nested = indent > p.owner;
            let indentless = indent == p.owner && entry && p.key.is_some();
            if nested || indentless {
                if p.key.as_deref() == Some("containers") && entry {
                    return None;
                }
                return self.node(indent, rest, indentless, p.path);
            }
        }
        while let Some(top) = self.stack.last() {
            let leave = top.indent > indent || (top.indent == indent && top.seq && top.indentless && !entry);
            if !leave {
                break;
            }
            self.stack.pop();
        }
        let top = self.stack.last()?;
        if top.indent != indent || top.seq != entry {
            return None;
        }
        self.entry(indent, rest)
    }

    /// A new collection starting at column `col` with `rest`; its first entry.
    fn node(&mut self, col: usize, rest: &'t str, indentless: bool, path: Option<usize>) -> Option<()> {
        let seq = is_entry(rest);
        if !seq && key_end(rest).is_none() {
            // A scalar where a collection would start: a multi-line form.
            return None;
        }
        // The parser counts every open collection, an empty `{}` too.
        if self.stack.len() + 3 >= self.max_depth {
            return None;
        }
        let path = if seq { None } else { path };
        self.stack.push(Level { indent: col, seq, indentless, keys: Vec::new(), set: None, path });
        self.entry(col, rest)
    }

    /// An entry of the collection on top (at column `col`).
    fn entry(&mut self, col: usize, rest: &'t str) -> Option<()> {
        if is_entry(rest) {
            let after = &rest[1..];
            let spaces = after.bytes().take_while(|&b| b == b' ').count();
            let value = &after[spaces..];
            if value.is_empty() || (value.starts_with('#') && spaces > 0) {
                self.pending = Some(Pending { owner: col, key: None, path: None });
                return Some(());
            }
            if value.starts_with('\t') {
                return None;
            }
            let inner = col + 1 + spaces;
            if is_entry(value) || key_end(value).is_some() {
                return self.node(inner, value, false, None);
            }
            return self.leaf(value, col, false);
        }
        let (key, value) = key_end(rest)?;
        let key = self.key(key)?;
        let top = self.stack.last()?;
        let (root, path) = (self.stack.len() == 1, top.path);
        let next_path = path.filter(|&p| PATH.get(p).is_some_and(|k| *k == key)).map(|p| p + 1);
        // The pod template's containers: the loader builds them whatever the kind.
        if path == Some(PATH.len()) && key == "containers" {
            return None;
        }
        let spaces = value.bytes().take_while(|&b| b == b' ').count();
        let value = &value[spaces..];
        if value.is_empty() || (value.starts_with('#') && spaces > 0) {
            self.pending = Some(Pending { owner: col, key: Some(key), path: next_path });
            return Some(());
        }
        if spaces == 0 || value.starts_with('\t') || (key == "containers" && value.starts_with('[')) {
            return None;
        }
        let kind = root && key == "kind";
        if kind {
            let (text, style, escaped, _) = one_line(value)?;
            self.kind = (!escaped).then_some((text, style));
        }
        self.leaf(value, col, kind)
    }

    /// Records a key of the mapping on top; `None` for a repeat or a key
    /// this check does not take.
    fn key(&mut self, raw: &'t str) -> Option<Cow<'t, str>> {
        let key = match raw.as_bytes().first()? {
            b'"' | b'\'' => {
                let (text, style, end, escaped) = quoted(raw)?;
                (end == raw.len() && !escaped).then_some(())?;
                key_text(text, style, None).ok()?
            }
            _ => {
                if !plain_start(raw) || raw.contains(':') || raw.contains('\t') || raw == "<<" {
                    return None;
                }
                key_text(raw, ScalarStyle::Plain, None).ok()?
            }
        };
        if raw.len() > MAX_KEY {
            return None;
        }
        let top = self.stack.last_mut()?;
        if let Some(set) = &mut top.set {
            set.insert(key.clone()).then_some(())?;
        } else {
            if top.keys.contains(&key) {
                return None;
            }
            top.keys.push(key.clone());
            if top.keys.len() > SET_AT {
                top.set = Some(top.keys.drain(..).collect());
            }
        }
        Some(key)
    }

    /// A value that starts on its line; `owner` is the column of the
    /// collection that holds it, `kind` whether it is the root's `kind`.
    fn leaf(&mut self, value: &'t str, owner: usize, kind: bool) -> Option<()> {
        match value.as_bytes().first()? {
            b'|' | b'>' => {
                let header = value[1..].strip_prefix(['-', '+']).unwrap_or(&value[1..]);
                end_of_line(header)?;
                self.scalar = Some(Scalar { owner, indent: None, leading: 0 });
                Some(())
            }
            &quote @ (b'"' | b'\'') => match quoted_line(&value[1..], quote)? {
                Quoted::Closed { at, .. } => end_of_line(&value[at + 2..]),
                Quoted::Open => {
                    self.open = Some(Open::Quoted { owner, quote, kind });
                    Some(())
                }
            },
            b'[' | b'{' => {
                // The parser counts a flow collection as a level, an empty one too.
                if self.stack.len() + 3 >= self.max_depth {
                    return None;
                }
                match value.strip_prefix("{}") {
                    Some(empty) => end_of_line(empty),
                    None => flow_sequence(value),
                }
            }
            _ => {
                // A plain scalar goes on over the lines indented more than its
                // owner, unless a comment ends its first line.
                let (_, _, _, commented) = one_line(value)?;
                if !commented {
                    self.open = Some(Open::Plain { owner, kind });
                }
                Some(())
            }
        }
    }
}
