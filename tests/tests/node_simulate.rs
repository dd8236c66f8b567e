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
//! The lifecycle's cases (postStart, readiness gates, the stop signal) are
//! in `node_simulate/lifecycle.rs`, the pod's (several containers) in
//! `node_simulate/pod.rs`; how a case is run, read and compared is
//! `lifeguard_e2e::simulate_check`'s, which the random cases share.
//!
//! Over 400 lines: `cases()` (about 350 lines) is the matrix itself, 21 cases
//! each with its workload settings, probes and watch window, whose runs make
//! the table in docs/simulate.md; it reads best as one list beside the one
//! test that runs it.

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

// A crate root's modules sit beside it; this one is kept under the test's name.
#[path = "node_simulate/lifecycle.rs"]
mod lifecycle;
#[path = "node_simulate/pod.rs"]
mod pod;

use std::fmt::Write as _;

use lifeguard_e2e::cluster::node::Node;
use lifeguard_e2e::cluster::pods::{self, PodWatch};
use lifeguard_e2e::repo_root;
use lifeguard_e2e::simulate_check::pod::starts_shown;
use lifeguard_e2e::simulate_check::stop::stops_shown;
use lifeguard_e2e::simulate_check::traffic::failures_shown;
use lifeguard_e2e::simulate_check::{Act, Case, Others, container, held_back, probe, run, s, workload_log};
use serde_json::json;

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
            others: Others::none(),
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
            others: Others::none(),
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
            others: Others::none(),
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
            others: Others::none(),
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
            others: Others::none(),
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
            others: Others::none(),
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
            others: Others::none(),
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
            others: Others::none(),
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
            others: Others::none(),
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
            others: Others::none(),
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
            others: Others::none(),
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
            others: Others::none(),
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
            others: Others::none(),
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
            others: Others::none(),
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
            others: Others::none(),
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
            others: Others::none(),
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
            others: Others::none(),
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
            others: Others::none(),
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
            others: Others::none(),
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
            others: Others::none(),
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
            others: Others::none(),
        },
    ]
    .into_iter()
    .chain(lifecycle::cases())
    .chain(pod::cases())
    .collect()
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
    // Every pod at once, as a node runs a busy namespace; kept to the end.
    let outcomes = run(node, (ns, &watch), &cases, (cases.len(), false), dir.path(), |c, _| c.observe);
    let mut table = String::from(
        "| case | scenario | verdict | kills: simulate / kubelet | restarts: simulate / kubelet | readiness: simulate / kubelet | deletion: simulate / kubelet | agrees |\n|---|---|---|---|---|---|---|---|\n",
    );
    let mut failures = Vec::new();
    for (case, outcome) in cases.iter().zip(&outcomes) {
        let (p, wrong) = (&outcome.predicted, &outcome.wrong);
        let o = match &outcome.observed {
            Ok(o) => o,
            Err(why) => panic!("case {}: {why}", case.name),
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
            let others: Vec<_> =
                p.stops.iter().filter(|(n, _, _)| o.stops.iter().any(|(m, _, _)| m == n)).cloned().collect();
            format!(
                "{} / {}",
                stops_shown(
                    &others,
                    ending(
                        p.lifecycle.signal.as_deref().unwrap_or("SIGTERM"),
                        predicted_times("sigterm"),
                        predicted_times("exited").first().copied(),
                        predicted_times("sigkill").first().copied()
                    )
                ),
                failures_shown(
                    o.failed.as_deref(),
                    stops_shown(
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
            starts_shown(&p.starts, readiness(&predicted_readiness, predicted_ready)),
            starts_shown(&o.starts, readiness(&o.readiness, observed_ready)),
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
