//! Reading a document's indentation style, so inserted keys look like their
//! neighbours: the indentation step of nested mappings and whether sequence
//! dashes sit under their key or one step to the right.

use std::collections::HashMap;

use serde_json::Value;

use super::path::genuine;
use super::render::Layout;
use super::text::{Offsets, newline_of, skip_properties};
use crate::input::Document;
use crate::input::source::Node;

/// Tallies of what the document does.
#[derive(Default)]
struct Tally {
    steps: HashMap<usize, usize>,
    dashes: HashMap<usize, usize>,
}

/// The layout of `doc` in `text`: the most common indentation step and
/// dash offset among its block collections (2 and 0 when it has none).
pub(crate) fn detect(text: &str, doc: &Document, json: bool) -> Layout {
    let off = Offsets::new(text);
    let mut tally = Tally::default();
    walk(text, &off, &doc.root, &doc.value, &mut tally);
    let most = |m: &HashMap<usize, usize>| m.iter().max_by_key(|(v, n)| (**n, std::cmp::Reverse(**v))).map(|(v, _)| *v);
    Layout {
        step: most(&tally.steps).unwrap_or(2),
        dash_offset: most(&tally.dashes).unwrap_or(0),
        newline: newline_of(text),
        json,
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
