//! What the API server does when lifeguard is down, and when its serving
//! certificate rotates: the chart's configurations with `failurePolicy`
//! `Ignore` and `Fail`, the real webhook stopped or re-keyed underneath.
//!
//! The configurations are cluster-wide, so these tests take turns (each
//! installs, then removes, its own).

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use lifeguard_e2e::cluster::pki::Ca;
use lifeguard_e2e::cluster::{ControlPlane, Installation, Run, webhook};
use lifeguard_e2e::support::deployment;
use lifeguard_e2e::support::webhook::{Held, Server};
use serde_json::Value;

static TURN: Mutex<()> = Mutex::new(());

fn create(plane: &ControlPlane, namespace: &str, object: &Value) -> Run {
    plane.kubectl.run_with_input(&["create", "-n", namespace, "-f", "-"], Some(&object.to_string()))
}

/// kube-system and the release's namespace, labelled to be judged in
/// enforce and mutated: the chart's selectors exclude them by name.
fn label_system_namespaces(plane: &ControlPlane) {
    let labels = ["lifeguard.dev/mode=enforce", "lifeguard.dev/mutate=true", "--overwrite"];
    for ns in ["kube-system", "lifeguard"] {
        if plane.kubectl.get("", "namespace", ns).is_none() {
            plane.kubectl.run(&["create", "namespace", ns]).ok();
        }
        let mut args = vec!["label", "namespace", ns];
        args.extend(labels);
        plane.kubectl.run(&args).ok();
    }
}

/// With the webhook process gone, the system namespaces still admit
/// anything: they are never sent to the webhook.
fn system_namespaces_still_admit(plane: &ControlPlane, name: &str) {
    label_system_namespaces(plane);
    for ns in ["kube-system", "lifeguard"] {
        let run = create(plane, ns, &deployment::naive_gpu(name));
        assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:#?}");
    }
}

#[test]
fn failure_policy_ignore_admits_unchecked_while_the_webhook_is_down() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let Some(mut lifeguard) =
        Installation::install(plane, &["certManager.enabled=false", "webhook.failurePolicy=Ignore"])
    else {
        return;
    };
    plane.kubectl.namespace("down-ignore", &["lifeguard.dev/mode=enforce"]);
    lifeguard.webhook.kill();

    let run = create(plane, "down-ignore", &deployment::naive_gpu("llm"));
    assert_eq!((run.code, run.stdout.as_str()), (0, "deployment.apps/llm created\n"), "{run:#?}");
    assert!(plane.kubectl.get("down-ignore", "deployment", "llm").is_some());
    system_namespaces_still_admit(plane, "ignore-down");
    lifeguard.unregister(plane);
}

#[test]
fn failure_policy_fail_refuses_with_the_api_servers_error_while_the_webhook_is_down() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let Some(mut lifeguard) =
        Installation::install(plane, &["certManager.enabled=false", "webhook.failurePolicy=Fail"])
    else {
        return;
    };
    plane.kubectl.namespace("down-fail", &["lifeguard.dev/mode=enforce"]);
    lifeguard.webhook.kill();

    // A clean object too: nothing is admitted unjudged.
    let run = create(plane, "down-fail", &deployment::typical("web"));
    assert_eq!(run.code, 1, "{run:#?}");
    let url = lifeguard.webhook.url("/validate/enforce");
    assert!(
        run.stderr.starts_with(&format!(
            "Error from server (InternalError): error when creating \"STDIN\": Internal error occurred: \
             failed calling webhook \"enforce.validate.lifeguard.dev\": failed to call webhook: Post \"{url}?timeout=5s\": "
        )),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("connection refused"), "{}", run.stderr);
    assert!(plane.kubectl.get("down-fail", "deployment", "web").is_none());
    system_namespaces_still_admit(plane, "fail-down");
    lifeguard.unregister(plane);
}

