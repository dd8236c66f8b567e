//! Resolving plain YAML scalars to JSON values as Kubernetes tooling sends
//! them, and honouring explicit `!!` tags.
//!
//! `kubectl` and Helm turn YAML into JSON with sigs.k8s.io/yaml, which reads
//! through go-yaml v2: YAML 1.2's core schema, plus YAML 1.1's booleans
//! (`y`, `yes`, `on` and `n`, `no`, `off`, each also capitalised and in
//! capitals). So a plain `yes` reaches the API server as `true`, and where a
//! string belongs (an env value, a probe's `port` or `path`, a command
//! argument) the API server refuses the object: lifeguard reads the boolean
//! too, and says at that field that the object does not read as its kind,
//! rather than lint an object that can never be created (`port: on` read
//! as the port name "on" would report an undeclared port). A quoted `"yes"`
//! stays a string, as it does for the API server. A plain key reads the
//! same way, and the loader writes a boolean key as `true` or `false`, as
//! sigs.k8s.io/yaml does (`on: x` is the key "true").
//!
//! Not followed: go-yaml v2's other YAML 1.1 readings (`0777` as octal,
//! `1_000`, `0b101`), which no field lifeguard reads is written with in
//! practice; they stay YAML 1.2's (a decimal `777`, strings).

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

/// go-yaml v2's booleans (its resolve table): YAML 1.2's and YAML 1.1's.
fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" | "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => Some(true),
        "false" | "False" | "FALSE" | "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => Some(false),
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
        assert_eq!(plain("1Gi"), json!("1Gi"));
        assert_eq!(plain("-"), json!("-"));
        assert_eq!(plain("1.2.3"), json!("1.2.3"));
        assert_eq!(plain("99999999999999999999"), json!(1e20));
    }

    /// What go-yaml v2 (and so `kubectl`) reads as a boolean, and what it
    /// does not: only these spellings, and never a quoted one.
    #[test]
    fn yaml_1_1_booleans_as_kubectl_sends_them() {
        for word in ["y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE"] {
            assert_eq!(plain(word), json!(true), "{word}");
        }
        for word in ["n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE"] {
            assert_eq!(plain(word), json!(false), "{word}");
        }
        for word in ["yEs", "oN", "nO", "oFF", "yes please", "only", "offset"] {
            assert_eq!(plain(word), json!(word), "{word}");
        }
        assert_eq!(resolve("yes", ScalarStyle::SingleQuoted, None), Ok(json!("yes")));
        assert_eq!(resolve("on", ScalarStyle::DoubleQuoted, None), Ok(json!("on")));
        let tag = Tag { handle: "tag:yaml.org,2002:".into(), suffix: "bool".into() };
        assert_eq!(resolve("off", ScalarStyle::Plain, Some(&tag)), Ok(json!(false)));
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
