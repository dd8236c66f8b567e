//! Kustomize directories and Helm charts as users lay them out
//! (`../shared/corpus/layouts/`), built and rendered by the real kustomize
//! (`.ci/install-kustomize.sh`) and helm (`.ci/install-helm.sh`) that
//! `lifeguard lint` finds on PATH: every finding names a line of the
//! user's own file that holds its field, and equals, object for object,
//! what `lint` says of the tool's output piped in.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use lifeguard_e2e::support::layouts::{snapshot, tools};
use lifeguard_e2e::{installed_tool, repo_root};
use serde_json::Value;

/// What a finding says of which object, wherever it is placed.
fn said(findings: &[Value]) -> BTreeSet<String> {
    findings
        .iter()
        .filter(|f| !f["rule"].is_null())
        .map(|f| format!("{} {}/{}/{} {}", f["rule"], f["kind"], f["namespace"], f["name"], f["path"]))
        .collect()
}

/// Every kustomization in a tree that no other in it builds on, as
/// `lint DIR` builds them.
fn roots(tree: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    lifeguard_e2e::yaml_files(tree, &mut all);
    let dirs: Vec<PathBuf> = all
        .iter()
        .filter(|f| f.ends_with("kustomization.yaml"))
        .filter_map(|f| f.parent().map(Path::to_path_buf))
        .collect();
    let plan = lifeguard::input::render::plan(&dirs);
    assert!(plan.errors.is_empty(), "{:?}", plan.errors);
    plan.roots
}

/// A finding's source line holds its field: the pointer's last key, or
/// for a list item its first line (`- name: ...`).
fn holds_its_field(finding: &Value, root: &Path) -> Result<(), String> {
    let template = &finding["template"];
    let (Some(path), Some(line)) = (template["path"].as_str(), template["line"].as_u64()) else {
        return Err(format!("no source line: {finding}"));
    };
    let text = std::fs::read_to_string(root.join(path)).map_err(|e| format!("{path}: {e}"))?;
    let held = text.lines().nth(usize::try_from(line).unwrap_or(0).saturating_sub(1)).unwrap_or("");
    let last = finding["path"].as_str().and_then(|p| p.rsplit('/').next()).unwrap_or("");
    let ok = if last.parse::<usize>().is_ok() { held.trim_start().starts_with('-') } else { held.contains(last) };
    if ok { Ok(()) } else { Err(format!("{path}:{line} `{held}` does not hold {last}: {finding}")) }
}

#[test]
fn every_overlay_builds_and_each_finding_names_the_source_line_that_sets_its_field() {
    let Some(tools) = tools() else { return };
    let cwd = tools.layouts.clone();
    let mut checked = 0;
    for tree in ["microservices-demo/kustomize", "microservices-demo/kubernetes-manifests", "lws/config/samples"] {
        for root in roots(&cwd.join(tree)) {
            let shown = root.strip_prefix(&cwd).expect("under the layouts").display().to_string();
            let built = tools.json(&cwd, &["-k", &shown], None);
            for finding in built.iter().filter(|f| !f["rule"].is_null()) {
                assert_eq!(finding["file"], format!("<kustomize build {shown}>"), "{finding}");
                holds_its_field(finding, &cwd).unwrap_or_else(|e| panic!("{shown}: {e}"));
                checked += 1;
            }
            // The same findings as the tool's own output piped in.
            let output =
                Command::new(&tools.kustomize).args(["build", &shown]).current_dir(&cwd).output().expect("kustomize");
            assert!(output.status.success(), "{shown}: {}", String::from_utf8_lossy(&output.stderr));
            let piped = tools.json(&cwd, &["-"], Some(&output.stdout));
            assert_eq!(said(&built), said(&piped), "{shown}: lint -k and kustomize build | lint - differ");
        }
    }
    assert!(checked >= 40, "only {checked} findings checked");
}

