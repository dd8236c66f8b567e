//! Which source line set each line of an object kustomize built: the
//! object's own file (its origin) or one of the patches that apply to it.
//! kustomize sorts keys and merges patches, so lines are matched by the
//! field each one holds, not by their text: a field maps to the last patch
//! that holds it with the built value, else to its origin when the origin
//! holds the same value; a mapping or list maps to its origin when the
//! origin has it, else to the last patch that has it. Any other field (set
//! by a transformer: an image tag, a common label) maps to nothing, and the
//! finding keeps the built position.

use std::sync::Arc;

use serde_json::Value;

use crate::input::source::Node;
use crate::input::source::{Document, Location};

/// The list items kustomize merges by a key, and the key, in the order a
/// built item is matched by: containers, env, volumes and ports by name,
/// then unnamed ports by number, mounts by path.
const MERGE_KEYS: [&str; 4] = ["name", "containerPort", "mountPath", "devicePath"];

/// Where each line of a built document came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceMap {
    files: Vec<Arc<str>>,
    /// Indexed by the built line's offset in its document: the file (an
    /// index into `files`), its line and column.
    at: Vec<Option<(usize, Location)>>,
}

impl SourceMap {
    /// The file and position that set the built line at `offset` (0-based
    /// within the document), when one did with confidence.
    pub fn get(&self, offset: usize) -> Option<(&str, Location)> {
        let (file, at) = self.at.get(offset).copied().flatten()?;
        Some((self.files.get(file)?, at))
    }
}

/// One document a built object takes fields from.
#[derive(Debug, Clone, Copy)]
pub struct Piece<'a> {
    /// Its file as shown.
    pub file: &'a Arc<str>,
    /// The document, positioned within its own text.
    pub doc: &'a Document,
    /// The line of `file` where that text begins, and the columns it is
    /// indented by there (an inline patch sits inside its kustomization).
    pub at: (u32, u32),
    /// A JSON 6902 patch (a list of operations), not an object.
    pub operations: bool,
    /// Which document of its text it is.
    pub index: usize,
}

impl Piece<'_> {
    /// Where `pointer` of the document is in the file (its nearest
    /// ancestor's place when the field is not there).
    pub fn place(&self, pointer: &str) -> Location {
        let at = self.doc.locate(pointer);
        Location { line: at.line + self.at.0 - 1, column: at.column + self.at.1 }
    }
}

/// Maps every line of `built` (one document, its first line at offset 0)
/// to the piece that set it: `origin`, the object's own document, and
/// `patches`, those that apply to it, in the order kustomize applied them.
pub fn map(built: &Document, origin: Option<Piece<'_>>, patches: &[Piece<'_>]) -> SourceMap {
    let mut pieces: Vec<Piece<'_>> = Vec::new();
    let mut out = SourceMap::default();
    let file_index = |file: &Arc<str>, files: &mut Vec<Arc<str>>| match files.iter().position(|f| f == file) {
        Some(i) => i,
        None => {
            files.push(Arc::clone(file));
            files.len() - 1
        }
    };
    pieces.extend(origin);
    pieces.extend(patches.iter().copied());
    let mut walk: Vec<(&Value, &Node, Vec<String>)> = vec![(&built.value, &built.root, Vec::new())];
    while let Some((value, node, tokens)) = walk.pop() {
        let line = node.key.unwrap_or(node.start).line;
        let offset = usize::try_from(line).unwrap_or(0).saturating_sub(1);
        if out.at.len() <= offset {
            out.at.resize(offset + 1, None);
        }
        if out.at[offset].is_none()
            && let Some((piece, pointer)) = setter(&built.value, &tokens, value, origin, patches)
        {
            let file = file_index(piece.file, &mut out.files);
            out.at[offset] = Some((file, piece.place(&pointer)));
        }
        // Children pushed in reverse: popped in document order, a parent
        // before its children, so a line keeps its shallowest field.
        let kids: Vec<(&Value, String)> = match value {
            Value::Object(map) => map.iter().map(|(k, v)| (v, k.clone())).collect(),
            Value::Array(items) => items.iter().enumerate().map(|(i, v)| (v, i.to_string())).collect(),
            _ => Vec::new(),
        };
        for ((v, token), kid) in kids.into_iter().zip(&node.kids).rev() {
            let mut next = tokens.clone();
            next.push(token);
            walk.push((v, kid, next));
        }
    }
    out
}

