//! What the loader checks around the event parser: documents too large to
//! parse at all, and scanner errors restated so they point where a person
//! looks and name the documented limit.

use super::markers::is_marker;
use super::source::Mark;

fn clamp(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// The message for a document over the size limit.
pub(super) fn document_too_large(max: usize) -> String {
    format!("document larger than {max} characters")
}

/// The first document longer than `max` characters, found without parsing:
/// its byte offset and where it starts. A line that starts with `---` or
/// `...` (then a blank or the end of the line) is a document marker wherever
/// it appears, since YAML forbids such lines inside content; so a huge
/// scalar is refused before the scanner reads, and allocates, all of it.
pub(super) fn oversized_document(text: &str, max: usize) -> Option<(usize, Mark)> {
    // A text is at least as many bytes as characters: most inputs stop here.
    if text.len() <= max {
        return None;
    }
    let too_long = |doc: &str| doc.len() > max && doc.chars().count() > max;
    let (mut start, mut start_line, mut offset, mut end) = (0, 1, 0, text.len());
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if offset > start && is_marker(line) {
            if too_long(&text[start..offset]) {
                end = offset;
                break;
            }
            (start, start_line) = (offset, i + 1);
        }
        offset += line.len();
    }
    too_long(&text[start..end]).then(|| {
        let at = Mark { line: clamp(start_line), col: 0, index: clamp(text[..start].chars().count()) };
        (start, at)
    })
}

/// A scanner error as a person should see it. At an unexpected end the
/// scanner reports a line past the last one, which no editor shows: point
/// just after the last character instead. saphyr caps flow nesting at 255
/// levels with its own message: name the nesting limit instead.
pub(super) fn scan_error(text: &str, at: Mark, info: &str, max_depth: usize) -> (Mark, String) {
    if info == "recursion limit exceeded" {
        return (at, format!("nesting deeper than {} levels", max_depth.min(255)));
    }
    if at.line as usize <= text.lines().count() {
        return (at, info.to_owned());
    }
    let text = text.trim_end();
    let last_line = text.rsplit('\n').next().unwrap_or_default();
    let end = Mark {
        line: clamp(text.matches('\n').count() + 1),
        col: clamp(last_line.chars().count()),
        index: clamp(text.chars().count()),
    };
    (end, format!("{info}; the input ends here"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_are_measured_between_markers() {
        let doc = |n: usize| format!("---\nblob: {}\n", "z".repeat(n));
        assert_eq!(oversized_document(&doc(50).repeat(5), 100), None);
        let text = format!("{}{}{}", doc(50), doc(150), doc(50));
        let (offset, at) = oversized_document(&text, 100).expect("second document");
        assert_eq!((offset, at.line, at.col), (doc(50).len(), 3, 0));
        // `----` and `---x` are content, not markers; `--- |` and `...` are markers.
        assert!(oversized_document(&format!("a: |\n----\n---x\n{}", "z".repeat(200)), 100).is_some());
        assert_eq!(oversized_document(&format!("{}\n--- |\n  x\n", "z".repeat(90)), 100), None);
        assert_eq!(oversized_document(&format!("{}\n...\n{}", "z".repeat(90), "y".repeat(90)), 100), None);
    }

    #[test]
    fn characters_not_bytes_are_counted() {
        // 60 two-byte characters: 120 bytes, 60 characters.
        assert_eq!(oversized_document(&"é".repeat(60), 100), None);
        assert!(oversized_document(&"é".repeat(101), 100).is_some());
    }
}
