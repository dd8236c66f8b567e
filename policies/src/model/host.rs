//! Telling the container itself from another host: loopback names, unix
//! sockets, the pod's own IP or hostname, and variables resolved through the
//! container's env.

use k8s_openapi::api::core::v1::Container;

/// Where a host sits relative to the container.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Locality {
    /// The container itself (loopback, a unix socket, its own pod IP or hostname).
    Local,
    /// Cannot tell (an unresolved variable).
    Unknown,
    /// Another host.
    Remote,
}

/// Env vars that name the pod itself by convention.
const SELF_VARS: &[&str] = &["HOSTNAME", "POD_IP", "MY_POD_IP", "POD_NAME", "MY_POD_NAME"];

/// Classifies a host (or a comma-separated list of `host[:port]`, as in
/// `--endpoints` or a MongoDB seed list): remote if any is remote.
/// Variables resolve through `assignments`, then the container's env.
pub fn host_locality(raw: &str, c: &Container, assignments: &[(String, String)]) -> Locality {
    locality_at(raw, c, assignments, 0)
}

fn locality_at(raw: &str, c: &Container, assignments: &[(String, String)], depth: usize) -> Locality {
    raw.split(',').map(|h| single_host(h.trim(), c, assignments, depth)).max().unwrap_or(Locality::Local)
}

fn single_host(raw: &str, c: &Container, assignments: &[(String, String)], depth: usize) -> Locality {
    let raw = raw.rsplit_once('@').map_or(raw, |(_, h)| h);
    if raw.contains("$(hostname") || raw.contains("`hostname") || raw.starts_with('/') || raw.starts_with("unix:") {
        return Locality::Local;
    }
    // `${X:-localhost:6379}` is one variable; `$X:6379` and `localhost:$PORT` are a host and a port.
    let host = if whole_variable(raw).is_some() { raw } else { bare_host(raw) };
    let variable = whole_variable(host);
    if let Some((name, default)) = variable {
        if depth > 3 {
            return Locality::Unknown;
        }
        return match env_value(name, c, assignments) {
            EnvValue::Literal(v) => locality_at(&v, c, assignments, depth + 1),
            EnvValue::SelfRef => Locality::Local,
            EnvValue::Opaque => Locality::Unknown,
            EnvValue::Unset if SELF_VARS.contains(&name) => Locality::Local,
            EnvValue::Unset => match default {
                Some(d) => locality_at(d, c, assignments, depth + 1),
                None => Locality::Unknown,
            },
        };
    }
    if host.contains('$') || host.contains('`') {
        return Locality::Unknown;
    }
    let host = host.to_ascii_lowercase();
    let local = host.is_empty()
        || host.starts_with("127.")
        || matches!(
            host.as_str(),
            "localhost"
                | "localhost.localdomain"
                | "ip6-localhost"
                | "ip6-loopback"
                | "0.0.0.0"
                | "::"
                | "::1"
                | "0:0:0:0:0:0:0:1"
        );
    if local { Locality::Local } else { Locality::Remote }
}

/// A host for messages: a variable shows the value it resolves to
/// (`$DB_HOST` -> `$DB_HOST (postgres)`).
pub fn describe_host(raw: &str, c: &Container, assignments: &[(String, String)]) -> String {
    let host = if whole_variable(raw).is_some() { raw } else { bare_host(raw) };
    match whole_variable(host).map(|(name, _)| env_value(name, c, assignments)) {
        Some(EnvValue::Literal(v)) => format!("{raw} ({v})"),
        _ => raw.to_owned(),
    }
}

/// The host of `user@host:port`, `[::1]:port`, `rs0/host:port`.
pub fn bare_host(raw: &str) -> &str {
    let s = raw.rsplit_once('@').map_or(raw, |(_, h)| h);
    if s.starts_with('/') {
        return s;
    }
    let s = s.rsplit_once('/').map_or(s, |(_, h)| h);
    if let Some(rest) = s.strip_prefix('[') {
        return rest.split_once(']').map_or(rest, |(h, _)| h);
    }
    if s.parse::<std::net::Ipv6Addr>().is_ok() {
        return s;
    }
    s.split_once(':').map_or(s, |(h, _)| h)
}