#[test]
fn a_patch_is_not_an_object_and_the_field_it_sets_lands_on_its_line() {
    let Some(tools) = tools() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("base")).expect("mkdir");
    std::fs::create_dir_all(root.join("prod")).expect("mkdir");
    let base = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  selector:\n    matchLabels: {app: api}\n  template:\n    metadata:\n      labels: {app: api}\n    spec:\n      containers:\n      - name: api\n        image: example/api:1\n        lifecycle:\n          preStop:\n            sleep:\n              seconds: 20\n        readinessProbe:\n          httpGet: {path: /ready, port: 8080}\n";
    std::fs::write(root.join("base/deploy.yaml"), base).expect("write");
    std::fs::write(root.join("base/kustomization.yaml"), "resources:\n- deploy.yaml\n").expect("write");
    // The patch sets liveness to readiness' own endpoint; alone, it is a
    // Deployment without a readiness probe.
    let patch = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  template:\n    spec:\n      terminationGracePeriodSeconds: 5\n      containers:\n      - name: api\n        livenessProbe:\n          httpGet: {path: /ready, port: 8080}\n";
    std::fs::write(root.join("prod/liveness.yaml"), patch).expect("write");
    std::fs::write(
        root.join("prod/kustomization.yaml"),
        "resources:\n- ../base\nnamePrefix: prod-\npatches:\n- path: liveness.yaml\n",
    )
    .expect("write");
    let before = snapshot(root);
    let findings = tools.json(root, &["."], None);
    assert_eq!(before, snapshot(root), "the user's files are never written");
    let rules: Vec<(&str, &str, &str)> = findings
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap_or("-"),
                f["name"].as_str().unwrap_or("-"),
                f["template"]["path"].as_str().unwrap_or("-"),
            )
        })
        .collect();
    assert!(!rules.iter().any(|(rule, _, _)| *rule == "readiness-probe-missing"), "the patch linted alone: {rules:?}");
    let reused = findings.iter().find(|f| f["rule"] == "probe-endpoint-reused").expect("the built object's finding");
    assert_eq!(reused["name"], "prod-api", "the built object is named");
    assert_eq!(reused["template"]["path"], "prod/liveness.yaml", "{reused}");
    assert_eq!(reused["template"]["line"], 11, "the patch's livenessProbe line: {reused}");
    // A value: the patch's, where the patch sets it; the base's, where only the base does.
    let at = |rule: &str| {
        let f = findings.iter().find(|f| f["rule"] == rule).unwrap_or_else(|| panic!("{rule}: {findings:#?}"));
        (f["template"]["path"].as_str().unwrap_or("-").to_owned(), f["template"]["line"].as_u64().unwrap_or(0))
    };
    assert_eq!(at("grace-period-too-short"), ("prod/liveness.yaml".to_owned(), 8), "the patch's grace period");
    assert_eq!(at("prestop-sleep-only"), ("base/deploy.yaml".to_owned(), 18), "the base's `seconds: 20`");
    // Text names the source line first and the build after it.
    let text = tools.lifeguard(root, &["lint", "--fail-on", "never", "."], None);
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(
        stdout.contains("prod/liveness.yaml:11:9 ") && stdout.contains("rendered: <kustomize build ./prod>:"),
        "{stdout}"
    );
    // fix writes the grace period where the patch sets it, and nothing else.
    let fixed = tools.lifeguard(root, &["fix", "."], None);
    let stderr = String::from_utf8_lossy(&fixed.stderr);
    let changed: Vec<PathBuf> =
        snapshot(root).into_iter().zip(&before).filter(|(a, b)| a != *b).map(|(a, _)| a.0).collect();
    assert_eq!(changed, [root.join("prod/liveness.yaml")], "{stderr}");
    let patch = std::fs::read_to_string(root.join("prod/liveness.yaml")).expect("read");
    assert!(patch.contains("      terminationGracePeriodSeconds: 25\n"), "{patch}\n{stderr}");
}

