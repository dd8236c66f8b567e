//! The YAML loader: events from `saphyr-parser` (pure Rust, no unsafe, fuzzed
//! upstream) turned into JSON values plus a parallel position tree, with
//! explicit limits on document size, nesting depth and alias expansion.
//!
//! Over 400 lines: the `Builder` (about 315 lines with its merge helpers:
//! values, positions, anchors, `<<` merges, the limits, the lean skip) and the
//! `read` loop that feeds it parser events (with the entry points, about 175)
//! share the builder's private state; the tests are in `parse_tests.rs`.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Span};
use serde_json::{Map, Value};
use thiserror::Error;

use super::guards;
use super::limits::Limits;
use super::scalar;
use super::skim::{self, OFF_PATH, PATH, Skipped};
use super::source::{Document, DuplicateKey, Mark, Node};

/// A YAML error at a position.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{line}:{column}: {message}")]
pub struct ParseError {
    /// Line, 1-based.
    pub line: u32,
    /// Column, 1-based.
    pub column: u32,
    /// What is wrong.
    pub message: String,
}

/// A parser position, moved by `origin` (the lines and characters of the
/// enclosing text before the part being parsed; its column is unused, since
/// a part starts at a line's start).
fn mark(m: saphyr_parser::Marker, origin: Mark) -> Mark {
    let clamp = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
    Mark {
        line: clamp(m.line()).saturating_add(origin.line),
        col: clamp(m.col()),
        index: clamp(m.index()).saturating_add(origin.index),
    }
}

fn shifted(m: Mark, origin: Mark) -> Mark {
    Mark { line: m.line.saturating_add(origin.line), col: m.col, index: m.index.saturating_add(origin.index) }
}

fn error_at(m: Mark, message: impl Into<String>) -> ParseError {
    ParseError { line: m.line, column: m.col + 1, message: message.into() }
}

/// A mapping entry under construction.
struct Entry {
    key: String,
    value: Value,
    node: Node,
}

enum Frame {
    Seq {
        items: Vec<Value>,
        nodes: Vec<Node>,
        start: Mark,
        anchor: usize,
        count: usize,
    },
    Map {
        entries: Vec<Entry>,
        merged: Vec<Entry>,
        key: Option<(String, Mark, bool)>,
        start: Mark,
        anchor: usize,
        count: usize,
        /// Its place on [`PATH`] (the root is 0), or [`OFF_PATH`].
        path: usize,
    },
    /// A value read without building it (see [`skim`]).
    Skip(Skipped),
}

/// An anchored value, kept for its aliases.
struct Anchored {
    value: Value,
    node: Node,
    count: usize,
}

struct Builder<'l> {
    limits: &'l Limits,
    origin: Mark,
    stack: Vec<Frame>,
    anchors: HashMap<usize, Anchored>,
    alias_nodes: usize,
    root: Option<(Value, Node)>,
    duplicates: Vec<DuplicateKey>,
    /// Whether values no rule reads may be left unbuilt (see [`skim`]).
    lean: bool,
    /// A lean read for the Services alone: every other kind is inert, pod
    /// templates included.
    context_only: bool,
    /// The document's kind says it is inert: its values off [`PATH`] are skipped.
    inert: bool,
    /// The lean read cannot go on: read the part again in full.
    rebuild: bool,
}

