//! Applying one JSON Patch `add` or `replace` to the text of a YAML or JSON
//! file, touching only the bytes that must change: a scalar is replaced in
//! place, a new key goes on new lines after its mapping's last entry (or
//! into a flow mapping, in flow style), a replaced collection takes exactly
//! the span of the old one. An operation is located as a [`Splice`] of the
//! text it was parsed from, so several can be located in one parse
//! (`super::splice`) when they do not depend on each other.
//!
//! Over 400 lines: one `Editor` (about 275 lines) whose `replace` and `insert`
//! each handle block, flow and JSON layouts through the same private span
//! helpers (where a node's text ends, anchors refused, comments kept); the
//! tests are in `tests.rs`.

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
use crate::input::source::Node;
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
    let (docs, _) = parse_stream(text, limits);
    let doc = docs.get(doc_index).ok_or(EditError::NoDocument(doc_index))?;
    let editor = Editor::new(text, Offsets::new(text), detect(text, doc, json));
    let splice = editor.locate(doc, pointer, value)?.splice;
    let mut out = String::with_capacity(text.len() + splice.text.len());
    out.push_str(&text[..splice.from]);
    out.push_str(&splice.text);
    out.push_str(&text[splice.to..]);
    Ok(out)
}

/// One operation's edit: the text's bytes `from..to` become `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Splice {
    pub(super) from: usize,
    pub(super) to: usize,
    pub(super) text: String,
    pub(super) kind: Kind,
    /// The spans (inclusive at both ends) of the text the edit was worked
    /// out from besides the parse: an edit elsewhere in them could change it.
    pub(super) reads: Vec<(usize, usize)>,
}

/// What a [`Splice`] does, as far as other edits of the same parse care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// An existing value rewritten; `to_end` when `to` is where its text
    /// ends (not past comments moved after it).
    Replace { to_end: bool },
    /// New lines after a block mapping whose last entry's text ends at `last_end`.
    BlockInsert { last_end: usize },
    /// A new entry in a flow mapping after the last entry's value, which ends
    /// at `last_end`; `None` for an empty mapping.
    FlowInsert { last_end: Option<usize> },
}

/// An operation located in one parse.
pub(super) struct Located<'d> {
    pub(super) splice: Splice,
    /// Tokens of the member written: the target, or the first missing key.
    pub(super) written: usize,
    /// Whether a value on the way is anchored (no alias uses it).
    pub(super) anchored: bool,
    /// A block collection rewritten, whose old text counted in the layout.
    pub(super) reshaped: Option<Reshaped<'d>>,
}

/// A block collection replaced by [`Located::splice`]: the layout's tallies
/// lose what it counted and gain what its new value counts.
pub(super) struct Reshaped<'d> {
    pub(super) node: &'d Node,
    pub(super) value: &'d Value,
    /// Its key's column when it is a mapping entry.
    pub(super) key_col: Option<usize>,
    /// The column its new value starts at.
    pub(super) col: usize,
}

pub(super) struct Editor<'t> {
    text: &'t str,
    off: Offsets<'t>,
    layout: Layout,
}

impl<'t> Editor<'t> {
    pub(super) fn new(text: &'t str, off: Offsets<'t>, layout: Layout) -> Self {
        Editor { text, off, layout }
    }

