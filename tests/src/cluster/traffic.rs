//! A client loop that sends requests through a Service the way an ingress
//! controller or a mesh sidecar does: to the ready endpoints of the
//! Service's EndpointSlices, as its watch delivers them. No kube-proxy runs
//! on the node (it would rewrite the firewall), so this is the client a
//! deletion has to be safe for: it keeps sending to an endpoint until the
//! EndpointSlice change reaches it, and a request in flight on a pod that
//! is killed fails.
//!
//! Every request is kept with its times, the endpoint and the pod it went
//! to, and how it ended. The loop is bounded in time and in count.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::node::Node;
use super::pods::now_ms;

/// The most requests one loop sends, whatever its duration.
const MAX_REQUESTS: usize = 100_000;

/// A ready endpoint: where it listens and the pod behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// `IP:PORT`.
    pub addr: SocketAddr,
    /// The pod's name (the endpoint's `targetRef`).
    pub pod: String,
}

/// One request the loop sent.
#[derive(Debug, Clone)]
pub struct Request {
    /// When it was sent and when it ended (ms since the Unix epoch).
    pub start_ms: u64,
    /// When it ended.
    pub end_ms: u64,
    /// Where it went.
    pub endpoint: Endpoint,
    /// `Ok` for a complete `200` response, the error otherwise.
    pub outcome: Result<(), String>,
}

/// The ready endpoints' pods after a change, as the watch delivered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// When it arrived (ms since the Unix epoch).
    pub t_ms: u64,
    /// The pods, sorted.
    pub pods: Vec<String>,
}

/// A request still waiting for its answer.
#[derive(Debug, Clone)]
pub struct InFlight {
    /// When it was sent (ms since the Unix epoch).
    pub start_ms: u64,
    /// Where it went.
    pub endpoint: Endpoint,
}

/// A running loop; [`Traffic::stop`] ends it and returns what it sent.
pub struct Traffic {
    stop: Arc<AtomicBool>,
    sent: Arc<Mutex<Vec<Request>>>,
    /// Each client's request in flight, by client.
    in_flight: Arc<Mutex<BTreeMap<usize, InFlight>>>,
    endpoints: Arc<Mutex<Vec<Endpoint>>>,
    changes: Arc<Mutex<Vec<Change>>>,
    clients: Vec<JoinHandle<()>>,
    watch: std::process::Child,
}

