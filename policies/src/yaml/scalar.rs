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
//! Numbers are go-yaml v2's too: underscores are dropped (`1_000` is 1000),
//! a leading `0` is octal (`010` is 8; `08`, not octal, is the float 8),
//! `0b`, `0o` and `0x` are binary, octal and hex; and a number reaches the
//! API server as Go's `encoding/json` writes it, so a float with no
//! fraction is the integer it equals (`1e3` and `3.0` are 1000 and 3).
//! A plain `2024-01-01` stays the text it is, as it does through
//! sigs.k8s.io/yaml. Each reading here was checked against
//! sigs.k8s.io/yaml's `YAMLToJSON`.

use std::borrow::Cow;

use saphyr_parser::{ScalarStyle, Tag};
use serde_json::{Number, Value};

/// Converts a scalar event to JSON. `Err` names an explicit tag the value does not fit.
pub fn resolve(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> Result<Value, String> {
    if let Some(tag) = tag.filter(|t| t.is_yaml_core_schema()) {
        return match tag.suffix.as_str() {
            "str" => Ok(Value::String(text.to_owned())),
            "null" => Ok(Value::Null),
            "bool" => parse_bool(text).map(Value::Bool).ok_or_else(|| format!("{text:?} is not a !!bool")),
            "int" => int(text).ok_or_else(|| format!("{text:?} is not an !!int")),
            "float" => float(text).or_else(|| int(text)).ok_or_else(|| format!("{text:?} is not a !!float")),
            _ => Ok(Value::String(text.to_owned())),
        };
    }
    if style != ScalarStyle::Plain {
        return Ok(Value::String(text.to_owned()));
    }
    Ok(resolve_plain(text))
}

/// A mapping key's text as the loader compares keys (for repeated keys)
/// and names them: a resolved scalar written as sigs.k8s.io/yaml writes a
/// key (`null`, `true`, `8080`). `Err` names a tag the key does not fit.
pub fn key_text<'t>(text: &'t str, style: ScalarStyle, tag: Option<&Tag>) -> Result<Cow<'t, str>, String> {
    // Most keys are words: a word that is no boolean and no null reads as
    // itself, with no copy (every key of a skipped document passes here).
    let word = text.as_bytes().first().is_some_and(u8::is_ascii_alphabetic);
    if tag.is_none() && (style != ScalarStyle::Plain || (word && parse_bool(text).is_none() && !is_null(text))) {
        return Ok(Cow::Borrowed(text));
    }
    let value = resolve(text, style, tag)?;
    // A quoted `<<` is a plain key, not YAML's merge key (the callers see it by its text).
    let value = if style != ScalarStyle::Plain && text == "<<" { Value::String("<<".into()) } else { value };
    Ok(Cow::Owned(match value {
        Value::String(s) => s,
        Value::Null => "null".to_owned(),
        other => other.to_string(),
    }))
}

fn is_null(text: &str) -> bool {
    matches!(text, "" | "~" | "null" | "Null" | "NULL")
}

fn resolve_plain(text: &str) -> Value {
    if is_null(text) {
        return Value::Null;
    }
    if let Some(b) = parse_bool(text) {
        return Value::Bool(b);
    }
    int(text).or_else(|| float(text)).unwrap_or_else(|| Value::String(text.to_owned()))
}

/// The integer go-yaml v2 reads `text` as, if any: it tries a number only
/// for a digit or a sign first (its resolve table's hints), on the text
/// without its underscores.
fn int(text: &str) -> Option<Value> {
    match text.as_bytes().first() {
        Some(b'0'..=b'9' | b'-' | b'+') => parse_int(&without_underscores(text)),
        _ => None,
    }
}

/// The float go-yaml v2 reads `text` as, if any. After a leading `.` it
/// calls Go's `ParseFloat` on the text as it is, which takes an underscore
/// only between two digits.
fn float(text: &str) -> Option<Value> {
    match text.as_bytes().first() {
        Some(b'0'..=b'9' | b'-' | b'+') => parse_float(&without_underscores(text)),
        Some(b'.') if underscores_between_digits(text) => parse_float(&without_underscores(text)),
        _ => None,
    }
}

/// The text without its underscores, copied only when it has one (every
/// number of every manifest passes here).
fn without_underscores(text: &str) -> Cow<'_, str> {
    if text.contains('_') { Cow::Owned(text.replace('_', "")) } else { Cow::Borrowed(text) }
}

fn underscores_between_digits(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'_')
        .all(|(i, _)| i > 0 && bytes[i - 1].is_ascii_digit() && bytes.get(i + 1).is_some_and(u8::is_ascii_digit))
}

/// go-yaml v2's booleans (its resolve table): YAML 1.2's and YAML 1.1's.
fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" | "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => Some(true),
        "false" | "False" | "FALSE" | "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

