//! Writing JSON values as block-style YAML that this loader (and any YAML
//! 1.2 reader, and go-yaml v2 with its YAML 1.1 booleans) reads back to the
//! same values: `lifeguard policy show`.

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
        other => {
            out.push(' ');
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
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
            "nested": {"deep": {"x": [1, [2, 3]]}}
        });
        let text = to_yaml(&value);
        let (docs, err) = parse_stream(&text, &Limits::default());
        assert_eq!(err, None, "{text}");
        assert_eq!(docs[0].value, value, "{text}");
        assert!(text.contains("\n  - name: a\n    when:\n      lt: 5\n"), "{text}");
    }
}
