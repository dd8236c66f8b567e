//! Port name syntax, as the API server checks it.

/// Whether a string is a valid port name (an IANA service name): 1 to 15
/// characters of `[a-z0-9-]` with at least one letter, no leading, trailing
/// or doubled hyphen. `"8080"` is not one: the API server rejects a quoted
/// port number in a probe.
pub fn is_valid_port_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 15
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && name.chars().any(|c| c.is_ascii_lowercase())
        && !name.contains("--")
        && !name.starts_with('-')
        && !name.ends_with('-')
}

#[cfg(test)]
mod tests {
    use super::is_valid_port_name;

    #[test]
    fn iana_service_names() {
        for ok in ["http", "h2c", "metrics-9090", "a"] {
            assert!(is_valid_port_name(ok), "{ok}");
        }
        for bad in ["", "8080", "HTTP", "-http", "http-", "a--b", "sixteen-chars-xx", "0.0.0.0:80"] {
            assert!(!is_valid_port_name(bad), "{bad}");
        }
    }
}