#[test]
fn the_serving_pair_rotates_to_a_second_ca_under_load_without_a_failed_request() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let second = Ca::new("lifeguard test CA, generation 2");
    let bundle = format!("{}{}", plane.pki.ca.pem, second.pem);
    // Fail: a request the webhook could not answer would be a failed create.
    let set = ["certManager.enabled=false", "webhook.failurePolicy=Fail"];
    let Some(lifeguard) = Installation::install_serving(plane, &set, &webhook::serving_pair(&plane.pki.ca), &bundle)
    else {
        return;
    };
    let ns = "rotation";
    plane.kubectl.namespace(ns, &["lifeguard.dev/mode=enforce", "lifeguard.dev/mutate=true"]);

    let stop = AtomicBool::new(false);
    let done = AtomicUsize::new(0);
    let failures: Mutex<Vec<Run>> = Mutex::default();
    std::thread::scope(|scope| {
        for client in 0..4 {
            let (stop, done, failures) = (&stop, &done, &failures);
            scope.spawn(move || {
                let started = Instant::now();
                let mut i = 0;
                // Bounded: the main thread stops it, or a minute passes.
                while !stop.load(Ordering::SeqCst) && started.elapsed() < Duration::from_secs(60) {
                    let name = format!("web-{client}-{i}");
                    i += 1;
                    let run = create(plane, ns, &deployment::typical(&name));
                    let delete = plane.kubectl.run(&["delete", "deployment", &name, "-n", ns, "--wait=false"]);
                    for run in [run, delete] {
                        if run.code == 0 {
                            done.fetch_add(1, Ordering::SeqCst);
                        } else {
                            failures.lock().expect("failures").push(run);
                        }
                    }
                }
            });
        }
        let at_least = |n: usize| {
            lifeguard_e2e::cluster::process::wait_for("requests", Duration::from_secs(30), || {
                let now = done.load(Ordering::SeqCst);
                if now >= n { Ok(()) } else { Err(format!("{now} done")) }
            })
        };
        at_least(20);
        lifeguard.webhook.rotate(2, &webhook::serving_pair(&second));
        lifeguard.webhook.wait_log(|l| l["message"] == "serving certificate reloaded", Duration::from_secs(10));
        let after_swap = done.load(Ordering::SeqCst);
        at_least(after_swap + 20);
        stop.store(true, Ordering::SeqCst);
    });
    let failures = failures.into_inner().expect("failures");
    assert_eq!(failures.len(), 0, "{failures:#?}");
    assert!(done.load(Ordering::SeqCst) >= 40);
    // A new handshake gets the second CA's pair; the first CA's no longer verifies it.
    assert_eq!(lifeguard.webhook.livez_trusting(&second.pem).map(|r| r.0), Ok(200));
    assert!(lifeguard.webhook.livez_trusting(&plane.pki.ca.pem).is_err());
    lifeguard.unregister(plane);
}

/// One create through the API server: when it was sent and answered.
struct Timed {
    sent: Instant,
    answered: Instant,
    run: Run,
}

/// The webhook's drain as the API server meets it: the API server speaks
/// HTTP/1.1 to webhooks (its client offers only `http/1.1` by ALPN), so
/// what it sees of the drain is `Connection: close` on each answer and a
/// new connection for the next request, then the closed listener.
#[test]
fn sigterm_drains_every_request_the_api_server_sends_then_the_failure_policy_applies() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let Some(mut lifeguard) =
        Installation::install(plane, &["certManager.enabled=false", "webhook.failurePolicy=Fail"])
    else {
        return;
    };
    let ns = "drain";
    plane.kubectl.namespace(ns, &["lifeguard.dev/mode=warn"]);
    let drain = Duration::from_secs(lifeguard.webhook.env_seconds("LIFEGUARD_DRAIN_SECONDS"));
    assert!(drain >= Duration::from_secs(2), "the chart drains for {drain:?}");
    let judged = |run: &Run| run.code == 0 && run.warnings().iter().any(|w| w.starts_with("probe-endpoint-reused: "));

    let stop = AtomicBool::new(false);
    let answers: Mutex<Vec<Timed>> = Mutex::default();
    let mut terminated = None;
    std::thread::scope(|scope| {
        for client in 0..3 {
            let (stop, answers) = (&stop, &answers);
            scope.spawn(move || {
                let started = Instant::now();
                let mut i = 0;
                // Bounded: the main thread stops it, or a minute passes.
                while !stop.load(Ordering::SeqCst) && started.elapsed() < Duration::from_secs(60) {
                    let sent = Instant::now();
                    let run = create(plane, ns, &deployment::naive_gpu(&format!("llm-{client}-{i}")));
                    answers.lock().expect("answers").push(Timed { sent, answered: Instant::now(), run });
                    i += 1;
                }
            });
        }
        let answered = || answers.lock().expect("answers").len();
        lifeguard_e2e::cluster::process::wait_for("requests before SIGTERM", Duration::from_secs(30), || {
            if answered() >= 6 { Ok(()) } else { Err(format!("{} answered", answered())) }
        });
        terminated = Some(Instant::now());
        lifeguard.webhook.terminate();
        let status = lifeguard.webhook.wait_exit(drain + Duration::from_secs(20));
        assert!(status.success(), "the drained webhook exits 0: {status:?}");
        // Requests go on past the exit, for the failure policy to answer.
        std::thread::sleep(Duration::from_secs(1));
        stop.store(true, Ordering::SeqCst);
    });
    let terminated = terminated.expect("SIGTERM was sent");
    let answers = answers.into_inner().expect("answers");

    // Every request answered before the drain's end was judged: none fails.
    let margin = Duration::from_millis(300);
    let in_window: Vec<&Timed> =
        answers.iter().filter(|t| t.sent >= terminated && t.answered + margin < terminated + drain).collect();
    assert!(in_window.len() >= 6, "{} requests in the drain window", in_window.len());
    eprintln!(
        "{} creates in all, {} sent and answered within the {drain:?} drain, all judged",
        answers.len(),
        in_window.len()
    );
    let unjudged: Vec<&Run> = in_window.iter().filter(|t| !judged(&t.run)).map(|t| &t.run).collect();
    assert!(unjudged.is_empty(), "requests in the drain window not judged: {unjudged:#?}");
    let before: Vec<&Run> = answers.iter().filter(|t| t.answered < terminated).map(|t| &t.run).collect();
    assert!(before.iter().all(|r| judged(r)), "{before:#?}");
    let drain_over =
        lifeguard.webhook.logs().iter().any(|l| l["message"].as_str().is_some_and(|m| m.starts_with("drain over")));
    assert!(drain_over, "the webhook logged the end of its drain");

    // After the exit, the failure policy as configured: Fail refuses...
    let run = create(plane, ns, &deployment::naive_gpu("after-exit"));
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(run.stderr.contains("failed calling webhook \"warn.validate.lifeguard.dev\""), "{}", run.stderr);
    assert!(run.stderr.contains("connection refused"), "{}", run.stderr);
    // ... and Ignore, once configured, admits unjudged.
    let validating = lifeguard
        .registered
        .iter()
        .find(|c| c["kind"] == "ValidatingWebhookConfiguration")
        .expect("a validating configuration");
    let mut ignoring = validating.clone();
    for hook in ignoring["webhooks"].as_array_mut().into_iter().flatten() {
        hook["failurePolicy"] = "Ignore".into();
    }
    plane.kubectl.apply(&ignoring).ok();
    let admitted = lifeguard_e2e::cluster::process::wait_for("Ignore in effect", Duration::from_secs(30), || {
        let run = create(plane, ns, &deployment::naive_gpu("after-exit"));
        if run.code == 0 { Ok(run) } else { Err(run.stderr) }
    });
    assert_eq!(admitted.warnings(), Vec::<&str>::new(), "admitted unjudged: {admitted:#?}");
    lifeguard.unregister(plane);
}

