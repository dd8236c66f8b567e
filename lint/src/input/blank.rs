//! Whether a text holds any document: what reading stdin and the notes of
//! inputs that gave no object both ask.

/// Blank lines, comments and document markers only. A document holding
/// `null` or `{}` is still a document someone wrote.
pub fn holds_no_document(text: &str) -> bool {
    text.lines().map(str::trim).all(|l| l.is_empty() || l.starts_with('#') || l == "---" || l == "...")
}