/// `$NAME`, `${NAME}`, `${NAME:-default}` or Kubernetes' `$(NAME)` as a whole word.
fn whole_variable(raw: &str) -> Option<(&str, Option<&str>)> {
    let inner = raw
        .strip_prefix("${")
        .and_then(|r| r.strip_suffix('}'))
        .or_else(|| raw.strip_prefix("$(").and_then(|r| r.strip_suffix(')')))
        .or_else(|| raw.strip_prefix('$'))?;
    let (name, default) = match inner.split_once(":-").or_else(|| inner.split_once('-')) {
        Some((n, d)) if raw.starts_with("${") => (n, Some(d)),
        _ => (inner, None),
    };
    let ident = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    ident.then_some((name, default))
}

enum EnvValue {
    Literal(String),
    SelfRef,
    Opaque,
    Unset,
}

fn env_value(name: &str, c: &Container, assignments: &[(String, String)]) -> EnvValue {
    if let Some((_, v)) = assignments.iter().rev().find(|(n, _)| n == name) {
        return EnvValue::Literal(v.clone());
    }
    let Some(var) = c.env.iter().flatten().rev().find(|e| e.name == name) else {
        return EnvValue::Unset;
    };
    if let Some(v) = &var.value {
        return EnvValue::Literal(v.clone());
    }
    let field = var.value_from.as_ref().and_then(|f| f.field_ref.as_ref()).map(|f| f.field_path.as_str());
    match field {
        Some("status.podIP" | "status.podIPs" | "metadata.name") => EnvValue::SelfRef,
        _ if var.value_from.is_none() => EnvValue::Literal(String::new()),
        _ => EnvValue::Opaque,
    }
}

/// Host and path of a URL (`http://h:1/p?q`) or of a scheme-less
/// `host:port/path`. `None` when the scheme is a unix socket.
pub fn url_parts(url: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = match url.split_once("://") {
        Some((s, r)) => (s, r),
        None => ("", url),
    };
    if scheme.contains("unix") {
        return None;
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let path = path.split(['?', '#']).next().unwrap_or("");
    Some((authority, path))
}

/// Whether a word starts with a URL scheme (`redis://`, `mongodb+srv://`).
pub fn has_scheme(word: &str) -> bool {
    word.split_once("://").is_some_and(|(s, _)| {
        s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.chars().all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
    })
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Container;
    use serde_json::json;

    use super::*;

    #[test]
    fn host_localities() {
        let c: Container = serde_json::from_value(json!({
            "name": "a",
            "env": [
                {"name": "REDIS_HOST", "value": "redis-master"},
                {"name": "MY_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                {"name": "SECRET_HOST", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}
            ]
        }))
        .expect("container");
        let l = |h: &str| host_locality(h, &c, &[]);
        for local in [
            "",
            "localhost",
            "127.0.0.1",
            "::1",
            "[::1]:80",
            "0.0.0.0",
            "$(hostname -i)",
            "$HOSTNAME",
            "${POD_IP}",
            "$(MY_IP)",
            "/var/run/postgresql",
            "u:p@localhost:5432",
            "${UNSET:-localhost}",
            "localhost:${PORT:-8080}",
            "$USER:$PASS@localhost:27017",
            "$(MY_IP):9000",
        ] {
            assert_eq!(l(local), Locality::Local, "{local}");
        }
        for remote in ["db", "redis-master.prod.svc:6379", "$REDIS_HOST", "localhost,db:1", "rs0/m1:27017"] {
            assert_eq!(l(remote), Locality::Remote, "{remote}");
        }
        for unknown in ["$OTHER", "$SECRET_HOST", "${RELEASE}-redis"] {
            assert_eq!(l(unknown), Locality::Unknown, "{unknown}");
        }
    }

    #[test]
    fn urls() {
        assert_eq!(url_parts("http://a:1/p?q"), Some(("a:1", "/p")));
        assert_eq!(url_parts("localhost:8080/healthz"), Some(("localhost:8080", "/healthz")));
        assert_eq!(url_parts("http+unix://x/p"), None);
        assert!(has_scheme("mongodb+srv://x"));
        assert!(!has_scheme("db.eval('a://b')"));
    }
}
