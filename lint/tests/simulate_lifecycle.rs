//! `lifeguard simulate` on what the lifecycle adds to the kubelet's
//! timeline: a postStart hook (how long it holds the probes, and what its
//! failure does), readiness gates (when the pod joins the endpoints), and
//! `lifecycle.stopSignal` (which signal the deletion sends), with the flags
//! and annotations that state what the spec does not show.
//!
//! Runs happen in `tests/fixtures/simulate` with relative paths.

mod support;

use serde_json::Value;
use support::simulate::{lifeguard, one};

/// The times of the events named `name`.
fn times(entry: &Value, name: &str) -> Vec<f64> {
    events(entry).filter(|e| e["event"] == name).filter_map(|e| e["t"].as_f64()).collect()
}

fn events(entry: &Value) -> impl Iterator<Item = &Value> {
    entry["events"].as_array().into_iter().flatten()
}

fn detail<'a>(entry: &'a Value, name: &str) -> &'a str {
    events(entry).find(|e| e["event"] == name).and_then(|e| e["detail"].as_str()).unwrap_or_default()
}

#[test]
fn a_poststart_hook_holds_the_probes_for_its_stated_length() {
    // The annotation states 8 s: the kubelet sees the container running only
    // then, and readiness runs at once: in the endpoints at 8 s, not 1 s.
    let (e, code) = one(&["--scenario", "boot", "poststart-register.yaml"]);
    assert_eq!((e["verdict"].as_str(), code), (Some("ok"), 0), "{e}");
    assert_eq!(times(&e, "poststart"), [0.0]);
    assert_eq!(detail(&e, "poststart"), "exec, 8s as stated");
    assert_eq!(times(&e, "in-endpoints"), [8.0], "{e}");
    // The flag wins over the annotation.
    let (e, _) = one(&["--scenario", "boot", "--poststart-seconds", "12", "poststart-register.yaml"]);
    assert_eq!(times(&e, "in-endpoints"), [12.0], "{e}");
}

