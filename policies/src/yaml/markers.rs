//! YAML's document markers, the one definition every reader that cuts a
//! stream without parsing it uses: a line that starts with `---` (a
//! document starts) or `...` (a document ends), then a blank or the end of
//! the line, at column 0. YAML forbids such a line inside block content, so
//! it is a marker wherever it appears outside a quoted scalar or a flow
//! collection (a caller that cuts there parses each part and falls back to
//! the whole stream when one does not parse alone).

/// Whether `line` (with or without its line break, or the rest of the text
/// from a line's start) is a document marker: `---` or `...`.
pub fn is_marker(line: &str) -> bool {
    starts_document(line) || marker_of(line, "...")
}

/// Whether `line` starts a document: `---`, then a blank or the end of the line.
pub fn starts_document(line: &str) -> bool {
    marker_of(line, "---")
}

fn marker_of(line: &str, marker: &str) -> bool {
    line.strip_prefix(marker).is_some_and(|rest| rest.chars().next().is_none_or(char::is_whitespace))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_three_characters_then_a_blank_or_the_end() {
        for line in ["---", "---\n", "--- |\n", "---\t# c", "---\r\n", "...", "...\n"] {
            assert!(is_marker(line), "{line:?}");
        }
        for line in ["----", "---x", " ---", "..x", "-- -", ""] {
            assert!(!is_marker(line), "{line:?}");
        }
        assert!(starts_document("--- # c") && !starts_document("..."));
    }
}
