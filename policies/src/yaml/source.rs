//! A parsed document and the position tree that maps a JSON pointer back
//! to `line:column`.

use serde_json::Value;

/// A position in the source (line 1-based, column 0-based in characters,
/// index in characters from the start of the text).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mark {
    /// Line, 1-based.
    pub line: u32,
    /// Column, 0-based, in characters.
    pub col: u32,
    /// Offset in characters from the start of the text.
    pub index: u32,
}

/// Positions of one value, aligned with the value: `kids[i]` is the i-th
/// element of a sequence or the i-th entry of a mapping (in the map's order).
#[derive(Debug, Clone, Default)]
pub struct Node {
    /// Where the value starts.
    pub start: Mark,
    /// Where the value ends (exclusive).
    pub end: Mark,
    /// Where the key of this value starts, for mapping entries.
    pub key: Option<Mark>,
    /// Positions of the children.
    pub kids: Vec<Node>,
}

/// A `line:column` (both 1-based) to show a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Location {
    /// Line, 1-based.
    pub line: u32,
    /// Column, 1-based.
    pub column: u32,
}

impl From<Mark> for Location {
    fn from(m: Mark) -> Location {
        Location { line: m.line, column: m.col + 1 }
    }
}

/// One YAML document (or one JSON file) with its positions.
#[derive(Debug, Clone)]
pub struct Document {
    /// The document as JSON.
    pub value: Value,
    /// Positions, aligned with `value`.
    pub root: Node,
    /// Where the document starts (its `---`, or its first node).
    pub start: Mark,
    /// Keys repeated within one mapping (the last value wins).
    pub duplicate_keys: Vec<DuplicateKey>,
}

/// A key repeated in one mapping. It is read, not refused (real manifests
/// have them), but the earlier value is lost, which is worth a warning:
/// concatenating files without `---` between them looks just like this.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateKey {
    /// The key.
    pub key: String,
    /// The repeated key, whose value is kept.
    pub at: Mark,
    /// The first occurrence, whose value is dropped.
    pub first: Mark,
}

impl Document {
    /// Position of the field a JSON pointer names; for a missing field,
    /// the deepest existing parent. Mapping entries point at their key.
    pub fn locate(&self, pointer: &str) -> Location {
        let node = self.node_at(pointer);
        node.key.unwrap_or(node.start).into()
    }

    /// The position node of the value `pointer` names, or, for a missing
    /// field, of its deepest existing parent: the one walk from a pointer
    /// to where it is, for [`Document::locate`] and the editor's ranges.
    pub fn node_at(&self, pointer: &str) -> &Node {
        let mut value = &self.value;
        let mut node = &self.root;
        if pointer.is_empty() {
            return node;
        }
        for raw in pointer.split('/').skip(1) {
            // Unescape only when needed: locate runs for every finding.
            let token: std::borrow::Cow<'_, str> =
                if raw.contains('~') { raw.replace("~1", "/").replace("~0", "~").into() } else { raw.into() };
            let found = match value {
                Value::Object(map) => {
                    map.iter().enumerate().find(|(_, (k, _))| **k == *token).map(|(i, (_, v))| (i, v))
                }
                Value::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get(i).map(|v| (i, v))),
                _ => None,
            };
            let Some((next_value, next_node)) = found.and_then(|(i, v)| node.kids.get(i).map(|n| (v, n))) else {
                break;
            };
            value = next_value;
            node = next_node;
        }
        node
    }
}
