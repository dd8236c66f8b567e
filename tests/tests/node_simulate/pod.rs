//! The matrix's pod cases: a pod of more than one container, where the pod
//! is Ready only when every container is (the slower one decides), a
//! native sidecar whose startup probe holds the app container's start, a
//! deleted pod whose native sidecars stop only after the app has exited,
//! in reverse order, and a deleted pod whose regular-container proxy exits
//! at SIGTERM while the app drains the requests it carries. What they read
//! beyond the other cases is `lifeguard_e2e::simulate_check::pod`'s,
//! `stop`'s and `traffic`'s.

use lifeguard_e2e::simulate_check::{Act, Case, Others, TO_SERVER, container, other, probe, s};
use serde_json::{Value, json};

/// The pod's other container in the slower-decides case: ready only
/// after its readiness probe's 8 s initial delay (then every second).
const SLOW: &str = "slow";
/// The native sidecar in the start-order case, the first of two in the
/// stop-order case.
const PROXY: &str = "proxy";
/// The second native sidecar in the stop-order case: stopped before `PROXY`.
const LOGS: &str = "logs";
/// The regular-container proxy of the proxy case, named as Linkerd's
/// injector names its own (it stops accepting at SIGTERM, as this one does).
const MESH: &str = "linkerd-proxy";

/// The pod cases of the matrix.
pub(super) fn cases() -> Vec<Case> {
    let ready = || ("readinessProbe", probe("/readyz", 1, 1));
    vec![
        Case {
            annotations: json!({}),
            name: "pod-slower-decides",
            what: "two containers: the app ready at 1 s, the other's readiness from 8 s; the pod Ready with the slower",
            scenario: "boot",
            container: container(&[], &[ready()]),
            grace: Some(5),
            act: Act::Boot,
            observe: 15,
            others: Others {
                containers: vec![{
                    let mut slow_ready = probe("/readyz", 1, 1);
                    slow_ready["initialDelaySeconds"] = json!(8);
                    other(SLOW, &[("readinessProbe", slow_ready)])
                }],
                ..Others::none()
            },
        },
        Case {
            annotations: json!({}),
            name: "sidecar-start-order",
            what: "a native sidecar whose startup probe succeeds at 5 s (initialDelaySeconds 5) before the app starts",
            scenario: "boot",
            container: container(&[], &[ready()]),
            grace: Some(5),
            act: Act::Boot,
            observe: 15,
            others: Others {
                sidecars: vec![{
                    let mut startup = probe("/livez", 1, 20);
                    startup["initialDelaySeconds"] = json!(5);
                    other(PROXY, &[("startupProbe", startup)])
                }],
                ..Others::none()
            },
        },
        Case {
            // Every container's stop is its drain: nothing more is assumed.
            annotations: json!({"lifeguard.dev/shutdown-budget-seconds": "0"}),
            name: "sidecar-stop-order",
            what: "deletion: the app's 2 s sleep preStop and 4 s drain, native sidecars proxy then logs (3 s drain each), grace 30",
            scenario: "delete",
            container: {
                let mut c = container(&[("DRAIN_SECONDS", s("4"))], &[ready()]);
                c["lifecycle"] = json!({"preStop": {"sleep": {"seconds": 2}}});
                c
            },
            grace: Some(30),
            act: Act::Delete(None),
            observe: 16,
            others: Others {
                sidecars: vec![
                    with_env(other(PROXY, &[]), &[("DRAIN_SECONDS", "3")]),
                    with_env(other(LOGS, &[]), &[("DRAIN_SECONDS", "3")]),
                ],
                ..Others::none()
            },
        },
        Case {
            annotations: json!({"lifeguard.dev/shutdown-budget-seconds": "0"}),
            name: "proxy-exits-before-drain",
            what: "deletion under traffic through a Service to a regular-container proxy that exits at SIGTERM, while the app (6 s requests) sleeps 2 s in preStop and drains 8 s; grace 30",
            scenario: "delete",
            container: {
                let env = [("DRAIN_SECONDS", s("8")), ("REQUEST_SECONDS", s("6"))];
                let mut c = container(&env, &[ready()]);
                c["lifecycle"] = json!({"preStop": {"sleep": {"seconds": 2}}});
                c
            },
            grace: Some(30),
            act: Act::Delete(None),
            observe: 14,
            others: Others {
                containers: vec![with_env(other(MESH, &[]), &[("PROXY_TO", TO_SERVER)])],
                traffic_to: Some(MESH),
                ..Others::none()
            },
        },
    ]
}

/// Another container `c` with `env` added to its own.
fn with_env(mut c: Value, env: &[(&str, &str)]) -> Value {
    if let Some(vars) = c["env"].as_array_mut() {
        vars.extend(env.iter().map(|(name, value)| json!({"name": name, "value": value})));
    }
    c
}
