//! `lifeguard simulate` against the kubelet: each case is a pod of the test
//! workload whose behaviour enacts one scenario (a slow boot, a dependency
//! stall, a pause, a wedge, a deletion), run on the real node, and what the
//! kubelet did (read from the workload's own log of probes and signals and
//! from the pod's status) is set beside `lifeguard simulate --format json`
//! for the same pod: the number of restarts, their times, readiness changes,
//! SIGTERM and SIGKILL, each within one probe period plus 2 s of the
//! simulation's best-to-worst range.
//!
//! The table of the cases goes in docs/simulate.md between the
//! `kubelet-matrix` markers; `LIFEGUARD_BLESS=1` rewrites it from this run.
//! The lifecycle's cases (postStart, readiness gates, the stop signal) and
//! what they read beyond the others are in `node_simulate/lifecycle.rs`.

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

// A crate root's modules sit beside it; this one is kept under the test's name.
#[path = "node_simulate/lifecycle.rs"]
mod lifecycle;
#[path = "node_simulate/pod.rs"]
mod pod;

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use lifeguard_e2e::cluster::dependency::Dependency;
use lifeguard_e2e::cluster::node::Node;
use lifeguard_e2e::cluster::pods::{self, PodWatch, bare_pod, now_ms, workload_container, workload_pod_spec};
use lifeguard_e2e::cluster::process::{free_port, poll_for};
use lifeguard_e2e::cluster::webhook::workspace_binary;
use lifeguard_e2e::repo_root;
use serde_json::{Value, json};