/// Where a value written at `pointer` of the built object is to be written
/// in the user's files for the build to give it: in the piece that set the
/// deepest field of `pointer` the built object has (the field itself when
/// it exists, a value to change; else the mapping a new member goes in),
/// at that field's pointer there with the members it lacks appended. `None`
/// where no piece holds that field, or the new member would be a list's.
pub fn target<'a>(
    built: &Value,
    pointer: &str,
    origin: Option<Piece<'a>>,
    patches: &[Piece<'a>],
) -> Option<(Piece<'a>, String)> {
    let tokens: Vec<String> = pointer.split('/').skip(1).map(|t| t.replace("~1", "/").replace("~0", "~")).collect();
    // The pointer's prefix of `n` tokens ends where its `n+1`-th `/` is.
    let ends: Vec<usize> = pointer.match_indices('/').map(|(i, _)| i).skip(1).chain([pointer.len()]).collect();
    let mut held = tokens.len();
    let value = loop {
        let prefix = if held == 0 { "" } else { &pointer[..*ends.get(held - 1)?] };
        match built.pointer(prefix) {
            Some(value) => break value,
            None => held = held.checked_sub(1)?,
        }
    };
    if held < tokens.len() && !value.is_object() {
        return None;
    }
    // A new member goes in the mapping as the last JSON 6902 operation that
    // wrote it whole left it: what the origin had there was replaced.
    let written_whole = (held < tokens.len())
        .then(|| {
            patches.iter().rev().filter(|p| p.operations).find_map(|p| {
                let (pointer, _) = in_operations(built, &tokens[..held], &p.doc.value)?;
                Some((*p, pointer))
            })
        })
        .flatten();
    let (piece, mut there) = match written_whole {
        Some(found) => found,
        None => setter(built, &tokens[..held], value, origin, patches)?,
    };
    for token in &tokens[held..] {
        there.push('/');
        there.push_str(&token.replace('~', "~0").replace('/', "~1"));
    }
    Some((piece, there))
}

/// The piece that set the built field at `tokens`, and the field's pointer
/// in it.
fn setter<'a>(
    root: &Value,
    tokens: &[String],
    value: &Value,
    origin: Option<Piece<'a>>,
    patches: &[Piece<'a>],
) -> Option<(Piece<'a>, String)> {
    let leaf = !value.is_object() && !value.is_array();
    let holds = |piece: &Piece<'a>| -> Option<(Piece<'a>, String)> {
        let (pointer, found) = if piece.operations {
            in_operations(root, tokens, &piece.doc.value)?
        } else {
            translate(root, tokens, &piece.doc.value)?
        };
        (!leaf || found == value).then_some((*piece, pointer))
    };
    if leaf {
        patches.iter().rev().find_map(holds).or_else(|| origin.as_ref().and_then(holds))
    } else {
        origin.as_ref().and_then(holds).or_else(|| patches.iter().rev().find_map(holds))
    }
}

/// The pointer in `piece` of the built field at `tokens` and its value
/// there: mapping keys as they are, list items by their merge key (or by
/// index where neither side's items have one and the lists are as long).
fn translate<'v>(root: &Value, tokens: &[String], piece: &'v Value) -> Option<(String, &'v Value)> {
    let (mut built, mut there) = (root, piece);
    let mut pointer = String::new();
    for token in tokens {
        match (built, there) {
            (Value::Object(b), Value::Object(p)) => {
                built = b.get(token)?;
                there = p.get(token)?;
                pointer.push('/');
                pointer.push_str(&token.replace('~', "~0").replace('/', "~1"));
            }
            (Value::Array(b), Value::Array(p)) => {
                let i: usize = token.parse().ok()?;
                built = b.get(i)?;
                let key = MERGE_KEYS.iter().find(|k| !built[**k].is_null());
                let j = match key {
                    Some(key) => p.iter().position(|item| item[*key] == built[*key])?,
                    None if p.len() == b.len() => i,
                    None => return None,
                };
                there = p.get(j)?;
                pointer.push('/');
                pointer.push_str(&j.to_string());
            }
            _ => return None,
        }
    }
    Some((pointer, there))
}

