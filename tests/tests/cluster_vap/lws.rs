//! LeaderWorkerSets through `export vap`, on their real CRD (the corpus's copy of its chart's): under `Warn`,
//! the LeaderWorkerSets of its project's examples and samples, and a few
//! made to reach each template's semantics, get exactly the covered
//! findings `lifeguard lint` reports on them (the leader's template judged
//! by `NAME-deny`/`NAME-warn`, the workers' by `NAME-deny-2`/`NAME-warn-2`);
//! under enforce a bad worker template is refused, and an update that
//! leaves the templates alone is not judged.

use std::path::PathBuf;
use std::time::Duration;

use lifeguard::input::{Limits, parse_stream};
use lifeguard_e2e::cluster::ControlPlane;
use lifeguard_e2e::cluster::process::wait_for;
use lifeguard_e2e::{LWS_CRD, corpus_dir, files_under};
use policies::{Policy, objects_in};
use serde_json::{Value, json};

use crate::per_template::{assert_flagged, template_differences};
use crate::support::{dry_run, flagged, install, namespace};
use lifeguard_e2e::vap_parity::{export, linted};

/// Installs the LeaderWorkerSet CRD and waits until it is served; `None`
/// (after saying why) without the corpus.
pub(crate) fn install_lws_crd(plane: &ControlPlane) -> Option<PathBuf> {
    let corpus = corpus_dir()?;
    let crd = corpus.join(LWS_CRD.0);
    let run = plane.kubectl.run(&["apply", "--server-side", "-f", &crd.to_string_lossy()]);
    assert_eq!(run.code, 0, "{run:#?}");
    plane.kubectl.wait_established(&[LWS_CRD.1]);
    // The resource is served a moment after the CRD is established.
    wait_for("leaderworkersets served", Duration::from_secs(30), || {
        let run = plane.kubectl.run(&["get", "leaderworkersets", "-A"]);
        if run.code == 0 { Ok(()) } else { Err(run.stderr) }
    });
    Some(corpus)
}

/// The LeaderWorkerSets of LWS's examples (`docs/examples`) and samples
/// (`config/samples`), each with its file.
pub(crate) fn corpus_lws(corpus: &std::path::Path) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for dir in ["layouts/lws/docs/examples", "layouts/lws/config/samples"] {
        for file in files_under(&corpus.join(dir), lifeguard::input::is_manifest) {
            let text = std::fs::read_to_string(&file).expect("read manifest");
            let (docs, _) = parse_stream(&text, &Limits::default());
            for doc in &docs {
                for (_, object) in objects_in(&doc.value) {
                    if object["kind"] == "LeaderWorkerSet" {
                        out.push((file.display().to_string(), object.clone()));
                    }
                }
            }
        }
    }
    out
}

/// A LeaderWorkerSet of `leader` and `worker` pod templates (`Value::Null`: none).
pub(crate) fn lws(name: &str, leader: Value, worker: Value) -> Value {
    let mut template = json!({"size": 2, "workerTemplate": worker});
    if !leader.is_null() {
        template["leaderTemplate"] = leader;
    }
    json!({"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
        "metadata": {"name": name}, "spec": {"replicas": 1, "leaderWorkerTemplate": template}})
}

/// A pod template of one container `name` with `fields` added to it, and
/// `spec` to the pod spec, `annotations` to the template's metadata.
pub(crate) fn template(name: &str, fields: Value, spec: Value, annotations: Value) -> Value {
    let mut container = json!({"name": name, "image": "example/app:1",
        "ports": [{"name": "http", "containerPort": 8080}]});
    for (k, v) in fields.as_object().into_iter().flatten() {
        container[k] = v.clone();
    }
    let mut pod = json!({"containers": [container]});
    for (k, v) in spec.as_object().into_iter().flatten() {
        pod[k] = v.clone();
    }
    json!({"metadata": {"annotations": annotations}, "spec": pod})
}