    /// Where and how setting `pointer` (from the document root) to `value`
    /// edits the text, creating missing parent mappings.
    pub(super) fn locate<'d>(&self, doc: &'d Document, pointer: &str, value: &Value) -> Result<Located<'d>, EditError> {
        let resolved = resolve(&doc.value, &doc.root, pointer)?;
        let anchored = self.refuse_shared_anchors(doc, &resolved.chain, pointer)?;
        let written = resolved.chain.len().saturating_sub(1) + usize::from(!resolved.missing.is_empty());
        match (resolved.chain.last(), resolved.missing.split_first()) {
            (Some(target), None) => {
                let (splice, reshaped) = self.replace(&resolved.chain, target, value, pointer)?;
                Ok(Located { splice, written, anchored, reshaped })
            }
            (Some(parent), Some((key, rest))) => {
                let nested =
                    rest.iter().rev().fold(value.clone(), |v, k| Value::Object(Map::from_iter([(k.clone(), v)])));
                let splice = self.insert(parent, key, &nested, pointer)?;
                Ok(Located { splice, written, anchored, reshaped: None })
            }
            (None, _) => Err(EditError::NotContainer(pointer.to_owned())),
        }
    }

    fn splice(&self, from: usize, to: usize, with: String, kind: Kind, reads: Vec<(usize, usize)>) -> Splice {
        Splice { from, to, text: with, kind, reads }
    }

    /// Replaces the collection at `from..to` with `with`, keeping every
    /// comment of the old text: they say why a value was chosen, and the new
    /// value usually keeps it (`exec: sleep 60` becomes `sleep: {seconds: 60}`).
    /// They go above the new value when it starts its line, else on the
    /// lines after it, at its column.
    fn splice_keeping_comments(&self, from: usize, to: usize, with: String) -> Splice {
        let reads = |end: usize| vec![(line_start(self.text, from), end)];
        let comments = if self.layout.json { Vec::new() } else { comments_in(self.text, from, to) };
        if comments.is_empty() {
            return self.splice(from, to, with, Kind::Replace { to_end: true }, reads(to));
        }
        let nl = self.layout.newline;
        let lead = &self.text[line_start(self.text, from)..from];
        if lead.trim().is_empty() {
            let above: String = comments.iter().map(|c| format!("{c}{nl}{lead}")).collect();
            return self.splice(from, to, format!("{above}{with}"), Kind::Replace { to_end: true }, reads(to));
        }
        let pad = " ".repeat(self.column(from));
        let below: String = comments.iter().map(|c| format!("{pad}{c}{nl}")).collect();
        // The comments go after the rest of the value's last line: the
        // splice runs on to the start of the next line (or the text's end).
        let (end, with) = match next_line_start(self.text, to) {
            Some(at) => (at, format!("{with}{}{below}", &self.text[to..at])),
            None => {
                let len = self.text.len();
                (len, format!("{with}{}{nl}{}", &self.text[to..], below.trim_end_matches(['\n', '\r'])))
            }
        };
        self.splice(from, end, with, Kind::Replace { to_end: false }, reads(end))
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

    /// Refuses to edit inside a value that is anchored and aliased elsewhere;
    /// whether a value on the way is anchored at all.
    fn refuse_shared_anchors(&self, doc: &Document, chain: &[Step<'_>], pointer: &str) -> Result<bool, EditError> {
        let doc_text = &self.text[self.byte(doc.start.index)..];
        let mut anchored = false;
        for step in chain {
            let Some(anchor) = anchor_at(self.text, self.byte(step.node.start.index)) else {
                continue;
            };
            anchored = true;
            let alias = format!("*{anchor}");
            let used = doc_text.match_indices(&alias).any(|(i, _)| {
                doc_text[i + alias.len()..].chars().next().is_none_or(|c| c.is_whitespace() || ",]}".contains(c))
            });
            if used {
                return Err(EditError::Anchored { pointer: pointer.to_owned(), anchor: anchor.to_owned() });
            }
        }
        Ok(anchored)
    }

    /// Byte offset just past the last character of a value's text: the end of
    /// a scalar or flow collection, or of the last entry of a block one.
    fn content_end(&self, node: &Node, value: &Value) -> Option<usize> {
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

    /// Replaces an existing value, the last step of `chain`.
    fn replace<'d>(
        &self,
        chain: &[Step<'d>],
        target: &Step<'d>,
        value: &Value,
        pointer: &str,
    ) -> Result<(Splice, Option<Reshaped<'d>>), EditError> {
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
                return Ok((self.splice_keeping_comments(cs, end, new), None));
            }
            let stop =
                self.content_end(target.node, target.value).ok_or_else(|| EditError::Aliased(pointer.to_owned()))?;
            let col = self.column(cs);
            let lines = render::block_value_at(value, col, &self.layout);
            let in_mapping = chain.len() >= 2 && chain.get(chain.len() - 2).is_some_and(|p| p.value.is_object());
            let key_col = target.node.key.filter(|_| in_mapping).map(|k| k.col as usize);
            let reshaped = Reshaped { node: target.node, value: target.value, key_col, col };
            return Ok((self.splice_keeping_comments(cs, stop, lines.join(self.layout.newline)), Some(reshaped)));
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
            let reads = vec![(start, at)];
            return Ok((self.splice(at, at, new, Kind::Replace { to_end: false }, reads), None));
        }
        Ok((self.splice(cs, end, new, Kind::Replace { to_end: true }, vec![(start, end)]), None))
    }

    /// Adds `key: value` to the mapping `parent`.
    fn insert(&self, parent: &Step<'_>, key: &str, value: &Value, pointer: &str) -> Result<Splice, EditError> {
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
                let reads = vec![(line_start(self.text, cs), cs + 1)];
                return Ok(self.splice(cs + 1, cs + 1, entry, Kind::FlowInsert { last_end: None }, reads));
            };
            let i = parent.node.kids.iter().position(|k| std::ptr::eq(k, last));
            let last_value = i.and_then(|i| map.values().nth(i)).unwrap_or(&Value::Null);
            let after = self.content_end(last, last_value).ok_or_else(|| EditError::Aliased(pointer.to_owned()))?;
            let key_at = self.byte(last.key.map_or(last.start.index, |k| k.index));
            let mut reads = vec![(after, after)];
            let entry = if line_start(self.text, key_at) > line_start(self.text, cs) {
                reads.extend([(line_start(self.text, key_at), key_at), (line_start(self.text, cs), cs)]);
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
            return Ok(self.splice(after, after, entry, Kind::FlowInsert { last_end: Some(after) }, reads));
        }
        let last = last.ok_or_else(|| EditError::Aliased(pointer.to_owned()))?;
        // A new key goes beside its kind where the mapping has one (a
        // startupProbe after the other probes, not after volumeMounts),
        // else after the last entry.
        let last = neighbour(key, map, parent.node, &kids).unwrap_or(last);
        let i = parent.node.kids.iter().position(|k| std::ptr::eq(k, last));
        let last_value = i.and_then(|i| map.values().nth(i)).unwrap_or(&Value::Null);
        let end = self.content_end(last, last_value).ok_or_else(|| EditError::Aliased(pointer.to_owned()))?;
        let col = last.key.map_or(last.start.col, |k| k.col) as usize;
        let mut lines = Vec::new();
        render::block_entry(key, value, col, &self.layout, &mut lines);
        let block = lines.join(nl);
        let (at, with) = match next_line_start(self.text, end.saturating_sub(1)) {
            Some(at) => (at, format!("{block}{nl}")),
            // The last line has no line break: add one before, none after.
            None => (self.text.len(), format!("{nl}{block}")),
        };
        Ok(self.splice(at, at, with, Kind::BlockInsert { last_end: end }, vec![(end, at)]))
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

/// Keys a new key belongs beside, in a container: the probes.
const PROBES: &[&str] = &["startupProbe", "livenessProbe", "readinessProbe"];

/// The entry of `map` (parsed as `node`) a new `key` goes after: the last,
/// in the text, of the keys of its kind, when `key` has a kind and the
/// mapping holds one of them.
fn neighbour<'n>(key: &str, map: &Map<String, Value>, node: &'n Node, kids: &[&'n Node]) -> Option<&'n Node> {
    if !PROBES.contains(&key) {
        return None;
    }
    node.kids
        .iter()
        .zip(map.keys())
        .filter(|(kid, name)| PROBES.contains(&name.as_str()) && kids.iter().any(|k| std::ptr::eq(*k, *kid)))
        .map(|(kid, _)| kid)
        .max_by_key(|kid| kid.start.index)
}
