//! `lifeguard export map` for the tests: exported by the real binary,
//! bound to one namespace (so the other tests' objects are left alone),
//! applied, and removed.

use std::time::Duration;

use lifeguard::input::{Limits, parse_stream};
use lifeguard_e2e::cluster::ControlPlane;
use lifeguard_e2e::cluster::process::wait_for;
use serde_json::{Value, json};

/// `lifeguard export map ARGS`: its YAML.
pub(crate) fn export_map(args: &[&str]) -> String {
    lifeguard_e2e::vap_parity::export_of("map", args)
}

/// The objects of an export's YAML.
pub(crate) fn documents(yaml: &str) -> Vec<Value> {
    let (docs, errors) = parse_stream(yaml, &Limits::default());
    assert!(errors.is_none(), "{errors:?}");
    docs.into_iter().map(|d| d.value).collect()
}

/// The export of `pack` for the cluster's release, its binding limited to
/// `namespace`, applied; returns once the API server mutates there.
pub(crate) fn install_map(plane: &ControlPlane, pack: &str, namespace: &str) {
    install_map_for(plane, pack, namespace, "1.37");
}

/// [`install_map`] with the export for `kube_version` (the version matrix
/// installs each release's own).
pub(crate) fn install_map_for(plane: &ControlPlane, pack: &str, namespace: &str, kube_version: &str) {
    install_exported_map(plane, &["--policy", pack, "--kube-version", kube_version], namespace);
}

/// `lifeguard export map ARGS`, its binding limited to `namespace`,
/// applied; returns once the API server mutates there.
pub(crate) fn install_exported_map(plane: &ControlPlane, args: &[&str], namespace: &str) {
    let mut objects = documents(&export_map(args));
    for object in &mut objects {
        if object["kind"] == "MutatingAdmissionPolicyBinding" {
            object["spec"]["matchResources"] =
                json!({"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}});
        }
    }
    for object in &objects {
        plane.kubectl.apply(object);
    }
    let probe = probe();
    wait_for("the exported mutating policy in force", Duration::from_secs(30), || {
        let run = dry_run_json(plane, namespace, &probe);
        match run {
            Ok(stored) if stored["spec"]["containers"][0]["livenessProbe"]["failureThreshold"] != 1 => Ok(()),
            other => Err(format!("{other:?}")),
        }
    });
}

/// Removes every exported mutating policy and binding.
pub(crate) fn remove_map(plane: &ControlPlane) {
    let selector = "app.kubernetes.io/managed-by=lifeguard";
    for kind in ["mutatingadmissionpolicybindings", "mutatingadmissionpolicies"] {
        plane.kubectl.run(&["delete", kind, "-l", selector, "--ignore-not-found", "--wait"]).ok();
    }
    // The API server drops a deleted policy from its cache a moment after
    // the delete returns: until then the next test's objects would still be
    // mutated by the last test's policy.
    // The probe is a Pod: admitted only where a service account exists.
    plane.kubectl.default_service_account("default");
    let probe = probe();
    wait_for("the removed mutating policies out of force", Duration::from_secs(30), || {
        match dry_run_json(plane, "default", &probe) {
            Ok(stored) if stored["spec"]["containers"][0]["livenessProbe"]["failureThreshold"] == 1 => Ok(()),
            other => Err(format!("{other:?}")),
        }
    });
}

/// A Pod whose liveness fails at once: liveness-too-aggressive's fix, in every pack.
fn probe() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "map-probe"},
        "spec": {"containers": [{"name": "app", "image": "example/app:1",
            "livenessProbe": {"httpGet": {"path": "/livez", "port": 8080}, "failureThreshold": 1}}]}
    })
}

/// `create --dry-run=server -o json` of `object` in `namespace`: the
/// object as the API server would store it, or why it refused it.
pub(crate) fn dry_run_json(plane: &ControlPlane, namespace: &str, object: &Value) -> Result<Value, String> {
    let run = dry_run_output(plane, namespace, object);
    if run.code != 0 {
        return Err(run.stderr);
    }
    serde_json::from_str(&run.stdout).map_err(|e| format!("{e}: {}", run.stdout))
}

/// `create --dry-run=server -o json`, as it ran (stdout, and the warnings on stderr).
pub(crate) fn dry_run_output(plane: &ControlPlane, namespace: &str, object: &Value) -> lifeguard_e2e::cluster::Run {
    let mut object = object.clone();
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("namespace");
    }
    plane.kubectl.run_with_input(
        &["create", "--dry-run=server", "-o", "json", "-n", namespace, "-f", "-"],
        Some(&object.to_string()),
    )
}
