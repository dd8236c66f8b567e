//! JSON arrays written entry by entry, so a report streamed in pieces
//! prints what `to_string_pretty` would print for the whole array.

use std::io::Write;

/// One entry of the JSON array as `to_string_pretty` prints it inside the
/// array (indented one level), after its separator (`,` and a newline).
pub(crate) fn json_entry(entry: &impl serde::Serialize) -> String {
    indented(&serde_json::to_string_pretty(entry).unwrap_or_else(|_| "null".to_owned()), "  ")
}

/// Writes array entries made by [`indented`] (and pieces of them), each
/// after its separator, but for the first: the array's first item has none.
pub(crate) fn write_entries(entries: impl Iterator<Item = impl AsRef<str>>, w: &mut dyn Write) -> std::io::Result<()> {
    for (i, entry) in entries.enumerate() {
        let entry = entry.as_ref();
        w.write_all(if i == 0 { entry.strip_prefix(',').unwrap_or(entry) } else { entry }.as_bytes())?;
    }
    Ok(())
}

/// A value printed by `to_string_pretty` as it is printed inside an array
/// whose items sit at `indent`, after its separator (`,` and a newline).
/// Pretty JSON holds no raw newline inside a string, so every line is
/// indented as the nested value's would be.
pub(crate) fn indented(pretty: &str, indent: &str) -> String {
    let mut s = String::with_capacity(pretty.len() + (pretty.len() / 8 + 2) * indent.len());
    s.push(',');
    for line in pretty.split('\n') {
        s.push('\n');
        s.push_str(indent);
        s.push_str(line);
    }
    s
}
