//! What admission adds to a create, as the API server's clients see it.
//!
//! One control plane (etcd, kube-apiserver) and the release
//! `lifeguard-webhook` run as the chart runs it, the chart's configurations
//! registered. A typical Deployment is created through the API server's
//! REST API (HTTP/2, the admin's client certificate, as `kubectl` talks to
//! it) in four namespaces, one per case, in alternating rounds so the
//! machine's drift hits all alike, sequentially and 32 at a time:
//! - **none**: no admission of ours;
//! - **vap**: `lifeguard export vap --mode warn` (the default pack), its
//!   bindings narrowed to this namespace: the API server's own in-process
//!   check, the floor of any admission check;
//! - **lifeguard**: lifeguard's two webhooks (enforce and mutate);
//! - **no-op**: two webhooks that allow at once (the tests' few-line rustls
//!   server, `cluster::injector`): what any two webhooks cost.
//!
//! Reported: p50 and p99 of each; lifeguard's own share over the no-op
//! webhooks, and the webhooks' cost over the VAP; and the API server's own
//! `apiserver_admission_webhook_admission_duration_seconds` and
//! `apiserver_validating_admission_policy_check_duration_seconds` for each.
//!
//! `.ci/install-control-plane.sh && .ci/install-helm.sh && cargo bench -p lifeguard-e2e --bench apiserver_latency`
//! (`-- --creates N` for another count than 500 per case).

// A benchmark's edge: what it measured is its report on the terminal.
#![allow(clippy::print_stderr, clippy::print_stdout)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use lifeguard_e2e::cluster::control_plane::tools;
use lifeguard_e2e::cluster::injector::Injector;
use lifeguard_e2e::cluster::pki::client_tls;
use lifeguard_e2e::cluster::process::wait_for;
use lifeguard_e2e::cluster::webhook::workspace_binary;
use lifeguard_e2e::cluster::{ControlPlane, Installation, webhook};
use lifeguard_e2e::support::deployment;
use serde_json::json;

/// The cases: (label, namespace), in the order of each round.
const CASES: [(&str, &str); 4] =
    [("none", "latency-none"), ("vap", "latency-vap"), ("lifeguard", "latency-lifeguard"), ("no-op", "latency-no-op")];
const ROUNDS: usize = 5;

/// The API server's histograms read for each case: (case, metric, label
/// that names the series).
const SERIES: [(&str, &str, &str); 6] = [
    ("vap", VAP_METRIC, "policy=\"lifeguard-deny\""),
    ("vap", VAP_METRIC, "policy=\"lifeguard-warn\""),
    ("lifeguard", WEBHOOK_METRIC, "name=\"mutate.lifeguard.dev\""),
    ("lifeguard", WEBHOOK_METRIC, "name=\"enforce.validate.lifeguard.dev\""),
    ("no-op", WEBHOOK_METRIC, "name=\"no-op-mutate.webhooks.test\""),
    ("no-op", WEBHOOK_METRIC, "name=\"no-op-validate.webhooks.test\""),
];
const VAP_METRIC: &str = "apiserver_validating_admission_policy_check_duration_seconds";
const WEBHOOK_METRIC: &str = "apiserver_admission_webhook_admission_duration_seconds";

