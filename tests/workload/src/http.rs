//! The little HTTP/1.1 the workload speaks: it reads a request head, answers
//! one response with `Connection: close`, and closes. The kubelet's probes
//! (Go's net/http) and the tests' clients need no more.

/// The most a request head may take; a probe's is a few hundred bytes.
pub const MAX_HEAD: usize = 16 * 1024;

/// A parsed request head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// `GET`, ...
    pub method: String,
    /// The request target as sent (`/readyz?verbose`).
    pub target: String,
    /// The `User-Agent` header (`kube-probe/1.37` for the kubelet's probes).
    pub user_agent: Option<String>,
}

impl Request {
    /// The target's path, without a query: what routes the request.
    pub fn path(&self) -> &str {
        self.target.split_once('?').map_or(self.target.as_str(), |(path, _)| path)
    }
}

/// Where the head ends (just after its blank line), once `buf` holds it.
pub fn head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

/// Parses a request head: the request line, then headers up to the blank
/// line. Only what the workload uses is kept.
pub fn parse_head(head: &[u8]) -> Result<Request, String> {
    let head = std::str::from_utf8(head).map_err(|_| "the request head is not UTF-8".to_owned())?;
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let (method, target) = parse_request_line(request_line)?;
    let mut user_agent = None;
    for line in lines.take_while(|l| !l.is_empty()) {
        let (name, value) = line.split_once(':').ok_or_else(|| format!("a header line without a colon: {line:?}"))?;
        if name.eq_ignore_ascii_case("user-agent") {
            user_agent = Some(value.trim().to_owned());
        }
    }
    Ok(Request { method: method.to_owned(), target: target.to_owned(), user_agent })
}

/// `METHOD SP TARGET SP HTTP/1.x` into (method, target).
pub fn parse_request_line(line: &str) -> Result<(&str, &str), String> {
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) = (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(format!("not a request line (METHOD TARGET HTTP/1.x): {line:?}"));
    };
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)) {
        return Err(format!("not an HTTP method: {method:?}"));
    }
    if !target.starts_with('/') {
        return Err(format!("not an origin-form target (it must start with /): {target:?}"));
    }
    if !matches!(version, "HTTP/1.0" | "HTTP/1.1") {
        return Err(format!("not HTTP/1.0 or HTTP/1.1: {version:?}"));
    }
    Ok((method, target))
}

/// The reason phrase of the statuses the workload answers.
pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        503 => "Service Unavailable",
        _ => "Unknown",
    }
}

/// A whole response: status, a text body, `Connection: close`.
pub fn response(status: u16, body: &str) -> String {
    format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        reason(status),
        body.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kubelet_probe() {
        let head = b"GET /readyz?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: kube-probe/1.37\r\nAccept: */*\r\nConnection: close\r\n\r\n";
        assert_eq!(head_end(head), Some(head.len()));
        let request = parse_head(head).expect("valid");
        assert_eq!(request.method, "GET");
        assert_eq!(request.target, "/readyz?x=1");
        assert_eq!(request.path(), "/readyz");
        assert_eq!(request.user_agent.as_deref(), Some("kube-probe/1.37"));
    }

    #[test]
    fn the_header_name_is_case_insensitive_and_optional() {
        let request = parse_head(b"HEAD / HTTP/1.0\r\nuser-agent:  curl/8 \r\n\r\n").expect("valid");
        assert_eq!(request.user_agent.as_deref(), Some("curl/8"));
        assert_eq!(parse_head(b"GET / HTTP/1.1\r\n\r\n").expect("valid").user_agent, None);
    }

    #[test]
    fn an_incomplete_head_has_no_end() {
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nHost: x\r\n"), None);
    }

    #[test]
    fn bad_request_lines() {
        for line in [
            "",
            "GET",
            "GET /",
            "GET / HTTP/1.1 extra",
            "GET  / HTTP/1.1",
            "G(T / HTTP/1.1",
            "GET readyz HTTP/1.1",
            "GET / HTTP/2",
            "GET / SPDY/3",
        ] {
            assert!(parse_request_line(line).is_err(), "{line:?} must be refused");
        }
        assert!(parse_head(b"GET / HTTP/1.1\r\nno colon here\r\n\r\n").is_err());
        assert!(parse_head(b"GET /\xff HTTP/1.1\r\n\r\n").is_err());
    }

    #[test]
    fn a_response() {
        assert_eq!(
            response(503, "draining"),
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 8\r\nConnection: close\r\n\r\ndraining"
        );
    }
}
