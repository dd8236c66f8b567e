//! The chart's own pods on the node: lifeguard-webhook installed by `helm
//! install` as a user installs it (the image under the chart's default name
//! and tag, imported into the node's containerd, no registry), its webhook
//! configurations exactly as helm wrote them (`clientConfig.service`; the
//! API server routes to the Service's ready endpoints), with `failurePolicy:
//! Fail`, so every write that could not be judged fails. Through its
//! upgrade and an eviction, a loop of writes into a `warn` namespace counts
//! every failed and every unjudged admission. Its audit CronJob, with
//! OpenReports' CRD installed, writes each namespace's `Report` under its
//! own service account.
//!
//! Over 400 lines: one test, the chart's life on the node in order (install,
//! upgrade, eviction, certificate rotation, the audit CronJob, lost pods), a
//! function per step over the shared node and loop of writes; the early steps
//! each start from the pods the one before left.

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

mod audit_corpus;

use std::collections::BTreeMap;
use std::io::BufRead as _;

use base64::Engine as _;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use audit_corpus::results;
use lifeguard_e2e::cluster::chart::{CHART, RELEASE, Rendered};
use lifeguard_e2e::cluster::image::{self, Image};
use lifeguard_e2e::cluster::node::Node;
use lifeguard_e2e::cluster::pods::{PodWatch, Seen, now_ms};
use lifeguard_e2e::cluster::process::wait_for;
use lifeguard_e2e::cluster::writes::{Outcome, Write, Writes, counts};
use lifeguard_e2e::cluster::{Client, ControlPlane};
use lifeguard_e2e::support::deployment;
use lifeguard_e2e::{repo_root, skip};
use serde_json::{Value, json};

/// The chart's webhook pods (its audit Job's pods carry the same name, and
/// `app.kubernetes.io/component: audit`).
const SELECTOR: &str = "app.kubernetes.io/name=lifeguard,app.kubernetes.io/component!=audit";
/// Writers in the loop, each one `kubectl create` at a time.
const WRITERS: usize = 2;

/// One line of a pod's log, with the time it arrived.
#[derive(Debug, Clone)]
struct LogLine {
    t_ms: u64,
    message: String,
}

/// `kubectl logs -f` of a pod, kept until the container exits.
struct LogStream {
    lines: Arc<Mutex<Vec<LogLine>>>,
    child: std::process::Child,
}

impl LogStream {
    fn start(kubectl: &Client, pod: &str) -> LogStream {
        let mut child = kubectl
            .command(&["logs", "-f", "-n", RELEASE, pod])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("kubectl logs -f");
        let stdout = child.stdout.take().expect("stdout");
        let lines: Arc<Mutex<Vec<LogLine>>> = Arc::default();
        let shared = Arc::clone(&lines);
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                let value: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
                let message =
                    value["fields"]["message"].as_str().or(value["message"].as_str()).unwrap_or(&line).to_owned();
                shared.lock().expect("lines").push(LogLine { t_ms: now_ms(), message });
            }
        });
        LogStream { lines, child }
    }

    /// The first line whose message starts with `prefix`.
    fn first(&self, prefix: &str) -> Option<LogLine> {
        self.lines.lock().expect("lines").iter().find(|l| l.message.starts_with(prefix)).cloned()
    }
}

