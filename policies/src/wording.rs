//! serde's type errors in plain words: a user who wrote `periodSeconds: ten`
//! should read "expected a whole number, got the string \"ten\"", not
//! "invalid type: string \"ten\", expected i32".

/// Rewrites serde's `invalid type`/`invalid value` messages in plain words;
/// any other message comes back as it was.
pub fn plain_words(message: &str) -> String {
    if let Some((got, expected)) = message.strip_prefix("unknown variant ").and_then(|r| r.split_once(", expected ")) {
        return format!("{} is not a known value; use {}", got.trim_matches('`').escape_debug(), choices(expected));
    }
    for prefix in ["invalid type: ", "invalid value: "] {
        let Some(rest) = message.strip_prefix(prefix) else { continue };
        let Some((got, expected)) = rest.rsplit_once(", expected ") else { continue };
        return format!("expected {}, got {}", expected_words(expected), got_words(got));
    }
    message.to_owned()
}

/// serde's list of variants (`` one of `a`, `b` ``, `` `a` or `b` ``,
/// `` `a` ``, `there are no fields`) as a plain list.
fn choices(expected: &str) -> String {
    let list = expected.strip_prefix("one of ").unwrap_or(expected);
    let names: Vec<&str> = list.split(", ").flat_map(|n| n.split(" or ")).map(|n| n.trim_matches('`')).collect();
    match names.as_slice() {
        [] | [""] => "none here".to_owned(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// What serde expected (`i64`, `a boolean`, `struct Probe`), for a person.
fn expected_words(expected: &str) -> String {
    let known = match expected {
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "a whole number",
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a whole number, 0 or more",
        "f32" | "f64" => "a number",
        "a boolean" => "true or false",
        "a string" | "a borrowed string" => "a string",
        "a sequence" => "a list",
        "a map" => "a mapping",
        "a character" => "a single character",
        _ => "",
    };
    if !known.is_empty() {
        return known.to_owned();
    }
    match expected.strip_prefix("struct ") {
        Some(name) => format!("a mapping ({name})"),
        None => expected.to_owned(),
    }
}

/// What serde found (`string "ten"`, `integer \`5\``), for a person.
fn got_words(got: &str) -> String {
    let value = |rest: &str| rest.trim_matches('`').to_owned();
    if let Some(rest) = got.strip_prefix("string ") {
        return format!("the string {rest}");
    }
    if let Some(rest) = got.strip_prefix("integer ") {
        return format!("the number {}", value(rest));
    }
    if let Some(rest) = got.strip_prefix("floating point ") {
        return format!("the number {}", value(rest));
    }
    if let Some(rest) = got.strip_prefix("boolean ") {
        return value(rest);
    }
    match got {
        "sequence" => "a list".to_owned(),
        "map" => "a mapping".to_owned(),
        "unit value" | "null" => "null".to_owned(),
        other => other.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::plain_words;

    #[test]
    fn type_errors_read_as_plain_words() {
        let cases = [
            (r#"invalid type: string "ten", expected i32"#, r#"expected a whole number, got the string "ten""#),
            (r#"invalid type: string "ten", expected i64"#, r#"expected a whole number, got the string "ten""#),
            ("invalid type: floating point `1.5`, expected i64", "expected a whole number, got the number 1.5"),
            ("invalid type: integer `5`, expected a string", "expected a string, got the number 5"),
            ("invalid type: integer `-1`, expected u32", "expected a whole number, 0 or more, got the number -1"),
            ("invalid type: string \"yes\", expected a boolean", "expected true or false, got the string \"yes\""),
            ("invalid type: map, expected a sequence", "expected a list, got a mapping"),
            ("invalid type: sequence, expected struct Probe", "expected a mapping (Probe), got a list"),
            (
                "unknown variant `loud`, expected one of `error`, `warning`, `info`, `never`",
                "loud is not a known value; use error, warning, info or never",
            ),
            (
                "unknown variant `Enforce`, expected `enforce` or `warn`",
                "Enforce is not a known value; use enforce or warn",
            ),
        ];
        for (serde, plain) in cases {
            assert_eq!(plain_words(serde), plain);
        }
    }

    #[test]
    fn other_messages_are_kept() {
        for message in ["missing field `name`", "unknown key `x`; did you mean `y`?", "invalid length 2, expected 3"] {
            assert_eq!(plain_words(message), message);
        }
    }
}
