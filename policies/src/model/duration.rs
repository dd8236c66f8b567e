//! Reading durations from annotations and env vars.

/// Parses a duration in whole seconds: `30`, `30s`, `2m`, `1m30s`, `1h`,
/// `1.5m` (rounded up). Returns `None` for anything else, including negatives.
pub fn parse_seconds(raw: &str) -> Option<i64> {
    let s = raw.trim();
    if s.is_empty() {
        return None;
    }
    if let Ok(n) = s.parse::<i64>() {
        return (n >= 0).then_some(n);
    }
    // Go-style duration: a sequence of <number><unit>.
    let mut total = 0f64;
    let mut rest = s;
    while !rest.is_empty() {
        let num_len = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        if num_len == 0 {
            return None;
        }
        let value: f64 = rest[..num_len].parse().ok()?;
        rest = &rest[num_len..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let factor = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            _ => return None,
        };
        total += value * factor;
        rest = &rest[unit_len..];
    }
    if !total.is_finite() || total > i64::MAX as f64 / 2.0 {
        return None;
    }
    Some(total.ceil() as i64)
}

#[cfg(test)]
mod tests {
    use super::parse_seconds;

    #[test]
    fn plain_and_go_durations() {
        assert_eq!(parse_seconds("30"), Some(30));
        assert_eq!(parse_seconds(" 45 "), Some(45));
        assert_eq!(parse_seconds("30s"), Some(30));
        assert_eq!(parse_seconds("1m30s"), Some(90));
        assert_eq!(parse_seconds("2m"), Some(120));
        assert_eq!(parse_seconds("1.5s"), Some(2));
        assert_eq!(parse_seconds("1h"), Some(3600));
    }

    #[test]
    fn rejects_garbage() {
        for s in ["", "-5", "abc", "5x", "s", "1e400s"] {
            assert_eq!(parse_seconds(s), None, "{s}");
        }
    }
}