fn main() {
    let creates =
        std::env::args().skip_while(|a| a != "--creates").nth(1).and_then(|n| n.parse::<usize>().ok()).unwrap_or(500);
    let Some(tools) = tools() else { return };
    let plane = ControlPlane::start(&tools);
    let Some(lifeguard) = Installation::install(&plane, &["certManager.enabled=false"]) else { return };
    let namespace = |case: &str| CASES.iter().find(|(c, _)| *c == case).map(|(_, ns)| *ns).expect("a case");
    plane.kubectl.namespace(namespace("lifeguard"), &["lifeguard.dev/mode=enforce", "lifeguard.dev/mutate=true"]);
    plane.kubectl.namespace(namespace("none"), &[]);
    // What any webhook costs: a mutating and a validating webhook that allow
    // at once, as lifeguard's two are called for these creates.
    plane.kubectl.namespace(namespace("no-op"), &[]);
    let no_op = Injector::no_op(&webhook::serving_pair(&plane.pki.ca));
    for (kind, name) in
        [("MutatingWebhookConfiguration", "no-op-mutate"), ("ValidatingWebhookConfiguration", "no-op-validate")]
    {
        plane.kubectl.apply(&no_op.configuration_as(kind, name, namespace("no-op"), &plane.pki.ca.pem));
    }
    plane.kubectl.namespace(namespace("vap"), &[]);
    if !install_vap(&plane, namespace("vap")) {
        return;
    }

    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let client = Arc::new(client(&plane));
    let server = plane.server.clone();
    let mut next = 0usize;
    let mut results = Vec::new();
    runtime.block_on(async {
        // Warm-up: connections, the API server's caches, the webhook's.
        for (_, ns) in CASES {
            create_many(&client, &server, ns, 50, 8, &mut next).await;
        }
        for concurrency in [1usize, 32] {
            let mut latencies: Vec<Vec<f64>> = vec![Vec::new(); CASES.len()];
            let before = Histograms::scrape(&plane);
            for _ in 0..ROUNDS {
                let n = creates / ROUNDS;
                for (i, (_, ns)) in CASES.iter().enumerate() {
                    latencies[i].extend(create_many(&client, &server, ns, n, concurrency, &mut next).await);
                }
            }
            let histograms = Histograms::scrape(&plane).minus(&before);
            results.push((concurrency, latencies, histograms));
        }
    });

    println!("creates through kube-apiserver, {creates} per case, typical Deployment (ms)");
    println!("(none: no admission; vap: lifeguard's VAP export at Warn; lifeguard: its two webhooks;");
    println!(" no-op: two webhooks that allow at once)");
    print!("{:<14}", "");
    for (case, _) in CASES {
        print!(" {:>13} {:>8}", format!("{case} p50"), "p99");
    }
    println!(" {:>12} {:>12} {:>12}", "+p50 vs no-op", "+p50 vs vap", "vap vs none");
    for (concurrency, latencies, _) in &mut results {
        print!("{:<14}", label(*concurrency));
        let mut p50 = Vec::new();
        for values in latencies.iter_mut() {
            let (q50, q99) = (percentile(values, 0.50), percentile(values, 0.99));
            print!(" {q50:>13.2} {q99:>8.2}");
            p50.push(q50);
        }
        // lifeguard's own share over any two webhooks; the webhooks' cost
        // over the API server's in-process check; that check's own.
        println!(" {:>+12.2} {:>+12.2} {:>+12.2}", p50[2] - p50[3], p50[2] - p50[1], p50[1] - p50[0]);
    }
    println!();
    println!("the API server's own histograms, over the same creates ({VAP_METRIC} for the VAP,");
    println!("{WEBHOOK_METRIC} (CREATE) for the webhooks)");
    for (concurrency, _, histograms) in &results {
        for ((case, _, series), histogram) in SERIES.iter().zip(&histograms.0) {
            println!("{:<14} {case:<10} {series:<40} {}", label(*concurrency), histogram.describe());
        }
    }
    // The API server observes a policy's admit decisions only when an
    // expression failed to evaluate, so these say what the VAP's counts are.
    println!();
    println!("the VAP's observed decisions over the whole run, by action and error (warm-up and install included):");
    let metrics = plane.kubectl.run(&["get", "--raw=/metrics"]);
    for line in metrics.ok().lines().filter(|l| l.starts_with(&format!("{VAP_METRIC}_count"))) {
        println!("  {}", line.trim_start_matches(VAP_METRIC));
    }
    println!();
    println!("the webhook's own request_duration_seconds: {}", webhook_summary(&lifeguard));
}

