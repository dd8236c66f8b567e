//! Writing JSON values as the text around them is written: block YAML at a
//! column with the file's indentation step and sequence style, flow YAML,
//! or JSON (inline or pretty) for JSON files.

use saphyr_parser::ScalarStyle;
use serde_json::{Map, Value};

use policies::yaml::scalar;

/// How the surrounding text is laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Columns a nested block mapping is indented by (2 in most files).
    pub step: usize,
    /// Columns a block sequence's `-` sits right of its key: 0 for
    /// `key:\n- item`, usually `step` for `key:\n  - item`.
    pub dash_offset: usize,
    /// `\n` or `\r\n`.
    pub newline: &'static str,
    /// A JSON file: every value and key is written as JSON.
    pub json: bool,
}

/// How an existing scalar is quoted, so a replacement keeps the style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quoting {
    Plain,
    Single,
    Double,
}

/// A scalar (or an empty collection) on one line: plain where YAML (1.1 and
/// 1.2) reads it back as the same string, else double-quoted.
pub(crate) fn scalar(v: &Value, quoting: Quoting, json: bool) -> String {
    match v {
        Value::String(s) if json => json_string(s),
        Value::String(s) => match quoting {
            Quoting::Single if !s.contains(['\n', '\r']) => format!("'{}'", s.replace('\'', "''")),
            Quoting::Double | Quoting::Single => json_string(s),
            Quoting::Plain if plain_ok(s) => s.clone(),
            Quoting::Plain => json_string(s),
        },
        other => flow(other, json),
    }
}

/// A mapping key.
pub(crate) fn key(k: &str, json: bool) -> String {
    if json || !plain_ok(k) || k == "<<" { json_string(k) } else { k.to_owned() }
}

/// A value on one line: `{a: 1, b: [x, y]}` (YAML flow) or `{"a": 1}` (JSON).
pub(crate) fn flow(v: &Value, json: bool) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(_) => scalar(v, Quoting::Plain, json),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(|i| flow(i, json)).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Object(map) => {
            let parts: Vec<String> = map.iter().map(|(k, v)| format!("{}: {}", key(k, json), flow(v, json))).collect();
            format!("{{{}}}", parts.join(", "))
        }
    }
}

/// JSON over several lines: the first line unindented, the rest indented by
/// `base` plus one `unit` per level, the closing bracket at `base`.
pub(crate) fn json_pretty(v: &Value, base: &str, unit: &str, newline: &str) -> String {
    let inner = format!("{base}{unit}");
    match v {
        Value::Array(items) if !items.is_empty() => {
            let parts: Vec<String> =
                items.iter().map(|i| format!("{inner}{}", json_pretty(i, &inner, unit, newline))).collect();
            format!("[{newline}{}{newline}{base}]", parts.join(&format!(",{newline}")))
        }
        Value::Object(map) if !map.is_empty() => {
            let parts: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{inner}{}: {}", json_string(k), json_pretty(v, &inner, unit, newline)))
                .collect();
            format!("{{{newline}{}{newline}{base}}}", parts.join(&format!(",{newline}")))
        }
        other => flow(other, true),
    }
}

/// `key: value` as block YAML lines, the key at column `col`.
pub(crate) fn block_entry(k: &str, v: &Value, col: usize, layout: &Layout, out: &mut Vec<String>) {
    let pad = " ".repeat(col);
    let k = key(k, false);
    match v {
        Value::Object(map) if !map.is_empty() => {
            out.push(format!("{pad}{k}:"));
            block_map(map, col + layout.step, layout, out);
        }
        Value::Array(items) if !items.is_empty() => {
            out.push(format!("{pad}{k}:"));
            block_seq(items, col + layout.dash_offset, layout, out);
        }
        other => out.push(format!("{pad}{k}: {}", flow(other, false))),
    }
}

/// A mapping's entries as block YAML lines at column `col`.
pub(crate) fn block_map(map: &Map<String, Value>, col: usize, layout: &Layout, out: &mut Vec<String>) {
    for (k, v) in map {
        block_entry(k, v, col, layout, out);
    }
}

/// A sequence as block YAML lines, the dashes at column `col`.
pub(crate) fn block_seq(items: &[Value], col: usize, layout: &Layout, out: &mut Vec<String>) {
    let pad = " ".repeat(col);
    for item in items {
        match item {
            Value::Object(map) if !map.is_empty() => {
                let mut lines = Vec::new();
                block_map(map, col + 2, layout, &mut lines);
                for (i, line) in lines.into_iter().enumerate() {
                    if i == 0 {
                        out.push(format!("{pad}- {}", &line[col + 2..]));
                    } else {
                        out.push(line);
                    }
                }
            }
            other => out.push(format!("{pad}- {}", flow(other, false))),
        }
    }
}

