//! Seed 004 on the kubelet: deletion under traffic. Two Deployments of a
//! server whose requests take [`REQUEST_SECONDS`] (a generation, a long
//! poll), two replicas each on the node's pod network behind a Service, and
//! a client loop that sends through each Service's ready endpoints as an
//! ingress controller does (tests/src/cluster/traffic.rs). One pod of each
//! is deleted while every client has a request in flight (the pod with the
//! most of them):
//! - the one lifeguard finds clean (a native sleep preStop that bridges
//!   endpoint removal, a drain on SIGTERM that outlasts the longest
//!   request, a grace period of preStop + drain + budget) fails no request;
//! - the sleep-only, grace-too-short one (the same sleep and drain, a grace
//!   period of 4 s) is SIGKILLed 2 s after SIGTERM with requests in flight,
//!   and they fail — at the times `lifeguard simulate` gave.

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

use std::collections::BTreeMap;
use std::time::Duration;

use lifeguard_e2e::cluster::node::Node;
use lifeguard_e2e::cluster::pods::{self, now_ms, service, with_own_address, workload_container, workload_pod_spec};
use lifeguard_e2e::cluster::traffic::{Request, Traffic};
use lifeguard_e2e::support::deployment::Deployment;
use serde_json::{Value, json};

use crate::lifeguard_on;

/// Every replica's port: each pod has an address of its own.
const PORT: u16 = 8080;
/// The native sleep preStop: the bridge over endpoint removal.
const PRESTOP_SECONDS: u64 = 3;
/// The longest request.
const REQUEST_SECONDS: u64 = 8;
/// The app's drain after SIGTERM (`DRAIN_SECONDS`, which lifeguard reads):
/// it keeps serving that long, so whatever it admitted before its endpoint
/// was removed completes.
const DRAIN_SECONDS: u64 = 8;
/// The clean version's grace period: preStop + drain + the 5 s the
/// default policy wants left beside the drain (`prestopMinRemainingSeconds`).
const GOOD_GRACE: u64 = 16;
/// The short one: the sleep leaves 1 s, and the kubelet gives SIGTERM 2 s.
const BAD_GRACE: u64 = 4;
/// Clients per Service, each with one request in flight at a time.
const CLIENTS: usize = 8;
/// What `simulate` is told of the client: its endpoint changes arrive
/// within a second (a watch, no proxy sync period).
const PROPAGATION_SECONDS: &str = "1";