/// A greedy client takes every connection slot the API server does not
/// hold: the API server's requests are still answered, on the keep-alive
/// connections it already has, while every new connection is refused.
#[test]
fn at_the_connection_cap_the_api_servers_requests_are_still_answered_on_its_connections() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let cap = 12;
    let set = ["certManager.enabled=false", "webhook.failurePolicy=Fail", &format!("webhook.maxConnections={cap}")];
    let Some(lifeguard) = Installation::install(plane, &set) else { return };
    let ns = "at-the-cap";
    plane.kubectl.namespace(ns, &["lifeguard.dev/mode=warn"]);
    plane.kubectl.default_service_account(ns);
    let judged = |run: &Run| run.code == 0 && run.warnings().iter().any(|w| w.starts_with("probe-endpoint-reused: "));

    // Concurrent creates leave the API server a few idle connections to the webhook.
    std::thread::scope(|scope| {
        for client in 0..4 {
            scope.spawn(move || {
                for i in 0..3 {
                    let run = create(plane, ns, &deployment::naive_gpu_pod(&format!("warm-{client}-{i}")));
                    assert!(judged(&run), "{run:#?}");
                }
            });
        }
    });
    let open = |hook: &Server| hook.metric("lifeguard_webhook_connections", &["listener=\"admission\""]);
    let held_by_the_api_server = open(&lifeguard.webhook) as usize;
    assert!((1..cap).contains(&held_by_the_api_server), "the API server holds {held_by_the_api_server} connections");

    // The greedy client takes every other slot; one more is refused.
    let greedy: Vec<Held> = (held_by_the_api_server..cap)
        .map(|i| lifeguard.webhook.hold_connection(&plane.pki.ca.pem).unwrap_or_else(|e| panic!("slot {i}: {e}")))
        .collect();
    assert_eq!(open(&lifeguard.webhook) as usize, cap);
    let refused = lifeguard.webhook.hold_connection(&plane.pki.ca.pem);
    assert!(refused.is_err(), "a connection beyond the cap is refused");
    let refusals = || lifeguard.webhook.metric("lifeguard_webhook_connections_refused_total", &[]);
    assert_eq!(refusals(), 1.0);

    // One create at a time needs one connection: the API server's own.
    for i in 0..10 {
        let run = create(plane, ns, &deployment::naive_gpu_pod(&format!("at-cap-{i}")));
        assert!(judged(&run), "create {i} at the cap: {run:#?}");
    }
    assert_eq!(refusals(), 1.0, "the API server never needed a new connection");
    eprintln!("the API server held {held_by_the_api_server} of {cap} connections; 10 creates at the cap, all judged");
    let logged = lifeguard.webhook.logs().iter().any(|l| {
        l["message"].as_str().is_some_and(|m| m.starts_with("connection cap reached")) && l["max_connections"] == cap
    });
    assert!(logged, "the cap is logged with its value");
    drop(greedy);
    lifeguard.unregister(plane);
}
