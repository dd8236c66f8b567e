//! What the API server does when lifeguard is down, and when its serving
//! certificate rotates: the chart's configurations with `failurePolicy`
//! `Ignore` and `Fail`, the real webhook stopped or re-keyed underneath.
//!
//! The configurations are cluster-wide, so these tests take turns (each
//! installs, then removes, its own).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use lifeguard_e2e::cluster::pki::Ca;
use lifeguard_e2e::cluster::{ControlPlane, Installation, Run, objects, webhook};
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
        let run = create(plane, ns, &objects::naive_gpu_deployment(name));
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

    let run = create(plane, "down-ignore", &objects::naive_gpu_deployment("llm"));
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
    let run = create(plane, "down-fail", &objects::typical_deployment("web"));
    assert_eq!(run.code, 1, "{run:#?}");
    let url = format!("{}/validate/enforce", lifeguard.webhook.base_url());
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
                    let run = create(plane, ns, &objects::typical_deployment(&name));
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
        lifeguard
            .webhook
            .wait_log("the reload", Duration::from_secs(10), |l| l["message"] == "serving certificate reloaded");
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
