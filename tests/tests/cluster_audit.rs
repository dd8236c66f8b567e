//! `lifeguard audit` against the real kube-apiserver: every pod-bearing
//! object of the shared corpus, created with its Services, is judged
//! exactly as `lifeguard lint` judges its file alone (the differences the
//! API server's defaults make are listed and explained); controller-owned
//! objects are skipped and a custom resource with a pod template is read;
//! an API server that stops answering ends the audit within the request
//! timeout.
//!
//! Over 400 lines: six tests, each an audit session against the one control
//! plane a test binary starts, with the objects, CRDs and freezing proxy it
//! needs written out beside it; another file would start another control plane.

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

mod audit_corpus;
mod browser;

use std::collections::BTreeSet;
use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use audit_corpus::parity::{self, judged};
use audit_corpus::{lifeguard, lifeguard_with};
use lifeguard_e2e::cluster::ControlPlane;
use lifeguard_e2e::support::deployment::Deployment;
use serde_json::{Value, json};

#[test]
fn every_corpus_object_is_judged_as_lint_judges_its_file_and_simulated_as_simulate_does() {
    let Some(plane) = ControlPlane::shared() else { return };
    let Some(loaded) = audit_corpus::load(plane, "au") else { return };
    let audit = parity::findings(plane, &loaded);

    // The HTML page holds the same findings and verdicts as the JSON report.
    let joined = loaded.namespaces.join(",");
    let html = lifeguard(plane, &["audit", "--format", "html", "--fail-on", "never", "--simulate", "-n", &joined]);
    assert_eq!(html.code, 0, "{}", html.stderr);
    let json: Vec<Value> = serde_json::from_str(&audit.stdout).expect("audit's JSON");
    let findings = json.iter().filter(|e| e["rule"].as_str().is_some_and(|r| r != "simulate")).count();
    let verdict_count = json.iter().filter(|e| e["verdict"].is_string()).count();
    assert_eq!(html.stdout.matches("<article class=\"item finding ").count(), findings, "findings on the HTML page");
    // The verdicts as `simulate --format html` draws them: a row each, and
    // an SVG timeline per container with a panel per verdict, well-formed,
    // in a real browser.
    let containers: BTreeSet<Vec<String>> =
        audit_corpus::verdicts(&audit.stdout).into_keys().map(|k| k[..4].to_vec()).collect();
    assert_eq!(html.stdout.matches("<tr class=\"verdict\"").count(), verdict_count, "verdicts on the HTML page");
    if let Some(chromium) = browser::chromium() {
        let dir = lifeguard_e2e::repo_root().join("target/html-report");
        std::fs::create_dir_all(&dir).expect("target/html-report");
        let page = dir.canonicalize().expect("an absolute path").join("audit-corpus-simulate.html");
        std::fs::write(&page, &html.stdout).expect("write the page");
        let dom = browser::rendered(&chromium, &page, &page.with_extension("png"));
        assert_eq!(dom.matches("<tr class=\"verdict\"").count(), verdict_count, "verdicts in the DOM");
        let panels = browser::svg_panels(&dom);
        assert_eq!(panels.len(), containers.len(), "one timeline per container simulated");
        assert_eq!(panels.iter().sum::<usize>(), verdict_count, "a panel per verdict");
        eprintln!(
            "audit --simulate --format html: {} bytes, {} timelines, {verdict_count} verdicts",
            html.stdout.len(),
            panels.len()
        );
    }

    parity::verdicts_agree(plane, &loaded, &audit);
    loaded.delete(plane);
}

/// A CRD whose objects carry a pod template, as Argo Rollouts' do.
fn rollout_crd() -> Value {
    let containers =
        json!({"type": "array", "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "rollouts.audit.lifeguard.dev"},
        "spec": {"group": "audit.lifeguard.dev", "scope": "Namespaced",
            "names": {"plural": "rollouts", "singular": "rollout", "kind": "Rollout"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object", "properties": {"spec": {"type": "object", "properties": {
                    "replicas": {"type": "integer"},
                    "template": {"type": "object", "properties": {
                        "metadata": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                            "properties": {"containers": containers}}}}}}}}}}]}
    })
}