impl Drop for LogStream {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The chart's image, built from the static binaries `deploy/build-webhook.sh`
/// makes, under the name and tag the chart's defaults render, imported into
/// the node. `None` (after saying why) when the binaries are not built.
fn import_chart_image(node: &Node, rendered: &Rendered) -> Option<String> {
    let binaries = match image::webhook_binaries() {
        Ok(binaries) => binaries,
        Err(why) => {
            skip(&why);
            return None;
        }
    };
    let deployment = rendered.find("Deployment", None).expect("the chart's Deployment");
    let reference = deployment["spec"]["template"]["spec"]["containers"][0]["image"].as_str().expect("an image");
    let image = Image {
        files: &[("usr/local/bin/lifeguard-webhook", &binaries[0]), ("usr/local/bin/lifeguard", &binaries[1])],
        // As deploy/Dockerfile: the server, as distroless's nonroot user.
        entrypoint: &["/usr/local/bin/lifeguard-webhook"],
        env: &[],
        user: Some("65532:65532"),
    };
    let archive = node.dir.join("lifeguard-webhook.oci.tar");
    image::write_image(&image, reference, &archive).expect("write the chart's image");
    node.import_image(&archive);
    Some(reference.to_owned())
}

/// The chart's pods now, by name.
fn chart_pods(plane: &ControlPlane) -> Vec<Value> {
    let run = plane.kubectl.run(&["get", "pods", "-n", RELEASE, "-l", SELECTOR, "-o", "json"]);
    run.json()["items"].as_array().cloned().unwrap_or_default()
}

/// What the chart's pods and their events say, for a failure's message.
fn diagnose(plane: &ControlPlane) -> String {
    let pods = plane.kubectl.run(&["get", "pods", "-n", RELEASE, "-o", "wide"]);
    let events = plane.kubectl.run(&["get", "events", "-n", RELEASE, "--sort-by=.lastTimestamp"]);
    let logs = plane.kubectl.run(&["logs", "-n", RELEASE, "-l", SELECTOR, "--prefix", "--tail=20"]);
    format!("{}\n{}\n{}{}", pods.stdout, events.stdout, logs.stdout, logs.stderr)
}

fn names(pods: &[Value]) -> Vec<String> {
    pods.iter().filter_map(|p| p["metadata"]["name"].as_str().map(str::to_owned)).collect()
}

/// Waits for `count` pods of the chart, every one Ready and none leaving.
fn wait_ready(plane: &ControlPlane, count: usize) -> Vec<String> {
    wait_for(&format!("{count} Ready replicas"), Duration::from_secs(180), || {
        let pods = chart_pods(plane);
        let ready: Vec<&Value> = pods.iter().filter(|p| Seen::of(p).ready && !Seen::of(p).deleting).collect();
        if ready.len() == count && pods.len() == count {
            Ok(names(&pods))
        } else {
            Err(format!("{:?}", pods.iter().map(Seen::of).collect::<Vec<_>>()))
        }
    })
}

/// `helm VERB lifeguard deploy/helm/lifeguard -n lifeguard --wait` with
/// `set` values (the defaults otherwise: no `--reuse-values`).
fn helm_chart(helm: &Client, verb: &str, set: &[&str]) -> lifeguard_e2e::cluster::Run {
    let chart = repo_root().join(CHART);
    let chart = chart.to_string_lossy();
    let mut args = vec![verb, RELEASE, &*chart, "-n", RELEASE, "--wait", "--timeout", "300s"];
    if verb == "install" {
        args.push("--create-namespace");
    }
    for value in set {
        args.extend(["--set", value]);
    }
    helm.run(&args)
}

fn show(writes: &[Write], since: u64) -> String {
    let counts = counts(writes);
    let failures: Vec<String> = writes
        .iter()
        .filter_map(|w| match &w.outcome {
            Outcome::Failed(e) => {
                Some(format!("  {:.1} s {}: {e}", (w.start_ms as f64 - since as f64) / 1000.0, w.name))
            }
            Outcome::Unjudged => {
                Some(format!("  {:.1} s {}: unjudged", (w.start_ms as f64 - since as f64) / 1000.0, w.name))
            }
            Outcome::Judged => None,
        })
        .collect();
    format!("{counts:?}\n{}", failures.join("\n"))
}

/// `lifeguard simulate --scenario delete` on the chart as rendered: the
/// SIGTERM time and the latest exit (seconds after deletion).
fn simulate_chart(helm: &Client) -> (f64, f64) {
    let chart = repo_root().join(CHART);
    let chart = chart.to_string_lossy();
    let yaml = helm.run(&["template", RELEASE, &*chart, "--namespace", RELEASE, "--set", "certManager.enabled=false"]);
    let out = lifeguard_e2e::cluster::webhook::lifeguard_with_input(
        &["simulate", "--format", "json", "--scenario", "delete", "-"],
        yaml.ok(),
    );
    let results: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("simulate: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    let webhook = results
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["kind"] == "Deployment")
        .unwrap_or_else(|| panic!("the Deployment in {results:#}"));
    assert_eq!(webhook["verdict"], "ok", "simulate: the chart's own deletion is clean: {webhook:#}");
    let at = |event: &str| {
        webhook["events"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|e| e["event"] == event)
            .and_then(|e| e["t"].as_f64())
            .unwrap_or_else(|| panic!("no {event} in {webhook:#}"))
    };
    (at("sigterm"), at("exited"))
}

/// The release's values after the upgrade: no cert-manager, `Fail`, and
/// the annotation that rolled the pods.
const VALUES: &[&str] =
    &["certManager.enabled=false", "webhook.failurePolicy=Fail", "podAnnotations.lifeguard-test/rollout=second"];

/// The webhook's serving name, as the chart's certificate says it.
const SERVICE_NAME: &str = "lifeguard.lifeguard.svc";

/// What a scenario's writes came to.
fn report(what: &str, writes: &[Write], since: u64) -> lifeguard_e2e::cluster::writes::Counts {
    eprintln!("{what}: {:.1} s; writes: {}", (now_ms() - since) as f64 / 1000.0, show(writes, since));
    counts(writes)
}

/// Waits until `pod` is gone.
fn wait_gone(kubectl: &Client, pod: &str) {
    let gone = kubectl.run(&["wait", "-n", RELEASE, "--for=delete", &format!("pod/{pod}"), "--timeout=90s"]);
    assert!(gone.code == 0 || gone.stderr.contains("not found"), "{pod} gone: {}", gone.stderr);
}

#[test]
fn the_chart_on_the_node_installs_upgrades_drains_rotates_and_loses_pods_with_every_admission_counted() {
    let Some(node) = Node::shared() else { return };
    let plane = node.plane;
    let Some(helm) = plane.helm() else { return };
    let kubectl = &plane.kubectl;
    let rendered = Rendered::render(&helm, kubectl, &["certManager.enabled=false"]);
    let Some(reference) = import_chart_image(node, &rendered) else { return };
    eprintln!("image {reference} imported");
    kubectl.namespace("writes", &["lifeguard.dev/mode=warn"]);
    kubectl.namespace("denied", &["lifeguard.dev/mode=enforce"]);

    let pods = install(plane, &helm);
    let pods = upgrade(node, &helm, &rendered, &pods);
    let pods = evict(plane, &pods);
    rotate(plane, &helm, VALUES, &pods);
    audit_job(plane, &helm);
    lose(node, &helm);
}

/// `helm install` as the README says, with `Fail`: nothing unjudged gets in.
fn install(plane: &ControlPlane, helm: &Client) -> Vec<String> {
    let kubectl = &plane.kubectl;
    let started = now_ms();
    let install = helm_chart(helm, "install", &["certManager.enabled=false", "webhook.failurePolicy=Fail"]);
    if install.code != 0 {
        panic!("helm install: {}{}\n{}", install.stdout, install.stderr, diagnose(plane));
    }
    let pods = wait_ready(plane, 2);
    eprintln!("installed, both replicas Ready, in {:.1} s: {pods:?}", (now_ms() - started) as f64 / 1000.0);
    for kind in ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"] {
        let stored = kubectl.run(&["get", kind, RELEASE, "-o", "json"]).json();
        for webhook in stored["webhooks"].as_array().into_iter().flatten() {
            let client = &webhook["clientConfig"];
            assert!(
                client["url"].is_null() && client["service"]["name"].is_string(),
                "{kind}: as helm wrote it: {client}"
            );
            assert_eq!(webhook["failurePolicy"], "Fail", "{kind}");
        }
    }
    let denied = kubectl
        .run_with_input(&["create", "-n", "denied", "-f", "-"], Some(&deployment::naive_gpu("naive").to_string()));
    assert_ne!(denied.code, 0, "enforce denies: {}", denied.stdout);
    assert!(denied.stderr.contains("denied the request"), "{}", denied.stderr);
    let logs = kubectl.run(&["logs", "-n", RELEASE, "-l", SELECTOR, "--prefix", "--tail=-1"]);
    assert!(
        logs.stdout.lines().any(|l| l.contains("\"review\"") && l.contains("denied/naive")),
        "a pod of the chart judged it: {}{}",
        logs.stdout,
        logs.stderr
    );
    pods
}

