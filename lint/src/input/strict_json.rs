//! `.json` files are JSON. The YAML reader accepts what YAML's flow syntax
//! allows (`{"kind": "Pod",}`, comments, single quotes, bare keys), which
//! `kubectl apply -f pod.json` refuses: a file named `.json` is checked
//! against RFC 8259 first, so lifeguard refuses what the cluster would.
//! Stdin is read as YAML (of which JSON is a subset): its format has no name.

use serde::de::IgnoredAny;

/// Where and why a text is not strict JSON: (line, column, what), 1-based.
pub fn strict_json_error(text: &str) -> Option<(u32, u32, String)> {
    // A stream of values, as kubectl decodes a JSON file; an empty file is
    // not an error here (it stays a note, as for YAML).
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<IgnoredAny>();
    let error = values.find_map(Result::err)?;
    let what = error.to_string();
    // serde_json ends its message with the position, which is given apart.
    let what = what.rsplit_once(" at line ").map_or(what.as_str(), |(head, _)| head).to_owned();
    let eof = error.is_eof();
    let what = match what.strip_prefix("EOF while parsing ") {
        Some("a value") => "the input ends here, where a value is expected".to_owned(),
        Some(inside) => format!("the input ends here, inside {inside}"),
        None => what,
    };
    // At the end of the input serde_json may point past the last line
    // (column 0): point just after the last character, where the cut is.
    let (line, column) = if eof { after_last_character(text) } else { (error.line(), error.column()) };
    // serde_json meets `{"a": 1,}` as a missing key at the `}`: name the
    // trailing comma, where it is.
    if let Some((comma_line, comma_column)) = trailing_comma_before(text, line, column) {
        return Some((clamp(comma_line), clamp(comma_column), "trailing comma".to_owned()));
    }
    let at = offset(text, line, column).and_then(|at| text.get(at..)).unwrap_or_default();
    let what = if at.starts_with("//") || at.starts_with("/*") { "a comment (JSON has none)".to_owned() } else { what };
    Some((clamp(line), clamp(column), what))
}

/// The line and byte column just after the text's last non-blank character.
fn after_last_character(text: &str) -> (usize, usize) {
    let end = text.trim_end().len();
    let line_start = text[..end].rfind('\n').map_or(0, |i| i + 1);
    (text[..end].matches('\n').count() + 1, end - line_start + 1)
}

/// The byte offset of a 1-based line and byte column.
fn offset(text: &str, line: usize, column: usize) -> Option<usize> {
    let line_start = if line <= 1 { 0 } else { text.match_indices('\n').nth(line - 2).map(|(i, _)| i + 1)? };
    Some(line_start + column.checked_sub(1)?)
}

fn clamp(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// When the error is at a closing bracket whose previous non-blank byte is
/// a comma: that comma's line and column (columns in bytes, as serde_json's).
fn trailing_comma_before(text: &str, line: usize, column: usize) -> Option<(usize, usize)> {
    let at = offset(text, line, column)?;
    if !matches!(text.as_bytes().get(at), Some(b'}' | b']')) {
        return None;
    }
    let before = text.get(..at)?;
    let comma = before.trim_end().len().checked_sub(1)?;
    if before.as_bytes().get(comma) != Some(&b',') {
        return None;
    }
    let comma_line_start = before[..comma].rfind('\n').map_or(0, |i| i + 1);
    let comma_line = before[..comma].matches('\n').count() + 1;
    Some((comma_line, comma - comma_line_start + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_kubectl_refuses_is_refused_at_its_position() {
        let cases = [
            ("{\"apiVersion\": \"v1\", \"kind\": \"Pod\",}", (1, 35), "trailing comma"),
            ("{\n  \"kind\": \"Pod\",\n}\n", (2, 16), "trailing comma"),
            ("{\n  // a comment\n  \"kind\": \"Pod\"\n}", (2, 3), "a comment"),
            ("{'kind': 'Pod'}", (1, 2), "key must be a string"),
            ("{\"kind\": 'Pod'}", (1, 10), "expected value"),
            ("{kind: Pod}", (1, 2), "key must be a string"),
            ("[1, 2,]", (1, 6), "trailing comma"),
            ("{\"kind\": \"Po", (1, 13), "the input ends here, inside a string"),
            ("{\"kind\": ", (1, 9), "the input ends here, where a value is expected"),
        ];
        for (text, (line, column), what) in cases {
            let (l, c, message) = strict_json_error(text).unwrap_or_else(|| panic!("{text:?} is not JSON"));
            assert_eq!((l, c), (line, column), "{text:?}: {message}");
            assert!(message.starts_with(what), "{text:?}: {message}");
            assert!(!message.contains(" at line "), "{message}");
        }
    }

    #[test]
    fn json_and_json_streams_and_blank_files_pass() {
        for text in ["{\"kind\": \"Pod\"}", "{\"a\": 1}\n{\"b\": 2}\n", "", "  \n", "[]", "{\"a\": 1, \"a\": 2}"] {
            assert_eq!(strict_json_error(text), None, "{text:?}");
        }
    }
}