fn server(name: &str, grace: u64) -> Value {
    let env = [("REQUEST_SECONDS", REQUEST_SECONDS.to_string()), ("DRAIN_SECONDS", DRAIN_SECONDS.to_string())];
    let mut container = workload_container("server", PORT, &env);
    let probe = |path: &str, failures: u64| json!({"httpGet": {"path": path, "port": "http"}, "periodSeconds": 1, "failureThreshold": failures});
    container["readinessProbe"] = probe("/readyz", 3);
    // A window of 10 s: a GC pause does not restart it.
    container["livenessProbe"] = probe("/livez", 10);
    container["lifecycle"] = json!({"preStop": {"sleep": {"seconds": PRESTOP_SECONDS}}});
    container["resources"] = json!({"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"memory": "64Mi"}});
    let mut spec = with_own_address(workload_pod_spec(container));
    spec["terminationGracePeriodSeconds"] = json!(grace);
    Deployment::new(name).labelled().replicas(2).template_annotations(json!({})).pod_spec(spec).build()
}

/// `lifeguard lint` on `object`: its exit code and the rules it reported.
fn lint(object: &Value) -> (Option<i32>, Vec<String>) {
    let out = lifeguard_on(&["lint", "--format", "json", "-"], object);
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("lint: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    let rules = report.as_array().into_iter().flatten().filter_map(|f| f["rule"].as_str().map(str::to_owned)).collect();
    (out.status.code(), rules)
}

/// `lifeguard simulate --scenario delete` on `object`, with the requests'
/// length and the client's propagation: the verdict and the SIGTERM and
/// SIGKILL times (seconds after deletion).
fn simulate_delete(object: &Value) -> (String, Option<f64>, Option<f64>) {
    let request = REQUEST_SECONDS.to_string();
    let out = lifeguard_on(
        &[
            "simulate",
            "--format",
            "json",
            "--scenario",
            "delete",
            "--request-seconds",
            &request,
            "--endpoint-propagation-seconds",
            PROPAGATION_SECONDS,
            "-",
        ],
        object,
    );
    let results: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("simulate: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    let result = &results[0];
    let at = |kind: &str| {
        result["events"].as_array().into_iter().flatten().find(|e| e["event"] == kind).and_then(|e| e["t"].as_f64())
    };
    (result["verdict"].as_str().unwrap_or_default().to_owned(), at("sigterm"), at("sigkill"))
}

/// What happened to one Deployment's deleted pod.
struct Outcome {
    requests: Vec<Request>,
    deleted: String,
    deleted_at: u64,
    /// When the client's watch saw the pod leave the ready endpoints.
    removed_at: Option<u64>,
    /// The workload's own SIGTERM and exit, from its log.
    sigterm_at: Option<u64>,
    exit_at: Option<u64>,
}

impl Outcome {
    fn secs(&self, t: u64) -> f64 {
        (t as f64 - self.deleted_at as f64) / 1000.0
    }

    fn failed(&self) -> Vec<&Request> {
        self.requests.iter().filter(|r| r.outcome.is_err()).collect()
    }

    fn show(&self) -> String {
        let on_deleted = self.requests.iter().filter(|r| r.endpoint.pod == self.deleted).count();
        let failures: Vec<String> = self
            .failed()
            .iter()
            .map(|r| {
                format!(
                    "  {} {:.1}..{:.1} s: {}",
                    r.endpoint.pod,
                    self.secs(r.start_ms),
                    self.secs(r.end_ms),
                    r.outcome.as_ref().err().map_or("", String::as_str)
                )
            })
            .collect();
        let at = |t: Option<u64>| t.map_or("-".to_owned(), |t| format!("{:.1} s", self.secs(t)));
        format!(
            "{} requests ({on_deleted} to {}), {} failed{}{}\n  endpoint removed {}, SIGTERM {}, exit {}",
            self.requests.len(),
            self.deleted,
            failures.len(),
            if failures.is_empty() { "" } else { ":\n" },
            failures.join("\n"),
            at(self.removed_at),
            at(self.sigterm_at),
            at(self.exit_at),
        )
    }
}

/// Waits for two ready endpoints, starts the clients, deletes one pod once
/// every client has a request in flight, and follows it until it is gone
/// and every request sent to it has ended.
fn delete_under_traffic(node: &Node, ns: &str, name: &str) -> Outcome {
    let kubectl = &node.plane.kubectl;
    let limit = Duration::from_secs(120);
    let traffic = Traffic::start(node, ns, name, "/", CLIENTS, limit);
    lifeguard_e2e::cluster::process::wait_for(&format!("two ready endpoints of {name}"), limit, || {
        let ready = traffic.endpoints();
        if ready.len() == 2 { Ok(()) } else { Err(format!("{ready:?}")) }
    });
    // Every client has a request in flight. The clients started before the
    // pods were ready, so while only one was ready they all went to it and
    // the other may have none yet: the pod deleted is the one with the most
    // requests in flight, never simply the first endpoint.
    let deleted =
        lifeguard_e2e::cluster::process::wait_for(&format!("{CLIENTS} requests in flight to {name}"), limit, || {
            let in_flight = traffic.in_flight();
            let mut per_pod: BTreeMap<String, usize> = BTreeMap::new();
            for request in &in_flight {
                *per_pod.entry(request.endpoint.pod.clone()).or_default() += 1;
            }
            match per_pod.into_iter().max_by_key(|(_, n)| *n) {
                Some((pod, _)) if in_flight.len() == CLIENTS => Ok(pod),
                busiest => Err(format!("{} in flight, busiest {busiest:?}", in_flight.len())),
            }
        });
    let deleted_at = now_ms();
    let run = kubectl.run(&["delete", "pod", "-n", ns, &deleted, "--wait=false"]);
    assert_eq!(run.code, 0, "delete {deleted}: {}", run.stderr);
    let gone = kubectl.run(&["wait", "-n", ns, "--for=delete", &format!("pod/{deleted}"), "--timeout=60s"]);
    assert!(gone.code == 0 || gone.stderr.contains("not found"), "{deleted} gone: {}", gone.stderr);
    // Every request the pod took has ended (cut, or answered) by now; the
    // loop goes on a little, on the other replicas.
    std::thread::sleep(Duration::from_secs(2));
    let removed_at =
        traffic.changes().iter().find(|c| c.t_ms >= deleted_at && !c.pods.contains(&deleted)).map(|c| c.t_ms);
    let requests = traffic.stop();
    let log = pods::kept_pod_log(node, name, &deleted);
    let first = |event: &str| log.iter().find(|e| e.event == event && e.t_ms >= deleted_at).map(|e| e.t_ms);
    Outcome { requests, deleted, deleted_at, removed_at, sigterm_at: first("signal"), exit_at: first("exit") }
}

#[test]
fn a_clean_deployment_deleted_under_traffic_fails_no_request_and_the_short_grace_cuts_them_when_simulate_says() {
    let Some(node) = Node::shared() else { return };
    let kubectl = &node.plane.kubectl;
    let ns = "seed-drain";
    kubectl.namespace(ns, &[]);

    let good = {
        let mut spec = server("clean", GOOD_GRACE);
        pods::keep_log(&mut spec["spec"]["template"]["spec"], node, "clean");
        spec
    };
    let bad = {
        let mut spec = server("short", BAD_GRACE);
        pods::keep_log(&mut spec["spec"]["template"]["spec"], node, "short");
        spec
    };
    // What lifeguard says before the kubelet shows it.
    let (code, rules) = lint(&good);
    assert_eq!((code, rules.as_slice()), (Some(0), &[] as &[String]), "lifeguard finds the clean one clean");
    let (_, rules) = lint(&bad);
    for rule in ["grace-period-too-short", "prestop-sleep-only"] {
        assert!(rules.iter().any(|r| r == rule), "{rule} on the short one: {rules:?}");
    }
    let (good_verdict, good_sigterm, good_sigkill) = simulate_delete(&good);
    assert_eq!((good_verdict.as_str(), good_sigkill), ("ok", None), "simulate: the clean one drains");
    let (bad_verdict, bad_sigterm, bad_sigkill) = simulate_delete(&bad);
    assert_eq!(bad_verdict, "sigkill-in-flight");
    let (Some(good_sigterm), Some(bad_sigterm), Some(bad_sigkill)) = (good_sigterm, bad_sigterm, bad_sigkill) else {
        panic!("simulate gives SIGTERM and SIGKILL times: {good_sigterm:?} {bad_sigterm:?} {bad_sigkill:?}");
    };

    for object in [&good, &bad] {
        let name = object["metadata"]["name"].as_str().expect("name");
        kubectl.run_with_input(&["create", "-n", ns, "-f", "-"], Some(&object.to_string())).ok();
        kubectl.run_with_input(&["create", "-n", ns, "-f", "-"], Some(&service(name, PORT).to_string())).ok();
    }
    // One after the other: each deletion has the machine to itself.
    let clean = delete_under_traffic(node, ns, "clean");
    let short = delete_under_traffic(node, ns, "short");
    eprintln!("clean (simulate: SIGTERM {good_sigterm} s, exit, no SIGKILL):\n{}", clean.show());
    eprintln!("short (simulate: SIGTERM {bad_sigterm} s, SIGKILL {bad_sigkill} s):\n{}", short.show());

    // The tolerance of the simulate matrix: a probe period (1 s) plus 2 s.
    let tolerance = 3.0;
    let near = |observed: f64, predicted: f64| (observed - predicted).abs() <= tolerance;
    for (outcome, predicted) in [(&clean, good_sigterm), (&short, bad_sigterm)] {
        let sigterm = outcome.sigterm_at.map(|t| outcome.secs(t));
        assert!(
            sigterm.is_some_and(|s| near(s, predicted)),
            "SIGTERM when simulate said ({predicted} s):\n{}",
            outcome.show()
        );
        assert!(
            outcome.requests.iter().any(|r| r.endpoint.pod == outcome.deleted && r.start_ms < outcome.deleted_at),
            "the deleted pod had requests in flight:\n{}",
            outcome.show()
        );
    }
    assert!(clean.failed().is_empty(), "the clean one fails no request:\n{}", clean.show());
    assert!(clean.exit_at.is_some(), "the clean one exits on its own after its drain:\n{}", clean.show());

    let cut = short.failed();
    assert!(!cut.is_empty(), "the short one drops requests:\n{}", short.show());
    for request in &cut {
        assert_eq!(request.endpoint.pod, short.deleted, "only the deleted pod's requests fail:\n{}", short.show());
        let ended = short.secs(request.end_ms);
        assert!(near(ended, bad_sigkill), "cut by SIGKILL when simulate said ({bad_sigkill} s):\n{}", short.show());
    }
    assert!(short.exit_at.is_none(), "the short one never exits on its own:\n{}", short.show());
}