impl Builder<'_> {
    fn push_frame(&mut self, frame: Frame, at: Mark) -> Result<(), ParseError> {
        if self.stack.len() >= self.limits.max_depth {
            return Err(error_at(at, format!("nesting deeper than {} levels", self.limits.max_depth)));
        }
        self.stack.push(frame);
        Ok(())
    }

    /// Decides, from a value completing in the root mapping, whether the
    /// document is inert (its top-level `kind`); a second `kind` once
    /// decided, or a merge into the root, asks for a full read.
    fn decide(&mut self, value: &Value) {
        let Some(Frame::Map { key: Some((k, _, merge)), .. }) = self.stack.last() else { return };
        if *merge {
            self.rebuild |= self.inert;
        } else if k == "kind" {
            if self.inert {
                self.rebuild = true;
            } else if let Value::String(kind) = value {
                self.inert = if self.context_only { skim::not_context(kind) } else { skim::inert_kind(kind) };
            }
        }
    }

    /// Whether the value that starts now is to be skipped: inside a skipped
    /// value, or under an inert document's key off [`PATH`]. A merge value or
    /// the pod template's containers ask for a full read instead.
    fn skips_next(&mut self) -> bool {
        if !self.inert {
            return false;
        }
        match self.stack.last() {
            Some(Frame::Skip(_)) => true,
            Some(Frame::Map { key: Some((k, _, merge)), path, .. }) => {
                // `containers` anywhere but the pod template's path may be a
                // pod template lifeguard does not read, which it warns about.
                if *merge || (!self.context_only && k == PATH[PATH.len() - 1]) {
                    self.rebuild = true;
                    return false;
                }
                let on_path = !self.context_only && PATH.get(*path).is_some_and(|p| p == k);
                !(on_path || (*path == 0 && k == "kind"))
            }
            _ => false,
        }
    }

    /// Hands a skipped value to its parent: a key's text, or an entry or an
    /// item with nothing built.
    fn complete_skipped(&mut self, node: Node, key_text: Option<String>) -> Result<(), ParseError> {
        match self.stack.last_mut() {
            Some(Frame::Skip(skipped)) if skipped.is_map && skipped.key.is_none() => {
                let Some(text) = key_text else {
                    return Err(error_at(node.start, "a mapping key must be a scalar"));
                };
                if text == "<<" {
                    self.rebuild = true;
                }
                skipped.key = Some(text);
                skipped.key_at = node.start;
                Ok(())
            }
            Some(Frame::Skip(skipped)) => {
                skipped.entry();
                Ok(())
            }
            _ => self.complete(Value::Null, node, 1, 0),
        }
    }

    /// A scalar in a skipped value: resolved only when it is a key (its text
    /// is needed) or carries a tag (which it may not fit).
    fn skip_scalar(
        &mut self,
        text: &str,
        style: ScalarStyle,
        tag: Option<&saphyr_parser::Tag>,
        node: Node,
    ) -> Result<(), ParseError> {
        let is_key = matches!(self.stack.last(), Some(Frame::Skip(s)) if s.is_map && s.key.is_none());
        let key_text = if is_key || tag.is_some() {
            Some(scalar::key_text(text, style, tag).map_err(|m| error_at(node.start, m))?.into_owned())
        } else {
            None
        };
        self.complete_skipped(node, if is_key { key_text } else { Some(String::new()) })
    }

    /// Hands a finished value to its parent (or makes it the document root).
    fn complete(&mut self, value: Value, node: Node, count: usize, anchor: usize) -> Result<(), ParseError> {
        if self.lean && self.stack.len() == 1 {
            self.decide(&value);
        }
        if anchor != 0 {
            self.anchors.insert(anchor, Anchored { value: value.clone(), node: node.clone(), count });
        }
        let at = node.start;
        match self.stack.last_mut() {
            None => self.root = Some((value, node)),
            Some(Frame::Seq { items, nodes, count: c, .. }) => {
                items.push(value);
                nodes.push(node);
                *c += count;
            }
            Some(Frame::Skip(_)) => {}
            Some(Frame::Map { entries, merged, key, count: c, .. }) => match key.take() {
                None => {
                    let (text, is_merge) = match &value {
                        Value::String(s) => (s.clone(), s == "<<" && node.kids.is_empty()),
                        Value::Null => ("null".to_owned(), false),
                        Value::Bool(_) | Value::Number(_) => (value.to_string(), false),
                        _ => return Err(error_at(at, "a mapping key must be a scalar")),
                    };
                    *key = Some((text, at, is_merge));
                }
                Some((k, key_mark, true)) => {
                    *c += count;
                    merge_into(merged, value, node, key_mark, &k)?;
                }
                Some((k, key_mark, false)) => {
                    *c += count;
                    let node = Node { key: Some(key_mark), ..node };
                    entries.push(Entry { key: k, value, node });
                }
            },
        }
        Ok(())
    }

    fn on_event(&mut self, event: Event<'_>, span: Span) -> Result<(), ParseError> {
        let (start, end) = (mark(span.start, self.origin), mark(span.end, self.origin));
        let starts_value =
            matches!(event, Event::Scalar(..) | Event::Alias(_) | Event::SequenceStart(..) | Event::MappingStart(..));
        if starts_value && self.skips_next() {
            return self.on_skipped(event, start, end);
        }
        if self.rebuild {
            return Ok(());
        }
        if let (Event::SequenceEnd | Event::MappingEnd, Some(Frame::Skip(_))) = (&event, self.stack.last()) {
            return self.on_skipped(event, start, end);
        }
        match event {
            Event::Scalar(text, style, anchor, tag) => {
                let value = scalar::resolve(&text, style, tag.as_deref()).map_err(|m| error_at(start, m))?;
                let node = Node { start, end, key: None, kids: Vec::new() };
                // A plain `<<` key is YAML's merge key only when unquoted.
                let value =
                    if style != ScalarStyle::Plain && text == "<<" { Value::String("<<".into()) } else { value };
                self.complete(value, node, 1, anchor)
            }
            Event::Alias(id) => {
                let Some(a) = self.anchors.get(&id) else {
                    return Err(error_at(start, "alias to an unknown anchor"));
                };
                self.alias_nodes = self.alias_nodes.saturating_add(a.count);
                if self.alias_nodes > self.limits.max_alias_nodes {
                    return Err(error_at(
                        start,
                        format!(
                            "aliases expand to more than {} nodes in one document (an alias bomb?)",
                            self.limits.max_alias_nodes
                        ),
                    ));
                }
                let (value, node, count) = (a.value.clone(), a.node.clone(), a.count);
                self.complete(value, Node { key: None, ..node }, count, 0)
            }
            Event::SequenceStart(anchor, _) => {
                self.push_frame(Frame::Seq { items: Vec::new(), nodes: Vec::new(), start, anchor, count: 1 }, start)
            }
            Event::MappingStart(anchor, _) => {
                let path = match self.stack.last() {
                    None => 0,
                    Some(Frame::Map { key: Some((k, _, false)), path, .. })
                        if PATH.get(*path).is_some_and(|p| p == k) =>
                    {
                        path + 1
                    }
                    _ => OFF_PATH,
                };
                self.push_frame(
                    Frame::Map { entries: Vec::new(), merged: Vec::new(), key: None, start, anchor, count: 1, path },
                    start,
                )
            }
            Event::SequenceEnd => match self.stack.pop() {
                Some(Frame::Seq { items, nodes, start, anchor, count }) => {
                    let node = Node { start, end, key: None, kids: nodes };
                    self.complete(Value::Array(items), node, count, anchor)
                }
                _ => Err(error_at(start, "unbalanced sequence end")),
            },
            Event::MappingEnd => match self.stack.pop() {
                Some(Frame::Map { entries, merged, start, anchor, count, .. }) => {
                    let (value, kids) = finish_map(entries, merged, &mut self.duplicates);
                    let node = Node { start, end, key: None, kids };
                    self.complete(value, node, count, anchor)
                }
                _ => Err(error_at(start, "unbalanced mapping end")),
            },
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentStart(_) | Event::DocumentEnd => {
                Ok(())
            }
        }
    }
}

