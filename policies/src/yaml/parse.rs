//! The YAML loader: events from `saphyr-parser` (pure Rust, no unsafe, fuzzed
//! upstream) turned into JSON values plus a parallel position tree, with
//! explicit limits on document size, nesting depth and alias expansion.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Span};
use serde_json::{Map, Value};
use thiserror::Error;

use super::guards;
use super::limits::Limits;
use super::scalar;
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

fn mark(m: saphyr_parser::Marker) -> Mark {
    let clamp = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
    Mark { line: clamp(m.line()), col: clamp(m.col()), index: clamp(m.index()) }
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
    },
}

/// An anchored value, kept for its aliases.
struct Anchored {
    value: Value,
    node: Node,
    count: usize,
}

struct Builder<'l> {
    limits: &'l Limits,
    stack: Vec<Frame>,
    anchors: HashMap<usize, Anchored>,
    alias_nodes: usize,
    root: Option<(Value, Node)>,
    duplicates: Vec<DuplicateKey>,
}

impl Builder<'_> {
    fn push_frame(&mut self, frame: Frame, at: Mark) -> Result<(), ParseError> {
        if self.stack.len() >= self.limits.max_depth {
            return Err(error_at(at, format!("nesting deeper than {} levels", self.limits.max_depth)));
        }
        self.stack.push(frame);
        Ok(())
    }

    /// Hands a finished value to its parent (or makes it the document root).
    fn complete(&mut self, value: Value, node: Node, count: usize, anchor: usize) -> Result<(), ParseError> {
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
        let (start, end) = (mark(span.start), mark(span.end));
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
            Event::MappingStart(anchor, _) => self.push_frame(
                Frame::Map { entries: Vec::new(), merged: Vec::new(), key: None, start, anchor, count: 1 },
                start,
            ),
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
pub fn parse_stream_each(text: &str, limits: &Limits, mut on_document: impl FnMut(Document)) -> Option<ParseError> {
    let mut builder = Builder {
        limits,
        stack: Vec::new(),
        anchors: HashMap::new(),
        alias_nodes: 0,
        root: None,
        duplicates: Vec::new(),
    };
    let mut doc_start = Mark::default();
    // Only the documents before an oversized one are parsed.
    let oversized = guards::oversized_document(text, limits.max_document_chars);
    let text = oversized.map_or(text, |(offset, _)| &text[..offset]);
    for item in Parser::new_from_str(text) {
        let (event, span) = match item {
            Ok(pair) => pair,
            Err(e) => {
                let (at, msg) = guards::scan_error(text, mark(*e.marker()), e.info(), limits.max_depth);
                return Some(error_at(at, msg));
            }
        };
        let start = mark(span.start);
        if start.index.saturating_sub(doc_start.index) as usize > limits.max_document_chars {
            let msg = guards::document_too_large(limits.max_document_chars);
            return Some(error_at(doc_start, msg));
        }
        match event {
            Event::DocumentStart(_) => {
                doc_start = start;
                builder.anchors.clear();
                builder.alias_nodes = 0;
                builder.duplicates.clear();
            }
            Event::DocumentEnd => {
                // Empty documents (bare `---`, comments only) are not errors: Helm emits them.
                if let Some((value, root)) = builder.root.take().filter(|(v, _)| !v.is_null()) {
                    let duplicate_keys = std::mem::take(&mut builder.duplicates);
                    on_document(Document { value, root, start: doc_start, duplicate_keys });
                }
            }
            Event::StreamEnd => break,
            other => {
                if let Err(e) = builder.on_event(other, span) {
                    return Some(e);
                }
            }
        }
    }
    oversized.map(|(_, at)| error_at(at, guards::document_too_large(limits.max_document_chars)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(text: &str) -> (Vec<Document>, Option<ParseError>) {
        parse_stream(text, &Limits::default())
    }

    #[test]
    fn multi_document_with_empty_ones() {
        let (docs, err) = parse("---\n---\na: 1\n---\n# only a comment\n---\nb: [x, 2]\n");
        assert_eq!(err, None);
        let values: Vec<_> = docs.iter().map(|d| d.value.clone()).collect();
        assert_eq!(values, vec![json!({"a": 1}), json!({"b": ["x", 2]})]);
    }

    #[test]
    fn locate_points_at_keys_and_items() {
        let text = "kind: Pod\nspec:\n  containers:\n  - name: a\n    ports:\n    - containerPort: 80\n";
        let (docs, _) = parse(text);
        let d = &docs[0];
        let at = |p: &str| {
            let l = d.locate(p);
            (l.line, l.column)
        };
        assert_eq!(at("/spec"), (2, 1));
        assert_eq!(at("/spec/containers/0"), (4, 5));
        assert_eq!(at("/spec/containers/0/ports/0/containerPort"), (6, 7));
        // A missing field points at its deepest existing parent.
        assert_eq!(at("/spec/containers/0/livenessProbe"), (4, 5));
    }

    #[test]
    fn anchors_and_merge_keys() {
        let text = "base: &b {x: 1, y: 2}\nuse:\n  <<: *b\n  y: 3\nlist: [*b]\n";
        let (docs, err) = parse(text);
        assert_eq!(err, None);
        assert_eq!(docs[0].value["use"], json!({"y": 3, "x": 1}));
        assert_eq!(docs[0].value["list"], json!([{"x": 1, "y": 2}]));
        assert_eq!(docs[0].locate("/use/x").line, 1);
    }

    #[test]
    fn duplicate_keys_take_the_last_value_at_the_last_position() {
        let (docs, err) = parse("a: 1\nb: 2\na: 3\n");
        assert_eq!(err, None);
        assert_eq!(docs[0].value, json!({"a": 3, "b": 2}));
        assert_eq!(docs[0].locate("/a").line, 3);
        let dup = &docs[0].duplicate_keys;
        assert_eq!(dup.len(), 1);
        assert_eq!((dup[0].key.as_str(), dup[0].at.line, dup[0].first.line), ("a", 3, 1));
        let (docs, _) = parse("a: 1\n---\nb: 2\n");
        assert!(docs.iter().all(|d| d.duplicate_keys.is_empty()), "no carry-over between documents");
    }

    #[test]
    fn syntax_error_keeps_earlier_documents() {
        let (docs, err) = parse("a: 1\n---\nb: [1, 2\n");
        assert_eq!(docs.len(), 1);
        assert!(err.is_some());
    }

    #[test]
    fn unexpected_end_points_at_the_last_line() {
        for text in ["kind: Pod\nspec: [unclosed", "kind: Pod\nspec: [unclosed\n\n  \n"] {
            let err = parse(text).1.expect("an error");
            assert_eq!((err.line, err.column), (2, 16), "{text:?}");
            assert!(err.message.ends_with("the input ends here"), "{}", err.message);
        }
    }

    #[test]
    fn alias_bomb_is_refused() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let p = i - 1;
            text.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        let (_, err) = parse(&text);
        let err = err.map(|e| e.message).unwrap_or_default();
        assert!(err.contains("alias bomb"), "{err}");
    }

    #[test]
    fn deep_nesting_is_refused() {
        let text = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
        let (_, err) = parse(&text);
        assert!(err.is_some());
        let text = format!("a:\n{}", (1..200).map(|i| format!("{}k{i}:\n", " ".repeat(i))).collect::<String>());
        let (_, err) = parse(&text);
        assert!(err.map(|e| e.message).unwrap_or_default().contains("nesting deeper"));
    }

    #[test]
    fn json_parses_with_positions() {
        let (docs, err) = parse("{\n  \"kind\": \"Pod\",\n  \"spec\": {\"containers\": []}\n}\n");
        assert_eq!(err, None);
        assert_eq!(docs[0].locate("/spec/containers").line, 3);
    }
}
