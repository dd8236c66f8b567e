//! The matrix's pod cases: a pod of more than one container, where the pod
//! is Ready only when every container is (the slower one decides), and a
//! native sidecar whose startup probe holds the app container's start.
//! What they read beyond the other cases is
//! `lifeguard_e2e::simulate_check::pod`'s.

use lifeguard_e2e::simulate_check::{Act, Case, Others, container, other, probe};
use serde_json::json;

/// The pod's other container in the slower-decides case: ready only
/// after its readiness probe's 8 s initial delay (then every second).
const SLOW: &str = "slow";
/// The native sidecar in the start-order case.
const PROXY: &str = "proxy";

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
                sidecars: Vec::new(),
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
                containers: Vec::new(),
                sidecars: vec![{
                    let mut startup = probe("/livez", 1, 20);
                    startup["initialDelaySeconds"] = json!(5);
                    other(PROXY, &[("startupProbe", startup)])
                }],
            },
        },
    ]
}