/// `helm upgrade` with a value that rolls the pods, under writes; each old
/// pod's way out, from the kubelet (the deletion as the watch saw it) and
/// the pod's own log, beside what simulate says.
fn upgrade(node: &Node, helm: &Client, rendered: &Rendered, pods: &[String]) -> Vec<String> {
    let plane = node.plane;
    let kubectl = &plane.kubectl;
    let old: Vec<LogStream> = pods.iter().map(|p| LogStream::start(kubectl, p)).collect();
    let watch = PodWatch::start(node, RELEASE);
    let writes = Writes::start(kubectl, "writes", "upgrade", WRITERS, Duration::from_secs(300));
    std::thread::sleep(Duration::from_secs(3));
    let upgrade_at = now_ms();
    let upgrade = helm_chart(helm, "upgrade", VALUES);
    assert_eq!(upgrade.code, 0, "helm upgrade: {}{}\n{}", upgrade.stdout, upgrade.stderr, diagnose(plane));
    let new_pods = wait_ready(plane, 2);
    for pod in pods {
        wait_gone(kubectl, pod);
    }
    std::thread::sleep(Duration::from_secs(3));
    let written = writes.stop();
    for pod in pods.iter().chain(&new_pods) {
        let seen: Vec<String> = watch
            .of(pod)
            .iter()
            .map(|(t, s)| {
                format!("{:.1} s ready={} deleting={}", (*t as f64 - upgrade_at as f64) / 1000.0, s.ready, s.deleting)
            })
            .collect();
        eprintln!("{pod}: {}", seen.join("; "));
    }
    let counts = report("upgrade", &written, upgrade_at);
    assert!(counts.attempted >= 20, "the loop wrote through the upgrade: {counts:?}");
    assert_eq!(
        (counts.failed, counts.unjudged),
        (0, 0),
        "no failed or unjudged admission: {}",
        show(&written, upgrade_at)
    );
    assert!(new_pods.iter().all(|p| !pods.contains(p)), "every pod replaced: {pods:?} -> {new_pods:?}");

    let (sim_sigterm, sim_exit) = simulate_chart(helm);
    let grace = rendered.find("Deployment", None).expect("Deployment")["spec"]["template"]["spec"]
        ["terminationGracePeriodSeconds"]
        .as_f64()
        .expect("a grace period");
    for (pod, log) in pods.iter().zip(&old) {
        let deleted = watch.of(pod).iter().find(|(_, s)| s.deleting).map(|(t, _)| *t);
        let deleted = deleted.unwrap_or_else(|| panic!("{pod}: the watch saw its deletion"));
        let secs = |line: Option<LogLine>| line.map(|l| (l.t_ms as f64 - deleted as f64) / 1000.0);
        let (draining, exiting) = (secs(log.first("draining")), secs(log.first("exiting")));
        eprintln!(
            "{pod}: deleted; SIGTERM (draining) {draining:?} s, exit {exiting:?} s; simulate: SIGTERM {sim_sigterm} s, exit by {sim_exit} s, grace {grace} s"
        );
        let draining = draining.unwrap_or_else(|| panic!("{pod} logged its drain"));
        let exiting = exiting.unwrap_or_else(|| panic!("{pod} logged its exit"));
        assert!((draining - sim_sigterm).abs() <= 2.0, "{pod}: SIGTERM at {draining} s, simulate {sim_sigterm} s");
        assert!(exiting <= sim_exit + 2.0 && exiting < grace, "{pod}: exit at {exiting} s, within the grace period");
    }
    new_pods
}