/// A worker whose liveness names an unknown port: an error of the default pack.
pub(crate) fn bad_worker() -> Value {
    template("worker", json!({"livenessProbe": {"httpGet": {"path": "/livez", "port": "nope"}}}), json!({}), json!({}))
}

/// LeaderWorkerSets made to reach what each template's reading decides:
/// which template a finding is in, the template's own annotations, a
/// worker that runs to completion, no leader template at all.
pub(crate) fn made() -> Vec<(String, Value)> {
    let none = json!({});
    let shared_tcp =
        json!({"livenessProbe": {"tcpSocket": {"port": 8080}}, "readinessProbe": {"tcpSocket": {"port": 8080}}});
    let aggressive = json!({"livenessProbe": {"httpGet": {"path": "/livez", "port": "http"}, "failureThreshold": 1}});
    let hook = json!({"lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", "sleep 40"]}}}});
    let ignore = json!({"lifeguard.dev/ignore": "probe-port-unknown", "lifeguard.dev/ignore-reason": "the port is added by a mutating webhook"});
    let cases = [
        ("worker-only", lws("worker-only", template("leader", none.clone(), none.clone(), none.clone()), bad_worker())),
        (
            "leader-only",
            lws(
                "leader-only",
                template("leader", aggressive.clone(), none.clone(), none.clone()),
                template("worker", none.clone(), none.clone(), none.clone()),
            ),
        ),
        (
            "no-leader",
            lws("no-leader", Value::Null, template("worker", aggressive.clone(), none.clone(), none.clone())),
        ),
        // The same container name in both: each template judged on its own.
        (
            "same-names",
            lws(
                "same-names",
                template("app", aggressive.clone(), none.clone(), none.clone()),
                template("app", hook.clone(), none.clone(), none.clone()),
            ),
        ),
        // The worker's template ignores the rule with a reason: only the leader's is reported.
        (
            "ignored-in-worker",
            lws(
                "ignored-in-worker",
                template(
                    "leader",
                    json!({"livenessProbe": {"httpGet": {"path": "/livez", "port": "nope"}}}),
                    none.clone(),
                    none.clone(),
                ),
                template(
                    "worker",
                    json!({"livenessProbe": {"httpGet": {"path": "/livez", "port": "nope"}}}),
                    none.clone(),
                    ignore,
                ),
            ),
        ),
        // A worker that runs to completion: a shared tcpSocket is probe-endpoint-reused's,
        // not readiness-port-only's (which is a long-running pod's); the leader's the reverse.
        (
            "run-to-completion",
            lws(
                "run-to-completion",
                template("leader", shared_tcp.clone(), none.clone(), none.clone()),
                template("worker", shared_tcp, json!({"restartPolicy": "Never"}), none.clone()),
            ),
        ),
        // A GPU worker whose liveness waits out the boot: the startup probe
        // it lacks is the workers' (a JSON Patch of export map's).
        (
            "gpu-worker",
            lws(
                "gpu-worker",
                template("leader", none.clone(), none.clone(), none.clone()),
                template(
                    "worker",
                    json!({"resources": {"limits": {"nvidia.com/gpu": 1}},
                        "livenessProbe": {"httpGet": {"path": "/livez", "port": "http"}, "initialDelaySeconds": 300}}),
                    none.clone(),
                    none.clone(),
                ),
            ),
        ),
        // A 6 s window and no timeout: the threshold raised, the timeout left unset
        // (no default fills it in a custom resource's template).
        (
            "no-timeout",
            lws(
                "no-timeout",
                template(
                    "leader",
                    json!({"livenessProbe": {"httpGet": {"path": "/livez", "port": "http"}, "periodSeconds": 3, "failureThreshold": 2}}),
                    none.clone(),
                    none.clone(),
                ),
                template("worker", none.clone(), none.clone(), none.clone()),
            ),
        ),
        // A drain declared on the object: the grace period is judged per template.
        ("drain", {
            let mut o = lws(
                "drain",
                template("leader", hook.clone(), json!({"terminationGracePeriodSeconds": 90}), none.clone()),
                template("worker", hook, none.clone(), none),
            );
            o["metadata"]["annotations"] = json!({"lifeguard.dev/drain-seconds": "20"});
            o
        }),
    ];
    cases.into_iter().map(|(name, object)| (format!("made: {name}"), object)).collect()
}