impl Builder<'_> {
    /// An event inside a value being skipped. An alias there asks for a
    /// full read: what it copies was not built.
    fn on_skipped(&mut self, event: Event<'_>, start: Mark, end: Mark) -> Result<(), ParseError> {
        let node = Node { start, end, key: None, kids: Vec::new() };
        match event {
            Event::Scalar(text, style, _, tag) => self.skip_scalar(&text, style, tag.as_deref(), node),
            Event::Alias(_) => {
                self.rebuild = true;
                Ok(())
            }
            Event::SequenceStart(..) => {
                // A list of containers deep in a kind lifeguard does not
                // read: built in full, to say where its pod template is. A
                // CRD's schema has `containers` too, but as a mapping.
                let containers = |s: &Skipped| s.is_map && s.key.as_deref() == Some(PATH[PATH.len() - 1]);
                if !self.context_only && matches!(self.stack.last(), Some(Frame::Skip(s)) if containers(s)) {
                    self.rebuild = true;
                }
                self.push_frame(Frame::Skip(Skipped::new(false, start)), start)
            }
            Event::MappingStart(..) => self.push_frame(Frame::Skip(Skipped::new(true, start)), start),
            Event::SequenceEnd | Event::MappingEnd => match self.stack.pop() {
                Some(Frame::Skip(skipped)) => {
                    let start = skipped.start;
                    skipped.finish(&mut self.duplicates);
                    self.complete_skipped(Node { start, end, key: None, kids: Vec::new() }, None)
                }
                _ => Err(error_at(start, "unbalanced end")),
            },
            _ => Ok(()),
        }
    }
}