/// One replica evicted through the Eviction API, under writes; a second
/// eviction while its replacement is not Ready is refused by the
/// PodDisruptionBudget.
fn evict(plane: &ControlPlane, pods: &[String]) -> Vec<String> {
    let kubectl = &plane.kubectl;
    let writes = Writes::start(kubectl, "writes", "evict", WRITERS, Duration::from_secs(300));
    std::thread::sleep(Duration::from_secs(3));
    let evict_at = now_ms();
    let evict = |pod: &str| {
        let eviction =
            json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod, "namespace": RELEASE}});
        kubectl.run_with_input(
            &["create", "--raw", &format!("/api/v1/namespaces/{RELEASE}/pods/{pod}/eviction"), "-f", "-"],
            Some(&eviction.to_string()),
        )
    };
    let first = evict(&pods[0]);
    assert_eq!(first.code, 0, "the first eviction: {}", first.stderr);
    let second = evict(&pods[1]);
    assert_ne!(second.code, 0, "the PDB refuses a second eviction: {}", second.stdout);
    assert!(second.stderr.contains("disruption budget"), "{}", second.stderr);
    wait_gone(kubectl, &pods[0]);
    let pods = wait_ready(plane, 2);
    std::thread::sleep(Duration::from_secs(3));
    let written = writes.stop();
    let counts = report("eviction", &written, evict_at);
    assert!(counts.attempted >= 10, "{counts:?}");
    assert_eq!(
        (counts.failed, counts.unjudged),
        (0, 0),
        "no failed or unjudged admission: {}",
        show(&written, evict_at)
    );
    pods
}

