//! The built workload's gRPC health service (`GRPC_PORT`), called by
//! tonic-health's generated client as the kubelet's `grpc` probes call it:
//! `grpc.health.v1.Health/Check` with a deadline and a `kube-probe` user
//! agent. Each scenario the HTTP tests show is seen here over gRPC: boot,
//! drain, a stalled dependency, the pause and the wedge; and every call is a
//! `request` line.

// Each test crate uses part of the shared harness.
#[allow(dead_code)]
mod support;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{Workload, free_port};
use tonic::Code;
use tonic::transport::{Channel, Endpoint};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

/// The kubelet's prober names itself so (grpc-go appends its own version;
/// tonic appends `tonic/x.y.z`).
const USER_AGENT: &str = "kube-probe/1.37";

/// A workload with a gRPC port besides `env`; the port is returned too.
fn start(env: &[(&str, &str)]) -> (Workload, SocketAddr) {
    let port = free_port();
    let port_text = port.to_string();
    let mut env = env.to_vec();
    env.push(("GRPC_PORT", &port_text));
    (Workload::start(&env), SocketAddr::from(([127, 0, 0, 1], port)))
}

/// One `Check` of `service` on a fresh connection within `deadline`, as a
/// probe makes it: the serving status, or the call's (or the connection's:
/// `UNAVAILABLE`) error code.
fn check(addr: SocketAddr, service: &str, deadline: Duration) -> Result<ServingStatus, Code> {
    let request = HealthCheckRequest { service: service.to_owned() };
    call(addr, deadline, async |mut client| {
        let response = client.check(request).await.map_err(|status| status.code())?;
        Ok(response.into_inner().status())
    })
}

/// What a `Watch` of `service` gets: its error code (none is served).
fn watch(addr: SocketAddr, service: &str) -> Code {
    let request = HealthCheckRequest { service: service.to_owned() };
    call(addr, Duration::from_secs(10), async |mut client| {
        client.watch(request).await.map(|_| ()).map_err(|s| s.code())
    })
    .err()
    .unwrap_or(Code::Ok)
}

/// Runs `rpc` with a client on a fresh connection to `addr` whose calls
/// have `deadline`; a connection that fails is `UNAVAILABLE`.
fn call<T>(
    addr: SocketAddr,
    deadline: Duration,
    rpc: impl AsyncFnOnce(HealthClient<Channel>) -> Result<T, Code>,
) -> Result<T, Code> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
    runtime.block_on(async {
        let endpoint = Endpoint::from_shared(format!("http://{addr}"))
            .expect("a valid URI")
            .user_agent(USER_AGENT)
            .expect("a valid user agent")
            .connect_timeout(Duration::from_secs(2))
            .timeout(deadline);
        let channel = endpoint.connect().await.map_err(|_| Code::Unavailable)?;
        rpc(HealthClient::new(channel)).await
    })
}

/// [`check`] with a deadline long enough for any answer.
fn status(addr: SocketAddr, service: &str) -> Result<ServingStatus, Code> {
    check(addr, service, Duration::from_secs(10))
}