/// Go's `strconv.ParseInt(text, 0, 64)`, as go-yaml v2 calls it: a sign,
/// then `0x`, `0o`, `0b` or a leading `0` (octal) for the base; then
/// `ParseUint` (no sign) for what is above `i64`.
fn parse_int(text: &str) -> Option<Value> {
    let (sign, unsigned) = match text.as_bytes().first() {
        Some(b'-') => (Some(true), &text[1..]),
        Some(b'+') => (Some(false), &text[1..]),
        _ => (None, text),
    };
    let (radix, digits) = match unsigned.as_bytes() {
        [b'0', b'x' | b'X', ..] => (16, &unsigned[2..]),
        [b'0', b'o' | b'O', ..] => (8, &unsigned[2..]),
        [b'0', b'b' | b'B', ..] => (2, &unsigned[2..]),
        [b'0', _, ..] => (8, &unsigned[1..]),
        _ => (10, unsigned),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    let number = match sign {
        Some(true) => Number::from(i64::try_from(-i128::from(magnitude)).ok()?),
        Some(false) => Number::from(i64::try_from(magnitude).ok()?),
        None => Number::from(magnitude),
    };
    Some(Value::Number(number))
}

/// go-yaml v2's floats: `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`
/// (and `.inf`, `.nan`), as Go's `encoding/json` then writes them: one with
/// no fraction is the integer it equals.
fn parse_float(text: &str) -> Option<Value> {
    let lower = text.to_ascii_lowercase();
    // Infinity and NaN have no JSON form; keep them as strings rather than lose them.
    if matches!(lower.trim_start_matches(['+', '-']), ".inf" | ".nan") {
        return Some(Value::String(text.to_owned()));
    }
    if !yaml_style_float(text) {
        return None;
    }
    let f: f64 = text.parse().ok()?;
    Some(Value::Number(json_number(f)?))
}

/// Whether `text` is a float in go-yaml v2's `yamlStyleFloat` form.
fn yaml_style_float(text: &str) -> bool {
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], Some(&unsigned[at + 1..])),
        None => (unsigned, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", fraction)) => digits(fraction),
        Some((whole, fraction)) => digits(whole) && (fraction.is_empty() || digits(fraction)),
        None => digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['-', '+']).unwrap_or(e)));
    mantissa_ok && exponent_ok
}

/// A float as Go's `encoding/json` writes it and a JSON reader reads it
/// back: with no fraction and below 1e21 (written in full, not as an
/// exponent), the integer it equals.
fn json_number(f: f64) -> Option<Number> {
    if f.fract() == 0.0 && f.abs() < 1e21 {
        // 2^63, exact as an f64: an integral f64 within ±2^63 (or below
        // 2^64) converts to the integer without loss.
        let two_63 = -(i64::MIN as f64);
        if (-two_63..two_63).contains(&f) {
            return Some(Number::from(f as i64));
        }
        if (0.0..2.0 * two_63).contains(&f) {
            return Some(Number::from(f as u64));
        }
    }
    Number::from_f64(f)
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

    /// Numbers as `kubectl` sends them: each pair is what sigs.k8s.io/yaml's
    /// `YAMLToJSON` (go-yaml v2, then Go's `encoding/json`) writes for `v: TEXT`.
    #[test]
    fn numbers_as_kubectl_sends_them() {
        let cases = [
            ("010", json!(8)),
            ("0o10", json!(8)),
            ("0b101", json!(5)),
            ("-0b101", json!(-5)),
            ("0B11", json!(3)),
            ("0X1f", json!(31)),
            ("+0x10", json!(16)),
            ("1_000", json!(1000)),
            ("1__0", json!(10)),
            ("1_", json!(1)),
            ("0_8", json!(8)),
            ("08", json!(8)),
            ("09.5", json!(9.5)),
            ("1e3", json!(1000)),
            ("3.0", json!(3)),
            ("1.", json!(1)),
            (".5", json!(0.5)),
            ("+.5", json!(0.5)),
            (".5_0", json!(0.5)),
            ("0", json!(0)),
            ("-0", json!(0)),
            ("+12", json!(12)),
            ("-9223372036854775808", json!(i64::MIN)),
            ("18446744073709551615", json!(u64::MAX)),
            ("+18446744073709551615", json!(18_446_744_073_709_551_615.0)),
            ("1e21", json!(1e21)),
            ("0.000001", json!(0.000_001)),
            ("_1", json!("_1")),
            ("._5", json!("._5")),
            (".5__0", json!(".5__0")),
            ("1e1_0", json!(10_000_000_000_u64)),
            ("0x", json!("0x")),
            ("1e", json!("1e")),
            ("12:30", json!("12:30")),
            ("2024-01-01", json!("2024-01-01")),
        ];
        for (text, sent) in cases {
            assert_eq!(plain(text), sent, "{text}");
        }
        let tag = |s: &str| Tag { handle: "tag:yaml.org,2002:".into(), suffix: s.into() };
        assert_eq!(resolve("0b11", ScalarStyle::Plain, Some(&tag("int"))), Ok(json!(3)));
        assert_eq!(resolve("1_000", ScalarStyle::Plain, Some(&tag("float"))), Ok(json!(1000)));
        assert!(resolve("1.0", ScalarStyle::Plain, Some(&tag("int"))).is_err(), "a float is not an !!int");
        assert_eq!(resolve("010", ScalarStyle::DoubleQuoted, None), Ok(json!("010")));
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
