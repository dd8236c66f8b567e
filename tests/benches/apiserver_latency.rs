//! What lifeguard adds to a create, as the API server's clients see it.
//!
//! One control plane (etcd, kube-apiserver) and the release
//! `lifeguard-webhook` run as the chart runs it, the chart's configurations
//! registered. A typical Deployment is created through the API server's
//! REST API (HTTP/2, the admin's client certificate, as `kubectl` talks to
//! it) in a namespace lifeguard judges (enforce and mutate: both of its
//! webhooks are called) and in one it does not, in alternating rounds so
//! the machine's drift hits both alike: sequentially and 32 at a time.
//! Reported: p50 and p99 of each, the difference (what lifeguard adds), and
//! the API server's own `apiserver_admission_webhook_admission_duration_seconds`
//! for lifeguard's webhooks.
//!
//! `.ci/install-control-plane.sh && .ci/install-helm.sh && cargo bench -p lifeguard-e2e --bench apiserver_latency`
//! (`-- --creates N` for another count than 500 per case).

use std::sync::Arc;
use std::time::{Duration, Instant};

use lifeguard_e2e::cluster::control_plane::tools;
use lifeguard_e2e::cluster::injector::Injector;
use lifeguard_e2e::cluster::pki::client_tls;
use lifeguard_e2e::cluster::{ControlPlane, Installation, objects, webhook};

const JUDGED: &str = "latency-lifeguard";
const NO_OP: &str = "latency-no-op";
const UNJUDGED: &str = "latency-none";
const ROUNDS: usize = 5;

fn main() {
    let creates =
        std::env::args().skip_while(|a| a != "--creates").nth(1).and_then(|n| n.parse::<usize>().ok()).unwrap_or(500);
    let Some(tools) = tools() else { return };
    let plane = ControlPlane::start(&tools);
    let Some(lifeguard) = Installation::install(&plane, &["certManager.enabled=false"]) else { return };
    plane.kubectl.namespace(JUDGED, &["lifeguard.dev/mode=enforce", "lifeguard.dev/mutate=true"]);
    plane.kubectl.namespace(UNJUDGED, &[]);
    // What any webhook costs: a mutating and a validating webhook that allow
    // at once, as lifeguard's two are called for these creates.
    plane.kubectl.namespace(NO_OP, &[]);
    let no_op = Injector::no_op(&webhook::serving_pair(&plane.pki.ca));
    for (kind, name) in
        [("MutatingWebhookConfiguration", "no-op-mutate"), ("ValidatingWebhookConfiguration", "no-op-validate")]
    {
        plane.kubectl.apply(&no_op.configuration_as(kind, name, NO_OP, &plane.pki.ca.pem));
    }

    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let client = Arc::new(client(&plane));
    let server = plane.server.clone();
    let mut next = 0usize;
    let mut results = Vec::new();
    runtime.block_on(async {
        // Warm-up: connections, the API server's caches, the webhook's.
        for namespace in [JUDGED, NO_OP, UNJUDGED] {
            create_many(&client, &server, namespace, 50, 8, &mut next).await;
        }
        for concurrency in [1usize, 32] {
            let (mut with, mut no_op, mut without) = (Vec::new(), Vec::new(), Vec::new());
            let before = Histograms::scrape(&plane);
            for _ in 0..ROUNDS {
                let n = creates / ROUNDS;
                with.extend(create_many(&client, &server, JUDGED, n, concurrency, &mut next).await);
                no_op.extend(create_many(&client, &server, NO_OP, n, concurrency, &mut next).await);
                without.extend(create_many(&client, &server, UNJUDGED, n, concurrency, &mut next).await);
            }
            let webhooks = Histograms::scrape(&plane).minus(&before);
            results.push((concurrency, with, no_op, without, webhooks));
        }
    });

    println!("creates through kube-apiserver, {creates} per case, typical Deployment (ms)");
    println!("(lifeguard: its two webhooks; no-op: two webhooks that allow at once; none: no webhook)");
    println!(
        "{:<14} {:>13} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11}",
        "", "lifeguard p50", "p99", "no-op p50", "p99", "none p50", "p99", "+p99/none", "+p99/no-op"
    );
    for (concurrency, with, no_op, without, _) in &mut results {
        let (w50, w99) = (percentile(with, 0.50), percentile(with, 0.99));
        let (o50, o99) = (percentile(no_op, 0.50), percentile(no_op, 0.99));
        let (n50, n99) = (percentile(without, 0.50), percentile(without, 0.99));
        println!(
            "{:<14} {w50:>13.2} {w99:>11.2} {o50:>11.2} {o99:>11.2} {n50:>11.2} {n99:>11.2} {:>+11.2} {:>+11.2}",
            label(*concurrency),
            w99 - n99,
            w99 - o99
        );
    }
    println!();
    println!("the API server's apiserver_admission_webhook_admission_duration_seconds (CREATE of these Deployments)");
    for (concurrency, _, _, _, webhooks) in &results {
        for (name, summary) in &webhooks.0 {
            println!("{:<14} {name:<32} {}", label(*concurrency), summary.describe());
        }
    }
    println!();
    println!("the webhook's own request_duration_seconds: {}", webhook_summary(&lifeguard));
}