/// The built field at `tokens` in a JSON 6902 patch: the last `add` or
/// `replace` whose path leads to it, and the field within its value.
fn in_operations<'v>(root: &Value, tokens: &[String], operations: &'v Value) -> Option<(String, &'v Value)> {
    let ops = operations.as_array()?;
    ops.iter().enumerate().rev().find_map(|(i, op)| {
        if !matches!(op["op"].as_str(), Some("add" | "replace")) {
            return None;
        }
        let path: Vec<String> =
            op["path"].as_str()?.split('/').skip(1).map(|t| t.replace("~1", "/").replace("~0", "~")).collect();
        if path.len() > tokens.len() {
            return None;
        }
        let mut at = root;
        for (wrote, token) in path.iter().zip(tokens) {
            // `-` appends: it wrote the list's last item.
            let appended = wrote == "-" && at.as_array().is_some_and(|a| a.len().checked_sub(1) == token.parse().ok());
            if wrote != token && !appended {
                return None;
            }
            at = match at {
                Value::Object(m) => m.get(token)?,
                Value::Array(a) => a.get(token.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        let (rest, value) = translate(at, &tokens[path.len()..], op.get("value")?)?;
        Some((format!("/{i}/value{rest}"), value))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{Limits, parse_stream};

    fn doc(text: &str) -> Document {
        let (mut docs, err) = parse_stream(text, &Limits::default());
        assert!(err.is_none(), "{err:?}");
        docs.remove(0)
    }

    fn line_of(text: &str, needle: &str) -> usize {
        text.lines().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("{needle} in {text}"))
    }

    #[test]
    fn fields_map_to_the_base_or_the_last_patch_that_set_them() {
        let built_text = "kind: Deployment\nmetadata:\n  name: prod-app\nspec:\n  template:\n    spec:\n      containers:\n      - env:\n        - name: MODE\n          value: prod\n        image: app:2\n        livenessProbe:\n          httpGet:\n            path: /health\n            port: 8080\n        name: app\n      terminationGracePeriodSeconds: 30\n";
        let base_text = "kind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n    spec:\n      terminationGracePeriodSeconds: 30\n      containers:\n      - name: app\n        image: app:1\n        livenessProbe:\n          httpGet:\n            path: /health\n            port: 8080\n";
        let patch_text = "kind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        env:\n        - name: MODE\n          value: prod\n";
        let (built, base, patch) = (doc(built_text), doc(base_text), doc(patch_text));
        let (base_file, patch_file): (Arc<str>, Arc<str>) = ("base/app.yaml".into(), "prod/kustomization.yaml".into());
        let origin = Piece { file: &base_file, doc: &base, at: (1, 0), operations: false, index: 0 };
        // An inline patch whose text begins at line 20, indented by 4.
        let patches = [Piece { file: &patch_file, doc: &patch, at: (20, 4), operations: false, index: 0 }];
        let map = map(&built, Some(origin), &patches);
        let at = |needle: &str| map.get(line_of(built_text, needle)).map(|(f, l)| (f.to_owned(), l.line));
        let base_line = |needle: &str| u32::try_from(line_of(base_text, needle) + 1).expect("small");
        assert_eq!(at("path: /health"), Some(("base/app.yaml".into(), base_line("path: /health"))));
        assert_eq!(at("terminationGrace"), Some(("base/app.yaml".into(), base_line("terminationGrace"))));
        assert_eq!(
            at("- env:"),
            Some(("base/app.yaml".into(), base_line("- name: app"))),
            "the container is the base's"
        );
        let value_line = u32::try_from(line_of(patch_text, "value: prod")).expect("small") + 20;
        assert_eq!(at("value: prod"), Some(("prod/kustomization.yaml".into(), value_line)));
        assert_eq!(at("image: app:2"), None, "a transformer's value: no line set it");
        assert_eq!(at("name: prod-app"), None, "the prefixed name neither");
    }

    #[test]
    fn a_value_is_written_where_the_build_takes_its_field_from() {
        let built_text = "kind: Deployment\nspec:\n  template:\n    spec:\n      terminationGracePeriodSeconds: 5\n      containers:\n      - name: app\n        image: app:2\n        env:\n        - name: MODE\n          value: prod\n";
        let base_text = "kind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: app:1\n";
        let patch_text = "kind: Deployment\nspec:\n  template:\n    spec:\n      terminationGracePeriodSeconds: 5\n      containers:\n      - name: app\n        env:\n        - name: MODE\n          value: prod\n";
        let (built, base, patch) = (doc(built_text), doc(base_text), doc(patch_text));
        let (f_base, f_patch): (Arc<str>, Arc<str>) = ("base.yaml".into(), "patch.yaml".into());
        let origin = Some(Piece { file: &f_base, doc: &base, at: (1, 0), operations: false, index: 0 });
        let patches = [Piece { file: &f_patch, doc: &patch, at: (1, 0), operations: false, index: 0 }];
        let at =
            |pointer: &str| target(&built.value, pointer, origin, &patches).map(|(p, at)| (p.file.to_string(), at));
        let container = "/spec/template/spec/containers/0";
        // A new member: in the mapping where the origin holds it.
        assert_eq!(
            at(&format!("{container}/startupProbe")),
            Some(("base.yaml".into(), format!("{container}/startupProbe")))
        );
        // A value a patch set: in that patch.
        let grace = "/spec/template/spec/terminationGracePeriodSeconds";
        assert_eq!(at(grace), Some(("patch.yaml".into(), grace.into())));
        assert_eq!(
            at(&format!("{container}/env/0/value")),
            Some(("patch.yaml".into(), format!("{container}/env/0/value")))
        );
        // A transformer's value (the image tag): nowhere.
        assert_eq!(at(&format!("{container}/image")), None);
        // A member of a list: not placed.
        assert_eq!(at(&format!("{container}/env/1")), None);
        // A container a JSON 6902 operation wrote whole: in its value.
        let ops_text =
            "- op: replace\n  path: /spec/template/spec/containers/0\n  value:\n    name: app\n    image: app:2\n";
        let ops = doc(ops_text);
        let f_ops: Arc<str> = "ops.yaml".into();
        let patches = [Piece { file: &f_ops, doc: &ops, at: (1, 0), operations: true, index: 0 }];
        let placed = target(&built.value, &format!("{container}/startupProbe"), origin, &patches);
        assert_eq!(
            placed.map(|(p, at)| (p.file.to_string(), at)),
            Some(("ops.yaml".into(), "/0/value/startupProbe".into()))
        );
    }

    #[test]
    fn a_json_patch_sets_what_its_operation_adds() {
        let built_text = "kind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        readinessProbe:\n          periodSeconds: 5\n";
        let ops_text =
            "- op: add\n  path: /spec/template/spec/containers/0/readinessProbe\n  value:\n    periodSeconds: 5\n";
        let base_text = "kind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n";
        let (built, ops, base) = (doc(built_text), doc(ops_text), doc(base_text));
        let (f_ops, f_base): (Arc<str>, Arc<str>) = ("ops.yaml".into(), "base.yaml".into());
        let patches = [Piece { file: &f_ops, doc: &ops, at: (1, 0), operations: true, index: 0 }];
        let map =
            map(&built, Some(Piece { file: &f_base, doc: &base, at: (1, 0), operations: false, index: 0 }), &patches);
        let at = |needle: &str| map.get(line_of(built_text, needle)).map(|(f, l)| (f.to_owned(), l.line));
        assert_eq!(at("periodSeconds: 5"), Some(("ops.yaml".into(), 4)));
        assert_eq!(at("readinessProbe:"), Some(("ops.yaml".into(), 3)), "the object the operation wrote: its value");
        assert_eq!(at("- name: app"), Some(("base.yaml".into(), 6)));
    }
}
