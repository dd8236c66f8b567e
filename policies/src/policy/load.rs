//! Loading a policy from text: parse (YAML or JSON, with positions), read
//! the file format strictly, resolve `extends`, validate and compile — as one
//! step that yields a complete [`Policy`] or one [`PolicyError`] naming the
//! file, line and key. The engine reads no files: callers pass the text.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::error::{Invalid, PolicyError, key_of};
use super::file::PolicyFile;
use super::merge::merge_policy;
use super::packs::{BASE_PACK, find_pack, pack_names};
use super::validate::closest;
use crate::model::escape_token;
use crate::yaml::{Document, Limits, parse_stream};

/// Packs extend packs; a longer chain is a loop.
const MAX_EXTENDS_DEPTH: usize = 8;

/// One document of policy text, read into the file format.
pub(crate) fn parse_one(text: &str, name: &str) -> Result<(Document, PolicyFile), PolicyError> {
    let (mut docs, err) = parse_stream(text, &Limits::default());
    let at = |line: u32, column: u32, message: String| PolicyError {
        file: name.to_owned(),
        line: Some(line),
        column: Some(column),
        key: String::new(),
        message,
    };
    if let Some(e) = err {
        return Err(at(e.line, e.column, e.message));
    }
    if let Some(second) = docs.get(1) {
        return Err(at(second.start.line, second.start.col + 1, "a policy file holds one document".into()));
    }
    let Some(doc) = docs.pop() else {
        return Err(PolicyError {
            file: name.to_owned(),
            line: None,
            column: None,
            key: String::new(),
            message: "empty policy: expected `apiVersion: lifeguard.dev/v1alpha1` and `kind: Policy`".into(),
        });
    };
    if !doc.value.is_object() {
        let start = doc.root.start;
        return Err(at(
            start.line,
            start.col + 1,
            "a policy is a mapping (apiVersion, kind, parameters, rules, ...)".into(),
        ));
    }
    let file = typed(&doc.value).map_err(|e| locate(&doc, name, e))?;
    Ok((doc, file))
}

/// Reads a JSON value into a type; the error names the offending key.
pub(crate) fn typed<T: DeserializeOwned>(value: &Value) -> Result<T, Invalid> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let pointer = pointer_of(e.path());
        Invalid::at(pointer, friendlier(&e.inner().to_string()))
    })
}

/// serde's "unknown field `x`, expected one of ..." lists every key; a
/// close match is more useful.
fn friendlier(message: &str) -> String {
    let Some(rest) = message.strip_prefix("unknown field `") else {
        return crate::wording::plain_words(message);
    };
    let Some((field, expected)) = rest.split_once("`, expected ") else {
        return message.to_owned();
    };
    // `one of `a`, `b`, `c`` or `` `a` or `b` ``.
    let candidates: Vec<&str> = expected
        .trim_start_matches("one of ")
        .split([',', ' '])
        .map(|c| c.trim_matches('`'))
        .filter(|c| !c.is_empty() && *c != "or")
        .collect();
    match closest(field, candidates.iter().copied()) {
        Some(best) => format!("unknown key `{field}`; did you mean `{best}`?"),
        None => format!("unknown key `{field}`; expected {expected}"),
    }
}

/// Turns a serde path into a JSON pointer.
fn pointer_of(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => out.push_str(&format!("/{index}")),
            Segment::Map { key } => {
                out.push('/');
                out.push_str(&escape_token(key));
            }
            Segment::Enum { variant } => {
                out.push('/');
                out.push_str(&escape_token(variant));
            }
            Segment::Unknown => {}
        }
    }
    out
}

/// Places a validation error at its line in the document.
pub(crate) fn locate(doc: &Document, name: &str, e: Invalid) -> PolicyError {
    let at = doc.locate(&e.pointer);
    PolicyError {
        file: name.to_owned(),
        line: Some(at.line),
        column: Some(at.column),
        key: key_of(&e.pointer),
        message: e.message,
    }
}

/// The merged JSON of what a document extends: `None` for the root pack.
pub(crate) fn base_of(extends: Option<&str>, is_root: bool, depth: usize) -> Result<Option<Value>, PolicyError> {
    match extends {
        Some(name) => pack_value(name, depth + 1).map(Some),
        None if is_root => Ok(None),
        None => pack_value(BASE_PACK, depth + 1).map(Some),
    }
}

/// A pack's document with its own `extends` chain merged in.
pub(crate) fn pack_value(name: &str, depth: usize) -> Result<Value, PolicyError> {
    let origin = format!("pack {name}");
    let unlocated =
        |message: String| PolicyError { file: origin.clone(), line: None, column: None, key: String::new(), message };
    if depth > MAX_EXTENDS_DEPTH {
        return Err(unlocated("`extends` chain too long (a loop?)".into()));
    }
    let pack = find_pack(name).ok_or_else(|| unlocated(format!("unknown pack; built-in packs: {}", pack_names())))?;
    let (doc, file) = parse_one(pack.text, &origin)?;
    Ok(match base_of(file.extends.as_deref(), name == BASE_PACK, depth)? {
        Some(base) => merge_policy(base, doc.value),
        None => doc.value,
    })
}
