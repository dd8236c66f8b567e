//! `lifeguard fix` on Kustomize trees, with the real kustomize on PATH:
//! each fix is written in the user's file that sets its field (the base,
//! or the patch), kept only when building again gives the fixed object,
//! and otherwise left with why. Fixing the files gives, build for build,
//! exactly what fixing each build's output piped in gives.

use std::path::{Path, PathBuf};
use std::process::Command;

use lifeguard_e2e::support::layouts::{Tools, snapshot, tools};
use serde_json::Value;

/// The objects of a stream, in order.
fn objects(text: &[u8]) -> Vec<Value> {
    let text = String::from_utf8_lossy(text);
    let (docs, error) = policies::yaml::parse_stream(&text, &policies::yaml::Limits::default());
    assert!(error.is_none(), "{error:?}");
    docs.into_iter().map(|d| d.value).collect()
}

fn build(tools: &Tools, dir: &Path) -> Vec<u8> {
    let out = Command::new(&tools.kustomize).arg("build").arg(dir).output().expect("kustomize runs");
    assert!(out.status.success(), "{}: {}", dir.display(), String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// The files that differ between two snapshots.
fn changed(before: &[(PathBuf, Vec<u8>)], after: &[(PathBuf, Vec<u8>)]) -> Vec<PathBuf> {
    assert_eq!(before.len(), after.len(), "no file is added or removed");
    after.iter().zip(before).filter(|(a, b)| a != b).map(|(a, _)| a.0.clone()).collect()
}

/// microservices-demo's Kustomize tree (its base, its components and the
/// three overlays of its tests) under the `gpu-serving` pack, which asks
/// every server for a preStop bridge: the base's and the component's files
/// take the fixes of all four builds, and each build then gives what
/// fixing its output gives.
#[test]
fn a_kustomize_trees_fixes_land_in_its_bases_and_each_build_gives_its_output_fixed() {
    let Some(tools) = tools() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let tree = dir.path().join("kustomize");
    let copied = Command::new("cp")
        .arg("-R")
        .arg(tools.layouts.join("microservices-demo/kustomize"))
        .arg(&tree)
        .status()
        .expect("cp runs");
    assert!(copied.success());
    // The builds a walk makes: the base and the overlays that include every component.
    let overlays = ["memorystore", "service-mesh-istio", "spanner"].map(|o| format!("tests/{o}-with-all-components"));
    let roots: Vec<PathBuf> = std::iter::once(tree.clone()).chain(overlays.iter().map(|o| tree.join(o))).collect();
    let policy = ["--policy", "gpu-serving"];
    // What fixing each build's output piped in gives.
    let want: Vec<Vec<Value>> = roots
        .iter()
        .map(|root| {
            let piped = tools.lifeguard(dir.path(), &["fix", policy[0], policy[1], "-"], Some(&build(&tools, root)));
            assert!(piped.status.code().is_some_and(|c| c < 2), "{}", String::from_utf8_lossy(&piped.stderr));
            objects(&piped.stdout)
        })
        .collect();
    let before = snapshot(&tree);

    let diff = tools.lifeguard(dir.path(), &["fix", "--diff", policy[0], policy[1], "kustomize"], None);
    let stderr = String::from_utf8_lossy(&diff.stderr);
    assert_eq!(diff.status.code(), Some(1), "fixes to make: {stderr}");
    assert_eq!(before, snapshot(&tree), "--diff writes nothing");
    let stdout = String::from_utf8_lossy(&diff.stdout);
    assert!(stdout.contains("--- a/kustomize/base/frontend.yaml\n+++ b/kustomize/base/frontend.yaml\n"), "{stdout}");
    assert_eq!(stdout.matches("--- a/kustomize/base/cartservice.yaml").count(), 1, "once for all builds: {stdout}");

    let fixed = tools.lifeguard(dir.path(), &["fix", policy[0], policy[1], "kustomize"], None);
    let stderr = String::from_utf8_lossy(&fixed.stderr);
    assert_eq!(fixed.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains(" error: ") && !stderr.contains("not fixed"), "{stderr}");
    assert!(stderr.contains("in 11 files;"), "each file counted once: {stderr}");
    let files = changed(&before, &snapshot(&tree));
    for file in &files {
        let shown = file.strip_prefix(&tree).expect("under the tree").display().to_string();
        assert!(shown.starts_with("base/") || shown.starts_with("components/"), "{shown}: not a base or component");
        assert!(stderr.contains(&format!("kustomize/{shown}: fixed ")), "{shown}: {stderr}");
    }
    assert_eq!(files.len(), 11, "{files:?}");
    for (root, want) in roots.iter().zip(&want) {
        assert_eq!(&objects(&build(&tools, root)), want, "{}: built after the fix", root.display());
    }
    // Idempotent: nothing left to fix.
    let again = tools.lifeguard(dir.path(), &["fix", policy[0], policy[1], "kustomize"], None);
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(stderr.contains("\nnothing to fix in 4 files; "), "{stderr}");
    assert_eq!(files, changed(&before, &snapshot(&tree)));
}

const BASE: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llm\nspec:\n  selector:\n    matchLabels: {app: llm}\n  template:\n    metadata:\n      labels: {app: llm}\n      annotations:\n        lifeguard.dev/cold-start-seconds: \"430\"\n    spec:\n      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.6.3\n        ports:\n        - {name: http, containerPort: 8000}\n        resources:\n          limits: {nvidia.com/gpu: \"1\"}\n        livenessProbe:\n          httpGet: {path: /health, port: http}\n        readinessProbe:\n          httpGet: {path: /v1/models, port: http}\n";

/// A base and an overlay with `kustomization`; the tree.
fn tree(overlay: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    for sub in ["base", "prod"] {
        std::fs::create_dir_all(root.join(sub)).expect("mkdir");
    }
    std::fs::write(root.join("base/app.yaml"), BASE).expect("write");
    std::fs::write(root.join("base/kustomization.yaml"), "resources: [app.yaml]\n").expect("write");
    for (file, text) in overlay {
        std::fs::write(root.join("prod").join(file), text).expect("write");
    }
    dir
}

/// A field a patch file sets is fixed in that patch; a field an inline
/// patch sets is not (its fix is left out, with why), and the object's
/// other fixes are still made.
#[test]
fn a_field_is_fixed_in_the_patch_that_sets_it_and_an_inline_patchs_is_left_with_why() {
    let Some(tools) = tools() else { return };
    let kustomization = "resources: [../base]\npatches:\n- path: grace.yaml\n- target: {kind: Deployment, name: llm}\n  patch: |-\n    - op: add\n      path: /spec/template/spec/containers/0/startupProbe\n      value: {httpGet: {path: /health, port: http}, periodSeconds: 10, failureThreshold: 3}\n";
    let grace = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llm\nspec:\n  template:\n    spec:\n      terminationGracePeriodSeconds: 5\n      containers:\n      - name: vllm\n        lifecycle:\n          preStop:\n            sleep: {seconds: 20}\n";
    let dir = tree(&[("kustomization.yaml", kustomization), ("grace.yaml", grace)]);
    let root = dir.path();
    let before = snapshot(root);
    let fixed = tools.lifeguard(root, &["fix", "prod"], None);
    let stderr = String::from_utf8_lossy(&fixed.stderr);
    assert_eq!(fixed.status.code(), Some(1), "an error is left: {stderr}");
    assert_eq!(changed(&before, &snapshot(root)), [root.join("prod/grace.yaml")], "{stderr}");
    let patch = std::fs::read_to_string(root.join("prod/grace.yaml")).expect("read");
    assert_eq!(patch, grace.replace("Seconds: 5", "Seconds: 25"), "{stderr}");
    assert!(stderr.contains("prod/grace.yaml: fixed Deployment/llm: [prestop-sleep-only] "), "{stderr}");
    // The inline patch's line, and why.
    let left = "prod/kustomization.yaml:8:72 error[startup-budget-too-short] Deployment/llm: not fixed \
                (prod/kustomization.yaml:8 sets /spec/template/spec/containers/0/startupProbe/failureThreshold \
                in an inline patch, which `fix` does not edit)";
    assert!(stderr.contains(left), "{stderr}");
    let built = objects(&build(&tools, &root.join("prod")));
    assert_eq!(built[0]["spec"]["template"]["spec"]["terminationGracePeriodSeconds"], 25);
}

/// A container a JSON 6902 patch file writes whole takes its new field in
/// that operation's value: in the base, the build would not have it.
#[test]
fn a_container_a_json_patch_writes_whole_is_fixed_in_the_operation() {
    let Some(tools) = tools() else { return };
    let kustomization =
        "resources: [../base]\npatches:\n- path: container.yaml\n  target: {kind: Deployment, name: llm}\n";
    let operations = "- op: replace\n  path: /spec/template/spec/containers/0\n  value:\n    name: vllm\n    image: vllm/vllm-openai:v0.8.5\n    ports:\n    - {name: http, containerPort: 8000}\n    resources:\n      limits: {nvidia.com/gpu: \"1\"}\n    livenessProbe:\n      httpGet: {path: /health, port: http}\n    readinessProbe:\n      httpGet: {path: /v1/models, port: http}\n";
    let dir = tree(&[("kustomization.yaml", kustomization), ("container.yaml", operations)]);
    let root = dir.path();
    let before = snapshot(root);
    let fixed = tools.lifeguard(root, &["fix", "-k", "prod"], None);
    let stderr = String::from_utf8_lossy(&fixed.stderr);
    assert_eq!(changed(&before, &snapshot(root)), [root.join("prod/container.yaml")], "{stderr}");
    let built = objects(&build(&tools, &root.join("prod")));
    let probe = &built[0]["spec"]["template"]["spec"]["containers"][0]["startupProbe"];
    assert_eq!(probe["httpGet"]["path"], "/health", "{stderr}");
    let lint = tools.lifeguard(root, &["lint", "-k", "prod"], None);
    assert_eq!(lint.status.code(), Some(0), "{}", String::from_utf8_lossy(&lint.stdout));
}

/// Two overlays of one base whose fixes of it disagree (each derives the
/// grace period from its own preStop): the first build's is written, the
/// second's is not, and the run says so and fails.
#[test]
fn two_builds_that_fix_a_base_differently_write_it_once_and_say_so() {
    let Some(tools) = tools() else { return };
    let dir = tree(&[]);
    let root = dir.path();
    let base = BASE.replace(
        "    spec:\n      containers:",
        "    spec:\n      terminationGracePeriodSeconds: 5\n      containers:",
    );
    std::fs::write(root.join("base/app.yaml"), &base).expect("write");
    for (overlay, seconds) in [("a", 20), ("b", 30)] {
        std::fs::create_dir_all(root.join(overlay)).expect("mkdir");
        let patch = format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llm\nspec:\n  template:\n    spec:\n      containers:\n      - name: vllm\n        lifecycle:\n          preStop:\n            sleep: {{seconds: {seconds}}}\n"
        );
        std::fs::write(root.join(overlay).join("stop.yaml"), patch).expect("write");
        let kustomization = format!("resources: [../base]\nnameSuffix: -{overlay}\npatches:\n- path: stop.yaml\n");
        std::fs::write(root.join(overlay).join("kustomization.yaml"), kustomization).expect("write");
    }
    std::fs::remove_dir_all(root.join("prod")).expect("rm");
    let fixed = tools.lifeguard(root, &["fix", "--rule", "grace-period-too-short", "."], None);
    let stderr = String::from_utf8_lossy(&fixed.stderr);
    assert_eq!(fixed.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "base/app.yaml error: not fixed for <kustomize build ./b>: <kustomize build ./a> fixes this file otherwise"
        ),
        "{stderr}"
    );
    let written = std::fs::read_to_string(root.join("base/app.yaml")).expect("read");
    assert_eq!(written, base.replace("Seconds: 5", "Seconds: 20"), "a's fix, alone: {stderr}");
}
