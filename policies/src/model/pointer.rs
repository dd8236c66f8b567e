//! JSON pointer (RFC 6901) building.

/// Escapes one reference token (`~` -> `~0`, `/` -> `~1`).
pub fn escape_token(token: &str) -> String {
    let mut out = String::with_capacity(token.len());
    push_token(&mut out, token);
    out
}

/// Appends one reference token, escaped. Tokens rarely hold `~` or `/`,
/// and every rule builds pointers, so the plain case copies the token once.
fn push_token(out: &mut String, token: &str) {
    if !token.contains(['~', '/']) {
        out.push_str(token);
        return;
    }
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
}

/// Appends reference tokens to a pointer, escaping each.
pub fn join(base: &str, tokens: &[&str]) -> String {
    let mut out = String::with_capacity(base.len() + tokens.iter().map(|t| t.len() + 1).sum::<usize>());
    out.push_str(base);
    for t in tokens {
        out.push('/');
        push_token(&mut out, t);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_slash_and_tilde() {
        assert_eq!(
            join("/metadata", &["annotations", "lifeguard.dev/ignore"]),
            "/metadata/annotations/lifeguard.dev~1ignore"
        );
        assert_eq!(escape_token("a~b"), "a~0b");
        assert_eq!(escape_token("~/a/~1"), "~0~1a~1~01");
        assert_eq!(join("", &["plain", "0"]), "/plain/0");
    }
}
