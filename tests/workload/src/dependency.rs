//! The external dependency (`DEPENDENCY=host:port`): a GET `/` with a
//! deadline, and what a handler that checks it answers.
//!
//! The test runs the dependency itself and makes it slow or failing for a
//! while. Its stall is outside every container, so it is shared by all
//! replicas and a container restart does not cure it: what makes checking
//! it from a liveness probe an anti-pattern.

use std::io::{Read as _, Write as _};
use std::net::{TcpStream, ToSocketAddrs as _};
use std::time::{Duration, Instant};

/// How a check of the dependency went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It answered with this status.
    Answered(u16),
    /// It did not answer within the deadline, or the connection failed.
    Failed(String),
}

impl Outcome {
    /// The status a dependency-checking handler answers, and a body (and
    /// log field) saying why: 200 only when the dependency answered 2xx.
    pub fn verdict(&self) -> (u16, String) {
        match self {
            Outcome::Answered(status @ 200..=299) => (200, format!("dependency answered {status}")),
            Outcome::Answered(status) => (503, format!("dependency answered {status}")),
            Outcome::Failed(why) => (503, format!("dependency failed: {why}")),
        }
    }
}

/// The status of an HTTP response from its first bytes, once its status
/// line is complete; `None` before that or when it is not HTTP.
pub fn status_of(response: &[u8]) -> Option<u16> {
    let end = response.windows(2).position(|w| w == b"\r\n")?;
    let line = std::str::from_utf8(&response[..end]).ok()?;
    let mut parts = line.splitn(3, ' ');
    let version = parts.next()?;
    let code = parts.next()?;
    if !version.starts_with("HTTP/1.") || code.len() != 3 {
        return None;
    }
    code.parse().ok()
}

/// GETs `/` from `address` (`host:port`) and waits for its status line, all
/// within `timeout`: connecting, sending and reading share one deadline, as
/// one client timeout does.
pub fn check(address: &str, timeout: Duration) -> Outcome {
    let deadline = Instant::now() + timeout;
    let remaining = || deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero());
    let addrs = match address.to_socket_addrs() {
        Ok(addrs) => addrs.collect::<Vec<_>>(),
        Err(e) => return Outcome::Failed(format!("resolve {address}: {e}")),
    };
    let mut last = format!("resolve {address}: no addresses");
    let mut stream = None;
    for addr in addrs {
        let Some(left) = remaining() else { break };
        match TcpStream::connect_timeout(&addr, left) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = format!("connect {addr}: {e}"),
        }
    }
    let Some(mut stream) = stream else {
        return Outcome::Failed(if remaining().is_none() {
            format!("timed out after {timeout:?} ({last})")
        } else {
            last
        });
    };
    let request = format!(
        "GET / HTTP/1.1\r\nHost: {address}\r\nUser-Agent: lifeguard-test-workload\r\nConnection: close\r\n\r\n"
    );
    let timed_out = || Outcome::Failed(format!("timed out after {timeout:?}"));
    let Some(left) = remaining() else { return timed_out() };
    if let Err(e) = stream.set_write_timeout(Some(left)).and_then(|()| stream.write_all(request.as_bytes())) {
        return Outcome::Failed(format!("send: {e}"));
    }
    let mut response = Vec::new();
    let mut chunk = [0u8; 1024];
    // Bounded: each read waits at most until the deadline, and a status line
    // longer than a few KiB is not HTTP.
    while response.len() < 8192 {
        if let Some(status) = status_of(&response) {
            return Outcome::Answered(status);
        }
        let Some(left) = remaining() else { return timed_out() };
        if let Err(e) = stream.set_read_timeout(Some(left)) {
            return Outcome::Failed(format!("set timeout: {e}"));
        }
        match stream.read(&mut chunk) {
            Ok(0) => return Outcome::Failed("closed without a response".to_owned()),
            Ok(n) => response.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                return timed_out();
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Outcome::Failed(format!("read: {e}")),
        }
    }
    status_of(&response).map_or_else(|| Outcome::Failed("not an HTTP response".to_owned()), Outcome::Answered)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_2xx_is_healthy() {
        assert_eq!(Outcome::Answered(200).verdict().0, 200);
        assert_eq!(Outcome::Answered(204).verdict().0, 200);
        assert_eq!(Outcome::Answered(302).verdict().0, 503);
        assert_eq!(Outcome::Answered(500).verdict(), (503, "dependency answered 500".to_owned()));
        assert_eq!(
            Outcome::Failed("timed out after 1s".into()).verdict(),
            (503, "dependency failed: timed out after 1s".to_owned())
        );
    }

    #[test]
    fn the_status_line() {
        assert_eq!(status_of(b"HTTP/1.1 200 OK\r\n"), Some(200));
        assert_eq!(status_of(b"HTTP/1.0 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n"), Some(503));
        assert_eq!(status_of(b"HTTP/1.1 204\r\n"), Some(204));
        assert_eq!(status_of(b"HTTP/1.1 200 OK"), None, "incomplete");
        assert_eq!(status_of(b""), None);
        assert_eq!(status_of(b"SSH-2.0-OpenSSH\r\n"), None);
        assert_eq!(status_of(b"HTTP/1.1 20 OK\r\n"), None);
        assert_eq!(status_of(b"HTTP/1.1 abc OK\r\n"), None);
    }

    #[test]
    fn a_refused_connection_fails_at_once() {
        // A port just freed on loopback: nothing listens there.
        let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
        let start = Instant::now();
        let outcome = check(&format!("127.0.0.1:{port}"), Duration::from_secs(5));
        assert!(matches!(&outcome, Outcome::Failed(why) if why.starts_with("connect")), "{outcome:?}");
        assert!(start.elapsed() < Duration::from_secs(4));
    }

    #[test]
    fn a_dependency_that_answers() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let addr = listener.local_addr().expect("its address");
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().expect("accept");
            let mut buf = [0u8; 1024];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n");
        });
        assert_eq!(check(&addr.to_string(), Duration::from_secs(5)), Outcome::Answered(500));
        server.join().expect("the server thread");
    }
}