/// What the shared endpoint checks, which the spec cannot show: the
/// annotation a user states it with.
fn declared_dependency() -> Value {
    json!({"lifeguard.dev/probe-checks": "readiness=dependency"})
}

/// A pod spec with one liveness and readiness on the same endpoint.
fn reused_endpoint_spec() -> Value {
    json!({"containers": [{"name": "app", "image": "example/app:1",
        "ports": [{"name": "http", "containerPort": 8080}],
        "livenessProbe": {"httpGet": {"path": "/health", "port": "http"}},
        "readinessProbe": {"httpGet": {"path": "/health", "port": "http"}}}]})
}

#[test]
fn owned_objects_are_skipped_and_a_custom_resource_with_a_pod_template_is_audited() {
    let Some(plane) = ControlPlane::shared() else { return };
    let ns = "audit-kinds";
    plane.kubectl.namespace(ns, &[]);
    plane.kubectl.default_service_account(ns);
    plane.kubectl.apply(&rollout_crd());
    lifeguard_e2e::cluster::process::wait_for("the CRD established", Duration::from_secs(30), || {
        let run = plane.kubectl.run(&["get", "rollouts.audit.lifeguard.dev", "-n", ns]);
        if run.code == 0 { Ok(()) } else { Err(run.stderr) }
    });
    let rollout = json!({"apiVersion": "audit.lifeguard.dev/v1", "kind": "Rollout",
        "metadata": {"name": "canary", "namespace": ns},
        "spec": {"replicas": 2, "template": {"metadata": {"labels": {"app": "canary"}, "annotations": declared_dependency()},
            "spec": reused_endpoint_spec()}}});
    plane.kubectl.apply(&rollout);
    let pod = |name: &str, owners: Value| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "ownerReferences": owners,
            "annotations": declared_dependency()}, "spec": reused_endpoint_spec()})
    };
    let owner = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1",
        "uid": "6b1e0f4c-1111-4222-8333-944455556666", "controller": true}]);
    plane.kubectl.apply(&pod("owned", owner));
    plane.kubectl.apply(&pod("bare", json!([])));

    let audit = lifeguard(plane, &["audit", "--format", "json", "--fail-on", "never", "-n", ns]);
    assert_eq!(audit.code, 0, "{audit:#?}");
    let objects: BTreeSet<(String, String)> = judged(&audit.stdout, |_| String::new())
        .into_iter()
        .filter(|(_, f)| f.iter().any(|(rule, _, _)| rule == "probe-endpoint-reused"))
        .map(|((_, kind, name), _)| (kind, name))
        .collect();
    let expected: BTreeSet<(String, String)> =
        [("Pod", "bare"), ("Rollout", "canary")].iter().map(|(k, n)| ((*k).to_owned(), (*n).to_owned())).collect();
    assert_eq!(objects, expected, "{}", audit.stdout);
    // The table counts what was judged; the owned Pod is its ReplicaSet's.
    let text = lifeguard(plane, &["audit", "-n", ns, "--fail-on", "never"]);
    // docs/audit.md shows this run, as the binary prints it.
    let shown = format!("$ lifeguard audit -n {ns} --fail-on never\n{}", text.stdout);
    lifeguard_e2e::docs::assert_marked_block("docs/audit.md", "audit-output", &shown);
    assert!(text.stdout.contains("Rollout/audit-kinds/canary"), "{}", text.stdout);
    let row = text.stdout.lines().find(|l| l.starts_with(ns)).unwrap_or_default().to_owned();
    assert!(row.split_whitespace().nth(1) == Some("2"), "two workloads judged: {}", text.stdout);
    // --kinds narrows to what it names.
    let pods = lifeguard(plane, &["audit", "--format", "json", "--fail-on", "never", "-n", ns, "--kinds", "pods"]);
    let kinds: BTreeSet<String> = judged(&pods.stdout, |_| String::new()).into_keys().map(|(_, k, _)| k).collect();
    assert_eq!(kinds, BTreeSet::from(["Pod".to_owned()]), "{}", pods.stdout);
    // --simulate: the verdicts to act on, after the findings; docs/audit.md shows it.
    let args = ["audit", "-n", ns, "--simulate", "--quiet", "--fail-on", "never"];
    let simulated = lifeguard(plane, &args);
    assert_eq!(simulated.code, 0, "{simulated:#?}");
    let section = simulated.stdout.split_once("\n\n").map(|(_, section)| section).unwrap_or_default();
    for workload in ["Pod/audit-kinds/bare", "Rollout/audit-kinds/canary"] {
        let line = section.lines().find(|l| l.trim_start().starts_with(workload)).unwrap_or_default();
        assert!(line.contains("restart storm"), "{workload} in a 2-minute stall: {}", simulated.stdout);
    }
    assert!(section.contains("stall:2m: restart-storm (error), 2 workloads:"), "{}", simulated.stdout);
    assert!(!section.contains("Pod/audit-kinds/owned"), "{}", simulated.stdout);
    let shown = format!("$ lifeguard {}\n{}", args.join(" "), simulated.stdout);
    lifeguard_e2e::docs::assert_marked_block("docs/audit.md", "audit-simulate-output", &shown);
    let unknown = lifeguard(plane, &["audit", "-n", ns, "--kinds", "rollout.nowhere.example"]);
    assert_eq!(unknown.code, 2, "{unknown:#?}");
    assert!(unknown.stderr.contains("--kinds \"rollout.nowhere.example\""), "{}", unknown.stderr);
}