/// Applies `lifeguard export vap --mode warn`, its bindings narrowed to
/// `namespace` (the other cases must not pay for it), and waits until the
/// API server warns about a bad object there. False after a skip (no
/// lifeguard binary).
fn install_vap(plane: &ControlPlane, namespace: &str) -> bool {
    let Some(binary) = workspace_binary("lifeguard", "lifeguard") else { return false };
    let export = std::process::Command::new(binary)
        .args(["export", "vap", "--policy", "default", "--mode", "warn"])
        .output()
        .expect("run lifeguard export vap");
    assert!(export.status.success(), "lifeguard export vap: {}", String::from_utf8_lossy(&export.stderr));
    let yaml = String::from_utf8(export.stdout).expect("UTF-8");
    plane.kubectl.run_with_input(&["apply", "-f", "-"], Some(&yaml)).ok();
    let only_here = json!({ "spec": { "matchResources": { "namespaceSelector": {
        "matchLabels": { "kubernetes.io/metadata.name": namespace } } } } })
    .to_string();
    for binding in ["lifeguard-deny", "lifeguard-warn"] {
        plane
            .kubectl
            .run(&["patch", "validatingadmissionpolicybinding", binding, "--type=merge", "-p", &only_here])
            .ok();
    }
    let bad = deployment::naive_gpu("vap-probe").to_string();
    wait_for("the exported policies in force", Duration::from_secs(30), || {
        let run = plane.kubectl.run_with_input(&["create", "--dry-run=server", "-n", namespace, "-f", "-"], Some(&bad));
        if run.warnings().iter().any(|w| w.contains("probe-endpoint-reused")) { Ok(()) } else { Err(run.stderr) }
    });
    true
}

fn label(concurrency: usize) -> String {
    if concurrency == 1 { "sequential".to_owned() } else { format!("{concurrency} at a time") }
}

/// One of the API server's histograms: (bucket upper bound in seconds,
/// cumulative count), the count and the sum of the observations.
#[derive(Clone, Default)]
struct Histogram {
    buckets: Vec<(f64, f64)>,
    count: f64,
    sum: f64,
}

impl Histogram {
    fn describe(&self) -> String {
        let shares: Vec<String> = self
            .buckets
            .iter()
            .filter(|(le, _)| *le <= 0.025)
            .map(|(le, n)| format!("<= {} ms: {:.1}%", le * 1000.0, 100.0 * n / self.count.max(1.0)))
            .collect();
        format!("{} calls, mean {:.3} ms; {}", self.count, 1000.0 * self.sum / self.count.max(1.0), shares.join(", "))
    }
}

/// The histograms of [`SERIES`], in its order.
struct Histograms(Vec<Histogram>);

impl Histograms {
    fn scrape(plane: &ControlPlane) -> Histograms {
        let metrics = plane.kubectl.run(&["get", "--raw=/metrics"]);
        let text = metrics.ok();
        let mut out = Vec::new();
        for (_, metric, series) in SERIES {
            let mut histogram = Histogram::default();
            // The webhooks' histogram also counts other operations; these
            // creates are CREATEs. The VAP's has no operation label.
            let lines = text.lines().filter(|l| {
                l.starts_with(metric)
                    && l.contains(series)
                    && (metric != WEBHOOK_METRIC || l.contains("operation=\"CREATE\""))
            });
            for line in lines {
                let value: f64 = line.rsplit(' ').next().and_then(|v| v.parse().ok()).unwrap_or(0.0);
                let name = line.split('{').next().unwrap_or_default();
                if name == format!("{metric}_count") {
                    histogram.count += value;
                } else if name == format!("{metric}_sum") {
                    histogram.sum += value;
                } else if let Some(le) =
                    line.split("le=\"").nth(1).and_then(|r| r.split('"').next()).and_then(|l| l.parse::<f64>().ok())
                {
                    match histogram.buckets.iter_mut().find(|(b, _)| *b == le) {
                        Some((_, n)) => *n += value,
                        None => histogram.buckets.push((le, value)),
                    }
                }
            }
            out.push(histogram);
        }
        Histograms(out)
    }

