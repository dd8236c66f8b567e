//! Applying one JSON Patch `add` or `replace` to the text of a YAML or JSON
//! file, touching only the bytes that must change: a scalar is replaced in
//! place, a new key goes on new lines after its mapping's last entry (or
//! into a flow mapping, in flow style), a replaced collection takes exactly
//! the span of the old one. The caller re-parses after every edit.

use json_patch::PatchOperation;
use serde_json::{Map, Value};
use thiserror::Error;

use super::layout::detect;
use super::path::{PathError, Step, genuine_kids, resolve};
use super::render::{self, Layout, Quoting};
use super::text::{
    Offsets, after_block_indicator, anchor_at, comments_in, flow_end, indent_of, line_at, line_start, next_line_start,
    skip_properties,
};
use crate::input::{Document, Limits, parse_stream};

/// Why an operation was not applied to the text.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EditError {
    /// The value comes from an alias or a `<<` merge key.
    #[error(
        "{0} comes from an alias or a `<<` merge key; editing it would edit the anchor it shares, so fix it by hand"
    )]
    Aliased(String),
    /// The value is anchored and an alias reuses it.
    #[error(
        "{pointer} is anchored as &{anchor} and an alias reuses it; editing it would change every copy, so fix it by hand"
    )]
    Anchored {
        /// JSON pointer of the anchored value.
        pointer: String,
        /// The anchor's name.
        anchor: String,
    },
    /// The pointer leads through a scalar or a missing sequence item.
    #[error("{0}: no such place in the document")]
    NotContainer(String),
    /// The value is a block scalar (`|`, `>`).
    #[error("{0} is a block scalar (`|` or `>`); lifeguard does not rewrite those")]
    BlockScalar(String),
    /// An operation the rules never emit.
    #[error("unsupported patch operation {0}")]
    Unsupported(String),
    /// The document is not in the text (or the text no longer parses).
    #[error("document {0} not found in the text")]
    NoDocument(usize),
}

impl From<PathError> for EditError {
    fn from(e: PathError) -> Self {
        match e {
            PathError::Aliased(p) => EditError::Aliased(p),
            PathError::NotContainer(p) => EditError::NotContainer(p),
        }
    }
}

/// The path and value of an `add` or `replace`: the only operations the
/// rules emit (an `add` on an existing member replaces it).
pub fn parts(op: &PatchOperation) -> Result<(String, &Value), EditError> {
    match op {
        PatchOperation::Add(a) => Ok((a.path.to_string(), &a.value)),
        PatchOperation::Replace(r) => Ok((r.path.to_string(), &r.value)),
        other => Err(EditError::Unsupported(format!("{other}"))),
    }
}

/// Sets the value at `pointer` (from the document root) in document
/// `doc_index` of `text`, creating missing parent mappings; `json` when the
/// file is JSON.
pub fn apply(
    text: &str,
    doc_index: usize,
    pointer: &str,
    value: &Value,
    json: bool,
    limits: &Limits,
) -> Result<String, EditError> {
    let pointer = pointer.to_owned();
    let (docs, _) = parse_stream(text, limits);
    let doc = docs.get(doc_index).ok_or(EditError::NoDocument(doc_index))?;
    let resolved = resolve(&doc.value, &doc.root, &pointer)?;
    let editor = Editor { text, off: Offsets::new(text), layout: detect(text, doc, json) };
    editor.refuse_shared_anchors(doc, &resolved.chain, &pointer)?;
    match (resolved.chain.last(), resolved.missing.split_first()) {
        (Some(target), None) => editor.replace(target, value, &pointer),
        (Some(parent), Some((key, rest))) => {
            let nested = rest.iter().rev().fold(value.clone(), |v, k| Value::Object(Map::from_iter([(k.clone(), v)])));
            editor.insert(parent, key, &nested, &pointer)
        }
        (None, _) => Err(EditError::NotContainer(pointer)),
    }
}

struct Editor<'t> {
    text: &'t str,
    off: Offsets<'t>,
    layout: Layout,
}