/// A loopback TCP proxy to the API server that, once `freeze` is set,
/// stops passing bytes either way while keeping every connection open:
/// an API server that stops answering.
struct Proxy {
    port: u16,
    freeze: Arc<AtomicBool>,
    /// Bytes passed from the client.
    sent: Arc<AtomicUsize>,
}

impl Proxy {
    fn start(upstream: &str) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let (freeze, sent) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
        let upstream = upstream.trim_start_matches("https://").to_owned();
        let (f, s) = (Arc::clone(&freeze), Arc::clone(&sent));
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(server) = TcpStream::connect(&upstream) else { continue };
                let pipe = |mut from: TcpStream,
                            mut to: TcpStream,
                            count: Option<Arc<AtomicUsize>>,
                            freeze: Arc<AtomicBool>| {
                    std::thread::spawn(move || {
                        let mut buf = [0_u8; 16 * 1024];
                        let deadline = Instant::now() + Duration::from_secs(120);
                        while Instant::now() < deadline {
                            let Ok(n) = from.read(&mut buf) else { return };
                            if n == 0 {
                                return;
                            }
                            // Frozen: hold the bytes and the connection, answer nothing.
                            while freeze.load(Ordering::SeqCst) && Instant::now() < deadline {
                                std::thread::sleep(Duration::from_millis(50));
                            }
                            if let Some(count) = &count {
                                count.fetch_add(n, Ordering::SeqCst);
                            }
                            if to.write_all(&buf[..n]).is_err() {
                                return;
                            }
                        }
                    });
                };
                let (Ok(c2), Ok(s2)) = (client.try_clone(), server.try_clone()) else { continue };
                pipe(client, server, Some(Arc::clone(&s)), Arc::clone(&f));
                pipe(s2, c2, None, Arc::clone(&f));
            }
        });
        Proxy { port, freeze, sent }
    }
}

#[test]
fn an_api_server_that_stops_answering_ends_the_audit_within_the_request_timeout() {
    let Some(plane) = ControlPlane::shared() else { return };
    // Enough namespaces that the audit is mid-way when the answers stop.
    let namespaces: Vec<String> = (0..40).map(|i| format!("audit-stall-{i}")).collect();
    for ns in &namespaces {
        plane.kubectl.namespace(ns, &[]);
    }
    let proxy = Proxy::start(&plane.server);
    let kubeconfig_text = std::fs::read_to_string(&plane.kubeconfig)
        .expect("kubeconfig")
        .replace(&plane.server, &format!("https://127.0.0.1:{}", proxy.port));
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, kubeconfig_text).expect("write");
    let (freeze, sent) = (Arc::clone(&proxy.freeze), Arc::clone(&proxy.sent));
    // Freeze once a few namespaces' requests have gone through.
    let watcher = std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(60);
        while sent.load(Ordering::SeqCst) < 12_000 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
        freeze.store(true, Ordering::SeqCst);
    });
    let joined = namespaces.join(",");
    let started = Instant::now();
    let run = lifeguard_with(
        &kubeconfig,
        &["audit", "--format", "json", "--kinds", "deployments,pods,jobs", "--request-timeout", "3", "-n", &joined],
    );
    let took = started.elapsed();
    watcher.join().expect("watcher");
    assert_eq!(run.code, 2, "{run:#?}");
    assert!(run.stderr.contains("did not answer within 3 s (--request-timeout)"), "{}", run.stderr);
    assert!(run.stderr.contains("the audit stopped"), "{}", run.stderr);
    // One request's timeout, not one per retry or per namespace left.
    assert!(took < Duration::from_secs(12), "took {took:?}");
    // What was read before the stall is still reported.
    let entries: Vec<Value> = serde_json::from_str(&run.stdout).expect("a JSON report");
    let _ = entries;
    for ns in &namespaces {
        plane.kubectl.run(&["delete", "namespace", ns, "--wait=false"]).ok();
    }
}

