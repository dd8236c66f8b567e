//! The policy's regexes in CEL: the Rust `regex` crate and RE2 (CEL's
//! `matches`) agree on plain patterns, not on everything. A pattern is
//! carried only in the syntax both read the same way.

/// Whether `pattern` means the same to the `regex` crate and to RE2:
/// literals, `.`, classes without escapes, set operations or nesting,
/// groups (`(...)`, `(?:...)`, `(?i)`), anchors, alternation and
/// repetition. No `\d`-style escapes (Unicode in one, ASCII in the other),
/// no other flags.
pub(crate) fn portable(pattern: &str) -> bool {
    let bytes = pattern.as_bytes();
    let mut in_class = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\\' => match bytes.get(i + 1) {
                Some(next) if next.is_ascii_punctuation() => i += 1,
                _ => return false,
            },
            b'[' if in_class => return false,
            b'[' => in_class = true,
            b']' if in_class => in_class = false,
            b'&' | b'~' | b'-' if in_class && bytes.get(i + 1) == Some(&b) => return false,
            b'(' if !in_class && bytes.get(i + 1) == Some(&b'?') => {
                let rest = &pattern[i + 2..];
                if !(rest.starts_with(':') || rest.starts_with("i)") || rest.starts_with("i:")) {
                    return false;
                }
            }
            b'{' if !in_class => {
                // Counted repetition: RE2 refuses more than 1000.
                let end = pattern[i..].find('}').map(|e| &pattern[i + 1..i + e]);
                if end.is_some_and(|n| n.split(',').any(|n| n.trim().parse::<u32>().is_ok_and(|n| n > 1000))) {
                    return false;
                }
            }
            _ => {}
        }
        i += 1;
    }
    !in_class
}

/// `subject` matches one of `patterns` (`false` for none), or `None` when
/// one of them is not [`portable`].
pub(crate) fn any_match(subject: &str, patterns: &[String]) -> Option<String> {
    if !patterns.iter().all(|p| portable(p)) {
        return None;
    }
    let any: Vec<String> =
        patterns.iter().map(|p| format!("{subject}.matches({})", super::fragments::quoted(p))).collect();
    Some(if any.is_empty() { "false".to_owned() } else { format!("({})", any.join(" || ")) })
}

#[cfg(test)]
mod tests {
    use super::portable;

    #[test]
    fn the_default_patterns_are_portable() {
        let s = crate::settings::Settings::default();
        for p in s.dependency_paths.iter().chain(&s.readiness_paths).chain(&s.slow_boot_images) {
            assert!(portable(p), "{p}");
        }
    }

    #[test]
    fn what_the_two_engines_read_differently_is_not() {
        for p in [r"\d+", r"[a-z&&[^x]]", r"(?x) a", r"[[:alpha:]]", r"\bword", r"a{2000}", r"[a-"] {
            assert!(!portable(p), "{p}");
        }
        for p in [r"^/a\.b$", r"(?i)(^|/)(db|cache)(/|$)", r"^/v1/models/[^/]+/ready/?$", r"a{2,5}"] {
            assert!(portable(p), "{p}");
        }
    }
}
