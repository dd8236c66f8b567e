//! Resolving plain YAML scalars to JSON values (YAML 1.2 core schema, as
//! Kubernetes reads manifests), and honouring explicit `!!` tags.

use saphyr_parser::{ScalarStyle, Tag};
use serde_json::{Number, Value};

/// Converts a scalar event to JSON. `Err` names an explicit tag the value does not fit.
pub fn resolve(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> Result<Value, String> {
    if let Some(tag) = tag.filter(|t| t.is_yaml_core_schema()) {
        return match tag.suffix.as_str() {
            "str" => Ok(Value::String(text.to_owned())),
            "null" => Ok(Value::Null),
            "bool" => parse_bool(text).map(Value::Bool).ok_or_else(|| format!("{text:?} is not a !!bool")),
            "int" => parse_int(text).ok_or_else(|| format!("{text:?} is not an !!int")),
            "float" => {
                parse_float(text).or_else(|| parse_int(text)).ok_or_else(|| format!("{text:?} is not a !!float"))
            }
            _ => Ok(Value::String(text.to_owned())),
        };
    }
    if style != ScalarStyle::Plain {
        return Ok(Value::String(text.to_owned()));
    }
    Ok(resolve_plain(text))
}

fn resolve_plain(text: &str) -> Value {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        _ => {}
    }
    if let Some(b) = parse_bool(text) {
        return Value::Bool(b);
    }
    let first = text.as_bytes().first().copied().unwrap_or(b'a');
    if first.is_ascii_digit() || matches!(first, b'-' | b'+' | b'.') {
        if let Some(v) = parse_int(text).or_else(|| parse_float(text)) {
            return v;
        }
    }
    Value::String(text.to_owned())
}

fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

fn parse_int(text: &str) -> Option<Value> {
    let (neg, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (radix, digits) = if let Some(h) = digits.strip_prefix("0x") {
        (16, h)
    } else if let Some(o) = digits.strip_prefix("0o") {
        (8, o)
    } else {
        (10, digits)
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    if neg {
        let n = i64::try_from(magnitude).ok()?.checked_neg()?;
        Some(Value::Number(Number::from(n)))
    } else {
        Some(Value::Number(Number::from(magnitude)))
    }
}

fn parse_float(text: &str) -> Option<Value> {
    let lower = text.to_ascii_lowercase();
    // Infinity and NaN have no JSON form; keep them as strings rather than lose them.
    if matches!(lower.trim_start_matches(['+', '-']), ".inf" | ".nan") {
        return Some(Value::String(text.to_owned()));
    }
    let valid = text.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'))
        && text.bytes().any(|b| b.is_ascii_digit());
    if !valid {
        return None;
    }
    let f: f64 = text.parse().ok()?;
    Number::from_f64(f).map(Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn plain(s: &str) -> Value {
        resolve(s, ScalarStyle::Plain, None).unwrap_or(Value::Null)
    }

    #[test]
    fn core_schema() {
        assert_eq!(plain("8080"), json!(8080));
        assert_eq!(plain("-3"), json!(-3));
        assert_eq!(plain("0x1F"), json!(31));
        assert_eq!(plain("1.5"), json!(1.5));
        assert_eq!(plain("true"), json!(true));
        assert_eq!(plain("~"), Value::Null);
        assert_eq!(plain("yes"), json!("yes"));
        assert_eq!(plain("1Gi"), json!("1Gi"));
        assert_eq!(plain("-"), json!("-"));
        assert_eq!(plain("1.2.3"), json!("1.2.3"));
        assert_eq!(plain("99999999999999999999"), json!(1e20));
    }

    #[test]
    fn quoted_stays_string() {
        assert_eq!(resolve("8080", ScalarStyle::DoubleQuoted, None), Ok(json!("8080")));
    }

    #[test]
    fn tags_are_honoured() {
        let tag = |s: &str| Tag { handle: "tag:yaml.org,2002:".into(), suffix: s.into() };
        assert_eq!(resolve("80", ScalarStyle::Plain, Some(&tag("str"))), Ok(json!("80")));
        assert!(resolve("abc", ScalarStyle::Plain, Some(&tag("int"))).is_err());
    }
}
