//! JSON pointer (RFC 6901) building.

/// Escapes one reference token (`~` -> `~0`, `/` -> `~1`).
pub fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Appends reference tokens to a pointer, escaping each.
pub fn join(base: &str, tokens: &[&str]) -> String {
    let mut out = String::with_capacity(base.len() + tokens.iter().map(|t| t.len() + 1).sum::<usize>());
    out.push_str(base);
    for t in tokens {
        out.push('/');
        out.push_str(&escape_token(t));
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
    }
}