/// Adds the entries of a `<<` merge value (a mapping or a list of mappings).
fn merge_into(merged: &mut Vec<Entry>, value: Value, node: Node, at: Mark, key: &str) -> Result<(), ParseError> {
    let sources: Vec<(Value, Node)> = match value {
        Value::Object(_) => vec![(value, node)],
        Value::Array(items) => items.into_iter().zip(node.kids).collect(),
        _ => {
            return Err(error_at(at, format!("the merge key {key:?} needs a mapping or a list of mappings")));
        }
    };
    for (v, n) in sources {
        let Value::Object(map) = v else {
            return Err(error_at(n.start, "the merge key needs a mapping or a list of mappings"));
        };
        for ((k, v), kid) in map.into_iter().zip(n.kids) {
            // Earlier merge sources win over later ones.
            if !merged.iter().any(|e| e.key == k) {
                merged.push(Entry { key: k, value: v, node: kid });
            }
        }
    }
    Ok(())
}

/// Builds a JSON object and its aligned positions. Explicit keys win over
/// merged ones. A repeated explicit key keeps its first place and takes the
/// last value, as the Kubernetes YAML decoder does (it is not an input error:
/// real manifests have them).
fn finish_map(entries: Vec<Entry>, merged: Vec<Entry>, duplicates: &mut Vec<DuplicateKey>) -> (Value, Vec<Node>) {
    let mut map = Map::with_capacity(entries.len() + merged.len());
    let mut kids: Vec<Node> = Vec::with_capacity(entries.len() + merged.len());
    for e in entries {
        if map.contains_key(&e.key) {
            if let Some(i) = map.keys().position(|k| *k == e.key) {
                let first = kids[i].key.unwrap_or(kids[i].start);
                let at = e.node.key.unwrap_or(e.node.start);
                duplicates.push(DuplicateKey { key: e.key.clone(), at, first });
                kids[i] = e.node;
            }
            map.insert(e.key, e.value);
            continue;
        }
        map.insert(e.key, e.value);
        kids.push(e.node);
    }
    for e in merged {
        if !map.contains_key(&e.key) {
            map.insert(e.key, e.value);
            kids.push(e.node);
        }
    }
    (Value::Object(map), kids)
}

/// Parses a YAML (or JSON) stream into documents. Documents before an error
/// are returned with it, so what could be read is still linted.
pub fn parse_stream(text: &str, limits: &Limits) -> (Vec<Document>, Option<ParseError>) {
    let mut docs = Vec::new();
    let err = parse_stream_each(text, limits, |doc| docs.push(doc));
    (docs, err)
}

/// Like [`parse_stream`], but hands each document to `on_document` as soon
/// as it is complete, so a caller can lint while the rest is parsed.
pub fn parse_stream_each(text: &str, limits: &Limits, on_document: impl FnMut(Document)) -> Option<ParseError> {
    parse_part_each(text, Mark::default(), limits, on_document)
}

/// Like [`parse_stream_each`] on a part of a larger text that starts at the
/// start of a line: `origin` holds the lines (`line`) and characters
/// (`index`) of the text before the part, so positions are the larger
/// text's. A part parsed alone is the same YAML only when it starts at a
/// document marker with no directive before it; the caller decides that.
pub fn parse_part_each(
    text: &str,
    origin: Mark,
    limits: &Limits,
    on_document: impl FnMut(Document),
) -> Option<ParseError> {
    match read(text, origin, limits, Lean::No, 0, on_document) {
        Read::Done(error) => error,
        // Only a lean read asks for another.
        Read::Again => None,
    }
}

/// Like [`parse_part_each`], but a document whose kind says no rule can
/// read it (no pod spec, no Service, no `List`) is handed over with its
/// values left unbuilt (see [`super::skim`]): its position tree and repeated
/// keys are whole, its value holds only what decides that. Errors are
/// found as a full read finds them; their wording may differ, so a caller
/// that shows errors reads an erroneous part again in full.
pub fn parse_part_lean(
    text: &str,
    origin: Mark,
    limits: &Limits,
    on_document: impl FnMut(Document),
) -> Option<ParseError> {
    lean_read(text, origin, limits, Lean::Rules, on_document)
}

