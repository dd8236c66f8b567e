//! KubeRay's kinds through `export vap`, on their real CRDs (KubeRay
//! v1.3.2, `.ci/install-kuberay-crds.sh`): under `Warn`, the RayClusters,
//! RayJobs and RayServices of KubeRay's samples, and a few made to reach
//! each template's reading, get exactly the linter's covered findings in
//! the head group (`NAME-deny`/`NAME-warn`) and a RayJob's submitter
//! (`NAME-deny-2`/`NAME-warn-2`, its pods run to completion), and none in
//! a worker group, which the export leaves to the linter (behind a `*`).

use std::time::Duration;

use lifeguard::input::{Limits, parse_stream};
use lifeguard_e2e::cluster::ControlPlane;
use lifeguard_e2e::cluster::process::wait_for;
use lifeguard_e2e::{corpus_dir, files_under, installed_tool};
use policies::{Policy, objects_in};
use serde_json::{Value, json};

use crate::per_template::{assert_flagged, template_differences};
use crate::support::{dry_run, flagged, install, namespace, remove};
use lifeguard_e2e::vap_parity::{export, linted};

/// The CRDs, as `.ci/install-kuberay-crds.sh` installs them, and the CRD each holds.
const CRDS: [(&str, &str); 3] = [
    ("target/tools/kuberay-crds/ray.io_rayclusters.yaml", "rayclusters.ray.io"),
    ("target/tools/kuberay-crds/ray.io_rayjobs.yaml", "rayjobs.ray.io"),
    ("target/tools/kuberay-crds/ray.io_rayservices.yaml", "rayservices.ray.io"),
];

/// Installs KubeRay's CRDs and waits until they are served; `false`
/// (after saying why) when the installer has not run.
pub(crate) fn install_kuberay_crds(plane: &ControlPlane) -> bool {
    for (file, crd) in CRDS {
        let Some(path) = installed_tool(file, ".ci/install-kuberay-crds.sh") else { return false };
        // Server-side: the CRDs are too large for the last-applied annotation.
        let run = plane.kubectl.run(&["apply", "--server-side", "-f", &path.to_string_lossy()]);
        assert_eq!(run.code, 0, "{run:#?}");
        plane.kubectl.wait_established(&[crd]);
    }
    wait_for("KubeRay's kinds served", Duration::from_secs(30), || {
        let run = plane.kubectl.run(&["get", "rayclusters,rayjobs,rayservices", "-A"]);
        if run.code == 0 { Ok(()) } else { Err(run.stderr) }
    });
    true
}

/// The RayClusters, RayJobs and RayServices of KubeRay's samples and chart tests in the corpus.
pub(crate) fn corpus_ray() -> Vec<(String, Value)> {
    let Some(corpus) = corpus_dir() else { return Vec::new() };
    let mut out = Vec::new();
    for file in files_under(&corpus.join("layouts/kuberay"), lifeguard::input::is_manifest) {
        let text = std::fs::read_to_string(&file).expect("read manifest");
        // A chart's templates are not YAML until rendered: what does not parse is skipped.
        let (docs, _) = parse_stream(&text, &Limits::default());
        for doc in &docs {
            for (_, object) in objects_in(&doc.value) {
                let ray = ["RayCluster", "RayJob", "RayService"].iter().any(|k| object["kind"] == *k);
                if ray && object["apiVersion"].as_str().is_some_and(|v| v.starts_with("ray.io/")) {
                    out.push((file.display().to_string(), object.clone()));
                }
            }
        }
    }
    out
}

/// A Ray pod template of one container `name` with `fields` added.
fn node(name: &str, fields: Value) -> Value {
    let mut container = json!({"name": name, "image": "rayproject/ray:2.41.0",
        "ports": [{"name": "gcs", "containerPort": 6379}, {"name": "dashboard", "containerPort": 8265}]});
    for (k, v) in fields.as_object().into_iter().flatten() {
        container[k] = v.clone();
    }
    json!({"spec": {"containers": [container]}})
}

/// A cluster spec: its head, and one worker group.
fn cluster(head: Value, worker: Value) -> Value {
    json!({"headGroupSpec": {"rayStartParams": {}, "template": head},
        "workerGroupSpecs": [{"groupName": "g", "replicas": 1, "minReplicas": 0, "maxReplicas": 2,
            "rayStartParams": {}, "template": worker}]})
}