/// What a made LeaderWorkerSet must be flagged for, by which pair: the
/// template's semantics the parity alone might not tell apart.
fn expected_of(file: &str) -> Option<Vec<(&'static str, &'static str, &'static str)>> {
    Some(match file.strip_prefix("made: ")? {
        "worker-only" => vec![("-2", "probe-port-unknown", "worker")],
        "leader-only" => vec![("", "liveness-too-aggressive", "leader")],
        "no-leader" => vec![("-2", "liveness-too-aggressive", "worker")],
        "ignored-in-worker" => vec![("", "probe-port-unknown", "leader")],
        // The worker runs to completion, the leader until deleted.
        "run-to-completion" => vec![("", "readiness-port-only", "leader"), ("-2", "probe-endpoint-reused", "worker")],
        // 40 s of sleep and 20 s of drain: the worker's 30 s default is short, the leader's 90 s is not.
        "drain" => vec![("-2", "grace-period-too-short", "worker")],
        "gpu-worker" => vec![("-2", "startup-probe-missing", "worker")],
        "no-timeout" => vec![("", "liveness-too-aggressive", "leader")],
        _ => return None,
    })
}

/// Waits until the second pair judges the workers: a bad worker flagged.
fn wait_for_the_workers(plane: &ControlPlane, ns: &str) {
    let probe = lws("vap-probe", Value::Null, bad_worker());
    wait_for("the workers' policies in force", Duration::from_secs(30), || {
        let run = dry_run(plane, ns, &probe);
        if flagged(&run).contains(&("probe-port-unknown".to_owned(), "worker".to_owned())) {
            Ok(())
        } else {
            Err(format!("{run:?}"))
        }
    });
}

/// Under `Warn`, every LeaderWorkerSet gets exactly the linter's covered
/// findings, and the workers' come from the second pair.
pub(crate) fn parity(plane: &ControlPlane, pack: &str) {
    parity_with(plane, pack, &[]);
}

/// [`parity`], `extra` added to `lifeguard export vap` (the version matrix's `--kube-version`).
pub(crate) fn parity_with(plane: &ControlPlane, pack: &str, extra: &[&str]) {
    let Some(corpus) = install_lws_crd(plane) else { return };
    crate::support::remove(plane);
    let ns = format!("vap-lws-{pack}");
    namespace(plane, &ns);
    let args: Vec<&str> = ["--policy", pack, "--mode", "warn"].into_iter().chain(extra.iter().copied()).collect();
    install(plane, &export(&args), &ns);
    wait_for_the_workers(plane, &ns);
    let policy = Policy::pack(pack).expect("a built-in pack");
    let objects: Vec<(String, Value)> = corpus_lws(&corpus).into_iter().chain(made()).collect();
    let from_corpus = objects.iter().filter(|(file, _)| !file.starts_with("made: ")).count();
    let (mut compared, mut with_findings, mut by_workers) = (0, 0, 0);
    let mut differences = Vec::new();
    for (file, object) in &objects {
        let run = dry_run(plane, &ns, object);
        assert_eq!(run.code, 0, "{file}: admitted under warn: {run:#?}");
        compared += 1;
        let (cel, lint) = (flagged(&run), linted(object, &policy));
        with_findings += usize::from(!lint.all.is_empty());
        by_workers += usize::from(run.warnings().iter().any(|w| {
            w.contains("ValidatingAdmissionPolicy 'lifeguard-deny-2'")
                || w.contains("ValidatingAdmissionPolicy 'lifeguard-warn-2'")
        }));
        if !lint.agrees(&cel) {
            differences.push(format!("{file} {}: admission {cel:?}, lint {lint:?}", object["metadata"]["name"]));
        }
        if let Some(expected) = expected_of(file) {
            assert_flagged(file, &run, &expected);
        }
        // And each template's by the pair that reads it, none by another.
        differences.extend(template_differences(&run, object, &policy).into_iter().map(|d| format!("{file} {d}")));
    }
    eprintln!(
        "{pack}: {compared} LeaderWorkerSets compared ({from_corpus} from LWS's examples and samples), {with_findings} with covered findings, {by_workers} flagged by the workers' pair, {} disagreements",
        differences.len()
    );
    assert!(differences.is_empty(), "{differences:#?}");
    assert!(from_corpus >= 10, "{from_corpus} LeaderWorkerSets in the corpus");
    assert!(by_workers >= 4, "{by_workers} flagged by the workers' pair");
    crate::support::remove(plane);
}