/// Whether `pod`'s webhook port serves a certificate for the Service that
/// `ca_pem` alone verifies.
fn serves_from(plane: &ControlPlane, pod: &str, ca_pem: &str) -> Result<(), String> {
    let pod = plane.kubectl.get(RELEASE, "pod", pod).ok_or("no such pod")?;
    let ip = pod["status"]["podIP"].as_str().ok_or("no pod IP")?;
    let addr: std::net::SocketAddr = format!("{ip}:8443").parse().map_err(|e| format!("{ip}: {e}"))?;
    let config = Arc::new(lifeguard_e2e::cluster::pki::client_tls(ca_pem, false, None));
    let name = rustls::pki_types::ServerName::try_from(SERVICE_NAME).map_err(|e| e.to_string())?;
    let tcp = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2)).map_err(|e| e.to_string())?;
    tcp.set_read_timeout(Some(Duration::from_secs(2))).map_err(|e| e.to_string())?;
    let connection = rustls::ClientConnection::new(config, name).map_err(|e| e.to_string())?;
    let mut tls = rustls::StreamOwned::new(connection, tcp);
    while tls.conn.is_handshaking() {
        tls.conn.complete_io(&mut tls.sock).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// A renewal from a second CA, as a renewal looks to the pods: the
/// webhook configurations' `caBundle` trusts both CAs first, then the TLS
/// Secret's pair is replaced in place and the kubelet's atomic update of
/// the Secret volume delivers it; the pods serve the new pair without a
/// restart, under writes. `set` is the release's values.
fn rotate(plane: &ControlPlane, helm: &Client, set: &[&str], pods: &[String]) {
    let kubectl = &plane.kubectl;
    let secret = kubectl.get(RELEASE, "secret", "lifeguard-tls").expect("the chart's TLS Secret");
    let old_ca = String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(secret["data"]["ca.crt"].as_str().expect("ca.crt"))
            .expect("base64"),
    )
    .expect("PEM");
    let new_ca = lifeguard_e2e::cluster::pki::Ca::new("lifeguard rotation test CA");
    let pair = new_ca.serving(SERVICE_NAME, &[SERVICE_NAME, "lifeguard.lifeguard.svc.cluster.local"]);
    for pod in pods {
        assert!(serves_from(plane, pod, &old_ca).is_ok(), "{pod} serves the chart's pair first");
    }
    let writes = Writes::start(kubectl, "writes", "rotate", WRITERS, Duration::from_secs(300));
    std::thread::sleep(Duration::from_secs(3));
    let rotate_at = now_ms();
    let b64 = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
    // Trust both first, through the chart: its Secret's `ca.crt` holds both
    // CAs, and `helm upgrade` writes it into the configurations' caBundle
    // (the chart reads the Secret back with `lookup`).
    let both = json!({"data": {"ca.crt": b64(&format!("{}\n{}", old_ca.trim_end(), new_ca.pem))}});
    let run =
        kubectl.run(&["patch", "secret", "lifeguard-tls", "-n", RELEASE, "--type=merge", "-p", &both.to_string()]);
    assert_eq!(run.code, 0, "both CAs in the Secret: {}", run.stderr);
    let run = helm_chart(helm, "upgrade", set);
    assert_eq!(run.code, 0, "helm upgrade, trusting both: {}{}", run.stdout, run.stderr);
    for kind in ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"] {
        let stored = kubectl.run(&["get", kind, RELEASE, "-o", "json"]).json();
        for webhook in stored["webhooks"].as_array().into_iter().flatten() {
            assert_eq!(webhook["clientConfig"]["caBundle"], both["data"]["ca.crt"], "{kind} trusts both");
        }
    }
    // The API server's configuration informer picks the bundle up.
    std::thread::sleep(Duration::from_secs(3));
    let data = json!({"data": {"tls.crt": b64(&pair.cert), "tls.key": b64(&pair.key)}});
    let replaced_at = now_ms();
    let run =
        kubectl.run(&["patch", "secret", "lifeguard-tls", "-n", RELEASE, "--type=merge", "-p", &data.to_string()]);
    assert_eq!(run.code, 0, "replace the Secret's pair: {}", run.stderr);
    let mut served = Vec::new();
    for pod in pods {
        wait_for(&format!("{pod} serving the new pair"), Duration::from_secs(150), || {
            serves_from(plane, pod, &new_ca.pem)
        });
        served.push((now_ms() - replaced_at) as f64 / 1000.0);
    }
    std::thread::sleep(Duration::from_secs(3));
    let written = writes.stop();
    eprintln!("rotation: the new pair served {served:?} s after the Secret was replaced");
    let counts = report("rotation", &written, rotate_at);
    assert_eq!(
        (counts.failed, counts.unjudged),
        (0, 0),
        "no failed or unjudged admission: {}",
        show(&written, rotate_at)
    );
    for pod in chart_pods(plane) {
        let seen = Seen::of(&pod);
        assert!(pods.contains(&seen.pod) && seen.restarts == 0, "served without a restart: {seen:?}");
    }
}