/// Ray objects made to reach what each template's reading decides.
pub(crate) fn made() -> Vec<(String, Value)> {
    let shared_tcp =
        json!({"livenessProbe": {"tcpSocket": {"port": 6379}}, "readinessProbe": {"tcpSocket": {"port": 6379}}});
    let bad_port = json!({"livenessProbe": {"httpGet": {"path": "/", "port": "nope"}}});
    let aggressive = json!({"livenessProbe": {"httpGet": {"path": "/", "port": "dashboard"}, "failureThreshold": 1}});
    let cases = [
        // The head runs until deleted, the submitter to completion: a shared
        // tcpSocket is readiness-port-only's in one, probe-endpoint-reused's in the other.
        (
            "submitter",
            json!({"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": "submitter"},
                "spec": {"entrypoint": "python -c 'print(1)'",
                    "rayClusterSpec": cluster(node("ray-head", shared_tcp.clone()), node("worker", json!({}))),
                    "submitterPodTemplate": node("submitter", shared_tcp)}}),
        ),
        // A worker group is left to the linter: its bad port is not flagged, the head's is.
        (
            "worker-group",
            json!({"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "worker-group"},
                "spec": cluster(node("ray-head", bad_port.clone()), node("worker", bad_port))}),
        ),
        (
            "service-head",
            json!({"apiVersion": "ray.io/v1", "kind": "RayService", "metadata": {"name": "service-head"},
                "spec": {"rayClusterConfig": cluster(node("ray-head", aggressive), node("worker", json!({})))}}),
        ),
    ];
    cases.into_iter().map(|(name, object)| (format!("made: {name}"), object)).collect()
}

/// What a made object must be flagged for, by which pair.
fn expected_of(file: &str) -> Option<Vec<(&'static str, &'static str, &'static str)>> {
    Some(match file.strip_prefix("made: ")? {
        "submitter" => vec![("", "readiness-port-only", "ray-head"), ("-2", "probe-endpoint-reused", "submitter")],
        "worker-group" => vec![("", "probe-port-unknown", "ray-head")],
        "service-head" => vec![("", "liveness-too-aggressive", "ray-head")],
        _ => return None,
    })
}

/// Under `Warn`, every Ray object gets exactly the linter's covered
/// findings in the templates the export judges, and none in a worker group.
pub(crate) fn parity(plane: &ControlPlane, pack: &str) {
    if !install_kuberay_crds(plane) {
        return;
    }
    remove(plane);
    let ns = format!("vap-ray-{pack}");
    namespace(plane, &ns);
    install(plane, &export(&["--policy", pack, "--mode", "warn"]), &ns);
    let probe = made().into_iter().find(|(f, _)| f == "made: worker-group").map(|(_, o)| o).expect("made");
    wait_for("the policies in force on RayClusters", Duration::from_secs(30), || {
        let run = dry_run(plane, &ns, &probe);
        let hit = flagged(&run).contains(&("probe-port-unknown".to_owned(), "ray-head".to_owned()));
        if hit { Ok(()) } else { Err(format!("{run:?}")) }
    });
    let policy = Policy::pack(pack).expect("a built-in pack");
    let objects: Vec<(String, Value)> = corpus_ray().into_iter().chain(made()).collect();
    let from_corpus = objects.iter().filter(|(file, _)| !file.starts_with("made: ")).count();
    let (mut compared, mut with_findings, mut refused, mut differences) = (0, 0, Vec::new(), Vec::new());
    for (file, object) in &objects {
        let run = dry_run(plane, &ns, object);
        if run.code != 0 {
            // Refused by its CRD's schema (a sample of a field this version lacks, say).
            refused.push(format!("{file}: {}", run.stderr.lines().next().unwrap_or_default()));
            continue;
        }
        compared += 1;
        let (cel, lint) = (flagged(&run), linted(object, &policy));
        with_findings += usize::from(!lint.all.is_empty());
        if !lint.agrees(&cel) {
            differences.push(format!("{file} {}: admission {cel:?}, lint {lint:?}", object["metadata"]["name"]));
        }
        differences.extend(template_differences(&run, object, &policy).into_iter().map(|d| format!("{file} {d}")));
        if let Some(expected) = expected_of(file) {
            assert_flagged(file, &run, &expected);
        }
        if file == "made: worker-group" {
            let worker = flagged(&run).into_iter().filter(|(_, c)| c == "worker").collect::<Vec<_>>();
            assert_eq!(worker, [], "the worker group is left to the linter: {run:#?}");
            assert!(lint.all.contains(&("probe-port-unknown".to_owned(), "worker".to_owned())), "{lint:?}");
        }
    }
    eprintln!(
        "{pack}: {compared} Ray objects compared ({from_corpus} in KubeRay's samples), {with_findings} with covered findings, {} refused by their CRD, {} disagreements",
        refused.len(),
        differences.len()
    );
    assert!(differences.is_empty(), "{differences:#?}");
    assert!(compared >= 40, "{compared} compared; refused: {refused:#?}");
    remove(plane);
}