/// What the test does to the pod, and so where its time 0 is.
#[derive(Clone, Copy, Debug)]
enum Act {
    /// Nothing: 0 is the first container's start (a boot).
    Boot,
    /// The pod's own disruption (pause, wedge) starts at the workload's
    /// logged event of that name.
    Own(&'static str),
    /// The dependency stalls for this many seconds once the pod is Ready.
    Stall(u64),
    /// The pod is deleted once Ready, with this grace period if given
    /// (`kubectl delete --grace-period`), else its own.
    Delete(Option<u64>),
    /// As `Boot`, and the test sets the pod's readiness gate True this many
    /// seconds after its container is first ready, as a load balancer's
    /// controller would.
    Gate(u64),
}

/// One case of the matrix.
struct Case {
    name: &'static str,
    /// Pod annotations (what a user states for `simulate`). A deletion's
    /// case states the workload's shutdown (0 s: it exits at SIGTERM once
    /// its drain, if any, is done), which simulate otherwise takes as the
    /// policy's `prestopMinRemainingSeconds`.
    annotations: Value,
    what: &'static str,
    scenario: &'static str,
    container: Value,
    grace: Option<u64>,
    act: Act,
    /// How long the kubelet is watched from time 0.
    observe: u64,
}

fn probe(path: &str, period: u64, failures: u64) -> Value {
    json!({"httpGet": {"path": path, "port": "http"}, "periodSeconds": period, "failureThreshold": failures, "timeoutSeconds": 1})
}

/// `p` (a liveness probe) held back for the first second of each
/// container, so the kubelet's first check of it comes no earlier than the
/// model's (1 s: `STARTED_SEEN_MS`).
///
/// The kubelet may probe a new container before its process has bound the
/// port, before it has even reached `main`: the relist reports a container
/// running once the runtime has started it, and a probe worker whose tick
/// falls then sends a check that is refused (seen here: readiness refused
/// 110 ms before the workload logged its start, with 26 pods starting on two
/// cores). With `failureThreshold: 1` that one refusal kills the container
/// at its start (what `liveness-too-aggressive` reports), which a scenario
/// about a stall would take for its own and whose back-off it would carry:
/// the disagreement CI once saw. docs/simulate.md, Limits.
fn held_back(mut p: Value) -> Value {
    p["initialDelaySeconds"] = json!(1);
    p
}

fn container(env: &[(&str, String)], probes: &[(&str, Value)]) -> Value {
    let mut c = workload_container("server", 0, env);
    for (kind, p) in probes {
        c[*kind] = p.clone();
    }
    c
}

fn s(value: &str) -> String {
    value.to_owned()
}

/// The matrix. Periods of 1-2 s keep every case within a minute or two.
fn cases() -> Vec<Case> {
    let live = |path: &str| ("livenessProbe", probe(path, 2, 3));
    let ready = |path: &str| ("readinessProbe", probe(path, 2, 1));
    let dependency = || ("DEPENDENCY", s("127.0.0.1:0"));
    vec![
        Case {
            annotations: json!({}),
            name: "boot-no-startup",
            what: "12 s boot, liveness 2 s x 3, no startup probe",
            scenario: "boot:12s",
            container: container(&[("BOOT_SECONDS", s("12"))], &[live("/livez"), ready("/readyz")]),
            grace: Some(5),
            act: Act::Boot,
            // Up to the first back-off: after it, the kubelet's jitter decides
            // whether the next kill waits again (docs/simulate.md, Limits).
            observe: 30,
        },
        Case {
            annotations: json!({}),
            name: "boot-startup",
            what: "12 s boot, startup 2 s x 10 before liveness",
            scenario: "boot:12s",
            container: container(
                &[("BOOT_SECONDS", s("12"))],
                &[("startupProbe", probe("/livez", 2, 10)), live("/livez"), ready("/readyz")],
            ),
            grace: Some(5),
            act: Act::Boot,
            observe: 25,
        },
        Case {
            annotations: json!({}),
            name: "startup-never",
            what: "a boot longer than the startup window (2 s x 3)",
            scenario: "boot:600s",
            container: container(
                &[("BOOT_SECONDS", s("600"))],
                &[("startupProbe", probe("/livez", 2, 3)), live("/livez"), ready("/readyz")],
            ),
            grace: Some(5),
            act: Act::Boot,
            // Up to the first back-off: after it, the kubelet's jitter decides
            // whether the next kill waits again (docs/simulate.md, Limits).
            observe: 30,
        },
        Case {
            annotations: json!({}),
            name: "liveness-delay",
            what: "8 s boot, liveness initialDelaySeconds 10",
            scenario: "boot:8s",
            container: container(
                &[("BOOT_SECONDS", s("8"))],
                &[
                    ("livenessProbe", {
                        let mut p = probe("/livez", 2, 3);
                        p["initialDelaySeconds"] = json!(10);
                        p
                    }),
                    ready("/readyz"),
                ],
            ),
            grace: Some(5),
            act: Act::Boot,
            observe: 25,
        },
        Case {
            // The workload's /healthz checks the dependency, which the
            // manifest cannot show: stated, as a user states it.
            annotations: json!({"lifeguard.dev/probe-checks": "readiness=dependency"}),
            name: "stall-shared",
            // 2 s: one kill per offset. In a longer stall the model fits a
            // second kill 2 s after the first (its restart is at once), which
            // a kubelet restarting a container under the matrix's load (1-2 s)
            // can push past the stall's end.
            what: "2 s dependency stall, liveness and readiness on one handler (1 s x 1, liveness from 1 s)",
            scenario: "stall:2s",
            container: container(
                &[dependency()],
                &[("livenessProbe", held_back(probe("/healthz", 1, 1))), ("readinessProbe", probe("/healthz", 1, 1))],
            ),
            grace: Some(5),
            act: Act::Stall(2),
            observe: 30,
        },
        Case {
            annotations: json!({}),
            name: "stall-separated",
            what: "4 s dependency stall, local liveness (from 1 s), readiness on the dependency",
            scenario: "stall:4s",
            container: container(
                &[dependency()],
                &[("livenessProbe", held_back(probe("/livez", 1, 1))), ("readinessProbe", probe("/readyz", 1, 1))],
            ),
            grace: Some(5),
            act: Act::Stall(4),
            observe: 15,
        },
        Case {
            annotations: json!({}),
            name: "pause-short",
            what: "3 s pause, liveness 2 s x 3",
            scenario: "pause:3s",
            container: container(&[("PAUSE", s("6:3"))], &[live("/livez"), ready("/readyz")]),
            grace: Some(5),
            act: Act::Own("paused"),
            observe: 15,
        },
        Case {
            annotations: json!({}),
            name: "pause-long",
            what: "10 s pause, liveness 2 s x 3",
            scenario: "pause:10s",
            container: container(&[("PAUSE", s("6:10"))], &[live("/livez"), ready("/readyz")]),
            grace: Some(5),
            act: Act::Own("paused"),
            observe: 20,
        },
        Case {
            annotations: json!({}),
            name: "wedge-http",
            what: "a wedge, liveness httpGet",
            scenario: "wedge",
            container: container(&[("WEDGE_AFTER", s("6"))], &[live("/livez"), ready("/readyz")]),
            grace: Some(5),
            act: Act::Own("wedged"),
            observe: 20,
        },
        Case {
            annotations: json!({}),
            name: "wedge-grpc",
            what: "a wedge, liveness grpc (the health service's liveness)",
            scenario: "wedge",
            container: container(
                &[("WEDGE_AFTER", s("6")), ("GRPC_PORT", s("0"))],
                &[
                    (
                        "livenessProbe",
                        json!({"grpc": {"port": 0, "service": "liveness"}, "periodSeconds": 2, "failureThreshold": 3, "timeoutSeconds": 1}),
                    ),
                    ready("/readyz"),
                ],
            ),
            grace: Some(5),
            act: Act::Own("wedged"),
            observe: 20,
        },
        Case {
            annotations: json!({}),
            name: "wedge-tcp",
            what: "a wedge, liveness tcpSocket",
            scenario: "wedge",
            container: container(
                &[("WEDGE_AFTER", s("6"))],
                &[
                    (
                        "livenessProbe",
                        json!({"tcpSocket": {"port": "http"}, "periodSeconds": 2, "failureThreshold": 3}),
                    ),
                    ready("/readyz"),
                ],
            ),
            grace: Some(5),
            act: Act::Own("wedged"),
            observe: 20,
        },
        Case {
            annotations: json!({"lifeguard.dev/shutdown-budget-seconds": "0"}),
            name: "delete-sleep",
            what: "deletion: native sleep preStop 5 s, grace 10",
            scenario: "delete",
            container: {
                let mut c = container(&[], &[live("/livez"), ready("/readyz")]);
                c["lifecycle"] = json!({"preStop": {"sleep": {"seconds": 5}}});
                c
            },
            grace: Some(10),
            act: Act::Delete(None),
            observe: 15,
        },
        Case {
            annotations: json!({}),
            name: "delete-drain-too-slow",
            what: "deletion: a 12 s drain, grace 5",
            scenario: "delete",
            container: container(&[("DRAIN_SECONDS", s("12"))], &[live("/livez"), ready("/readyz")]),
            grace: Some(5),
            act: Act::Delete(None),
            observe: 10,
        },
        Case {
            annotations: json!({}),
            name: "stall-timeout-long",
            what: "3 s dependency stall, liveness on the dependency with timeoutSeconds 5 (from 1 s)",
            scenario: "stall:3s",
            container: container(
                &[dependency()],
                &[
                    ("livenessProbe", {
                        let mut p = held_back(probe("/healthz", 2, 1));
                        p["timeoutSeconds"] = json!(5);
                        p
                    }),
                    ready("/livez"),
                ],
            ),
            grace: Some(5),
            act: Act::Stall(3),
            observe: 15,
        },
        Case {
            annotations: json!({}),
            name: "probe-grace",
            what: "a wedge, liveness terminationGracePeriodSeconds 2 in a pod of 30",
            scenario: "wedge",
            container: container(
                &[("WEDGE_AFTER", s("6"))],
                &[
                    ("livenessProbe", {
                        let mut p = probe("/livez", 2, 3);
                        p["terminationGracePeriodSeconds"] = json!(2);
                        p
                    }),
                    ready("/readyz"),
                ],
            ),
            grace: Some(30),
            act: Act::Own("wedged"),
            observe: 15,
        },
        Case {
            annotations: json!({"lifeguard.dev/shutdown-budget-seconds": "0", "lifeguard.dev/prestop-seconds": "5"}),
            name: "delete-exec-prestop",
            what: "deletion: an exec preStop of 5 s (stated), grace 10",
            scenario: "delete",
            container: {
                let mut c = container(&[], &[live("/livez"), ready("/readyz")]);
                c["lifecycle"] =
                    json!({"preStop": {"exec": {"command": ["/lifeguard-test-workload", "prestop", "5"]}}});
                c
            },
            grace: Some(10),
            act: Act::Delete(None),
            observe: 15,
        },
        Case {
            annotations: json!({"lifeguard.dev/shutdown-budget-seconds": "0", "lifeguard.dev/prestop-seconds": "5"}),
            name: "delete-http-prestop",
            what: "deletion: an httpGet preStop of 5 s (stated), grace 10",
            scenario: "delete",
            container: {
                let mut c = container(&[("PRESTOP_SECONDS", s("5"))], &[live("/livez"), ready("/readyz")]);
                // With the host's network the runtime reports no pod IP, and
                // a hook without `host` fails at once ("failed to find
                // networking container", lifecycle/handlers.go): name it.
                c["lifecycle"] =
                    json!({"preStop": {"httpGet": {"host": "127.0.0.1", "path": "/prestop", "port": "http"}}});
                c
            },
            grace: Some(10),
            act: Act::Delete(None),
            observe: 15,
        },
        Case {
            // Stated 5 s, as a user who never saw the hook fail would.
            annotations: json!({"lifeguard.dev/shutdown-budget-seconds": "0", "lifeguard.dev/prestop-seconds": "5"}),
            name: "delete-prestop-unresolved",
            what: "deletion: an httpGet preStop to a port name the container does not declare (stated 5 s), grace 10",
            scenario: "delete",
            container: {
                let mut c = container(&[("PRESTOP_SECONDS", s("5"))], &[live("/livez"), ready("/readyz")]);
                c["lifecycle"] =
                    json!({"preStop": {"httpGet": {"host": "127.0.0.1", "path": "/prestop", "port": "admin"}}});
                c
            },
            grace: Some(10),
            act: Act::Delete(None),
            observe: 12,
        },
        Case {
            annotations: json!({"lifeguard.dev/prestop-seconds": "15"}),
            name: "delete-prestop-past-grace",
            what: "deletion: an exec preStop of 15 s (stated), grace 5, a 10 s drain",
            scenario: "delete",
            container: {
                // The API server refuses a native sleep as long as the grace
                // period; an exec hook may run past it.
                let mut c = container(&[("DRAIN_SECONDS", s("10"))], &[live("/livez"), ready("/readyz")]);
                c["lifecycle"] =
                    json!({"preStop": {"exec": {"command": ["/lifeguard-test-workload", "prestop", "15"]}}});
                c
            },
            grace: Some(5),
            act: Act::Delete(None),
            observe: 12,
        },
        Case {
            annotations: json!({}),
            name: "crash-loop",
            what: "the app exits by itself 3 s after each start",
            scenario: "crash:3s",
            container: container(&[("CRASH_AFTER", s("3"))], &[live("/livez"), ready("/readyz")]),
            grace: Some(5),
            act: Act::Boot,
            observe: 45,
        },
        Case {
            annotations: json!({}),
            name: "delete-grace-override",
            what: "deletion with --grace-period=3: native sleep preStop 5 s, grace 10, a 4 s drain",
            scenario: "delete",
            container: {
                let mut c = container(&[("DRAIN_SECONDS", s("4"))], &[live("/livez"), ready("/readyz")]);
                c["lifecycle"] = json!({"preStop": {"sleep": {"seconds": 5}}});
                c
            },
            grace: Some(10),
            act: Act::Delete(Some(3)),
            observe: 10,
        },
    ]
    .into_iter()
    .chain(lifecycle::cases())
    .chain(pod::cases())
    .collect()
}

/// Seconds from `t0_ms` to `t_ms`.
fn since(t0_ms: u64, t_ms: u64) -> f64 {
    (t_ms as f64 - t0_ms as f64) / 1000.0
}

/// What the kubelet did to one case's pod, in seconds from the case's 0.
#[derive(Debug, Default)]
struct Observed {
    /// SIGTERMs the workload received (kills and deletion).
    sigterms: Vec<f64>,
    /// Container starts after the first.
    restarts: Vec<f64>,
    /// Readiness changes: (time, ready).
    readiness: Vec<(f64, bool)>,
    /// The workload's own exit, if it logged one after SIGTERM.
    exited: Option<f64>,
    /// When the workload was last heard of, if it did not exit by itself
    /// (SIGKILL comes within the drain's 200 ms tick after).
    killed: Option<f64>,
    /// What the lifecycle's cases read beyond the others.
    lifecycle: lifecycle::Seen,
    /// When each container of a pod case first started.
    starts: Vec<(String, f64)>,
    /// A deleted pod case's other containers' SIGTERM and exit.
    stops: Vec<pod::Stop>,
    /// The requests through a pod case's Service that failed (start, end),
    /// where it sends any.
    failed: Option<Vec<(f64, f64)>>,
    /// Kills and restarts before the scenario's time 0 (a disruption or a
    /// deletion of a pod that was serving): outside the scenario, so what
    /// follows is no test of the model.
    outside: Vec<String>,
}

/// What `lifeguard simulate` said of the case.
#[derive(Debug, Default)]
struct Predicted {
    restarts_best: usize,
    /// Event times by event name (the worst offset's timeline).
    events: Vec<(f64, String)>,
    /// The CrashLoopBackOff delay each start waited, by its time.
    backoffs: Vec<(f64, f64)>,
    best_restart_at: Option<f64>,
    worst_restart_at: Option<f64>,
    verdict: String,
    /// What it said of the lifecycle beyond the others.
    lifecycle: lifecycle::Said,
    /// When it starts each container of a pod of several (its `pod`).
    starts: Vec<(String, f64)>,
    /// In a deletion, when it stops each container of a pod of several.
    stops: Vec<pod::Stop>,
}

fn simulate(case: &Case, pod: &Value, dir: &Path) -> Predicted {
    let file = dir.join(format!("{}.yaml", case.name));
    std::fs::write(&file, pod.to_string()).expect("write the case's pod");
    let binary = workspace_binary("lifeguard", "lifeguard").expect("the lifeguard binary");
    let out = std::process::Command::new(binary)
        .args(["simulate", "--format", "json", "--scenario", case.scenario])
        .args(match case.act {
            Act::Delete(Some(grace)) => vec![format!("--delete-grace-seconds={grace}")],
            _ => Vec::new(),
        })
        .arg(&file)
        .output()
        .expect("run lifeguard simulate");
    let text = String::from_utf8_lossy(&out.stdout);
    let results: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{}: simulate said {e}: {text}{}", case.name, String::from_utf8_lossy(&out.stderr)));
    let result = &results[0];
    let count = |which: &str| result[which]["restarts"].as_u64().unwrap_or(0) as usize;
    let at = |which: &str| result[which]["restart_at"].as_f64();
    // A pod of several containers: its own events say when it is in the
    // endpoints, and a container's first start (after the pod's 0, behind
    // a sidecar) is no restart.
    // A deleted pod's endpoint is terminating at once (its `out` from 0, as
    // a one-container deletion's endpoint removal); its Ready condition,
    // which the matrix reads, follows the probes: not compared.
    let deleted = matches!(case.act, Act::Delete(_));
    let pod_events = result["pod"]["events"].as_array().into_iter().flatten().filter(|_| !deleted);
    let mut events: Vec<(f64, String)> = result["events"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(pod_events)
        .filter_map(|e| Some((e["t"].as_f64()?, e["event"].as_str()?.to_owned())))
        .collect();
    if result["pod"].is_object() {
        if let Some(first) = events.iter().position(|(_, e)| e == "started") {
            events.remove(first);
        }
    }
    Predicted {
        restarts_best: count("best"),
        events,
        backoffs: backoffs(&result["events"]),
        best_restart_at: at("best"),
        worst_restart_at: at("worst"),
        verdict: result["verdict"].as_str().unwrap_or_default().to_owned(),
        lifecycle: lifecycle::Said::of(result),
        // A deletion starts nothing: its pod's starts are not compared.
        starts: if matches!(case.act, Act::Delete(_)) { Vec::new() } else { pod::predicted_starts(result) },
        stops: pod::predicted_stops(result),
    }
}

/// (start time, delay) for each start that followed a back-off: a back-off
/// event's delay ends at the next `started`.
fn backoffs(events: &Value) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut waiting = None;
    for e in events.as_array().into_iter().flatten() {
        match e["event"].as_str() {
            Some("back-off") => {
                waiting = e["detail"]
                    .as_str()
                    .and_then(|d| d.strip_prefix("CrashLoopBackOff "))
                    .and_then(|d| d.strip_suffix('s'))
                    .and_then(|d| d.parse::<f64>().ok());
            }
            Some("started") => {
                if let (Some(delay), Some(t)) = (waiting.take(), e["t"].as_f64()) {
                    out.push((t, delay));
                }
            }
            _ => {}
        }
    }
    out
}

fn pod_for(node: &Node, case: &Case, dependency: &Dependency) -> Value {
    let mut container = case.container.clone();
    let port = free_port();
    container["ports"][0]["containerPort"] = json!(port);
    // gRPC probes name a port by number only: the case's own, then every
    // gRPC probe pointed at it.
    let grpc_port = free_port();
    for var in container["env"].as_array_mut().into_iter().flatten() {
        match var["name"].as_str() {
            Some("PORT") => var["value"] = json!(port.to_string()),
            Some("GRPC_PORT") => var["value"] = json!(grpc_port.to_string()),
            Some("DEPENDENCY") => var["value"] = json!(dependency.addr.to_string()),
            _ => {}
        }
    }
    for kind in ["startupProbe", "livenessProbe", "readinessProbe"] {
        if container[kind]["grpc"].is_object() {
            container[kind]["grpc"]["port"] = json!(grpc_port);
        }
    }
    let mut spec = workload_pod_spec(container);
    if let Some(grace) = case.grace {
        spec["terminationGracePeriodSeconds"] = json!(grace);
    }
    lifecycle::pod_spec(case, &mut spec);
    pod::pod_spec(case, &mut spec);
    pods::keep_log(&mut spec, node, case.name);
    let mut pod = bare_pod(case.name, spec);
    pod["metadata"]["annotations"] = case.annotations.clone();
    pod
}

/// The case's workload's kept log, a line per event, for a failure.
fn workload_log(node: &Node, case: &Case) -> String {
    pods::kept_log(node, case.name).iter().map(|e| e.line.to_string()).collect::<Vec<_>>().join("\n")
}

/// When the case's workload first logged `event`, waiting at most `limit`;
/// otherwise panics naming the case, with the pod's conditions and
/// containers' states (a pod the scheduler cannot place says why there).
fn first_logged(node: &Node, ns: &str, case: &Case, event: &str, limit: Duration) -> u64 {
    let logged =
        poll_for(limit, || pods::kept_log(node, case.name).iter().find(|e| e.event == event).map(|e| e.t_ms).ok_or(()));
    logged.unwrap_or_else(|()| {
        let run = node.plane.kubectl.run(&["get", "pod", case.name, "-n", ns, "-o", "json"]);
        let status = if run.code == 0 {
            let pod = run.json();
            json!({"nodeName": pod["spec"]["nodeName"], "status": pod["status"]}).to_string()
        } else {
            run.stderr
        };
        panic!(
            "case {}: no {event} logged within {limit:?}; the pod: {status}\nthe workload's log:\n{}\n{}",
            case.name,
            workload_log(node, case),
            pods::kubelet_account(node, ns, case.name, 40)
        )
    })
}

/// Runs `case` on the node and reads what happened.
fn observe(node: &Node, ns: &str, case: &Case, pod: &Value, watch: &PodWatch, dependency: &Dependency) -> Observed {
    let kubectl = &node.plane.kubectl;
    let created = kubectl.run_with_input(&["create", "-n", ns, "-f", "-"], Some(&pod.to_string()));
    assert!(created.code == 0, "case {}: {}: {}", case.name, created.command, created.stderr);
    let log = || pods::kept_log(node, case.name);
    let ready_within = Duration::from_secs(60);
    let mut stop_signal_kept = None;
    let mut traffic = None;
    let t0 = match case.act {
        Act::Boot => first_logged(node, ns, case, "start", ready_within),
        Act::Gate(seconds) => {
            let t0 = first_logged(node, ns, case, "start", ready_within);
            lifecycle::set_gate_after_ready(node, ns, case, seconds, log);
            t0
        }
        Act::Own(event) => first_logged(node, ns, case, event, ready_within),
        Act::Stall(seconds) => {
            watch.until(case.name, ready_within, |seen| seen.iter().any(|(_, s)| s.ready));
            // Some periods of steady state first, so the probes run on their grid.
            std::thread::sleep(Duration::from_secs(3));
            let t0 = now_ms();
            dependency.stall_for(Duration::from_secs(seconds));
            t0
        }
        Act::Delete(grace) => {
            watch.until(case.name, ready_within, |seen| seen.iter().any(|(_, s)| s.ready));
            stop_signal_kept = lifecycle::stop_signal_kept(node, ns, case);
            traffic = pod::traffic(node, ns, case, pod);
            std::thread::sleep(Duration::from_secs(2));
            let t0 = now_ms();
            let grace = grace.map(|g| format!("--grace-period={g}"));
            let mut args = vec!["delete", "pod", case.name, "-n", ns, "--wait=false"];
            args.extend(grace.as_deref());
            kubectl.run(&args).ok();
            t0
        }
    };
    let end = t0 + case.observe * 1000;
    std::thread::sleep(Duration::from_millis(end.saturating_sub(now_ms())));
    // A pod case's 0 is its first container's start (a sidecar's, before
    // the app's), watched as long from the app's; a deletion's stays the
    // deletion.
    let others = if matches!(case.act, Act::Boot) { pod::other_starts(node, case) } else { Vec::new() };
    let main_start = matches!(case.act, Act::Boot).then_some(t0);
    let t0 = others.iter().map(|(_, t)| *t).chain([t0]).min().unwrap_or(t0);
    let events = log();
    let within = |t: u64| t >= t0 && t <= end;
    let readiness = watch
        .of(case.name)
        .iter()
        .filter(|(t, _)| within(*t))
        .scan(None, |last, (t, s)| {
            let change = (*last != Some(s.ready)).then(|| (since(t0, *t), s.ready));
            *last = Some(s.ready);
            Some(change)
        })
        .flatten()
        .collect();
    let deletion = matches!(case.act, Act::Delete(_));
    // A boot's 0 is the first start: nothing comes before it.
    let outside = match case.act {
        Act::Boot | Act::Gate(_) => Vec::new(),
        Act::Own(_) | Act::Stall(_) | Act::Delete(_) => events
            .iter()
            .filter(|e| e.t_ms < t0)
            .filter_map(|e| match e.event.as_str() {
                "signal" => Some(format!("SIGTERM at {:.3} s", since(t0, e.t_ms))),
                "start" if e.incarnation > 0 => Some(format!("started again at {:.3} s", since(t0, e.t_ms))),
                _ => None,
            })
            .collect(),
    };
    let exited = events.iter().find(|e| e.event == "exit" && within(e.t_ms)).map(|e| since(t0, e.t_ms));
    Observed {
        sigterms: events.iter().filter(|e| e.event == "signal" && within(e.t_ms)).map(|e| since(t0, e.t_ms)).collect(),
        restarts: events
            .iter()
            .filter(|e| e.event == "start" && e.incarnation > 0 && within(e.t_ms))
            .map(|e| since(t0, e.t_ms))
            .collect(),
        readiness,
        exited: exited.filter(|_| deletion),
        // No exit of its own: the last line it wrote (a heartbeat comes
        // every 200 ms from SIGTERM on) dates the SIGKILL.
        killed: events.last().map(|e| since(t0, e.t_ms)).filter(|_| deletion && exited.is_none()),
        lifecycle: lifecycle::seen(node, ns, case, &events, (t0, end), stop_signal_kept),
        outside,
        starts: if others.is_empty() { Vec::new() } else { pod::starts_since(t0, main_start, &others) },
        stops: if deletion { pod::other_stops(node, case, t0) } else { Vec::new() },
        failed: traffic.map(|t| pod::failures(t, t0)),
    }
}

/// Every way `observed` disagrees with `predicted` beyond `tolerance`
/// seconds.
fn disagreements(case: &Case, predicted: &Predicted, observed: &Observed, tolerance: f64) -> Vec<String> {
    let mut out = Vec::new();
    let window = case.observe as f64;
    // After a back-off the pod worker wakes up to half the delay late
    // (pod_workers.go: `wait.Jitter(backoff, 0.5)`): the model gives the
    // earliest start, and everything after it may come that much later, the
    // lateness of every back-off before adding up.
    let jitter = |t: f64| predicted.backoffs.iter().filter(|(at, _)| *at <= t).map(|(_, d)| d / 2.0).sum::<f64>();
    // A crash is the app's own exit: no SIGTERM; its restarts are counted.
    let crash = case.scenario.starts_with("crash");
    let predicted_restarts_by = |limit: f64, late: bool| {
        let counted = if crash { "started" } else { "restart" };
        predicted
            .events
            .iter()
            .filter(|(t, e)| e == counted && *t > 0.0 && t + if late { jitter(*t) } else { 0.0 } <= limit)
            .count()
    };
    if !matches!(case.act, Act::Delete(_)) {
        let low = predicted_restarts_by(window - tolerance, true).min(predicted.restarts_best);
        // The model kills at the probe's timeout; the kubelet's kill reaches
        // the app up to about a second later (CI saw 2.7 s where the latest
        // the model allows is 1.5 s). Within a finite disruption that delay
        // can leave no time for the kill the model fits after it, so a first
        // kill later than the model's latest allows one kill fewer, never
        // none where the model kills.
        let first_late = match (observed.sigterms.first(), predicted.best_restart_at, predicted.worst_restart_at) {
            (Some(first), Some(best), Some(worst)) => *first > best.max(worst),
            _ => false,
        };
        let low = if first_late { low.saturating_sub(1).max(low.min(1)) } else { low };
        let high = predicted_restarts_by(window + tolerance, false);
        let kills = if crash { observed.restarts.len() } else { observed.sigterms.len() };
        if kills < low || kills > high {
            let what = if crash { "restarts" } else { "kills" };
            out.push(format!("{kills} {what} in {window} s, simulate {low}..{high}"));
        }
        if let (Some(first), Some(best), Some(worst)) =
            (observed.sigterms.first(), predicted.best_restart_at, predicted.worst_restart_at)
        {
            let (lo, hi) = (best.min(worst) - tolerance, best.max(worst) + tolerance);
            if *first < lo || *first > hi {
                out.push(format!("first kill at {first:.1} s, simulate {best}..{worst} s"));
            }
        }
    } else {
        let sigterm = predicted.events.iter().find(|(_, e)| e == "sigterm").map(|(t, _)| *t);
        match (sigterm, observed.sigterms.first()) {
            (Some(p), Some(o)) if (p - o).abs() > tolerance => out.push(format!("SIGTERM at {o:.1} s, simulate {p} s")),
            (Some(p), None) => out.push(format!("no SIGTERM, simulate {p} s")),
            (None, Some(o)) => out.push(format!("SIGTERM at {o:.1} s, simulate none")),
            _ => {}
        }
        let sigkill = predicted.events.iter().find(|(_, e)| e == "sigkill").map(|(t, _)| *t);
        match (sigkill, observed.killed) {
            (Some(p), Some(o)) if (p - o).abs() > tolerance => out.push(format!("SIGKILL at {o:.1} s, simulate {p} s")),
            (Some(p), None) => out.push(format!("exited by itself, simulate SIGKILL at {p} s")),
            (None, Some(o)) => out.push(format!("SIGKILL at {o:.1} s, simulate none")),
            _ => {}
        }
    }
    let predicted_starts: Vec<f64> =
        predicted.events.iter().filter(|(t, e)| e == "started" && *t > 0.0).map(|(t, _)| *t).collect();
    for restart in &observed.restarts {
        if !predicted_starts.iter().any(|t| *restart >= t - tolerance && *restart <= t + tolerance + jitter(*t)) {
            out.push(format!("started again at {restart:.1} s, simulate at {predicted_starts:?}"));
        }
    }
    let predicted_ready: Vec<(f64, bool)> = predicted
        .events
        .iter()
        .filter_map(|(t, e)| match e.as_str() {
            "in-endpoints" => Some((*t, true)),
            "out-of-endpoints" => Some((*t, false)),
            _ => None,
        })
        .filter(|(t, _)| t + tolerance + jitter(*t) <= window)
        .collect();
    // A booting pod is out from its creation: the kubelet may report
    // nothing of it until a container starts, a sidecar's start later.
    let out_from_creation = matches!(case.act, Act::Boot) && observed.readiness.first().is_none_or(|(_, r)| !r);
    for (t, ready) in &predicted_ready {
        let seen = observed
            .readiness
            .iter()
            .any(|(o, r)| r == ready && *o >= t - tolerance && *o <= t + tolerance + jitter(*t))
            || (!*ready && *t == 0.0 && out_from_creation);
        if !seen {
            let word = if *ready { "Ready" } else { "unready" };
            out.push(format!("simulate {word} at {t} s; the kubelet: {:?}", observed.readiness));
        }
    }
    out.extend(pod::disagreements(&predicted.starts, &observed.starts, tolerance));
    out.extend(pod::stop_disagreements(&predicted.stops, &observed.stops, tolerance));
    out.extend(pod::failure_disagreements(&predicted.stops, observed.failed.as_deref(), tolerance));
    let in_endpoints = predicted.events.iter().any(|(t, e)| e == "in-endpoints" && *t <= window);
    out.extend(lifecycle::disagreements(
        case,
        (&predicted.lifecycle, in_endpoints),
        (&observed.lifecycle, &observed.readiness),
        tolerance,
    ));
    out
}

fn period_of(case: &Case) -> f64 {
    ["startupProbe", "livenessProbe", "readinessProbe"]
        .iter()
        .filter_map(|k| case.container[*k]["periodSeconds"].as_f64())
        .fold(1.0, f64::max)
}

fn show_times(times: &[f64]) -> String {
    if times.is_empty() {
        "-".to_owned()
    } else {
        times.iter().map(|t| format!("{t:.1}")).collect::<Vec<_>>().join(", ")
    }
}

#[test]
fn simulate_agrees_with_the_kubelet_on_every_case_of_the_matrix() {
    let Some(node) = Node::shared() else { return };
    let kubectl = &node.plane.kubectl;
    let ns = "matrix";
    kubectl.namespace(ns, &[]);
    kubectl.default_service_account(ns);
    let watch = PodWatch::start(node, ns);
    let dir = tempfile::tempdir().expect("a directory for the cases' files");
    // LIFEGUARD_MATRIX_CASES=a,b runs those cases alone (while working on them).
    let only: Option<Vec<String>> =
        std::env::var("LIFEGUARD_MATRIX_CASES").ok().map(|v| v.split(',').map(str::to_owned).collect());
    let cases: Vec<Case> =
        cases().into_iter().filter(|c| only.as_ref().is_none_or(|o| o.iter().any(|n| n == c.name))).collect();
    // One dependency per case, so one case's stall is not another's.
    let dependencies: Vec<Dependency> = cases.iter().map(|_| Dependency::start()).collect();
    let pods: Vec<Value> = cases.iter().zip(&dependencies).map(|(c, d)| pod_for(node, c, d)).collect();
    let predicted: Vec<Predicted> = cases.iter().zip(&pods).map(|(c, p)| simulate(c, p, dir.path())).collect();
    let observed: Vec<Observed> = std::thread::scope(|scope| {
        let handles: Vec<_> = cases
            .iter()
            .zip(&pods)
            .zip(&dependencies)
            .map(|((case, pod), dependency)| scope.spawn(|| observe(node, ns, case, pod, &watch, dependency)))
            .collect();
        handles.into_iter().map(|h| h.join().expect("a case's thread")).collect()
    });

    let mut table = String::from(
        "| case | scenario | verdict | kills: simulate / kubelet | restarts: simulate / kubelet | readiness: simulate / kubelet | deletion: simulate / kubelet | agrees |\n|---|---|---|---|---|---|---|---|\n",
    );
    let mut failures = Vec::new();
    for ((case, p), o) in cases.iter().zip(&predicted).zip(&observed) {
        let tolerance = period_of(case) + 2.0;
        // A pod the kubelet restarted before the scenario began enters it
        // with a back-off the model does not hold: what follows is no test
        // of the model, and the failure says so with the kubelet's account.
        let wrong = if o.outside.is_empty() {
            disagreements(case, p, o, tolerance)
        } else {
            vec![format!("outside the scenario, not compared: before its time 0, {}", o.outside.join(", "))]
        };
        // The simulation's events within the window the kubelet was watched.
        let window = case.observe as f64;
        let predicted_times = |name: &str| -> Vec<f64> {
            p.events
                .iter()
                .filter(|(t, e)| e == name && *t <= window && (*t > 0.0 || name != "started"))
                .map(|(t, _)| *t)
                .collect()
        };
        // The pod's readiness, after when its container was first ready
        // where a readiness gate makes the two differ.
        let readiness = |changes: &[(f64, bool)], containers_ready: Option<f64>| {
            let ready = containers_ready.map(|t| format!("container ready {t:.1}"));
            let changes = changes.iter().map(|(t, r)| format!("{} {t:.1}", if *r { "in" } else { "out" }));
            let all: Vec<String> = ready.into_iter().chain(changes).collect();
            if all.is_empty() { "-".to_owned() } else { all.join(", ") }
        };
        let predicted_ready = p.lifecycle.containers_ready.first().copied().filter(|t| *t <= window);
        let observed_ready = predicted_ready.and(o.lifecycle.containers_ready());
        let predicted_readiness: Vec<(f64, bool)> = p
            .events
            .iter()
            .filter(|(t, _)| *t <= window)
            .filter_map(|(t, e)| match e.as_str() {
                "in-endpoints" => Some((*t, true)),
                "out-of-endpoints" => Some((*t, false)),
                _ => None,
            })
            .collect();
        let ending = |signal: &str, sigterm: Vec<f64>, exited: Option<f64>, sigkill: Option<f64>| {
            let end = match (exited, sigkill) {
                (_, Some(t)) => format!("SIGKILL {t:.1}"),
                (Some(t), None) => format!("exit {t:.1}"),
                (None, None) => "-".to_owned(),
            };
            format!("{signal} {}, {end}", show_times(&sigterm))
        };
        let deletion = matches!(case.act, Act::Delete(_));
        let endings = if deletion {
            // A pod case's others as simulate and the kubelet stopped them.
            let others: Vec<pod::Stop> =
                p.stops.iter().filter(|(n, _, _)| o.stops.iter().any(|(m, _, _)| m == n)).cloned().collect();
            format!(
                "{} / {}",
                pod::stops_shown(
                    &others,
                    ending(
                        p.lifecycle.signal.as_deref().unwrap_or("SIGTERM"),
                        predicted_times("sigterm"),
                        predicted_times("exited").first().copied(),
                        predicted_times("sigkill").first().copied()
                    )
                ),
                pod::failures_shown(
                    o.failed.as_deref(),
                    pod::stops_shown(
                        &o.stops,
                        ending(o.lifecycle.signal().unwrap_or("SIGTERM"), o.sigterms.clone(), o.exited, o.killed)
                    )
                )
            )
        } else {
            "-".to_owned()
        };
        let kills = if deletion {
            "-".to_owned()
        } else {
            format!("{} / {}", show_times(&predicted_times("restart")), show_times(&o.sigterms))
        };
        let _ = writeln!(
            table,
            "| {} ({}) | `{}` | {} | {kills} | {} / {} | {} / {} | {endings} | {} |",
            case.name,
            case.what,
            case.scenario,
            p.verdict,
            show_times(&predicted_times("started")),
            show_times(&o.restarts),
            pod::starts_shown(&p.starts, readiness(&predicted_readiness, predicted_ready)),
            pod::starts_shown(&o.starts, readiness(&o.readiness, observed_ready)),
            if wrong.is_empty() { "yes".to_owned() } else { wrong.join("; ") },
        );
        if !wrong.is_empty() {
            eprintln!("{}: the workload's log:\n{}", case.name, workload_log(node, case));
            let mut failure = format!("{}: {}", case.name, wrong.join("; "));
            if !o.outside.is_empty() {
                failure = format!("{failure}\n{}", pods::kubelet_account(node, ns, case.name, 40));
            }
            failures.push(failure);
        }
    }
    eprintln!("{table}");
    if only.is_none() {
        write_table(&table);
    }
    assert!(failures.is_empty(), "simulate and the kubelet disagree:\n{}\n\n{table}", failures.join("\n"));
}

/// Puts `table` between docs/simulate.md's markers when blessing, and
/// otherwise checks that the page has a table of the same cases.
fn write_table(table: &str) {
    let path = repo_root().join("docs/simulate.md");
    let text = std::fs::read_to_string(&path).expect("read docs/simulate.md");
    let (begin, end) = ("<!-- kubelet-matrix:begin -->\n", "<!-- kubelet-matrix:end -->");
    let (Some(b), Some(e)) = (text.find(begin), text.find(end)) else {
        panic!("docs/simulate.md has no kubelet-matrix markers");
    };
    if std::env::var_os("LIFEGUARD_BLESS").is_some() {
        let updated = format!("{}{begin}{table}{}", &text[..b], &text[e..]);
        std::fs::write(&path, updated).expect("write docs/simulate.md");
        return;
    }
    let documented = &text[b + begin.len()..e];
    for case in cases() {
        assert!(
            documented.contains(&format!("| {} (", case.name)),
            "docs/simulate.md's matrix lacks {} (rerun with LIFEGUARD_BLESS=1)",
            case.name
        );
    }
}
