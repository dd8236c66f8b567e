//! The matrix's lifecycle cases: a postStart hook (how long it holds the
//! probes, what its failure does), a readiness gate (never set, or set by
//! the test as a load balancer's controller would), and
//! `lifecycle.stopSignal` (which signal a deletion sends). What they read
//! beyond the other cases is `lifeguard_e2e::simulate_check::lifecycle`'s.

use lifeguard_e2e::simulate_check::lifecycle::poststart;
use lifeguard_e2e::simulate_check::{Act, Case, Others, container, probe, s};
use serde_json::json;

/// The lifecycle cases of the matrix.
pub(super) fn cases() -> Vec<Case> {
    let live = || ("livenessProbe", probe("/livez", 2, 3));
    let ready = || ("readinessProbe", probe("/readyz", 2, 1));
    let gated = |stated: &str| json!({"lifeguard.dev/readiness-gates-seconds": stated});
    vec![
        Case {
            annotations: json!({"lifeguard.dev/poststart-seconds": "5"}),
            name: "poststart-exec",
            what: "an exec postStart hook of 5 s (stated) before a ready app",
            scenario: "boot",
            container: {
                let mut c = container(&[], &[live(), ready()]);
                c["lifecycle"] = poststart(5, 0);
                c
            },
            grace: Some(5),
            act: Act::Boot,
            observe: 15,
            others: Others::none(),
        },
        Case {
            annotations: json!({"lifeguard.dev/poststart-seconds": "3"}),
            name: "poststart-fail",
            what: "an exec postStart hook that fails after 3 s (stated), at every start",
            scenario: "poststart-fail",
            container: {
                let mut c = container(&[], &[live(), ready()]);
                c["lifecycle"] = poststart(3, 1);
                c
            },
            grace: Some(5),
            act: Act::Boot,
            // Up to the second back-off: after it, the kubelet's jitter
            // (half the delay, added up) outgrows the window.
            observe: 30,
            others: Others::none(),
        },
        Case {
            annotations: gated("never"),
            name: "gate-never",
            what: "a readiness gate nothing sets (stated never)",
            scenario: "boot",
            container: container(&[], &[live(), ready()]),
            grace: Some(5),
            act: Act::Boot,
            observe: 15,
            others: Others::none(),
        },
        Case {
            annotations: gated("5"),
            name: "gate-set",
            what: "a readiness gate the test sets True 5 s after the container is ready (stated 5)",
            scenario: "boot",
            container: container(&[], &[live(), ready()]),
            grace: Some(5),
            act: Act::Gate(5),
            observe: 15,
            others: Others::none(),
        },
        Case {
            annotations: json!({}),
            name: "stop-signal",
            what: "deletion: lifecycle.stopSignal SIGINT, the ContainerStopSignals gate off (1.37's default)",
            scenario: "delete",
            container: {
                let mut c = container(&[("DRAIN_SECONDS", s("1"))], &[live(), ready()]);
                c["lifecycle"] = json!({"stopSignal": "SIGINT"});
                c
            },
            grace: Some(10),
            act: Act::Delete(None),
            observe: 10,
            others: Others::none(),
        },
    ]
}
