//! `file://` URIs and the paths they name (RFC 8089): what an editor sends
//! and what `lint` reads. Only local files: a URI of another scheme (an
//! unsaved buffer, `untitled:`) has no path, so no directory, policy or
//! sibling Services; it is linted alone under the default policy.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use lsp_types::Uri;

/// The path a `file://` URI names, percent-decoded.
pub fn to_path(uri: &Uri) -> Option<PathBuf> {
    let text = uri.as_str();
    let rest = text.strip_prefix("file://")?;
    // `file://host/path`: only the local host (empty or `localhost`).
    let path = match rest.strip_prefix("localhost") {
        Some(p) if p.starts_with('/') => p,
        _ if rest.starts_with('/') => rest,
        _ => return None,
    };
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let bytes = decode(path)?;
    Some(PathBuf::from(String::from_utf8(bytes).ok()?))
}

/// The `file://` URI of an absolute path, with what RFC 3986 reserves escaped.
pub fn from_path(path: &Path) -> Option<Uri> {
    let text = path.to_str()?;
    let mut out = String::from("file://");
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => out.push(char::from(byte)),
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    Uri::from_str(&out).ok()
}

fn decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_survives_the_round_trip_with_spaces_and_non_ascii() {
        let path = Path::new("/tmp/my charts/déploiement #1.yaml");
        let uri = from_path(path).expect("a URI");
        assert_eq!(uri.as_str(), "file:///tmp/my%20charts/d%C3%A9ploiement%20%231.yaml");
        assert_eq!(to_path(&uri).as_deref(), Some(path));
    }

    #[test]
    fn other_schemes_and_hosts_name_no_local_file() {
        for text in ["untitled:Untitled-1", "file://server/share/a.yaml", "https://example.com/a.yaml"] {
            let uri = Uri::from_str(text).expect("a URI");
            assert_eq!(to_path(&uri), None, "{text}");
        }
        let local = Uri::from_str("file://localhost/etc/a.yaml").expect("a URI");
        assert_eq!(to_path(&local), Some(PathBuf::from("/etc/a.yaml")));
    }
}