#[test]
fn a_failing_poststart_hook_is_a_crash_loop_the_back_off_judges_by_each_exit() {
    let (e, code) = one(&["--scenario", "poststart-fail", "poststart-register.yaml"]);
    assert_eq!((e["verdict"].as_str(), code), (Some("restarts"), 0), "{e}");
    // Killed when the 8 s hook fails; restarted at once the first time, then
    // after 10 s, 20 s, ... from each exit.
    assert_eq!(times(&e, "restart")[..3], [8.0, 16.0, 34.0], "{e}");
    assert_eq!(times(&e, "started")[..4], [0.0, 8.0, 26.0, 54.0], "{e}");
    assert_eq!(detail(&e, "restart"), "postStart hook failed: FailedPostStartHook");
    assert!(times(&e, "in-endpoints").is_empty(), "never ready: {e}");
    let message = e["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("crash loop: its postStart hook fails"), "{message}");
    // A container without a hook has nothing to fail.
    let (e, _) = one(&["--scenario", "poststart-fail", "readiness-gate-lb.yaml"]);
    assert_eq!((e["verdict"].as_str(), e["message"].as_str()), (Some("ok"), Some("no postStart hook to fail")));
}

#[test]
fn an_httpget_poststart_to_an_app_still_booting_is_a_boot_loop() {
    // The kubelet sends the hook as soon as the container starts; the app
    // boots for 20 s, so the hook is refused and the container killed, at
    // every start, whatever the startup probe allows.
    let (e, code) = one(&["--scenario", "boot", "poststart-warmup-self.yaml"]);
    assert_eq!((e["verdict"].as_str(), code), (Some("boot-loop"), 1), "{e}");
    let message = e["message"].as_str().unwrap_or_default();
    assert!(message.contains("refused while the app boots"), "{message}");
    // An app that answers at once takes the hook.
    let (e, _) = one(&["--scenario", "boot:0s", "poststart-warmup-self.yaml"]);
    assert_eq!(e["verdict"], "ok", "{e}");
}

#[test]
fn readiness_gates_keep_a_ready_pod_out_until_they_are_true() {
    // Unstated: taken as True at once, and the line says how to state it.
    let (e, code) = one(&["--scenario", "boot", "readiness-gate-lb.yaml"]);
    assert_eq!((e["verdict"].as_str(), code), (Some("ok"), 0), "{e}");
    assert_eq!(times(&e, "in-endpoints"), [1.0]);
    assert!(detail(&e, "in-endpoints").contains("taken as True at once; state when with --readiness-gates-seconds"));
    // Stated: ready at 1 s, in the endpoints 20 s later.
    let (e, _) = one(&["--scenario", "boot", "--readiness-gates-seconds", "20", "readiness-gate-lb.yaml"]);
    assert_eq!(times(&e, "container-ready"), [1.0], "{e}");
    assert_eq!(times(&e, "in-endpoints"), [21.0], "{e}");
    assert_eq!(e["unready_seconds"], 21, "{e}");
    // Never: out of service, a warning that does not fail the run.
    let (e, code) = one(&["--scenario", "boot", "--readiness-gates-seconds", "never", "readiness-gate-lb.yaml"]);
    assert_eq!((e["verdict"].as_str(), e["severity"].as_str(), code), (Some("out-of-service"), Some("warning"), 0));
    assert!(times(&e, "in-endpoints").is_empty(), "{e}");
    // A long-running pod has its gates True: a stall reads as without them.
    let (gated, _) = one(&["--scenario", "stall:30s", "--readiness-gates-seconds", "20", "readiness-gate-lb.yaml"]);
    assert_eq!(gated["verdict"], "dependency-outage", "{gated}");
}

#[test]
fn the_deletion_names_the_stop_signal_the_runtime_sends() {
    // ContainerStopSignals is off by default: the API server drops the
    // field, SIGTERM comes, and the line says why.
    let (e, _) = one(&["--scenario", "delete", "stop-signal.yaml"]);
    let sigterm = events(&e).find(|x| x["event"] == "sigterm").cloned().unwrap_or_default();
    assert_eq!(sigterm["t"], 5, "after the 5 s preStop sleep: {e}");
    assert!(sigterm.get("signal").is_none(), "{sigterm}");
    assert!(sigterm["detail"].as_str().unwrap_or_default().contains("SIGINT is not sent"), "{sigterm}");
    // With the gate on, the kubelet passes SIGINT to the runtime.
    let (e, _) = one(&["--scenario", "delete", "--feature-gates", "ContainerStopSignals=true", "stop-signal.yaml"]);
    let sigterm = events(&e).find(|x| x["event"] == "sigterm").cloned().unwrap_or_default();
    assert_eq!(sigterm["signal"], "SIGINT", "{e}");
    let gate = ["--feature-gates", "ContainerStopSignals=true"];
    let text = lifeguard(&["simulate", "--scenario", "delete", gate[0], gate[1], "stop-signal.yaml"]);
    assert!(text.stdout.contains("5s           SIGINT (lifecycle.stopSignal"), "{}", text.stdout);
}

#[test]
fn what_cannot_be_read_is_an_error_that_names_it() {
    let r = lifeguard(&["simulate", "--feature-gates", "SidecarContainers=true", "stop-signal.yaml"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("the simulation models only ContainerStopSignals"), "{}", r.stderr);
    let r = lifeguard(&["simulate", "--readiness-gates-seconds", "soon", "readiness-gate-lb.yaml"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("\"soon\": expected whole seconds"), "{}", r.stderr);
    let r = lifeguard(&[
        "simulate",
        "--scenario",
        "boot",
        "bad/lifecycle-annotations-invalid.yaml",
        "bad/poststart-seconds-invalid.yaml",
        "bad/prestop-seconds-invalid.yaml",
        "stop-signal.yaml",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("bad/lifecycle-annotations-invalid.yaml:12:")
            && r.stderr.contains("annotation lifeguard.dev/readiness-gates-seconds: \"when ready\""),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("bad/poststart-seconds-invalid.yaml:6:")
            && r.stderr.contains("annotation lifeguard.dev/poststart-seconds: \"a while\""),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("bad/prestop-seconds-invalid.yaml:6:")
            && r.stderr.contains("annotation lifeguard.dev/prestop-seconds: \"twenty\""),
        "a preStop length that cannot be read is no silent 0 s: {}",
        r.stderr
    );
    assert!(r.stdout.contains("stop-signal.yaml:"), "the other files are still simulated: {}", r.stdout);
}