impl Traffic {
    /// Starts `clients` clients sending `GET path` through Service
    /// `service` in `namespace`, one request at a time each, for at most
    /// `limit`.
    pub fn start(node: &Node, namespace: &str, service: &str, path: &str, clients: usize, limit: Duration) -> Traffic {
        let selector = format!("kubernetes.io/service-name={service}");
        let mut watch = node
            .plane
            .kubectl
            .command(&[
                "get",
                "endpointslices",
                "-n",
                namespace,
                "-l",
                &selector,
                "--watch",
                "--output-watch-events",
                "-o",
                "json",
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start kubectl get endpointslices --watch");
        let stdout = watch.stdout.take().expect("stdout");
        let endpoints: Arc<Mutex<Vec<Endpoint>>> = Arc::default();
        let changes: Arc<Mutex<Vec<Change>>> = Arc::default();
        let (shared, shared_changes) = (Arc::clone(&endpoints), Arc::clone(&changes));
        std::thread::spawn(move || {
            let mut slices: BTreeMap<String, Vec<Endpoint>> = BTreeMap::new();
            for event in serde_json::Deserializer::from_reader(stdout).into_iter::<Value>().flatten() {
                let slice = &event["object"];
                let name = slice["metadata"]["name"].as_str().unwrap_or_default().to_owned();
                if event["type"] == "DELETED" {
                    slices.remove(&name);
                } else {
                    slices.insert(name, ready_endpoints(slice));
                }
                let ready: Vec<Endpoint> = slices.values().flatten().cloned().collect();
                let mut pods: Vec<String> = ready.iter().map(|e| e.pod.clone()).collect();
                pods.sort();
                let mut changes = shared_changes.lock().expect("changes");
                if changes.last().is_none_or(|last| last.pods != pods) {
                    changes.push(Change { t_ms: now_ms(), pods });
                }
                *shared.lock().expect("endpoints") = ready;
            }
        });

        let stop = Arc::new(AtomicBool::new(false));
        let sent: Arc<Mutex<Vec<Request>>> = Arc::default();
        let in_flight: Arc<Mutex<BTreeMap<usize, InFlight>>> = Arc::default();
        let next = Arc::new(AtomicUsize::new(0));
        let deadline = Instant::now() + limit;
        let clients = (0..clients)
            .map(|client| {
                let (stop, sent, next, endpoints) =
                    (Arc::clone(&stop), Arc::clone(&sent), Arc::clone(&next), Arc::clone(&endpoints));
                let in_flight = Arc::clone(&in_flight);
                let path = path.to_owned();
                std::thread::spawn(move || {
                    while !stop.load(Ordering::SeqCst) && Instant::now() < deadline {
                        let turn = next.fetch_add(1, Ordering::SeqCst);
                        if turn >= MAX_REQUESTS {
                            break;
                        }
                        let endpoint = {
                            let ready = endpoints.lock().expect("endpoints");
                            (!ready.is_empty()).then(|| ready[turn % ready.len()].clone())
                        };
                        let Some(endpoint) = endpoint else {
                            // Nothing ready yet (or any more): a client would
                            // get "no endpoints"; the tests wait for them first.
                            std::thread::sleep(Duration::from_millis(50));
                            continue;
                        };
                        let start_ms = now_ms();
                        in_flight
                            .lock()
                            .expect("in flight")
                            .insert(client, InFlight { start_ms, endpoint: endpoint.clone() });
                        let outcome = get(endpoint.addr, &path);
                        in_flight.lock().expect("in flight").remove(&client);
                        sent.lock().expect("sent").push(Request { start_ms, end_ms: now_ms(), endpoint, outcome });
                    }
                })
            })
            .collect();
        Traffic { stop, sent, in_flight, endpoints, changes, clients, watch }
    }

    /// The requests waiting for their answers right now, one per busy client.
    pub fn in_flight(&self) -> Vec<InFlight> {
        self.in_flight.lock().expect("in flight").values().cloned().collect()
    }

    /// The ready endpoints right now.
    pub fn endpoints(&self) -> Vec<Endpoint> {
        self.endpoints.lock().expect("endpoints").clone()
    }

    /// Each change of the ready endpoints' pods as the watch delivered it.
    pub fn changes(&self) -> Vec<Change> {
        self.changes.lock().expect("changes").clone()
    }

    /// Every request ended so far.
    pub fn sent(&self) -> Vec<Request> {
        self.sent.lock().expect("sent").clone()
    }

    /// Stops sending, waits for the requests in flight, and returns every
    /// request sent, in the order they started.
    pub fn stop(mut self) -> Vec<Request> {
        self.stop.store(true, Ordering::SeqCst);
        for client in std::mem::take(&mut self.clients) {
            let _ = client.join();
        }
        let mut sent = self.sent();
        sent.sort_by_key(|r| r.start_ms);
        sent
    }
}

impl Drop for Traffic {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.watch.kill();
        let _ = self.watch.wait();
    }
}

/// The endpoints of one EndpointSlice that are ready (what a proxy sends
/// new requests to: not a terminating pod's, not an unready one's). An
/// endpoint without the condition counts as ready, as the API says.
pub fn ready_endpoints(slice: &Value) -> Vec<Endpoint> {
    let Some(port) = slice["ports"][0]["port"].as_u64().and_then(|p| u16::try_from(p).ok()) else {
        return Vec::new();
    };
    slice["endpoints"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["conditions"]["ready"] != Value::Bool(false))
        .filter_map(|e| {
            let ip: std::net::IpAddr = e["addresses"][0].as_str()?.parse().ok()?;
            let pod = e["targetRef"]["name"].as_str().unwrap_or_default().to_owned();
            Some(Endpoint { addr: SocketAddr::new(ip, port), pod })
        })
        .collect()
}

/// One `GET`: `Ok` for a whole `200` response (the workload closes the
/// connection after it), the error otherwise.
fn get(addr: SocketAddr, path: &str) -> Result<(), String> {
    // Longer than any request the tests make; a hang is a failure too.
    let response = super::http::get(addr, path, Duration::from_secs(30))?;
    if response.status != 200 {
        return Err(format!("answered {}", response.status));
    }
    match response.length {
        Some(length) if response.cut() => Err(format!("cut: {} of {length} bytes", response.body.len())),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_ready_endpoints_take_new_requests() {
        let slice = json!({
            "ports": [{"port": 8080}],
            "endpoints": [
                {"addresses": ["10.244.0.2"], "conditions": {"ready": true}, "targetRef": {"name": "a"}},
                {"addresses": ["10.244.0.3"], "conditions": {"ready": false, "serving": true, "terminating": true}, "targetRef": {"name": "b"}},
                {"addresses": ["10.244.0.4"], "conditions": {}, "targetRef": {"name": "c"}},
            ],
        });
        let ready = ready_endpoints(&slice);
        let pods: Vec<&str> = ready.iter().map(|e| e.pod.as_str()).collect();
        assert_eq!(pods, ["a", "c"], "the terminating one is out; no condition reads as ready");
        assert_eq!(ready[0].addr, "10.244.0.2:8080".parse().expect("addr"));
        assert!(ready_endpoints(&json!({"endpoints": [{"addresses": ["10.244.0.2"]}]})).is_empty(), "no port");
    }
}
