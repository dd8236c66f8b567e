//! The chart's own pods on the node: lifeguard-webhook installed by `helm
//! install` as a user installs it (the image under the chart's default name
//! and tag, imported into the node's containerd, no registry), its webhook
//! configurations exactly as helm wrote them (`clientConfig.service`; the
//! API server routes to the Service's ready endpoints), with `failurePolicy:
//! Fail`, so every write that could not be judged fails. Through its
//! upgrade and an eviction, a loop of writes into a `warn` namespace counts
//! every failed and every unjudged admission.

use std::io::BufRead as _;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lifeguard_e2e::cluster::chart::{CHART, RELEASE, Rendered};
use lifeguard_e2e::cluster::image::{self, Image};
use lifeguard_e2e::cluster::node::Node;
use lifeguard_e2e::cluster::objects;
use lifeguard_e2e::cluster::pods::{PodWatch, Seen, now_ms};
use lifeguard_e2e::cluster::process::wait_for;
use lifeguard_e2e::cluster::writes::{Outcome, Write, Writes, counts};
use lifeguard_e2e::cluster::{Client, ControlPlane};
use lifeguard_e2e::{repo_root, skip};
use serde_json::{Value, json};

/// The chart's pods' label.
const SELECTOR: &str = "app.kubernetes.io/name=lifeguard";
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
    let binary = lifeguard_e2e::cluster::webhook::workspace_binary("lifeguard", "lifeguard").expect("lifeguard");
    let mut child = std::process::Command::new(binary)
        .args(["simulate", "--format", "json", "--scenario", "delete", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run lifeguard simulate");
    std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), yaml.ok().as_bytes()).expect("the chart");
    let out = child.wait_with_output().expect("simulate");
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

#[test]
fn the_chart_installs_on_the_node_and_upgrades_and_drains_without_a_failed_admission() {
    let Some(node) = Node::shared() else { return };
    let plane = node.plane;
    let Some(helm) = plane.helm() else { return };
    let kubectl = &plane.kubectl;
    let rendered = Rendered::render(&helm, kubectl, &["certManager.enabled=false"]);
    let Some(reference) = import_chart_image(node, &rendered) else { return };
    eprintln!("image {reference} imported");
    kubectl.namespace("writes", &["lifeguard.dev/mode=warn"]);
    kubectl.namespace("denied", &["lifeguard.dev/mode=enforce"]);

    // install, as the README says, with Fail: nothing unjudged gets in.
    let started = now_ms();
    let install = helm_chart(&helm, "install", &["certManager.enabled=false", "webhook.failurePolicy=Fail"]);
    let install = if install.code == 0 {
        install
    } else {
        panic!("helm install: {}{}\n{}", install.stdout, install.stderr, diagnose(plane));
    };
    let pods = wait_ready(plane, 2);
    eprintln!("installed in {:.1} s: {pods:?}\n{}", (now_ms() - started) as f64 / 1000.0, install.stdout);
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
    let denied = kubectl.run_with_input(
        &["create", "-n", "denied", "-f", "-"],
        Some(&objects::naive_gpu_deployment("naive").to_string()),
    );
    assert_ne!(denied.code, 0, "enforce denies: {}", denied.stdout);
    assert!(denied.stderr.contains("denied the request"), "{}", denied.stderr);
    let logs = kubectl.run(&["logs", "-n", RELEASE, "-l", SELECTOR, "--prefix", "--tail=-1"]);
    assert!(
        logs.stdout.lines().any(|l| l.contains("\"review\"") && l.contains("denied/naive")),
        "a pod of the chart judged it: {}{}",
        logs.stdout,
        logs.stderr
    );

    // upgrade: a value that rolls the pods, under writes.
    let old: Vec<LogStream> = pods.iter().map(|p| LogStream::start(kubectl, p)).collect();
    let watch = PodWatch::start(node, RELEASE);
    let writes = Writes::start(kubectl, "writes", "upgrade", WRITERS, Duration::from_secs(300));
    std::thread::sleep(Duration::from_secs(3));
    let upgrade_at = now_ms();
    let upgrade = helm_chart(
        &helm,
        "upgrade",
        &["certManager.enabled=false", "webhook.failurePolicy=Fail", "podAnnotations.lifeguard-test/rollout=second"],
    );
    assert_eq!(upgrade.code, 0, "helm upgrade: {}{}\n{}", upgrade.stdout, upgrade.stderr, diagnose(plane));
    let new_pods = wait_ready(plane, 2);
    for pod in &pods {
        let gone = kubectl.run(&["wait", "-n", RELEASE, "--for=delete", &format!("pod/{pod}"), "--timeout=90s"]);
        assert!(gone.code == 0 || gone.stderr.contains("not found"), "{pod} gone: {}", gone.stderr);
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
    let summary = show(&written, upgrade_at);
    eprintln!("upgrade: {:.1} s; writes: {summary}", (now_ms() - upgrade_at) as f64 / 1000.0);
    let upgrade_counts = counts(&written);
    assert!(upgrade_counts.attempted >= 20, "the loop wrote through the upgrade: {summary}");
    assert_eq!((upgrade_counts.failed, upgrade_counts.unjudged), (0, 0), "no failed or unjudged admission: {summary}");
    assert!(new_pods.iter().all(|p| !pods.contains(p)), "every pod replaced: {pods:?} -> {new_pods:?}");

    // Each old pod's way out, from the kubelet (the deletion as the watch
    // saw it) and the pod's own log, beside what simulate says.
    let (sim_sigterm, sim_exit) = simulate_chart(&helm);
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
    drop(old);

    // eviction: one replica through the Eviction API; a second one while
    // its replacement is not Ready is refused by the PodDisruptionBudget.
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
    let first = evict(&new_pods[0]);
    assert_eq!(first.code, 0, "the first eviction: {}", first.stderr);
    let second = evict(&new_pods[1]);
    assert_ne!(second.code, 0, "the PDB refuses a second eviction: {}", second.stdout);
    assert!(second.stderr.contains("disruption budget"), "{}", second.stderr);
    let gone = kubectl.run(&["wait", "-n", RELEASE, "--for=delete", &format!("pod/{}", new_pods[0]), "--timeout=90s"]);
    assert!(gone.code == 0 || gone.stderr.contains("not found"), "evicted pod gone: {}", gone.stderr);
    wait_ready(plane, 2);
    std::thread::sleep(Duration::from_secs(3));
    let written = writes.stop();
    let summary = show(&written, evict_at);
    eprintln!("eviction: {:.1} s; writes: {summary}", (now_ms() - evict_at) as f64 / 1000.0);
    let evict_counts = counts(&written);
    assert!(evict_counts.attempted >= 10, "{summary}");
    assert_eq!((evict_counts.failed, evict_counts.unjudged), (0, 0), "no failed or unjudged admission: {summary}");
}