/// Like [`parse_part_lean`], but only the values of the context's objects
/// (Services, PodDisruptionBudgets, HorizontalPodAutoscalers:
/// [`crate::model::CONTEXT_KINDS`]) and
/// `List`s are built: every other document is checked (its errors found as
/// a full read finds them) and handed over with its values left unbuilt.
/// For a caller that needs a stream's context, or to know that a part
/// reads without error, and not its workloads.
pub fn parse_part_context(
    text: &str,
    origin: Mark,
    limits: &Limits,
    on_document: impl FnMut(Document),
) -> Option<ParseError> {
    lean_read(text, origin, limits, Lean::Context, on_document)
}

fn lean_read(
    text: &str,
    origin: Mark,
    limits: &Limits,
    lean: Lean,
    mut on_document: impl FnMut(Document),
) -> Option<ParseError> {
    let mut handed = 0;
    let first = read(text, origin, limits, lean, 0, |document| {
        handed += 1;
        on_document(document);
    });
    match first {
        Read::Done(error) => error,
        Read::Again => match read(text, origin, limits, Lean::No, handed, on_document) {
            Read::Done(error) => error,
            Read::Again => None,
        },
    }
}

enum Read {
    Done(Option<ParseError>),
    /// A lean read met what it cannot skip safely.
    Again,
}

/// Reads the documents of a part, handing over all but the first `skip`.
/// Which values a read may leave unbuilt.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lean {
    /// None: a full read.
    No,
    /// Those no rule reads.
    Rules,
    /// All but the context objects' (and `List`s').
    Context,
}

fn read(
    text: &str,
    origin: Mark,
    limits: &Limits,
    lean: Lean,
    skip: usize,
    mut on_document: impl FnMut(Document),
) -> Read {
    let mut builder = Builder {
        limits,
        origin,
        stack: Vec::new(),
        anchors: HashMap::new(),
        alias_nodes: 0,
        root: None,
        duplicates: Vec::new(),
        lean: lean != Lean::No,
        context_only: lean == Lean::Context,
        inert: false,
        rebuild: false,
    };
    let mut seen = 0;
    let mut doc_start = Mark::default();
    // Only the documents before an oversized one are parsed.
    let oversized = guards::oversized_document(text, limits.max_document_chars);
    let text = oversized.map_or(text, |(offset, _)| &text[..offset]);
    for item in Parser::new_from_str(text) {
        let (event, span) = match item {
            Ok(pair) => pair,
            Err(e) => {
                let (at, msg) =
                    guards::scan_error(text, mark(*e.marker(), Mark::default()), e.info(), limits.max_depth);
                return Read::Done(Some(error_at(shifted(at, origin), msg)));
            }
        };
        let start = mark(span.start, origin);
        if start.index.saturating_sub(doc_start.index) as usize > limits.max_document_chars {
            let msg = guards::document_too_large(limits.max_document_chars);
            return Read::Done(Some(error_at(doc_start, msg)));
        }
        match event {
            Event::DocumentStart(_) => {
                doc_start = start;
                builder.anchors.clear();
                builder.alias_nodes = 0;
                builder.duplicates.clear();
                builder.inert = false;
            }
            Event::DocumentEnd => {
                // Empty documents (bare `---`, comments only) are not errors: Helm emits them.
                if let Some((value, root)) = builder.root.take().filter(|(v, _)| !v.is_null()) {
                    let duplicate_keys = std::mem::take(&mut builder.duplicates);
                    seen += 1;
                    if seen > skip {
                        on_document(Document { value, root, start: doc_start, duplicate_keys });
                    }
                }
            }
            Event::StreamEnd => break,
            other => {
                if let Err(e) = builder.on_event(other, span) {
                    return Read::Done(Some(e));
                }
                if builder.rebuild {
                    return Read::Again;
                }
            }
        }
    }
    Read::Done(
        oversized.map(|(_, at)| error_at(shifted(at, origin), guards::document_too_large(limits.max_document_chars))),
    )
}