/// A kubeconfig that authenticates with `token` (a service account's).
fn token_kubeconfig(plane: &ControlPlane, token: &str, dir: &Path) -> PathBuf {
    let path = dir.join("token-kubeconfig");
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n    server: {}\n    certificate-authority: {}\nusers:\n- name: audit\n  user:\n    token: {token}\ncontexts:\n- name: audit\n  context:\n    cluster: test\n    user: audit\ncurrent-context: audit\n",
        plane.server,
        plane.pki.ca_file.display()
    );
    std::fs::write(&path, text).expect("write the kubeconfig");
    path
}

#[test]
fn the_charts_read_only_role_is_enough_and_a_refused_list_is_a_warning() {
    let Some(plane) = ControlPlane::shared() else { return };
    let Some(helm) = plane.helm() else { return };
    let Some(corpus) = lifeguard_e2e::corpus_dir() else { return };
    // The custom resource another test reads is granted as the chart grants one.
    plane.kubectl.apply(&rollout_crd());
    let rendered = lifeguard_e2e::cluster::chart::Rendered::render(
        &helm,
        &plane.kubectl,
        &[
            "audit.enabled=true",
            "certManager.enabled=false",
            "audit.extraResources[0].apiGroups[0]=audit.lifeguard.dev,audit.extraResources[0].resources[0]=rollouts",
        ],
    );
    let role = rendered.find("ClusterRole", None).expect("the chart's audit ClusterRole").clone();
    let (ns, work) = ("audit-rbac", "audit-rbac-work");
    for n in [ns, work] {
        plane.kubectl.namespace(n, &[]);
        plane.kubectl.default_service_account(n);
    }
    // A kind of the engine's own table installed: the chart's role must
    // grant it without being told (audit lists it outright).
    install_lws_crd(plane, &corpus);
    let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "once", "namespace": work},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "run", "image": "example/run:1",
            "readinessProbe": {"exec": {"command": ["true"]}}}]}}}});
    plane.kubectl.apply(&job);
    let deployment = Deployment::new("web").namespace(work).pod_spec(reused_endpoint_spec()).build();
    plane.kubectl.apply(&deployment);
    plane.kubectl.run(&["create", "serviceaccount", "auditor", "-n", ns]);
    let bind = |role_name: &str| {
        plane.kubectl.run(&["delete", "clusterrolebinding", "lifeguard-audit-test", "--ignore-not-found"]).ok();
        plane
            .kubectl
            .run(&[
                "create",
                "clusterrolebinding",
                "lifeguard-audit-test",
                "--clusterrole",
                role_name,
                &format!("--serviceaccount={ns}:auditor"),
            ])
            .ok();
    };
    let mut chart_role = role.clone();
    chart_role["metadata"] = json!({"name": "lifeguard-audit-chart"});
    plane.kubectl.apply(&chart_role);
    bind("lifeguard-audit-chart");
    let dir = tempfile::tempdir().expect("tempdir");
    let token = plane.kubectl.run(&["create", "token", "auditor", "-n", ns]).ok().trim().to_owned();
    let kubeconfig = token_kubeconfig(plane, &token, dir.path());
    let audit_json = |args: &[&str]| {
        let mut all = vec!["audit", "--format", "json", "--fail-on", "never"];
        all.extend_from_slice(args);
        lifeguard_with(&kubeconfig, &all)
    };
    // RBAC takes a moment to reach the authorizer's cache.
    lifeguard_e2e::cluster::process::wait_for("the binding in force", Duration::from_secs(30), || {
        let run = audit_json(&["-n", work]);
        if run.code == 0 && !run.stderr.contains("lifeguard: warning") { Ok(()) } else { Err(run.stderr) }
    });
    // The whole cluster, with the chart's role only: no warning, the Deployment judged.
    let all = audit_json(&["-A"]);
    assert_eq!(all.code, 0, "{all:#?}");
    assert!(!all.stderr.contains("lifeguard: warning"), "{}", all.stderr);
    let objects: BTreeSet<String> =
        judged(&all.stdout, |_| String::new()).into_keys().map(|(_, k, n)| format!("{k}/{n}")).collect();
    assert!(objects.contains("Deployment/web"), "{}", all.stdout);

    // Without `list` on Jobs: a warning naming them and the verb; the rest reported.
    let mut narrowed = role;
    narrowed["metadata"] = json!({"name": "lifeguard-audit-no-jobs"});
    for rule in narrowed["rules"].as_array_mut().expect("rules") {
        if rule["apiGroups"] == json!(["batch"]) {
            rule["resources"] = json!(["cronjobs"]);
        }
    }
    plane.kubectl.apply(&narrowed);
    bind("lifeguard-audit-no-jobs");
    let refused =
        lifeguard_e2e::cluster::process::wait_for("the narrowed role in force", Duration::from_secs(30), || {
            let run = audit_json(&["-n", work]);
            if run.stderr.contains("jobs.batch") { Ok(run) } else { Err(run.stderr) }
        });
    assert_eq!(refused.code, 0, "{refused:#?}");
    assert!(
        refused.stderr.contains(&format!(
            "warning: cannot list jobs.batch in namespace {work}: the credentials lack `list` on jobs.batch"
        )),
        "{}",
        refused.stderr
    );
    let kinds: BTreeSet<String> = judged(&refused.stdout, |_| String::new()).into_keys().map(|(_, k, _)| k).collect();
    assert!(kinds.contains("Deployment"), "the rest is reported: {}", refused.stdout);
    // With nothing readable at all, it is an input error (exit 2).
    plane.kubectl.run(&["delete", "clusterrolebinding", "lifeguard-audit-test"]).ok();
    let nothing = lifeguard_e2e::cluster::process::wait_for("the binding gone", Duration::from_secs(30), || {
        let run = audit_json(&["-n", work]);
        if run.code == 2 { Ok(run) } else { Err(run.stderr) }
    });
    assert!(nothing.stderr.contains("nothing could be read"), "{}", nothing.stderr);
}

