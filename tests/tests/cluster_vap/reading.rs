//! Values only a careful reader gets right, through the real API server:
//! the cold-start annotation and preStop hooks, each judged as the linter
//! judges it (or, where `--explain` says so, left to it).

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

use std::collections::BTreeSet;

use lifeguard_e2e::cluster::ControlPlane;
use policies::Policy;
use serde_json::json;

use crate::TURN;
use crate::support::{dry_run, flagged, install, namespace, remove};
use lifeguard_e2e::vap_parity::{export, linted};

#[test]
fn the_cold_start_annotation_is_read_as_the_linter_reads_it() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    remove(plane);
    let ns = "vap-seconds";
    namespace(plane, ns);
    install(plane, &export(&["--policy", "default", "--mode", "warn"]), ns);
    let policy = Policy::default();
    // Plain, signed, padded and too long integers, Go-style durations whose
    // doubles round up (1.1m is 66.00000000000001 s, so 67), and what is no
    // number of seconds; each against startup windows around it.
    let values = [
        "430",
        "+60",
        " 90 ",
        "-0",
        "-5",
        "007",
        "1m30s",
        "1.5m",
        "1.1m",
        "0.05m",
        "250ms",
        "1h",
        ".5m",
        "1.m",
        "1m30",
        "1.2.3s",
        "90 s",
        "1us",
        "",
        "abc",
        "99999999999999999999",
    ];
    let mut checked = 0;
    for value in values {
        for window in [10, 72, 73, 74, 99, 500] {
            let pod = json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "cold", "annotations": {"lifeguard.dev/cold-start-seconds": value}},
                "spec": {"containers": [{"name": "app", "image": "example/app:1",
                    "startupProbe": {"tcpSocket": {"port": 8080}, "periodSeconds": 1, "failureThreshold": window}}]}
            });
            let run = dry_run(plane, ns, &pod);
            assert_eq!(run.code, 0, "{run:#?}");
            let rule = |set: &BTreeSet<(String, String)>| {
                set.iter().filter(|(r, _)| r == "startup-budget-too-short").cloned().collect::<BTreeSet<_>>()
            };
            let lint = linted(&pod, &policy);
            let (cel, lint) = (rule(&flagged(&run)), rule(&lint.carried));
            // 20 digits: too long to read exactly in CEL, so left to the linter.
            if value.len() >= 19 {
                assert!(cel.is_empty(), "{value:?} against {window}s: {run:#?}");
            } else {
                assert_eq!(cel, lint, "{value:?} against {window}s: {run:#?}");
            }
            checked += 1;
        }
    }
    eprintln!("{checked} annotation values and windows judged alike");
    remove(plane);
}

#[test]
fn prestop_sleeps_are_read_as_the_linter_reads_them() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    remove(plane);
    let ns = "vap-prestop";
    namespace(plane, ns);
    install(plane, &export(&["--policy", "default", "--mode", "warn"]), ns);
    let policy = Policy::default();
    let commands: &[&[&str]] = &[
        &["sleep", "5"],
        &["/bin/sleep", "5s"],
        &["sleep", "1m", "30"],
        &["sleep", "1.5"],
        &["sleep", "27.5"],
        &["busybox", "sleep", "3"],
        &["/bin/busybox", "sleep", "28"],
        &["sh", "-c", "sleep 20"],
        &["/bin/bash", "-ec", " sleep 20;\n"],
        &["sh", "-c", "sleep 5 || true"],
        &["sh", "-c", "exec /bin/sleep '7'"],
        &["sh", "-c", "sleep 5 && /app/drain"],
        &["/bin/sh", "-c", "sleep 28; nginx -s quit"],
        &["sleep", "infinity"],
        &["sleep", "99999999"],
        &["sleep"],
        &["sleep", "$DELAY"],
        &["sh", "-c", "sleep $DELAY"],
        &["sh", "-c", "sleep 5 &"],
        &["sh", "-c", "echo bye; sleep 5"],
        &["sh", "/pre-stop.sh"],
        &["nginx", "-s", "quit"],
        &["sleep 5"],
        &["sleep", "-5"],
        &["sleep", "28"],
        &["sh", "-c", "sleep 28; exit 0"],
        &["sh", "-c", "sleep 26\n:"],
        &["sleep", "inf", "x"],
        &["sleep", "x", "inf"],
        &["sh", "-c", "sleep 0.45m"],
        &["busybox"],
        &["sh"],
        &["sh", "-x", "sleep 5"],
        &["sh", "-c", "sleep 27 | tee"],
        &["sh", "-c", "sleep 1d"],
        &["sleep", "'10'"],
        &["sleep", "\"26s\""],
        &["sh", "-c", "sleep 5 ;  exit  0"],
        &["sh", "--", "sleep 5"],
        &["bash", "-lc", "exec sleep 29 || exit"],
    ];
    let hooks = commands
        .iter()
        .map(|c| json!({"exec": {"command": c}}))
        .chain([0, 25, 29, 86_400].map(|s| json!({"sleep": {"seconds": s}})));
    let (mut alike, mut left) = (0, 0);
    for hook in hooks {
        for drain in [None, Some("10")] {
            let annotations = drain.map_or(json!({}), |d| json!({"lifeguard.dev/drain-seconds": d}));
            let pod = json!({
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "hook", "annotations": annotations},
                "spec": {"containers": [{"name": "app", "image": "example/app:1", "lifecycle": {"preStop": hook}}]}
            });
            let run = dry_run(plane, ns, &pod);
            if run.code != 0 {
                continue; // a native sleep the API server refuses (longer than the grace period)
            }
            let rules = ["prestop-sleep-only", "grace-period-too-short"];
            let only = |set: &BTreeSet<(String, String)>| {
                set.iter().filter(|(r, _)| rules.contains(&r.as_str())).cloned().collect::<BTreeSet<_>>()
            };
            let lint = linted(&pod, &policy);
            let (cel, carried, all) = (only(&flagged(&run)), only(&lint.carried), only(&lint.all));
            assert!(
                carried.is_subset(&cel) && cel.is_subset(&all),
                "{hook} drain {drain:?}: admission {cel:?}, lint {all:?}"
            );
            if carried == all { alike += 1 } else { left += 1 }
        }
    }
    eprintln!("{alike} preStop hooks judged alike, {left} left to the linter (nothing reported the linter does not)");
    remove(plane);
}
