//! `lifeguard simulate` on a pod of several containers: the pod's row above
//! its containers in every format, and a pod of one container as before.
//!
//! Runs happen in `tests/fixtures/simulate` with relative paths, as in
//! `simulate.rs`.

mod support;

use serde_json::Value;
use support::simulate::{lifeguard, simulate_json};

const SIDECAR: &str = "native-sidecar-startup.yaml";

#[test]
fn json_keeps_each_containers_entry_and_adds_the_pods() {
    let (entries, code) = simulate_json(&["--scenario", "boot:5s", SIDECAR]);
    assert_eq!(code, 0);
    assert_eq!(entries.len(), 2, "one entry per container and scenario, as before");
    let app = entries.iter().find(|e| e["container"] == "checkout").expect("the app's entry");
    let pod = &app["pod"];
    assert_eq!(pod["containers"], serde_json::json!(["istio-proxy", "checkout"]));
    // The proxy's startup probe succeeds once it answers (5 s): the app starts then.
    assert_eq!(pod["started"], serde_json::json!([0, 5]));
    let out = pod["out"].as_array().expect("spans out");
    assert_eq!(out.len(), 1);
    assert_eq!(out[0]["from"], 0);
    assert_eq!(out[0]["held_by"], serde_json::json!(["checkout"]));
    let joined: Vec<&Value> =
        pod["events"].as_array().into_iter().flatten().filter(|e| e["event"] == "in-endpoints").collect();
    assert_eq!(joined.len(), 1);
    assert_eq!(joined[0]["t"], out[0]["to"]);
    // The container's own events speak of its readiness, not of the endpoints.
    let kinds: Vec<&str> = app["events"].as_array().into_iter().flatten().filter_map(|e| e["event"].as_str()).collect();
    assert!(kinds.contains(&"container-ready") && !kinds.contains(&"in-endpoints"), "{kinds:?}");
    assert!(app["message"].as_str().is_some_and(|m| m.contains("the pod is out of endpoints for")), "{app}");
    // Both containers' entries carry the same pod in a boot.
    let proxy = entries.iter().find(|e| e["container"] == "istio-proxy").expect("the proxy's entry");
    assert_eq!(proxy["pod"], app["pod"]);
    // A pod of one container has no `pod`.
    let (one, _) = simulate_json(&["--scenario", "boot", "readiness-gate-lb.yaml"]);
    assert!(one.iter().all(|e| e.get("pod").is_none()), "{one:?}");
}

#[test]
fn text_shows_the_pods_row_above_its_containers() {
    let out = lifeguard(&["simulate", "--scenario", "boot:5s", SIDECAR]).stdout;
    let pod = out.find("  pod (containers \"istio-proxy\", \"checkout\"").expect("the pod's row");
    let first_container = out.find("  container ").expect("a container");
    assert!(pod < first_container, "{out}");
    insta::assert_snapshot!("native_sidecar_startup", out);
}

#[test]
fn svg_and_html_show_the_pod_above_its_containers() {
    let svg = lifeguard(&["simulate", "--format", "svg", "--scenario", "boot:5s", SIDECAR]).stdout;
    // The first panel (the app's): the pod's lane first, then the container's own.
    let lanes: Vec<usize> = ["pod in endpoints", "liveness", "readiness", "running", "ready", "terminating"]
        .iter()
        .map(|lane| svg.find(&format!(">{lane}</text>")).unwrap_or_else(|| panic!("lane {lane:?}: {svg}")))
        .collect();
    assert!(lanes.windows(2).all(|w| w[0] < w[1]), "lanes in order: {lanes:?}");
    assert!(!svg.contains(">in endpoints</text>"), "a container's lane of a pod is its readiness");
    let html = lifeguard(&["simulate", "--format", "html", "--scenario", "boot:5s", SIDECAR]).stdout;
    let pod = html.find("<section class=\"pod\">").expect("the pod's section");
    assert!(pod < html.find("<section class=\"container\">").expect("a container's section"));
    assert!(html.contains("boot:5s: starts &quot;istio-proxy&quot; at 0 s, &quot;checkout&quot; at 5 s"), "{html}");
}

#[test]
fn a_deletion_shows_the_order_the_containers_stop_in() {
    let (entries, code) = simulate_json(&["--scenario", "delete", SIDECAR]);
    assert_eq!(code, 0);
    let app = entries.iter().find(|e| e["container"] == "checkout").expect("the app's entry");
    // Neither declares its stop: each takes the policy's 5 s after SIGTERM.
    // The app first; the native proxy only once the app has exited.
    assert_eq!(
        app["pod"]["stops"],
        serde_json::json!([
            {"container": "checkout", "sigterm": 0, "exited": 5, "sigkill": null},
            {"container": "istio-proxy", "sigterm": 5, "exited": 10, "sigkill": null},
        ])
    );
    let proxy = entries.iter().find(|e| e["container"] == "istio-proxy").expect("the proxy's entry");
    let sigterm = proxy["events"].as_array().into_iter().flatten().find(|e| e["event"] == "sigterm");
    assert_eq!(
        sigterm.map(|e| (&e["t"], &e["detail"])),
        Some((&serde_json::json!(5), &serde_json::json!("in its turn, after \"checkout\" exited")))
    );
    let out = lifeguard(&["simulate", "--scenario", "delete", SIDECAR]).stdout;
    insta::assert_snapshot!("native_sidecar_delete", out);
}