/// A value as block YAML starting at column `col` of a line that already
/// holds the text before it: the first line comes without indentation.
pub(crate) fn block_value_at(v: &Value, col: usize, layout: &Layout) -> Vec<String> {
    let mut lines = Vec::new();
    match v {
        Value::Object(map) if !map.is_empty() => block_map(map, col, layout, &mut lines),
        Value::Array(items) if !items.is_empty() => block_seq(items, col, layout, &mut lines),
        other => lines.push(format!("{}{}", " ".repeat(col), flow(other, false))),
    }
    if let Some(first) = lines.first_mut() {
        *first = first[col.min(first.len())..].to_owned();
    }
    lines
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{}\"", s.escape_default()))
}

/// Plain scalars that every YAML reader (1.2, and the 1.1 rules some
/// Kubernetes tooling still applies: `yes`, `on`, `0777`, `1_000`) takes as
/// this very string, in block and flow context alike.
fn plain_ok(s: &str) -> bool {
    const YAML11_WORDS: &[&str] = &["y", "n", "yes", "no", "on", "off"];
    let Some(first) = s.chars().next() else {
        return false;
    };
    let second = s.chars().nth(1);
    let indicator_start = match first {
        '-' | '?' | ':' => second.is_none_or(|c| c == ' '),
        c => "[]{},#&*!|>'\"%@`".contains(c) || c.is_ascii_digit() || c == '+' || c == '.',
    };
    !indicator_start
        && !s.contains(": ")
        && !s.contains(" #")
        && !s.ends_with(':')
        && !s.contains(['[', ']', '{', '}', ','])
        && s.trim() == s
        && !s.chars().any(char::is_control)
        && !YAML11_WORDS.contains(&s.to_ascii_lowercase().as_str())
        && scalar::resolve(s, ScalarStyle::Plain, None) == Ok(Value::String(s.to_owned()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn layout(step: usize, dash_offset: usize) -> Layout {
        Layout { step, dash_offset, newline: "\n", json: false }
    }

    #[test]
    fn scalars_quote_only_what_needs_it() {
        let plain = |s: &str| scalar(&json!(s), Quoting::Plain, false);
        assert_eq!(plain("/health"), "/health");
        assert_eq!(plain("-c"), "-c");
        assert_eq!(plain("sleep 5"), "sleep 5");
        assert_eq!(plain("8080"), "\"8080\"");
        assert_eq!(plain("true"), "\"true\"");
        assert_eq!(plain("on"), "\"on\"");
        assert_eq!(plain(""), "\"\"");
        assert_eq!(plain("a: b"), "\"a: b\"");
        assert_eq!(plain("-"), "\"-\"");
        assert_eq!(plain("x,y"), "\"x,y\"");
        assert_eq!(scalar(&json!("it's"), Quoting::Single, false), "'it''s'");
        assert_eq!(scalar(&json!("x"), Quoting::Double, false), "\"x\"");
        assert_eq!(scalar(&json!(45), Quoting::Double, false), "45");
        assert_eq!(scalar(&json!("x"), Quoting::Plain, true), "\"x\"");
    }

    #[test]
    fn block_follows_the_layout() {
        let v = json!({"exec": {"command": ["sh", "-c", "sleep 5"]}, "periodSeconds": 10});
        let mut out = Vec::new();
        block_entry("startupProbe", &v, 4, &layout(2, 0), &mut out);
        assert_eq!(
            out.join("\n"),
            "    startupProbe:\n      exec:\n        command:\n        - sh\n        - -c\n        - sleep 5\n      periodSeconds: 10"
        );
        let mut out = Vec::new();
        block_entry("p", &json!({"l": [{"a": 1, "b": {"c": 2}}], "e": {}}), 0, &layout(4, 4), &mut out);
        assert_eq!(out.join("\n"), "p:\n    l:\n        - a: 1\n          b:\n              c: 2\n    e: {}");
    }

    #[test]
    fn block_value_starts_mid_line() {
        let lines = block_value_at(&json!({"sleep": {"seconds": 28}}), 6, &layout(2, 0));
        assert_eq!(lines, vec!["sleep:".to_owned(), "        seconds: 28".to_owned()]);
    }

    #[test]
    fn flow_and_json() {
        let v = json!({"httpGet": {"path": "/health", "port": "http"}, "n": [1, "2"]});
        // `n` is a boolean to YAML 1.1 readers.
        assert_eq!(flow(&v, false), "{httpGet: {path: /health, port: http}, \"n\": [1, \"2\"]}");
        assert_eq!(flow(&v, true), "{\"httpGet\": {\"path\": \"/health\", \"port\": \"http\"}, \"n\": [1, \"2\"]}");
        assert_eq!(
            json_pretty(&json!({"a": {"b": 1}, "c": []}), "  ", "  ", "\n"),
            "{\n    \"a\": {\n      \"b\": 1\n    },\n    \"c\": []\n  }"
        );
    }
}