impl Editor<'_> {
    fn splice(&self, from: usize, to: usize, with: &str) -> String {
        let mut out = String::with_capacity(self.text.len() + with.len());
        out.push_str(&self.text[..from]);
        out.push_str(with);
        out.push_str(&self.text[to..]);
        out
    }

    /// Replaces the collection at `from..to` with `with`, keeping every
    /// comment of the old text: they say why a value was chosen, and the new
    /// value usually keeps it (`exec: sleep 60` becomes `sleep: {seconds: 60}`).
    /// They go above the new value when it starts its line, else on the
    /// lines after it, at its column.
    fn splice_keeping_comments(&self, from: usize, to: usize, with: &str) -> String {
        let comments = if self.layout.json { Vec::new() } else { comments_in(self.text, from, to) };
        if comments.is_empty() {
            return self.splice(from, to, with);
        }
        let nl = self.layout.newline;
        let lead = &self.text[line_start(self.text, from)..from];
        if lead.trim().is_empty() {
            let above: String = comments.iter().map(|c| format!("{c}{nl}{lead}")).collect();
            return self.splice(from, to, &format!("{above}{with}"));
        }
        let pad = " ".repeat(self.column(from));
        let spliced = self.splice(from, to, with);
        let after = from + with.len();
        let below: String = comments.iter().map(|c| format!("{pad}{c}{nl}")).collect();
        match next_line_start(&spliced, after) {
            Some(at) => format!("{}{below}{}", &spliced[..at], &spliced[at..]),
            None => format!("{spliced}{nl}{}", below.trim_end_matches(['\n', '\r'])),
        }
    }

    fn byte(&self, index: u32) -> usize {
        self.off.byte(index)
    }

    /// Where a collection's own text starts (after `&anchor`, `!tag`).
    fn content_start(&self, step: &Step<'_>) -> usize {
        skip_properties(self.text, self.byte(step.node.start.index))
    }

    fn is_flow(&self, at: usize) -> bool {
        matches!(self.text.as_bytes().get(at), Some(b'{' | b'['))
    }

    /// Columns (in characters) from the start of the line to `at`.
    fn column(&self, at: usize) -> usize {
        self.text[line_start(self.text, at)..at].chars().count()
    }

    /// Refuses to edit inside a value that is anchored and aliased elsewhere.
    fn refuse_shared_anchors(&self, doc: &Document, chain: &[Step<'_>], pointer: &str) -> Result<(), EditError> {
        let doc_text = &self.text[self.byte(doc.start.index)..];
        for step in chain {
            let Some(anchor) = anchor_at(self.text, self.byte(step.node.start.index)) else {
                continue;
            };
            let alias = format!("*{anchor}");
            let used = doc_text.match_indices(&alias).any(|(i, _)| {
                doc_text[i + alias.len()..].chars().next().is_none_or(|c| c.is_whitespace() || ",]}".contains(c))
            });
            if used {
                return Err(EditError::Anchored { pointer: pointer.to_owned(), anchor: anchor.to_owned() });
            }
        }
        Ok(())
    }

    /// Byte offset just past the last character of a value's text: the end of
    /// a scalar or flow collection, or of the last entry of a block one.
    fn content_end(&self, node: &crate::input::source::Node, value: &Value) -> Option<usize> {
        let start = self.byte(node.start.index);
        let end = self.byte(node.end.index);
        match value {
            Value::Object(_) | Value::Array(_) => {
                let cs = skip_properties(self.text, start);
                if self.is_flow(cs) {
                    // The parser's end of a flow collection can run on over a comment.
                    return flow_end(self.text, cs);
                }
                let values: Vec<&Value> = match value {
                    Value::Object(m) => m.values().collect(),
                    Value::Array(a) => a.iter().collect(),
                    _ => Vec::new(),
                };
                let kids = genuine_kids(node, value.is_array());
                let last = kids.into_iter().max_by_key(|k| k.start.index)?;
                let i = node.kids.iter().position(|k| std::ptr::eq(k, last))?;
                self.content_end(last, values.get(i)?)
            }
            _ if start < end && after_block_indicator(self.text, start) => {
                Some(self.block_scalar_end(start, end, node.start.col as usize))
            }
            _ => {
                let after_key = node.key.map_or(0, |k| self.byte(k.index) + 1);
                Some(end.max(after_key))
            }
        }
    }

    /// The end of a block scalar's last content line: its span runs on to
    /// the next token, over blank lines and less-indented comments.
    fn block_scalar_end(&self, start: usize, end: usize, indent: usize) -> usize {
        let mut last = start;
        let mut at = start;
        for (i, line) in self.text[start..end].split_inclusive('\n').enumerate() {
            let body = line.trim_end_matches(['\n', '\r']);
            let leading = body.len() - body.trim_start_matches(' ').len();
            if !body.trim().is_empty() && (i == 0 || leading >= indent) {
                last = at + body.len();
            }
            at += line.len();
        }
        last
    }

    /// Replaces an existing value.
    fn replace(&self, target: &Step<'_>, value: &Value, pointer: &str) -> Result<String, EditError> {
        let start = self.byte(target.node.start.index);
        let end = self.byte(target.node.end.index);
        if target.value.is_object() || target.value.is_array() {
            let cs = self.content_start(target);
            if self.is_flow(cs) {
                let end = flow_end(self.text, cs).ok_or_else(|| EditError::NotContainer(pointer.to_owned()))?;
                let multi_line = self.text[cs..end].contains('\n');
                let new = if self.layout.json && multi_line {
                    let base = indent_of(line_at(self.text, cs));
                    let unit = self.json_unit(target, base);
                    render::json_pretty(value, base, &unit, self.layout.newline)
                } else {
                    render::flow(value, self.layout.json)
                };
                return Ok(self.splice_keeping_comments(cs, end, &new));
            }
            let stop =
                self.content_end(target.node, target.value).ok_or_else(|| EditError::Aliased(pointer.to_owned()))?;
            let lines = render::block_value_at(value, self.column(cs), &self.layout);
            return Ok(self.splice_keeping_comments(cs, stop, &lines.join(self.layout.newline)));
        }
        if start < end && after_block_indicator(self.text, start) {
            return Err(EditError::BlockScalar(pointer.to_owned()));
        }
        let cs = if start < end { skip_properties(self.text, start).min(end) } else { start };
        let quoting = match self.text.as_bytes().get(cs) {
            Some(b'\'') if cs < end => Quoting::Single,
            Some(b'"') if cs < end => Quoting::Double,
            _ => Quoting::Plain,
        };
        let mut new = render::scalar(value, quoting, self.layout.json);
        if cs == end {
            // An empty value is marked at its key's `:`; the new one goes after it.
            let at = if self.text[cs..].starts_with(':') { cs + 1 } else { cs };
            new.insert(0, ' ');
            return Ok(self.splice(at, at, &new));
        }
        Ok(self.splice(cs, end, &new))
    }

    /// Adds `key: value` to the mapping `parent`.
    fn insert(&self, parent: &Step<'_>, key: &str, value: &Value, pointer: &str) -> Result<String, EditError> {
        let Value::Object(map) = parent.value else {
            return Err(EditError::NotContainer(pointer.to_owned()));
        };
        let cs = self.content_start(parent);
        let kids = genuine_kids(parent.node, false);
        let last = kids.iter().copied().max_by_key(|k| k.start.index);
        let json = self.layout.json;
        let nl = self.layout.newline;
        if self.is_flow(cs) {
            let Some(last) = last else {
                if !map.is_empty() {
                    return Err(EditError::Aliased(pointer.to_owned()));
                }
                let entry = format!("{}: {}", render::key(key, json), render::flow(value, json));
                return Ok(self.splice(cs + 1, cs + 1, &entry));
            };
            let i = parent.node.kids.iter().position(|k| std::ptr::eq(k, last));
            let last_value = i.and_then(|i| map.values().nth(i)).unwrap_or(&Value::Null);
            let after = self.content_end(last, last_value).ok_or_else(|| EditError::Aliased(pointer.to_owned()))?;
            let key_at = self.byte(last.key.map_or(last.start.index, |k| k.index));
            let entry = if line_start(self.text, key_at) > line_start(self.text, cs) {
                let line_begin = line_start(self.text, key_at);
                let lead = &self.text[line_begin..key_at];
                let indent = if lead.trim().is_empty() { lead.to_owned() } else { " ".repeat(self.column(key_at)) };
                let rendered = if json {
                    let base = indent_of(line_at(self.text, cs));
                    let unit = indent.strip_prefix(base).filter(|u| !u.is_empty()).unwrap_or("  ");
                    render::json_pretty(value, &indent, unit, nl)
                } else {
                    render::flow(value, false)
                };
                format!(",{nl}{indent}{}: {rendered}", render::key(key, json))
            } else {
                format!(", {}: {}", render::key(key, json), render::flow(value, json))
            };
            return Ok(self.splice(after, after, &entry));
        }
        let last = last.ok_or_else(|| EditError::Aliased(pointer.to_owned()))?;
        let i = parent.node.kids.iter().position(|k| std::ptr::eq(k, last));
        let last_value = i.and_then(|i| map.values().nth(i)).unwrap_or(&Value::Null);
        let end = self.content_end(last, last_value).ok_or_else(|| EditError::Aliased(pointer.to_owned()))?;
        let col = last.key.map_or(last.start.col, |k| k.col) as usize;
        let mut lines = Vec::new();
        render::block_entry(key, value, col, &self.layout, &mut lines);
        let block = lines.join(nl);
        Ok(match next_line_start(self.text, end.saturating_sub(1)) {
            Some(at) => self.splice(at, at, &format!("{block}{nl}")),
            // The last line has no line break: add one before, none after.
            None => self.splice(self.text.len(), self.text.len(), &format!("{nl}{block}")),
        })
    }

    /// The indentation one level of a multi-line JSON value adds.
    fn json_unit(&self, target: &Step<'_>, base: &str) -> String {
        genuine_kids(target.node, target.value.is_array())
            .first()
            .map(|k| indent_of(line_at(self.text, self.byte(k.key.unwrap_or(k.start).index))))
            .and_then(|kid| kid.strip_prefix(base))
            .filter(|u| !u.is_empty())
            .unwrap_or("  ")
            .to_owned()
    }
}