/// A LeaderWorkerSet, whose CRD (LeaderWorkerSet's own, from the shared
/// corpus's layout of the project) has no `spec.template.spec.containers`:
/// audit reads it because the engine knows its pod templates, and judges
/// the leader's and the workers' as the pods they make.
#[test]
fn a_leaderworkerset_is_audited_by_the_engines_table_not_its_schema() {
    let Some(plane) = ControlPlane::shared() else { return };
    let Some(corpus) = lifeguard_e2e::corpus_dir() else { return };
    let ns = "audit-lws";
    plane.kubectl.namespace(ns, &[]);
    plane.kubectl.default_service_account(ns);
    install_lws_crd(plane, &corpus);
    let server = |name: &str, probe: Value| {
        json!({"name": name, "image": "vllm/vllm-openai:v0.8.5", "resources": {"limits": {"nvidia.com/gpu": "8"}},
            "livenessProbe": probe})
    };
    let http = json!({"httpGet": {"path": "/health", "port": 8080}, "initialDelaySeconds": 120});
    let exec = json!({"exec": {"command": ["ray", "health-check"]}, "initialDelaySeconds": 120});
    let lws = json!({"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
        "metadata": {"name": "vllm", "namespace": ns},
        "spec": {"replicas": 1, "leaderWorkerTemplate": {"size": 2,
            "leaderTemplate": {"spec": {"containers": [server("leader", http)]}},
            "workerTemplate": {"spec": {"containers": [server("worker", exec)]}}}}});
    let applied = plane.kubectl.apply(&lws);
    assert_eq!(applied.code, 0, "{}", applied.stderr);
    let audit = lifeguard(plane, &["audit", "--format", "json", "--fail-on", "never", "-n", ns]);
    assert_eq!(audit.code, 0, "{audit:#?}");
    let findings: Vec<Value> = serde_json::from_str(&audit.stdout).expect("a JSON array");
    let paths: BTreeSet<&str> = findings
        .iter()
        .filter(|f| f["rule"] == "startup-probe-missing" && f["kind"] == "LeaderWorkerSet")
        .filter_map(|f| f["path"].as_str())
        .collect();
    let expected = BTreeSet::from([
        "/spec/leaderWorkerTemplate/leaderTemplate/spec/containers/0/livenessProbe",
        "/spec/leaderWorkerTemplate/workerTemplate/spec/containers/0/livenessProbe",
    ]);
    assert_eq!(paths, expected, "{}", audit.stdout);
}