/// The chart's audit CronJob: a Job made from it runs `lifeguard audit` in a
/// pod, with its projected service-account token and the chart's
/// ClusterRole, reaching the API server through the `kubernetes` Service's
/// cluster IP (kube-proxy's rules on the node); it completes, and its
/// report equals `lifeguard audit` run from outside with an admin
/// kubeconfig and the same policy. With OpenReports' CRD installed (from
/// `.ci/install-report-crds.sh`) and `audit.reports=openreports`, it also
/// writes the namespaces' Reports ([`job_reports`]).
fn audit_job(plane: &ControlPlane, helm: &Client) {
    let kubectl = &plane.kubectl;
    let reports = audit_corpus::install_crd(plane, 0);
    let mut set = VALUES.to_vec();
    set.push("audit.enabled=true");
    if reports {
        set.push("audit.reports=openreports");
    }
    let run = helm_chart(helm, "upgrade", &set);
    assert_eq!(run.code, 0, "helm upgrade with the audit: {}{}", run.stdout, run.stderr);
    if reports {
        assert_eq!(lifeguards_reports(plane), Vec::<Value>::new(), "no Report before the Job");
    }
    // Something to report: the seed's naive model server, in a namespace
    // lifeguard's webhook does not judge (no mode label).
    kubectl.namespace("audited", &[]);
    let naive = deployment::naive_gpu("naive").to_string();
    let run = kubectl.run_with_input(&["create", "-n", "audited", "-f", "-"], Some(&naive));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let started = now_ms();
    let run = kubectl.run(&["create", "job", "-n", RELEASE, "--from=cronjob/lifeguard-audit", "audit-now"]);
    assert_eq!(run.code, 0, "create the Job: {}", run.stderr);
    let done = kubectl.run(&["wait", "-n", RELEASE, "--for=condition=complete", "job/audit-now", "--timeout=120s"]);
    let logs = kubectl.run(&["logs", "-n", RELEASE, "job/audit-now"]);
    assert_eq!(
        done.code,
        0,
        "the audit Job completes: {}\nits log: {}{}\n{}",
        done.stderr,
        logs.stdout,
        logs.stderr,
        diagnose(plane)
    );
    eprintln!("audit Job: complete {:.1} s after its creation", (now_ms() - started) as f64 / 1000.0);
    // The chart runs it with --quiet: the pod's log is the JSON report and
    // nothing else (a table on stderr could be interleaved with its lines).
    let inside: Value = serde_json::from_str(&logs.stdout)
        .unwrap_or_else(|e| panic!("the Job's log is the JSON report ({e}): {}{}", logs.stdout, logs.stderr));
    let binary = lifeguard_e2e::cluster::webhook::workspace_binary("lifeguard", "lifeguard").expect("lifeguard");
    let outside = std::process::Command::new(binary)
        .args(["audit", "--format=json", &format!("--policy=configmap:{RELEASE}/lifeguard-policy")])
        .env("KUBECONFIG", &plane.kubeconfig)
        .output()
        .expect("run lifeguard audit");
    let outside: Value = serde_json::from_slice(&outside.stdout)
        .unwrap_or_else(|e| panic!("lifeguard audit from outside ({e}): {}", String::from_utf8_lossy(&outside.stderr)));
    let findings = inside.as_array().map_or(0, Vec::len);
    assert!(findings > 0, "the naive server is reported: {inside:#}");
    assert_eq!(inside, outside, "the in-cluster audit reports what an admin's run does");
    eprintln!("audit: the Job's report equals the admin's ({findings} findings)");
    if reports {
        job_reports(plane, &inside);
    }
}

/// lifeguard's Reports in every namespace, with their managed fields.
fn lifeguards_reports(plane: &ControlPlane) -> Vec<Value> {
    let get = ["get", "reports.openreports.io", "-A", "-l", "app.kubernetes.io/managed-by=lifeguard"];
    let run = plane.kubectl.run(&[&get[..], &["-o", "json", "--show-managed-fields"]].concat());
    run.json()["items"].as_array().cloned().unwrap_or_default()
}

