//! The custom resources GPU serving, batch and training run on, as their
//! projects lay them out (`../shared/corpus/layouts/`: LeaderWorkerSet's
//! examples and samples, KubeRay's samples): every pod template they hold
//! is read, and each is judged as the pod it makes.

use lifeguard_e2e::{corpus_dir, yaml_files};
use policies::model::{Workload, custom_pod_kind, escape_token};
use policies::yaml::{Limits, parse_stream};
use policies::{Batch, Policy, lint_object};
use serde_json::Value;

/// Every custom resource of the layouts' plain manifests, with its file.
fn custom_resources() -> Option<Vec<(String, Value)>> {
    let corpus = corpus_dir()?;
    let mut files = Vec::new();
    for dir in
        ["layouts/lws/docs/examples", "layouts/lws/config/samples", "layouts/kuberay/ray-operator/config/samples"]
    {
        yaml_files(&corpus.join(dir), &mut files);
    }
    let mut out = Vec::new();
    for file in files.iter().filter(|f| !f.ends_with("kustomization.yaml")) {
        let text = std::fs::read_to_string(file).expect("a layout file reads");
        let (docs, error) = parse_stream(&text, &Limits::default());
        assert!(error.is_none(), "{}: {error:?}", file.display());
        for doc in docs.into_iter().map(|d| d.value) {
            let kind = doc["kind"].as_str().unwrap_or_default();
            if custom_pod_kind(kind, doc["apiVersion"].as_str().unwrap_or_default()).is_some() {
                out.push((file.display().to_string(), doc));
            }
        }
    }
    Some(out)
}

/// The pointer of every container of every `containers` list in a value,
/// wherever it sits (outside `status`): what a reader of the YAML sees.
fn every_container(value: &Value, at: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter().filter(|(k, _)| k.as_str() != "status") {
                let here = format!("{at}/{}", escape_token(key));
                match (key.as_str(), v) {
                    ("containers", Value::Array(items)) => {
                        out.extend((0..items.len()).map(|i| format!("{here}/{i}")));
                    }
                    _ => every_container(v, &here, out),
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                every_container(v, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_pod_template_of_the_layouts_custom_resources_is_read() {
    let Some(resources) = custom_resources() else { return };
    assert!(resources.len() >= 40, "{} custom resources", resources.len());
    let mut gpu = 0;
    for (file, object) in &resources {
        let mut expected = Vec::new();
        every_container(object, "", &mut expected);
        let workloads = Workload::all_from_object(object).unwrap_or_else(|e| panic!("{file}: {e:?}"));
        let mut read: Vec<String> = workloads
            .iter()
            .flat_map(|w| w.containers().filter(|c| !c.sidecar).map(|c| c.pointer.to_owned()).collect::<Vec<_>>())
            .collect();
        gpu += workloads.iter().map(|w| w.containers().filter(|c| c.gpu_resource().is_some()).count()).sum::<usize>();
        expected.sort();
        read.sort();
        assert_eq!(read, expected, "{file}: {}", object["kind"]);
    }
    assert!(gpu >= 10, "{gpu} GPU containers read");
}

#[test]
fn a_leaderworkerset_of_vllm_is_judged_leader_and_workers() {
    let Some(corpus) = corpus_dir() else { return };
    let file = corpus.join("layouts/lws/docs/examples/vllm/GPU/lws.yaml");
    let text = std::fs::read_to_string(&file).expect("the vLLM example");
    let (docs, _) = parse_stream(&text, &Limits::default());
    let object = docs.into_iter().map(|d| d.value).find(|d| d["kind"] == "LeaderWorkerSet").expect("an LWS");
    let workloads = Workload::all_from_object(&object).expect("reads");
    let templates: Vec<&str> = workloads.iter().map(|w| w.template_pointer.as_str()).collect();
    assert_eq!(templates, ["/spec/leaderWorkerTemplate/leaderTemplate", "/spec/leaderWorkerTemplate/workerTemplate"]);
    assert!(workloads.iter().all(|w| w.long_running && w.containers().any(|c| c.gpu_resource().is_some())));
    let report = lint_object(&object, &Batch::default(), &Policy::default()).expect("lints").expect("a workload");
    // The leader's readiness is a bare port: a finding on the leader's own container.
    let finding = report.findings.iter().find(|f| f.rule == "readiness-port-only").expect("the leader's readiness");
    assert!(finding.pointer.starts_with("/spec/leaderWorkerTemplate/leaderTemplate/spec/containers/0"), "{finding:?}");
}

#[test]
fn kuberays_groups_are_not_told_to_add_the_readiness_probe_kuberay_adds() {
    let Some(resources) = custom_resources() else { return };
    let ray: Vec<&(String, Value)> =
        resources.iter().filter(|(_, o)| o["apiVersion"].as_str().is_some_and(|v| v.starts_with("ray.io/"))).collect();
    assert!(ray.len() >= 20, "{} Ray objects", ray.len());
    for (file, object) in ray {
        // A RayJob that names an existing cluster (clusterSelector) holds no pod template.
        let Some(report) = lint_object(object, &Batch::default(), &Policy::default()).expect("lints") else {
            continue;
        };
        let missing: Vec<&str> = report
            .findings
            .iter()
            .filter(|f| f.rule == "readiness-probe-missing")
            .map(|f| f.pointer.as_str())
            .collect();
        // Only a RayJob's submitter, which KubeRay does not probe, could be; it runs to completion.
        assert!(missing.is_empty(), "{file}: {missing:?}");
    }
}
