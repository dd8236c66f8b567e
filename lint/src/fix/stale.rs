//! Comments a fix may have made stale: a comment on the line of a value a
//! fix changed, or in the comment lines right above it, that names a number
//! or the field (`# 60 s covers the model load` above `failureThreshold: 6`).
//! The comment stays (every comment does); the person is told to re-read it.

use serde_json::Value;

use super::text::comment_start;
use crate::input::Document;

/// A scalar a fix changed: JSON pointer from the document root, old value, new value.
pub(super) type Changed = (String, Value, Value);

/// A comment next to a value a fix changed.
#[derive(Debug, Clone, PartialEq)]
pub struct StaleComment {
    /// File name as shown.
    pub file: String,
    /// Line of the comment in the fixed text, 1-based.
    pub line: u32,
    /// The comment, trimmed.
    pub comment: String,
    /// The field the fix changed (the last token of its pointer).
    pub field: String,
    /// Its value before the fix.
    pub old: Value,
    /// Its value after.
    pub new: Value,
}

/// The comments of a text (its `lines`, parsed as `doc`, one document of
/// it) that sit on or right above a changed scalar `(pointer, old, new)`
/// and mention a number or the field. The lines are the caller's, split
/// once for all of a stream's documents.
pub(super) fn stale_comments(file: &str, lines: &[&str], doc: &Document, changed: &[Changed]) -> Vec<StaleComment> {
    let mut out = Vec::new();
    for (pointer, old, new) in changed {
        let field = pointer.rsplit('/').next().unwrap_or_default().replace("~1", "/").replace("~0", "~");
        let at = doc.locate(pointer).line as usize;
        let Some(own) = at.checked_sub(1).and_then(|i| lines.get(i)) else {
            continue;
        };
        let mut found: Vec<(usize, &str)> = Vec::new();
        if let Some(c) = comment_start(own) {
            found.push((at, own[c..].trim()));
        }
        // The comment block right above: no blank line in between.
        let mut i = at - 1;
        while i > 0 {
            let above = lines[i - 1].trim();
            if !above.starts_with('#') {
                break;
            }
            found.push((i, above));
            i -= 1;
        }
        found.sort_unstable();
        for (line, comment) in found {
            if mentions(comment, &field) {
                out.push(StaleComment {
                    file: file.to_owned(),
                    line: u32::try_from(line).unwrap_or(u32::MAX),
                    comment: comment.to_owned(),
                    field: field.clone(),
                    old: old.clone(),
                    new: new.clone(),
                });
            }
        }
    }
    out
}

/// Whether a comment talks about a value: it holds a number, or names the field.
fn mentions(comment: &str, field: &str) -> bool {
    comment.chars().any(|c| c.is_ascii_digit()) || comment.to_lowercase().contains(&field.to_lowercase())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::input::{Limits, parse_stream};

    fn stale(text: &str, pointer: &str) -> Vec<(u32, String)> {
        let (docs, _) = parse_stream(text, &Limits::default());
        let changed = [(pointer.to_owned(), json!(6), json!(60))];
        stale_comments("f.yaml", &text.lines().collect::<Vec<_>>(), &docs[0], &changed)
            .into_iter()
            .map(|s| (s.line, s.comment))
            .collect()
    }

    #[test]
    fn a_comment_right_above_or_beside_that_names_a_number_or_the_field() {
        let text = "probe:\n  # the boot check\n  # 60 s covers the model load\n  failureThreshold: 60  # was failureThreshold x period\n  periodSeconds: 10\n";
        assert_eq!(
            stale(text, "/probe/failureThreshold"),
            vec![(3, "# 60 s covers the model load".to_owned()), (4, "# was failureThreshold x period".to_owned())]
        );
    }

    #[test]
    fn a_blank_line_or_a_comment_about_nothing_in_particular_is_left_alone() {
        let text = "probe:\n  # 60 s covers the model load\n\n  failureThreshold: 60\n  # keep this lenient\n  periodSeconds: 10\n";
        assert_eq!(stale(text, "/probe/failureThreshold"), vec![]);
        let text = "probe:\n  # keep this lenient\n  periodSeconds: 10\n";
        assert_eq!(stale(text, "/probe/periodSeconds"), vec![]);
    }
}