/// What the audit Job wrote with `audit.reports=openreports`: the chart's
/// role lets its service account make exactly the writes
/// `--write-reports` sends, on Reports alone (the API server's RBAC asked);
/// a Report named `lifeguard` per namespace with a workload, applied by
/// field manager `lifeguard` by the Job's service account (the API
/// server's audit log names it; there was none before the Job, and the
/// admin's runs only print), in exactly the namespaces,
/// and with exactly the results, of what an admin's `--format openreports`
/// prints; and each namespace's `fail` and `warn` results are its findings
/// in the Job's JSON report (`inside`).
fn job_reports(plane: &ControlPlane, inside: &Value) {
    let kubectl = &plane.kubectl;
    // The audit Job's service account, as RBAC names it.
    let account = format!("system:serviceaccount:{RELEASE}:{RELEASE}-audit");
    let can = |verb: &str, resource: &str| {
        let run = kubectl.run(&["auth", "can-i", verb, resource, "-n", "audited", "--as", &account]);
        run.stdout.trim() == "yes"
    };
    for verb in ["create", "patch", "deletecollection", "get", "list", "update", "delete", "watch"] {
        let granted = ["create", "patch", "deletecollection"].contains(&verb);
        assert_eq!(can(verb, "reports.openreports.io"), granted, "{verb} on Reports");
        assert!(!can(verb, "policyreports.wgpolicyk8s.io"), "{verb} on PolicyReports: the other kind gets nothing");
    }

    let stored = lifeguards_reports(plane);
    let binary = lifeguard_e2e::cluster::webhook::workspace_binary("lifeguard", "lifeguard").expect("lifeguard");
    let printed = std::process::Command::new(binary)
        .args(["audit", "--format=openreports", "--fail-on=never"])
        .arg(format!("--policy=configmap:{RELEASE}/lifeguard-policy"))
        .env("KUBECONFIG", &plane.kubeconfig)
        .output()
        .expect("run lifeguard audit");
    let text = String::from_utf8_lossy(&printed.stdout);
    let (docs, error) = lifeguard::input::parse_stream(&text, &lifeguard::input::Limits::default());
    assert!(
        error.is_none(),
        "the printed reports are YAML: {error:?}
{text}"
    );
    let namespace = |r: &Value| r["metadata"]["namespace"].as_str().unwrap_or_default().to_owned();
    let printed: BTreeMap<String, Value> = docs.into_iter().map(|d| (namespace(&d.value), d.value)).collect();
    let stored: BTreeMap<String, Value> = stored.into_iter().map(|r| (namespace(&r), r)).collect();
    assert_eq!(
        stored.keys().collect::<Vec<_>>(),
        printed.keys().collect::<Vec<_>>(),
        "a Report in every namespace with a workload, and only there"
    );
    for ns in ["audited", RELEASE] {
        assert!(stored.contains_key(ns), "{ns} has a Report: {:?}", stored.keys());
    }
    let mut findings: BTreeMap<&str, usize> = BTreeMap::new();
    for entry in inside.as_array().into_iter().flatten() {
        *findings.entry(entry["namespace"].as_str().unwrap_or_default()).or_default() += 1;
    }
    let mut totals = (0, 0);
    for (ns, report) in &stored {
        assert_eq!(report["metadata"]["name"], "lifeguard", "{ns}");
        let managers: Vec<(&str, &str)> = report["metadata"]["managedFields"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| (m["manager"].as_str().unwrap_or_default(), m["operation"].as_str().unwrap_or_default()))
            .collect();
        assert_eq!(managers, [("lifeguard", "Apply")], "{ns}: written by the Job's server-side apply");
        assert_eq!(results(report), results(&printed[ns]), "{ns}: the results an admin's run prints");
        let found = results(report).iter().filter(|(_, result, _)| result != "pass").count();
        let passed = results(report).len() - found;
        assert_eq!(found, findings.get(ns.as_str()).copied().unwrap_or(0), "{ns}: a result per finding of the JSON");
        let summary = &report["summary"];
        let count = |k: &str| summary[k].as_u64().unwrap_or(u64::MAX) as usize;
        assert_eq!((count("fail") + count("warn"), count("pass")), (found, passed), "{ns}: {summary}");
        totals = (totals.0 + found, totals.1 + passed);
    }
    assert!(findings.keys().all(|ns| stored.contains_key(*ns)), "every namespace with a finding has a Report");
    // Who wrote them: the API server's audit log names the user of every
    // request; each write to a Report is the Job's, one apply per namespace.
    let writes: Vec<Value> = plane
        .audit_events()
        .into_iter()
        .filter(|e| e["objectRef"]["apiGroup"] == "openreports.io" && e["objectRef"]["resource"] == "reports")
        .filter(|e| !["get", "list", "watch"].contains(&e["verb"].as_str().unwrap_or_default()))
        .collect();
    let writers: Vec<&str> = writes.iter().filter_map(|e| e["user"]["username"].as_str()).collect();
    assert!(!writers.is_empty() && writers.iter().all(|w| *w == account), "the Job's account alone: {writers:?}");
    let applied: Vec<&str> = writes
        .iter()
        .filter(|e| e["verb"] == "patch" && e["responseStatus"]["code"].as_u64().is_some_and(|c| c == 200 || c == 201))
        .filter_map(|e| e["objectRef"]["namespace"].as_str())
        .collect();
    assert_eq!(
        applied.iter().copied().collect::<std::collections::BTreeSet<_>>(),
        stored.keys().map(String::as_str).collect(),
        "an apply in each namespace with a Report"
    );
    eprintln!(
        "audit Job: {} Reports written by field manager lifeguard ({:?}), {} fail/warn results (the JSON's findings), {} pass",
        stored.len(),
        stored.keys().collect::<Vec<_>>(),
        totals.0,
        totals.1
    );
}