    fn minus(&self, before: &Histograms) -> Histograms {
        let mut out = self.0.clone();
        for (now, then) in out.iter_mut().zip(&before.0) {
            now.count -= then.count;
            now.sum -= then.sum;
            for (le, n) in &mut now.buckets {
                *n -= then.buckets.iter().find(|(b, _)| b == le).map_or(0.0, |(_, v)| *v);
            }
        }
        Histograms(out)
    }
}

fn client(plane: &ControlPlane) -> reqwest::Client {
    let identity = (plane.pki.admin.cert.as_str(), plane.pki.admin.key.as_str());
    reqwest::Client::builder()
        .tls_backend_preconfigured(client_tls(&plane.pki.ca.pem, true, Some(identity)))
        .http2_prior_knowledge()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

/// `count` creates in `namespace`, `concurrency` at a time: each one's
/// latency in milliseconds. A create the API server answers with anything
/// but 201 aborts the benchmark; one whose connection failed (the API
/// server's HTTP/2 connection has dropped streams under load) is sent again
/// on a new stream, up to twice, its latency counted from the first send
/// (a 409 then means the failed send did create it), and reported with the
/// first error.
async fn create_many(
    client: &Arc<reqwest::Client>,
    server: &str,
    namespace: &str,
    count: usize,
    concurrency: usize,
    next: &mut usize,
) -> Vec<f64> {
    let url = format!("{server}/apis/apps/v1/namespaces/{namespace}/deployments");
    let mut latencies = Vec::with_capacity(count);
    let mut resent = Vec::new();
    let mut started = 0;
    while started < count {
        let batch = concurrency.min(count - started);
        let mut tasks = Vec::with_capacity(batch);
        for _ in 0..batch {
            let body = deployment::typical(&format!("web-{next}")).to_string();
            *next += 1;
            let (client, url) = (client.clone(), url.clone());
            tasks.push(tokio::spawn(async move {
                let start = Instant::now();
                let mut failed = None;
                for _ in 0..3 {
                    let response =
                        client.post(&url).header("content-type", "application/json").body(body.clone()).send().await;
                    match response {
                        // A 409 after a failed send: the first one did create it.
                        Ok(r) if r.status().as_u16() == 201 || (failed.is_some() && r.status().as_u16() == 409) => {
                            return (start.elapsed().as_secs_f64() * 1000.0, failed);
                        }
                        Ok(r) => panic!("create answered {}: {}", r.status(), r.text().await.unwrap_or_default()),
                        Err(e) => failed = failed.or_else(|| Some(error_chain(&e))),
                    }
                }
                panic!("create failed three times, first: {}", failed.unwrap_or_default());
            }));
        }
        for task in tasks {
            let (latency, failed) = task.await.expect("a create task");
            latencies.push(latency);
            resent.extend(failed);
        }
        started += batch;
    }
    if let Some(first) = resent.first() {
        eprintln!("{namespace}: {} creates sent again after a transport error; the first: {first}", resent.len());
    }
    latencies
}

/// An error and its sources, on one line.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        out.push_str(": ");
        out.push_str(&cause.to_string());
        source = cause.source();
    }
    out
}

fn percentile(values: &mut [f64], q: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    let rank = ((values.len() as f64) * q).ceil() as usize;
    values.get(rank.saturating_sub(1)).copied().unwrap_or(f64::NAN)
}

fn webhook_summary(lifeguard: &Installation) -> String {
    let sum = lifeguard.webhook.metric("lifeguard_webhook_request_duration_seconds_sum", &[]);
    let count = lifeguard.webhook.metric("lifeguard_webhook_request_duration_seconds_count", &[]);
    format!("{count} requests, mean {:.3} ms", 1000.0 * sum / count.max(1.0))
}
