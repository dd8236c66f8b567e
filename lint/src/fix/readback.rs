//! Nothing is written that has not been read back: an edited text must
//! parse into exactly the values the fixes were meant to give.

use serde_json::Value;

use crate::documents::parse_text;
use crate::input::{Document, Limits};

/// Checks that `text` parses, without error, into exactly the documents
/// `want`, and returns them.
pub(super) fn verify(
    file: &str,
    text: &str,
    want: &[Value],
    json: bool,
    limits: &Limits,
) -> Result<Vec<Document>, String> {
    if json && serde_json::from_str::<Value>(text).is_err() {
        return Err("not valid JSON".into());
    }
    let (docs, error) = parse_text(file, text, limits);
    if let Some(e) = error {
        return Err(format!("does not parse: {e}"));
    }
    if docs.len() != want.len() {
        return Err(format!("{} documents instead of {}", docs.len(), want.len()));
    }
    match docs.iter().zip(want).position(|(d, w)| d.value != *w) {
        Some(i) => Err(format!("document {} differs", i + 1)),
        None => Ok(docs),
    }
}