/// What losing a pod costs: one pod's container SIGKILLed through the
/// runtime, and one pod deleted with `--grace-period=0 --force`, with
/// `failurePolicy: Fail` (failed writes) and then `Ignore` (unjudged
/// writes), and how long until the API server stopped routing to it.
fn lose(node: &Node, helm: &Client) {
    let plane = node.plane;
    let kubectl = &plane.kubectl;
    for policy in ["Fail", "Ignore"] {
        let set = format!("webhook.failurePolicy={policy}");
        let run = helm_chart(
            helm,
            "upgrade",
            &["certManager.enabled=false", &set, "podAnnotations.lifeguard-test/rollout=second"],
        );
        assert_eq!(run.code, 0, "helm upgrade {set}: {}{}", run.stdout, run.stderr);
        // The API server's configuration informer picks the policy up.
        std::thread::sleep(Duration::from_secs(3));
        for how in ["SIGKILL", "force-delete"] {
            let pods = wait_ready(plane, 2);
            let prefix = format!("lose-{}-{}", policy.to_lowercase(), how.to_lowercase());
            let writes = Writes::start(kubectl, "writes", &prefix, WRITERS, Duration::from_secs(300));
            std::thread::sleep(Duration::from_secs(3));
            let at = now_ms();
            if how == "SIGKILL" {
                let pod = kubectl.get(RELEASE, "pod", &pods[0]).expect("the pod");
                let id = pod["status"]["containerStatuses"][0]["containerID"].as_str().expect("a container ID");
                node.kill_container(id);
                wait_for("the container restarted", Duration::from_secs(60), || {
                    let pod = kubectl.get(RELEASE, "pod", &pods[0]).ok_or("gone")?;
                    if Seen::of(&pod).restarts >= 1 { Ok(()) } else { Err("not yet".to_owned()) }
                });
            } else {
                let run = kubectl.run(&["delete", "pod", "-n", RELEASE, &pods[0], "--grace-period=0", "--force"]);
                assert_eq!(run.code, 0, "force delete: {}", run.stderr);
            }
            wait_ready(plane, 2);
            std::thread::sleep(Duration::from_secs(5));
            let written = writes.stop();
            let counts = report(&format!("{how} with {policy}"), &written, at);
            let lost: Vec<&Write> = written.iter().filter(|w| w.outcome != Outcome::Judged).collect();
            let window = match (lost.first(), lost.last()) {
                (Some(first), Some(last)) => format!(
                    "from {:.1} s to {:.1} s after the loss",
                    (first.start_ms as f64 - at as f64) / 1000.0,
                    (last.end_ms as f64 - at as f64) / 1000.0
                ),
                _ => "none".to_owned(),
            };
            eprintln!("{how} with {policy}: {} of {} writes not judged, {window}", lost.len(), counts.attempted);
            // With Fail a write is judged or fails; with Ignore it is judged
            // or let through unjudged: never the other.
            match policy {
                "Fail" => assert_eq!(counts.unjudged, 0, "{}", show(&written, at)),
                _ => assert_eq!(counts.failed, 0, "{}", show(&written, at)),
            }
        }
    }
}
