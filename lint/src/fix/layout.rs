//! Reading a document's indentation style, so inserted keys look like their
//! neighbours: the indentation step of nested mappings and whether sequence
//! dashes sit under their key or one step to the right. The tallies are kept
//! so that edits located in one parse can tell when one of them changes the
//! style the next would read.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::path::genuine;
use super::render::Layout;
use super::text::{Offsets, newline_of, skip_properties};
use crate::input::Document;
use crate::input::source::Node;

/// Tallies of what the document does.
#[derive(Default, Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tally {
    steps: HashMap<usize, usize>,
    dashes: HashMap<usize, usize>,
}

/// The layout of `doc` in `text`: the most common indentation step and
/// dash offset among its block collections (2 and 0 when it has none).
pub(crate) fn detect(text: &str, doc: &Document, json: bool) -> Layout {
    Tally::of(text, &Offsets::new(text), doc).layout(newline_of(text), json)
}

impl Tally {
    /// What the block collections of `doc` in `text` do.
    pub(crate) fn of(text: &str, off: &Offsets<'_>, doc: &Document) -> Tally {
        let mut tally = Tally::default();
        walk(text, off, &doc.root, &doc.value, &mut tally);
        tally
    }

    pub(crate) fn layout(&self, newline: &'static str, json: bool) -> Layout {
        let most =
            |m: &HashMap<usize, usize>| m.iter().max_by_key(|(v, n)| (**n, std::cmp::Reverse(**v))).map(|(v, _)| *v);
        Layout { step: most(&self.steps).unwrap_or(2), dash_offset: most(&self.dashes).unwrap_or(0), newline, json }
    }

    /// Takes out what a value of the text counted: its own indentation
    /// relative to its key (`key_col`, for a mapping entry) and its children's.
    pub(crate) fn remove(&mut self, text: &str, off: &Offsets<'_>, key_col: Option<usize>, node: &Node, value: &Value) {
        let mut gone = Tally::default();
        if let Some(key_col) = key_col {
            measure(text, off, key_col, node, value, &mut gone);
        }
        walk(text, off, node, value, &mut gone);
        for (mine, theirs) in [(&mut self.steps, gone.steps), (&mut self.dashes, gone.dashes)] {
            for (v, n) in theirs {
                if let Some(count) = mine.get_mut(&v) {
                    *count = count.saturating_sub(n);
                    // A style no collection has any more is not a candidate.
                    if *count == 0 {
                        mine.remove(&v);
                    }
                }
            }
        }
    }

    /// Adds what `value` counts once written by `render::block_value_at` at
    /// column `col` in `layout`, for a mapping entry whose key is at `key_col`.
    pub(crate) fn add_written(&mut self, value: &Value, key_col: Option<usize>, col: usize, layout: &Layout) {
        match value {
            Value::Object(map) if !map.is_empty() => {
                if let Some(key_col) = key_col.filter(|k| col > *k) {
                    *self.steps.entry(col - key_col).or_default() += 1;
                }
                self.add_entries(map, layout);
            }
            Value::Array(items) if !items.is_empty() => {
                if let Some(key_col) = key_col.filter(|k| col >= *k) {
                    *self.dashes.entry(col - key_col).or_default() += 1;
                }
                self.add_items(items, layout);
            }
            _ => {}
        }
    }

    /// What `render::block_map` writes: every nested block collection
    /// indented as `layout` says.
    fn add_entries(&mut self, map: &Map<String, Value>, layout: &Layout) {
        for v in map.values() {
            match v {
                Value::Object(inner) if !inner.is_empty() => {
                    *self.steps.entry(layout.step).or_default() += 1;
                    self.add_entries(inner, layout);
                }
                Value::Array(items) if !items.is_empty() => {
                    *self.dashes.entry(layout.dash_offset).or_default() += 1;
                    self.add_items(items, layout);
                }
                _ => {}
            }
        }
    }

    /// What `render::block_seq` writes: its mapping items' entries (other
    /// items are written in flow style).
    fn add_items(&mut self, items: &[Value], layout: &Layout) {
        for item in items {
            if let Value::Object(map) = item {
                self.add_entries(map, layout);
            }
        }
    }
}

fn is_block(text: &str, off: &Offsets<'_>, node: &Node) -> bool {
    let at = skip_properties(text, off.byte(node.start.index));
    !matches!(text.as_bytes().get(at), Some(b'{' | b'['))
}

fn walk(text: &str, off: &Offsets<'_>, node: &Node, value: &Value, tally: &mut Tally) {
    match value {
        Value::Object(map) => {
            for (kid, v) in node.kids.iter().zip(map.values()) {
                if !genuine(node, kid, None) {
                    continue;
                }
                if let Some(key) = kid.key {
                    measure(text, off, key.col as usize, kid, v, tally);
                }
                walk(text, off, kid, v, tally);
            }
        }
        Value::Array(items) => {
            for (i, (kid, v)) in node.kids.iter().zip(items).enumerate() {
                let previous = if i > 0 { node.kids.get(i - 1) } else { None };
                if genuine(node, kid, previous) {
                    walk(text, off, kid, v, tally);
                }
            }
        }
        _ => {}
    }
}

/// Records how a block value is indented relative to its key at `key_col`.
fn measure(text: &str, off: &Offsets<'_>, key_col: usize, kid: &Node, value: &Value, tally: &mut Tally) {
    if !is_block(text, off, kid) {
        return;
    }
    let Some(first) = kid.kids.first().filter(|f| genuine(kid, f, None)) else {
        return;
    };
    match value {
        Value::Object(_) => {
            if let Some(k) = first.key {
                let col = k.col as usize;
                if col > key_col {
                    *tally.steps.entry(col - key_col).or_default() += 1;
                }
            }
        }
        Value::Array(_) => {
            // The item starts after `- `: step back over spaces to the dash.
            let item = off.byte(first.start.index);
            let before = &text[..item];
            let trimmed = before.trim_end_matches(' ');
            if trimmed.ends_with('-') {
                let dash_col = (first.start.col as usize).saturating_sub(before.len() - trimmed.len() + 1);
                if dash_col >= key_col {
                    *tally.dashes.entry(dash_col - key_col).or_default() += 1;
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{Limits, parse_stream};

    fn layout(text: &str) -> Layout {
        let (docs, _) = parse_stream(text, &Limits::default());
        detect(text, &docs[0], false)
    }

    #[test]
    fn kubectl_style() {
        let l = layout("spec:\n  containers:\n  - name: a\n    ports:\n    - containerPort: 80\n");
        assert_eq!((l.step, l.dash_offset), (2, 0));
    }

    #[test]
    fn indented_dashes_and_four_spaces() {
        let l = layout("spec:\n    containers:\n        - name: a\n          env:\n              - name: X\n");
        assert_eq!((l.step, l.dash_offset), (4, 4));
    }

    #[test]
    fn defaults_without_collections_and_crlf() {
        let text = "a: 1\r\nb: 2\r\n";
        let l = layout(text);
        assert_eq!((l.step, l.dash_offset, l.newline), (2, 0, "\r\n"));
    }
}