#[test]
fn a_chart_directory_renders_as_helm_template_output_piped_in() {
    let Some(tools) = tools() else { return };
    let cwd = tools.layouts.clone();
    for chart in ["microservices-demo/helm-chart", "lws/charts/lws", "kuberay/helm-chart/ray-cluster"] {
        let native = tools.json(&cwd, &[chart, "--release-name", "shop", "--namespace", "store"], None);
        let helm = installed_tool("target/tools/helm", ".ci/install-helm.sh").expect("helm");
        let output = Command::new(helm)
            .args(["template", "shop", chart, "--namespace", "store"])
            .current_dir(&cwd)
            .output()
            .expect("helm");
        assert!(output.status.success(), "{chart}: {}", String::from_utf8_lossy(&output.stderr));
        let piped = tools.json(&cwd, &["--helm-chart-root", chart, "-"], Some(&output.stdout));
        assert_eq!(said(&native), said(&piped), "{chart}");
        let lines = |f: &[Value]| -> Vec<Value> { f.iter().map(|f| f["template"].clone()).collect() };
        assert_eq!(lines(&native), lines(&piped), "{chart}: the same template lines");
        assert!(native.iter().all(|f| f["file"] == format!("<helm template {chart}>")), "{chart}");
    }
    // --values and --set reach helm.
    let set = tools.json(&cwd, &["microservices-demo/helm-chart", "--set", "adService.create=false"], None);
    let all = tools.json(&cwd, &["microservices-demo/helm-chart"], None);
    let has = |f: &[Value]| f.iter().any(|f| f["name"] == "adservice");
    assert!(has(&all) && !has(&set), "--set adService.create=false drops adservice");
}

#[test]
fn a_repository_walk_builds_and_renders_without_an_input_error() {
    let Some(tools) = tools() else { return };
    let out = tools.lifeguard(&tools.layouts, &["lint", "--format", "json", "--fail-on", "never", "."], None);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let findings: Vec<Value> = serde_json::from_slice(&out.stdout).expect("JSON");
    let about_inputs = |severity: &str| -> Vec<&Value> {
        findings.iter().filter(|f| f["rule"].is_null() && f["severity"] == severity).collect()
    };
    let errors = about_inputs("error");
    assert!(errors.is_empty(), "{errors:#?}");
    // Never silent: every input that gave no object is named with why; the
    // files the builds read among them, the components nothing includes
    // warned about.
    let notes = about_inputs("info");
    let note_of =
        |file: &str| notes.iter().find(|n| n["file"] == file).and_then(|n| n["message"].as_str()).unwrap_or_default();
    assert!(
        note_of("./microservices-demo/kustomize/base/frontend.yaml")
            .contains("./microservices-demo/kustomize/base/kustomization.yaml reads it"),
        "{notes:#?}"
    );
    assert!(note_of("./kuberay/ray-operator/config/samples/ray-job.use-existing-raycluster.yaml").contains("RayJob"));
    let warned: BTreeSet<&str> = about_inputs("warning").iter().filter_map(|w| w["file"].as_str()).collect();
    assert!(warned.contains("./microservices-demo/kustomize/components/alloydb"), "{warned:?}");
    // Containers no table reads (KubeRay's RayCronJob, LWS's DisaggregatedSet,
    // built by kustomize) are warned about on their own file's line, with
    // the declaration that has them checked.
    let unread: Vec<(&str, &str)> = about_inputs("warning")
        .iter()
        .filter(|w| w["message"].as_str().is_some_and(|m| m.contains("in a pod template lifeguard does not read")))
        .filter_map(|w| Some((w["file"].as_str()?, w["message"].as_str()?)))
        .collect();
    for (file, kind) in [
        ("kuberay/ray-operator/config/samples/ray-cronjob.sample.yaml", "RayCronJob"),
        ("lws/config/samples/disaggregatedset_v1_disaggregatedset.yaml", "DisaggregatedSet"),
    ] {
        assert!(
            unread.iter().any(|(f, m)| f.ends_with(file) && m.contains(&format!("podTemplates: [{{kind: {kind},"))),
            "{file}: {unread:#?}"
        );
    }
    let files: BTreeSet<&str> =
        findings.iter().filter(|f| !f["rule"].is_null()).filter_map(|f| f["file"].as_str()).collect();
    for rendered in
        ["<kustomize build ./microservices-demo/kustomize>", "<helm template ./microservices-demo/helm-chart>"]
    {
        assert!(files.contains(rendered), "{rendered} not among {files:?}");
    }
    // No file a build reads is linted on its own.
    assert!(!files.iter().any(|f| f.contains("kustomize/base/")), "{files:?}");
    let _ = repo_root();
}