/// Polls `liveness` until it answers, up to `limit`.
fn wait_grpc_serving(addr: SocketAddr, limit: Duration) {
    let start = Instant::now();
    loop {
        match check(addr, "liveness", Duration::from_secs(5)) {
            Ok(ServingStatus::Serving) => return,
            result => assert!(start.elapsed() < limit, "gRPC not serving within {limit:?}: {result:?}"),
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A call that the deadline ended: tonic's server answers
/// `DEADLINE_EXCEEDED` at the `grpc-timeout` the client sent, tonic's client
/// gives up with `CANCELLED` at its own timeout; whichever comes first (the
/// kubelet's grpc-go client reports `DEADLINE_EXCEEDED` either way).
fn assert_no_answer(result: Result<ServingStatus, Code>) {
    assert!(matches!(result, Err(Code::DeadlineExceeded | Code::Cancelled)), "answered: {result:?}");
}

/// The `request` line of the `nth` call (0: the first) naming `service`.
fn request_line(workload: &Workload, service: &str, nth: usize) -> Value {
    let path = format!("grpc:{service}");
    let start = Instant::now();
    loop {
        let lines: Vec<Value> =
            workload.events().into_iter().filter(|e| e["event"] == "request" && e["path"] == path.as_str()).collect();
        if let Some(line) = lines.get(nth) {
            return line.clone();
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "no line {nth} for {path}; the log:\n{:#?}",
            workload.events()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn answers_as_the_http_endpoints_logs_each_call_and_fails_readiness_once_draining() {
    let (mut workload, grpc) = start(&[("BOOT_SECONDS", "1"), ("DRAIN_SECONDS", "2")]);
    let start = workload.wait_event("start", Duration::from_secs(5), |_| true);
    assert_eq!(start["grpc_port"], grpc.port());
    // Booting: the gRPC port is not bound either.
    assert_eq!(status(grpc, "liveness"), Err(Code::Unavailable), "answered while booting");

    wait_grpc_serving(grpc, Duration::from_secs(10));
    let listening = workload.wait_event("listening", Duration::from_secs(1), |_| true);
    assert_eq!(listening["grpc_port"], grpc.port());
    for service in ["", "readiness", "liveness", "healthz"] {
        assert_eq!(status(grpc, service), Ok(ServingStatus::Serving), "service {service:?}");
    }
    assert_eq!(status(grpc, "nothing"), Err(Code::NotFound), "an unknown service");
    assert_eq!(status(grpc, "Liveness"), Err(Code::NotFound), "names are exact");
    assert_eq!(watch(grpc, "liveness"), Code::Unimplemented, "the kubelet calls Check only");

    let line = request_line(&workload, "readiness", 0);
    assert_eq!((&line["method"], &line["status"]), (&Value::from("Check"), &Value::from("SERVING")), "{line}");
    assert!(line["user_agent"].as_str().is_some_and(|ua| ua.starts_with(USER_AGENT)), "{line}");
    assert!(line["received_ms"].as_u64() <= line["t_ms"].as_u64(), "{line}");
    assert_eq!(line.get("held_ms"), None, "{line}");
    assert_eq!(request_line(&workload, "", 0)["status"], "SERVING");
    assert_eq!(request_line(&workload, "nothing", 0)["status"], "NOT_FOUND");
    let watched = workload.wait_event("request", Duration::from_secs(2), |e| e["method"] == "Watch");
    assert_eq!((&watched["path"], &watched["status"]), (&Value::from("grpc:liveness"), &Value::from("UNIMPLEMENTED")));
    // The HTTP server is still there beside it.
    assert_eq!(support::probe(workload.addr, "/readyz").0, 200);

    workload.signal("TERM");
    workload.wait_event("signal", Duration::from_secs(5), |e| e["starts_drain"] == true);
    // Draining: not ready, still alive; the shared handler ignores the drain,
    // as `/healthz` does.
    assert_eq!(status(grpc, "readiness"), Ok(ServingStatus::NotServing));
    assert_eq!(status(grpc, ""), Ok(ServingStatus::NotServing));
    assert_eq!(status(grpc, "liveness"), Ok(ServingStatus::Serving));
    assert_eq!(status(grpc, "healthz"), Ok(ServingStatus::Serving));
    assert_eq!(request_line(&workload, "readiness", 1)["status"], "NOT_SERVING");
    assert_eq!(support::probe(workload.addr, "/readyz").0, 503, "and HTTP agrees");

    assert_eq!(workload.wait_exit(Duration::from_secs(6)).code(), Some(0));
}

#[test]
fn readiness_and_healthz_fail_on_a_stalled_dependency_and_liveness_does_not() {
    // Accepted by the kernel (the backlog), never answered.
    let dependency = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let address = dependency.local_addr().expect("its address").to_string();
    let (workload, grpc) = start(&[("DEPENDENCY", &address), ("DEPENDENCY_TIMEOUT_SECONDS", "1")]);
    wait_grpc_serving(grpc, Duration::from_secs(10));

    for service in ["readiness", "healthz"] {
        let asked = Instant::now();
        assert_eq!(status(grpc, service), Ok(ServingStatus::NotServing), "{service}");
        let took = asked.elapsed();
        assert!(took >= Duration::from_millis(950) && took < Duration::from_secs(5), "{service}: {took:?}");
        let line = request_line(&workload, service, 0);
        assert_eq!(line["status"], "NOT_SERVING");
        assert!(line["dependency"].as_str().is_some_and(|d| d.starts_with("dependency failed: timed out")), "{line}");
    }
    let asked = Instant::now();
    assert_eq!(status(grpc, "liveness"), Ok(ServingStatus::Serving));
    assert!(asked.elapsed() < Duration::from_millis(900), "liveness waited for the dependency");
    drop(dependency);
}

#[test]
fn the_pause_holds_a_call_and_the_wedge_hangs_it() {
    let (workload, grpc) = start(&[("PAUSE", "0:2"), ("WEDGE_AFTER", "3")]);
    workload.wait_event("listening", Duration::from_secs(5), |_| true);

    // In the pause: a probe whose deadline ends first fails...
    assert_no_answer(check(grpc, "liveness", Duration::from_millis(300)));
    // ...and one that waits is answered when the pause ends.
    assert_eq!(status(grpc, "liveness"), Ok(ServingStatus::Serving));
    let resumed = workload.wait_event("resumed", Duration::from_secs(1), |_| true);
    // Both are answered when the pause ends, their lines in either order.
    let mut calls = [request_line(&workload, "liveness", 0), request_line(&workload, "liveness", 1)];
    calls.sort_by_key(|line| line["received_ms"].as_u64());
    let [cut, held] = calls;
    assert!(held["held_ms"].as_u64().is_some_and(|ms| ms > 500), "{held}");
    assert!(held["t_ms"].as_u64() >= resumed["t_ms"].as_u64(), "answered during the pause: {held} {resumed}");
    assert_eq!(held.get("write_error"), None, "{held}");
    // The first call is decided and logged all the same, its client gone.
    assert_eq!(cut["status"], "SERVING");
    assert_eq!(cut["write_error"], "the client cancelled the call", "{cut}");

    workload.wait_event("wedged", Duration::from_secs(3), |_| true);
    let asked = Instant::now();
    assert_no_answer(check(grpc, "liveness", Duration::from_millis(500)));
    assert!(asked.elapsed() >= Duration::from_millis(450), "gave up after {:?}", asked.elapsed());
    assert_eq!(request_line(&workload, "liveness", 2)["status"], "hung");
}
