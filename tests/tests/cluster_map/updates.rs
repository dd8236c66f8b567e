//! What the export mutates besides a create: as `/mutate`, a relabel or a
//! scale of an object created before it is left alone, a template change is
//! fixed, a Pod's update is never patched (its probes cannot change); a
//! second `kubectl apply` of a file changes nothing; a rule named in
//! `lifeguard.dev/ignore` with a reason is not fixed.

use lifeguard_e2e::cluster::ControlPlane;
use lifeguard_e2e::support::deployment::Deployment;
use serde_json::{Value, json};

use crate::TURN;
use crate::expected::mutated;
use crate::install::{dry_run_json, install_map, remove_map};
use crate::support::{self, namespace};

/// A Deployment whose liveness fails at once: liveness-too-aggressive
/// raises failureThreshold 1 to 3 and timeoutSeconds 1 to 5.
fn deployment(name: &str, annotations: Value) -> Value {
    Deployment::new(name)
        .annotations(annotations)
        .replicas(1)
        .containers(json!([{"name": "app", "image": "example/app:1",
            "livenessProbe": {"httpGet": {"path": "/livez", "port": 8080}, "failureThreshold": 1},
            "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}, "failureThreshold": 100}}]))
        .build()
}

/// (failureThreshold, timeoutSeconds) of liveness, and readiness's failureThreshold.
fn probes(stored: &Value, spec: &str) -> (Value, Value, Value) {
    let c = &stored.pointer(spec).expect("a pod spec")["containers"][0];
    (
        c["livenessProbe"]["failureThreshold"].clone(),
        c["livenessProbe"]["timeoutSeconds"].clone(),
        c["readinessProbe"]["failureThreshold"].clone(),
    )
}

const TEMPLATE: &str = "/spec/template/spec";

#[test]
fn a_relabel_a_scale_and_a_pods_update_are_left_alone_and_a_template_change_is_fixed() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    remove_map(plane);
    support::remove(plane);
    let ns = "map-updates";
    namespace(plane, ns);
    // Created before the policy, so stored with their findings.
    let old = deployment("old", json!({}));
    plane.kubectl.run_with_input(&["create", "-n", ns, "-f", "-"], Some(&old.to_string())).ok();
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "old-pod"},
        "spec": old["spec"]["template"]["spec"].clone()});
    plane.kubectl.run_with_input(&["create", "-n", ns, "-f", "-"], Some(&pod.to_string())).ok();
    install_map(plane, "default", ns);
    let get = |kind: &str, name: &str| plane.kubectl.get(ns, kind, name).expect("stored");
    let unfixed = (json!(1), json!(1), json!(100));
    plane.kubectl.run(&["label", "deployment", "old", "-n", ns, "team=payments"]).ok();
    plane.kubectl.run(&["scale", "deployment", "old", "-n", ns, "--replicas=3"]).ok();
    let stored = get("deployment", "old");
    assert_eq!(stored["spec"]["replicas"], 3);
    assert_eq!(probes(&stored, TEMPLATE), unfixed, "a relabel and a scale do not start a rollout");
    assert!(mutated(&stored).is_empty(), "{stored:#}");
    // Its image may change; its probes may not, so a fix would fail the update.
    let image = plane.kubectl.run(&["set", "image", "pod/old-pod", "-n", ns, "app=example/app:2"]);
    assert_eq!(image.code, 0, "a Pod's update is not patched: {image:#?}");
    assert_eq!(probes(&get("pod", "old-pod"), "/spec"), unfixed);
    let patch = r#"{"spec":{"template":{"metadata":{"annotations":{"rev":"2"}}}}}"#;
    plane.kubectl.run(&["patch", "deployment", "old", "-n", ns, "--type=merge", "-p", patch]).ok();
    let stored = get("deployment", "old");
    assert_eq!(probes(&stored, TEMPLATE), (json!(3), json!(5), json!(3)), "a template change carries the fixes");
    assert_eq!(mutated(&stored), ["liveness-too-aggressive", "probe-window-too-long"].map(str::to_owned).into());
    remove_map(plane);
}

#[test]
fn a_second_apply_of_the_same_file_changes_nothing() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    remove_map(plane);
    support::remove(plane);
    let ns = "map-apply";
    namespace(plane, ns);
    install_map(plane, "default", ns);
    let file = deployment("web", json!({})).to_string();
    let first = plane.kubectl.run_with_input(&["apply", "-n", ns, "-f", "-"], Some(&file));
    first.ok();
    let stored = plane.kubectl.get(ns, "deployment", "web").expect("stored");
    assert_eq!(probes(&stored, TEMPLATE), (json!(3), json!(5), json!(3)), "{stored:#}");
    // The file still holds the old values, so kubectl sends them (and says
    // "configured"); the export fixes them again and the API server, finding
    // the object as it was, stores nothing new.
    let second = plane.kubectl.run_with_input(&["apply", "-n", ns, "-f", "-"], Some(&file));
    second.ok();
    let again = plane.kubectl.get(ns, "deployment", "web").expect("stored");
    assert_eq!(again["spec"], stored["spec"]);
    assert_eq!(again["metadata"]["resourceVersion"], stored["metadata"]["resourceVersion"]);
    assert_eq!(again["metadata"]["generation"], stored["metadata"]["generation"]);
    remove_map(plane);
}

#[test]
fn a_rule_the_object_ignores_is_not_fixed() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    remove_map(plane);
    support::remove(plane);
    let ns = "map-ignore";
    namespace(plane, ns);
    install_map(plane, "default", ns);
    let ignoring = |reason: Option<&str>| {
        let mut annotations = json!({"lifeguard.dev/ignore": "liveness-too-aggressive"});
        if let Some(reason) = reason {
            annotations["lifeguard.dev/ignore-reason"] = json!(reason);
        }
        deployment("ignoring", annotations)
    };
    let stored = dry_run_json(plane, ns, &ignoring(Some("the check is cheap and the app restarts in 1 s")))
        .unwrap_or_else(|e| panic!("refused: {e}"));
    assert_eq!(probes(&stored, TEMPLATE), (json!(1), json!(1), json!(3)), "only the window is fixed");
    assert_eq!(mutated(&stored), ["probe-window-too-long".to_owned()].into());
    // Without a reason the annotation does not apply, as in the linter.
    let stored = dry_run_json(plane, ns, &ignoring(None)).unwrap_or_else(|e| panic!("refused: {e}"));
    assert_eq!(probes(&stored, TEMPLATE), (json!(3), json!(5), json!(3)));
    remove_map(plane);
}