#[test]
fn kubectl_kustomize_builds_when_kustomize_is_not_on_path_and_neither_is_one_error() {
    let Some(tools) = tools() else { return };
    let Some(kubectl) = installed_tool("target/tools/kubectl", ".ci/install-helm.sh") else { return };
    let only = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink(&kubectl, only.path().join("kubectl")).expect("symlink kubectl");
    let cwd = tools.layouts.clone();
    let overlay = "microservices-demo/kustomize/tests/spanner-with-all-components";
    let with = |path: &Path, args: &[&str]| {
        let mut all = vec!["lint", "--format", "json", "--fail-on", "never"];
        all.extend_from_slice(args);
        Command::new(&tools.lifeguard).args(&all).current_dir(&cwd).env("PATH", path).output().expect("lifeguard")
    };
    let by_kubectl = with(only.path(), &["-k", overlay]);
    assert_eq!(by_kubectl.status.code(), Some(0), "{}", String::from_utf8_lossy(&by_kubectl.stderr));
    let by_kubectl: Vec<Value> = serde_json::from_slice(&by_kubectl.stdout).expect("JSON");
    let by_kustomize = tools.json(&cwd, &["-k", overlay], None);
    assert!(!by_kustomize.is_empty());
    assert_eq!(said(&by_kubectl), said(&by_kustomize), "kubectl kustomize and kustomize build agree");
    // Neither: an input error naming both, exit 2, and the rest still linted.
    let empty = tempfile::tempdir().expect("tempdir");
    let neither = with(empty.path(), &["-k", overlay, "microservices-demo/kubernetes-manifests/adservice.yaml"]);
    assert_eq!(neither.status.code(), Some(2));
    let report: Vec<Value> = serde_json::from_slice(&neither.stdout).expect("JSON");
    let errors: Vec<&Value> = report.iter().filter(|f| f["rule"].is_null()).collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let message = errors[0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("`kustomize`") && message.contains("`kubectl`"), "{message}");
    assert!(
        report.iter().any(|f| f["file"] == "microservices-demo/kubernetes-manifests/adservice.yaml"),
        "the rest linted"
    );
}

/// `simulate` reads builds and charts as `lint` does: the verdicts of
/// `simulate -k DIR` and of a chart directory are those of the tool's own
/// output piped in, object for object (the file each names aside).
#[test]
fn simulate_gives_a_build_and_a_chart_the_verdicts_of_their_output_piped_in() {
    let Some(tools) = tools() else { return };
    let cwd = tools.layouts.clone();
    let verdicts = |args: &[&str], stdin: Option<&[u8]>| -> Vec<(Value, Value, Value, Value, Value)> {
        let mut all = vec!["simulate", "--format", "json"];
        all.extend_from_slice(args);
        let out = tools.lifeguard(&cwd, &all, stdin);
        assert_ne!(out.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        let entries: Vec<Value> = serde_json::from_slice(&out.stdout).expect("JSON");
        let fields = |e: &Value| (e["kind"].clone(), e["name"].clone(), e["container"].clone(), e["scenario"].clone());
        entries
            .iter()
            .map(|e| {
                let (k, n, c, s) = fields(e);
                (k, n, c, s, e["verdict"].clone())
            })
            .collect()
    };
    let overlay = "lws/config/samples";
    let built = verdicts(&["-k", overlay], None);
    assert!(built.iter().any(|v| v.0 == "LeaderWorkerSet"), "{built:#?}");
    let output = Command::new(&tools.kustomize).args(["build", overlay]).current_dir(&cwd).output().expect("kustomize");
    assert_eq!(built, verdicts(&["-"], Some(&output.stdout)), "simulate -k and kustomize build | simulate - differ");

    let chart = "kuberay/helm-chart/ray-cluster";
    let native = verdicts(&[chart, "--release-name", "ray"], None);
    assert!(native.iter().any(|v| v.0 == "RayCluster"), "{native:#?}");
    let helm = installed_tool("target/tools/helm", ".ci/install-helm.sh").expect("helm");
    let output = Command::new(helm).args(["template", "ray", chart]).current_dir(&cwd).output().expect("helm");
    assert_eq!(native, verdicts(&["-"], Some(&output.stdout)), "a chart and helm template | simulate - differ");
}