/// LeaderWorkerSet's CRD, from its chart in the corpus, applied and established.
fn install_lws_crd(plane: &ControlPlane, corpus: &Path) {
    let (file, crd) = lifeguard_e2e::LWS_CRD;
    plane.kubectl.install_crds(&corpus.join(file), &[crd]);
}

/// A CRD whose schema leaves its spec open, as agent-sandbox's
/// SandboxTemplate does: nothing in it says where its pod template is.
fn open_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "sandboxtemplates.declared.lifeguard.dev"},
        "spec": {"group": "declared.lifeguard.dev", "scope": "Namespaced",
            "names": {"plural": "sandboxtemplates", "singular": "sandboxtemplate", "kind": "SandboxTemplate"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]}
    })
}

/// A kind the engine does not know and whose schema shows no pod template
/// is read once the policy's `podTemplates` declares it, and judged at the
/// declared template; without the declaration it is not listed at all.
#[test]
fn a_kind_the_policy_declares_is_audited() {
    let Some(plane) = ControlPlane::shared() else { return };
    let ns = "audit-declared";
    plane.kubectl.namespace(ns, &[]);
    plane.kubectl.default_service_account(ns);
    plane.kubectl.apply(&open_crd());
    plane.kubectl.wait_established(&["sandboxtemplates.declared.lifeguard.dev"]);
    let sandbox = json!({"apiVersion": "declared.lifeguard.dev/v1", "kind": "SandboxTemplate",
        "metadata": {"name": "agent", "namespace": ns},
        "spec": {"podTemplate": {"metadata": {"annotations": declared_dependency()}, "spec": reused_endpoint_spec()}}});
    let applied = plane.kubectl.apply(&sandbox);
    assert_eq!(applied.code, 0, "{}", applied.stderr);

    let dir = tempfile::tempdir().expect("a temporary directory");
    let policy = dir.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\nmetadata: {name: sandboxes}\nextends: default\n\
         podTemplates:\n- kind: SandboxTemplate\n  group: declared.lifeguard.dev\n  templates: [/spec/podTemplate]\n",
    )
    .expect("the policy is written");
    let policy = policy.to_str().expect("a UTF-8 path");
    let kinds = |args: &[&str]| -> BTreeSet<(String, String)> {
        let base = ["audit", "--format", "json", "--fail-on", "never", "-n", ns];
        let audit = lifeguard(plane, &[&base[..], args].concat());
        assert_eq!(audit.code, 0, "{audit:#?}");
        let findings: Vec<Value> = serde_json::from_str(&audit.stdout).expect("a JSON array");
        findings
            .iter()
            .filter(|f| f["kind"] == "SandboxTemplate")
            .filter_map(|f| Some((f["rule"].as_str()?.to_owned(), f["path"].as_str()?.to_owned())))
            .collect()
    };
    assert_eq!(kinds(&[]), BTreeSet::new(), "undeclared, its schema shows no template");
    let declared = kinds(&["--policy", policy]);
    let reused = ("probe-endpoint-reused".to_owned(), "/spec/podTemplate/spec/containers/0/livenessProbe".to_owned());
    assert!(declared.contains(&reused), "{declared:?}");
}