fn label(concurrency: usize) -> String {
    if concurrency == 1 { "sequential".to_owned() } else { format!("{concurrency} at a time") }
}

/// The API server's histogram of each lifeguard webhook's CREATE calls:
/// (bucket upper bound in seconds, cumulative count), and the count.
#[derive(Clone, Default)]
struct Histogram {
    buckets: Vec<(f64, f64)>,
    count: f64,
}

impl Histogram {
    fn describe(&self) -> String {
        let shares: Vec<String> = self
            .buckets
            .iter()
            .filter(|(le, _)| *le <= 0.025)
            .map(|(le, n)| format!("<= {} ms: {:.1}%", le * 1000.0, 100.0 * n / self.count.max(1.0)))
            .collect();
        format!("{} calls; {}", self.count, shares.join(", "))
    }
}

struct Histograms(Vec<(String, Histogram)>);

impl Histograms {
    fn scrape(plane: &ControlPlane) -> Histograms {
        let metrics = plane.kubectl.run(&["get", "--raw=/metrics"]);
        let text = metrics.ok();
        let mut out = Vec::new();
        for name in [
            "enforce.validate.lifeguard.dev",
            "mutate.lifeguard.dev",
            "no-op-validate.webhooks.test",
            "no-op-mutate.webhooks.test",
        ] {
            let mut histogram = Histogram::default();
            let series = text.lines().filter(|l| {
                l.starts_with("apiserver_admission_webhook_admission_duration_seconds")
                    && l.contains(&format!("name=\"{name}\""))
                    && l.contains("operation=\"CREATE\"")
            });
            for line in series {
                let value: f64 = line.rsplit(' ').next().and_then(|v| v.parse().ok()).unwrap_or(0.0);
                if line.starts_with("apiserver_admission_webhook_admission_duration_seconds_count") {
                    histogram.count += value;
                } else if let Some(le) =
                    line.split("le=\"").nth(1).and_then(|r| r.split('"').next()).and_then(|l| l.parse::<f64>().ok())
                {
                    match histogram.buckets.iter_mut().find(|(b, _)| *b == le) {
                        Some((_, n)) => *n += value,
                        None => histogram.buckets.push((le, value)),
                    }
                }
            }
            out.push((name.to_owned(), histogram));
        }
        Histograms(out)
    }

    fn minus(&self, before: &Histograms) -> Histograms {
        let mut out = self.0.clone();
        for ((_, now), (_, then)) in out.iter_mut().zip(&before.0) {
            now.count -= then.count;
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
/// latency in milliseconds. A failed create aborts the benchmark.
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
    let mut started = 0;
    while started < count {
        let batch = concurrency.min(count - started);
        let mut tasks = Vec::with_capacity(batch);
        for _ in 0..batch {
            let body = objects::typical_deployment(&format!("web-{next}")).to_string();
            *next += 1;
            let (client, url) = (client.clone(), url.clone());
            tasks.push(tokio::spawn(async move {
                let start = Instant::now();
                let response = client.post(&url).header("content-type", "application/json").body(body).send().await;
                let elapsed = start.elapsed().as_secs_f64() * 1000.0;
                match response {
                    Ok(r) if r.status().as_u16() == 201 => elapsed,
                    Ok(r) => panic!("create answered {}: {}", r.status(), r.text().await.unwrap_or_default()),
                    Err(e) => panic!("create failed: {e}"),
                }
            }));
        }
        for task in tasks {
            latencies.push(task.await.expect("a create task"));
        }
        started += batch;
    }
    latencies
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
