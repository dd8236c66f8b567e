//! The dependency the test workload checks (`DEPENDENCY=127.0.0.1:PORT`):
//! a loopback HTTP server in the test process that answers `200` at once,
//! except in a stall the test sets, when it holds each request until the
//! stall ends. A stall is outside the pods, so it hits every replica at once
//! and does not end when a container restarts, as a database's would not.

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A running dependency; it stops answering when dropped (its thread ends
/// with the test binary).
pub struct Dependency {
    /// Where it listens.
    pub addr: SocketAddr,
    stall: Arc<Mutex<Option<(Instant, Instant)>>>,
}

impl Dependency {
    /// Starts one on a free loopback port.
    pub fn start() -> Dependency {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the dependency");
        let addr = listener.local_addr().expect("its address");
        let stall: Arc<Mutex<Option<(Instant, Instant)>>> = Arc::new(Mutex::new(None));
        let shared = Arc::clone(&stall);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let stall = Arc::clone(&shared);
                std::thread::spawn(move || answer(stream, &stall));
            }
        });
        Dependency { addr, stall }
    }

    /// From now on, for `duration`, every request waits until the stall
    /// ends.
    pub fn stall_for(&self, duration: Duration) {
        let now = Instant::now();
        *self.stall.lock().expect("stall") = Some((now, now + duration));
    }
}

fn answer(mut stream: TcpStream, stall: &Mutex<Option<(Instant, Instant)>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut buffer = [0_u8; 1024];
    let _ = stream.read(&mut buffer);
    let until = stall.lock().ok().and_then(|s| *s).and_then(|(from, to)| {
        let now = Instant::now();
        (now >= from && now < to).then_some(to)
    });
    if let Some(until) = until {
        std::thread::sleep(until.saturating_duration_since(Instant::now()));
    }
    let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
}