/// Under enforce, a bad worker template is refused by `NAME-deny-2`, a
/// good one admitted, and an update that leaves the templates alone goes
/// through while one that changes the workers' is judged.
pub(crate) fn deny(plane: &ControlPlane) {
    if install_lws_crd(plane).is_none() {
        return;
    }
    crate::support::remove(plane);
    let ns = "vap-lws-deny";
    namespace(plane, ns);
    let none = json!({});
    let good = template("worker", none.clone(), none.clone(), none.clone());
    // Created before the policy: its worker is bad.
    let old = lws("old", template("leader", none.clone(), none.clone(), none.clone()), bad_worker());
    let created = plane.kubectl.run_with_input(&["create", "-n", ns, "-f", "-"], Some(&old.to_string()));
    assert_eq!(created.code, 0, "{created:#?}");
    install(plane, &export(&["--policy", "default", "--mode", "enforce"]), ns);
    wait_for("the workers' policy denying", Duration::from_secs(30), || {
        let run = dry_run(plane, ns, &lws("vap-probe", Value::Null, bad_worker()));
        if run.code == 1 { Ok(()) } else { Err(format!("{run:?}")) }
    });
    let bad = lws("bad-worker", template("leader", none.clone(), none.clone(), none.clone()), bad_worker());
    let run = dry_run(plane, ns, &bad);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(
        run.stderr.contains("ValidatingAdmissionPolicy 'lifeguard-deny-2' with binding 'lifeguard-deny-2' denied request: probe-port-unknown: container \"worker\""),
        "{run:#?}"
    );
    eprintln!("kubectl: {}", run.stderr.trim_end());
    let run = dry_run(plane, ns, &lws("good", template("leader", none.clone(), none.clone(), none.clone()), good));
    assert_eq!(run.code, 0, "{run:#?}");
    // The leader's template is the first pair's.
    let bad_leader = lws("bad-leader", bad_worker(), template("worker", none.clone(), none.clone(), none));
    let run = dry_run(plane, ns, &bad_leader);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(run.stderr.contains("ValidatingAdmissionPolicy 'lifeguard-deny' with binding 'lifeguard-deny' denied request: probe-port-unknown"), "{run:#?}");
    // A scale of the object admitted before is not judged; a change of its
    // workers' template is, by the findings the old workers did not have.
    let patch =
        |merge: &str| plane.kubectl.run(&["patch", "leaderworkerset", "old", "-n", ns, "--type=merge", "-p", merge]);
    let scale = patch(r#"{"spec":{"replicas":2}}"#);
    assert_eq!(scale.code, 0, "a scale is not judged: {scale:#?}");
    let leader =
        patch(r#"{"spec":{"leaderWorkerTemplate":{"leaderTemplate":{"metadata":{"annotations":{"rev":"2"}}}}}}"#);
    assert_eq!(leader.code, 0, "a change of the leader's template judges the leader's alone: {leader:#?}");
    let workers =
        patch(r#"{"spec":{"leaderWorkerTemplate":{"workerTemplate":{"metadata":{"annotations":{"rev":"2"}}}}}}"#);
    assert_eq!(workers.code, 0, "the workers' old findings are not new: {workers:#?}");
    let added = r#"[{"op": "add", "path": "/spec/leaderWorkerTemplate/workerTemplate/spec/containers/-",
        "value": {"name": "cache", "image": "example/cache:1", "livenessProbe": {"tcpSocket": {"port": "redis"}}}}]"#;
    let workers = plane.kubectl.run(&["patch", "leaderworkerset", "old", "-n", ns, "--type=json", "-p", added]);
    assert_eq!(workers.code, 1, "a new finding in the workers' template is judged: {workers:#?}");
    assert!(
        workers.stderr.contains("'lifeguard-deny-2'")
            && workers.stderr.contains("probe-port-unknown: container \"cache\""),
        "{workers:#?}"
    );
    plane.kubectl.run(&["delete", "leaderworkerset", "old", "-n", ns, "--wait=false"]).ok();
    crate::support::remove(plane);
}

/// A policy that declares LeaderWorkerSet itself (`podTemplates` with its
/// `resource`): its declaration replaces the known reading, here the
/// workers' template alone, run to completion, as the first pair's. Every
/// LeaderWorkerSet gets the linter's covered findings under that policy.
pub(crate) fn declared(plane: &ControlPlane) {
    let Some(corpus) = install_lws_crd(plane) else { return };
    crate::support::remove(plane);
    let ns = "vap-lws-declared";
    namespace(plane, ns);
    let text = "apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\npodTemplates:\n\
                - {kind: LeaderWorkerSet, group: leaderworkerset.x-k8s.io, resource: leaderworkersets,\n   \
                templates: [/spec/leaderWorkerTemplate/workerTemplate], runToCompletion: true}\n";
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("declared.yaml");
    std::fs::write(&file, text).expect("write the policy");
    let yaml = export(&["--policy", &file.display().to_string(), "--mode", "warn"]);
    // The header's comments are filled: read with their lines joined.
    assert!(yaml.replace("\n#   ", " ").contains("# Judged: LeaderWorkerSet (leaderworkerset.x-k8s.io) /spec/leaderWorkerTemplate/workerTemplate (by lifeguard-deny, lifeguard-warn).\n"), "{yaml}");
    install(plane, &yaml, ns);
    let policy = Policy::load(text, "declared.yaml").unwrap_or_else(|e| panic!("{e}"));
    let none = json!({});
    let shared_tcp =
        json!({"livenessProbe": {"tcpSocket": {"port": 8080}}, "readinessProbe": {"tcpSocket": {"port": 8080}}});
    // Restart policy Always, yet run to completion as declared: a shared
    // tcpSocket is probe-endpoint-reused's; the leader is not read.
    let batch = lws(
        "declared-batch",
        template("leader", shared_tcp.clone(), none.clone(), none.clone()),
        template("worker", shared_tcp, none.clone(), none),
    );
    wait_for("the declared kind judged", Duration::from_secs(30), || {
        let run = dry_run(plane, ns, &batch);
        if flagged(&run).contains(&("probe-endpoint-reused".to_owned(), "worker".to_owned())) {
            Ok(())
        } else {
            Err(format!("{run:?}"))
        }
    });
    let run = dry_run(plane, ns, &batch);
    assert!(!flagged(&run).iter().any(|(_, c)| c == "leader"), "the leader is not read: {run:#?}");
    let objects: Vec<(String, Value)> =
        corpus_lws(&corpus).into_iter().chain(made()).chain([("made: declared-batch".to_owned(), batch)]).collect();
    let mut differences = Vec::new();
    for (file, object) in &objects {
        let run = dry_run(plane, ns, object);
        assert_eq!(run.code, 0, "{file}: {run:#?}");
        let (cel, lint) = (flagged(&run), linted(object, &policy));
        if !lint.agrees(&cel) {
            differences.push(format!("{file} {}: admission {cel:?}, lint {lint:?}", object["metadata"]["name"]));
        }
    }
    eprintln!("declared: {} LeaderWorkerSets compared, {} disagreements", objects.len(), differences.len());
    assert!(differences.is_empty(), "{differences:#?}");
    crate::support::remove(plane);
}
