//! A plain HTTP/1.1 `GET` over TCP (`Connection: close`), shared by the
//! health checks of the webhook tests and the node's traffic loop: one
//! request, the whole response read until the server closes.

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// A response read to its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The body as read (lossy UTF-8).
    pub body: String,
    /// `Content-Length` when the head had one.
    pub length: Option<usize>,
}

impl Response {
    /// Whether the body is shorter than the head announced: the
    /// connection closed mid-response.
    pub fn cut(&self) -> bool {
        self.length.is_some_and(|length| self.body.len() < length)
    }
}

/// `GET path` on `addr`, reading until the server closes or `read_timeout`
/// passes without a byte. `Err` says where it failed: connect, send, or no
/// response head at all.
pub fn get(addr: SocketAddr, path: &str, read_timeout: Duration) -> Result<Response, String> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).map_err(|e| format!("connect: {e}"))?;
    stream.set_read_timeout(Some(read_timeout)).map_err(|e| e.to_string())?;
    stream
        .write_all(format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes())
        .map_err(|e| format!("send: {e}"))?;
    let mut response = Vec::new();
    let read = stream.read_to_end(&mut response);
    let text = String::from_utf8_lossy(&response);
    match parse(&text) {
        Some(response) => Ok(response),
        None => Err(match read {
            Err(e) => format!("read: {e}"),
            Ok(_) => format!("no response, {} bytes", response.len()),
        }),
    }
}

/// An HTTP/1.1 response's status and body, when it has a whole head.
pub fn parse(text: &str) -> Option<Response> {
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status = head.strip_prefix("HTTP/1.1 ")?.split(' ').next()?.parse().ok()?;
    let length = head
        .lines()
        .find_map(|l| l.split_once(':').filter(|(n, _)| n.eq_ignore_ascii_case("content-length")))
        .and_then(|(_, v)| v.trim().parse::<usize>().ok());
    Some(Response { status, body: body.to_owned(), length })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_and_body_parse_and_a_short_body_is_cut() {
        let whole = parse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").expect("whole");
        assert_eq!((whole.status, whole.body.as_str(), whole.cut()), (200, "ok", false));
        let cut = parse("HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nok").expect("cut");
        assert!(cut.cut());
        assert_eq!(parse("HTTP/1.1 503 Service Unavailable\r\n\r\n").map(|r| r.status), Some(503));
        assert_eq!(parse("HTTP/1.1 200 OK\r\n"), None, "no end of head");
        assert_eq!(parse(""), None);
    }
}
