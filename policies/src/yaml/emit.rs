//! Writing JSON values as block-style YAML that this loader (and any YAML
//! 1.2 reader, and go-yaml v2 with its YAML 1.1 booleans) reads back to the
//! same values: `lifeguard policy show`, the exports. A string of several
//! lines is a literal block (`|-`), each of its lines a line of the file,
//! so a long CEL expression laid out on lines reads as it was laid out.

use serde_json::Value;

use super::scalar::resolve;

/// The value as YAML, ending with a newline. Strings are quoted whenever a
/// plain scalar would read back as something else.
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => mapping(map, 0, &mut out),
        Value::Array(items) if !items.is_empty() => sequence(items, 0, &mut out),
        other => {
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
    out
}

fn mapping(map: &serde_json::Map<String, Value>, indent: usize, out: &mut String) {
    for (key, value) in map {
        out.push_str(&" ".repeat(indent));
        out.push_str(&string(key));
        out.push(':');
        nested(value, indent, out);
    }
}

fn sequence(items: &[Value], indent: usize, out: &mut String) {
    for item in items {
        out.push_str(&" ".repeat(indent));
        out.push('-');
        match item {
            Value::Object(map) if !map.is_empty() => {
                // `- key: value` with the other keys aligned under the first.
                let mut inner = String::new();
                mapping(map, indent + 2, &mut inner);
                out.push(' ');
                out.push_str(inner.trim_start());
            }
            other => nested(other, indent, out),
        }
    }
}

/// The value after `key:` or `-`: inline for scalars and empty collections,
/// on the next lines otherwise.
fn nested(value: &Value, indent: usize, out: &mut String) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push('\n');
            mapping(map, indent + 2, out);
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            sequence(items, indent + 2, out);
        }
        Value::String(s) if literal_block(s) => {
            let chomp = if s.ends_with('\n') { "" } else { "-" };
            out.push_str(&format!(" |{chomp}\n"));
            for line in s.strip_suffix('\n').unwrap_or(s).split('\n') {
                if !line.is_empty() {
                    out.push_str(&" ".repeat(indent + 2));
                    out.push_str(line);
                }
                out.push('\n');
            }
        }
        other => {
            out.push(' ');
            out.push_str(&folded(&scalar(other), indent));
            out.push('\n');
        }
    }
}

/// Whether `s` reads back the same from a literal block: several lines of
/// printable characters, none ending in a blank (a reader may keep or drop
/// it), the first not starting with one (it would set the indentation), and
/// at most one final newline (`|` keeps one, `|-` none).
fn literal_block(s: &str) -> bool {
    let body = s.strip_suffix('\n').unwrap_or(s);
    body.contains('\n')
        && !body.ends_with('\n')
        && !body.starts_with([' ', '\n'])
        && !s.chars().any(|c| c.is_control() && c != '\n' || c == '\u{feff}')
        && body.split('\n').all(|line| !line.ends_with([' ', '\t']))
}

fn scalar(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => string(s),
        Value::Array(_) => "[]".to_owned(),
        Value::Object(_) => "{}".to_owned(),
    }
}

/// A string plain when that reads back as the same string, else
/// double-quoted (JSON escapes are valid YAML escapes).
fn string(s: &str) -> String {
    let safe_chars = s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | ' '));
    let plain = !s.is_empty()
        && safe_chars
        && !s.starts_with(['-', ' ', '.'])
        && !s.ends_with(' ')
        && resolve(s, saphyr_parser::ScalarStyle::Plain, None) == Ok(Value::String(s.to_owned()));
    if plain { s.to_owned() } else { serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}")) }
}

/// The longest line of a double-quoted string that can be folded.
const QUOTED_WIDTH: usize = 120;

/// A double-quoted `quoted` longer than 160 characters and without blanks
/// (a list such as `a,b,c`) folded after commas with escaped line breaks
/// (`\` at a line's end joins it to the next, whose indentation is not
/// read), each continuation at `indent`: it reads back whole.
fn folded(quoted: &str, indent: usize) -> String {
    if quoted.len() <= 160 || !quoted.starts_with('"') || quoted.contains(char::is_whitespace) {
        return quoted.to_owned();
    }
    let mut out = String::new();
    let mut line = 0;
    let mut chars = quoted.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        line += 1;
        // After a comma, before a character the reader keeps (not a blank,
        // which it would strip as the next line's indentation).
        let keeps = chars.peek().is_some_and(|next| !next.is_whitespace() && *next != '"');
        if c == ',' && keeps && line >= QUOTED_WIDTH / 2 {
            out.push_str("\\\n");
            out.push_str(&" ".repeat(indent + 2));
            line = 0;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::to_yaml;
    use crate::yaml::{Limits, parse_stream};

    #[test]
    fn round_trips() {
        let value = json!({
            "apiVersion": "lifeguard.dev/v1alpha1",
            "n": 3, "f": 1.5, "t": true, "z": null,
            "tricky": ["true", "10", "", " x", "a: b", "#c", "-x", "^/ready/?$", "*DRAIN", "1.30", "null", "é"],
            "empty": {}, "none": [],
            "list": [{"name": "a", "when": {"lt": 5}}, {"name": "b", "when": "exists"}],
            "nested": {"deep": {"x": [1, [2, 3]]}},
            "folded": ["a,b,c,", "x".repeat(70) + &",y".repeat(60) + ",z,", ",".repeat(200), "a, b,".repeat(40)],
            "lines": ["a &&\n  b(\"x\")\n\n: 'y'", "one\ntwo\n", " lead\nx", "trail \nx", "tab\t\nx", "two\n\n"]
        });
        let text = to_yaml(&value);
        let (docs, err) = parse_stream(&text, &Limits::default());
        assert_eq!(err, None, "{text}");
        assert_eq!(docs[0].value, value, "{text}");
        assert!(text.contains("\n  - name: a\n    when:\n      lt: 5\n"), "{text}");
        // A long list without blanks is folded after commas; one with blanks is not.
        assert!(text.contains(",y,\\\n    y,y"), "{text}");
        assert!(text.contains(&format!("\"{}\"\n", "a, b,".repeat(40))), "{text}");
        // Several lines are a literal block, but where a reader would read them otherwise.
        assert!(
            text.contains(
                "lines:\n  - |-\n    a &&\n      b(\"x\")\n\n    : 'y'\n  - |\n    one\n    two\n  - \" lead"
            ),
            "{text}"
        );
    }
}
