//! Lint throughput and peak memory on a generated stream of 10,000
//! Deployments, next to the time to merely parse the same YAML.
//!
//! Run: `cargo bench -p lifeguard --bench throughput` (add `-- N` for another
//! object count). Prints one table; figures go to BENCHMARKS.md.

use std::time::{Duration, Instant};

use lifeguard::input::{Limits, parse_stream};
use lifeguard::lint::{Parsed, lint_parsed};
use peak_alloc::PeakAlloc;
use policies::Policy;

#[global_allocator]
static ALLOC: PeakAlloc = PeakAlloc;

const RUNS: usize = 7;

/// One Deployment, varied by `i` so rules see a realistic mix of findings.
fn deployment(i: usize) -> String {
    let gpu = if i % 10 == 0 {
        "\n            nvidia.com/gpu: \"1\""
    } else {
        ""
    };
    let image = if i % 10 == 0 {
        "vllm/vllm-openai:v0.6.0"
    } else {
        "registry.example.com/team/api:1.4.2"
    };
    let ready_path = if i % 3 == 0 { "/healthz" } else { "/readyz" };
    format!(
        r#"---
# Source: app/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api-{i}
  namespace: team-{ns}
  labels:
    app.kubernetes.io/name: api-{i}
    app.kubernetes.io/part-of: shop
spec:
  replicas: 3
  selector:
    matchLabels:
      app.kubernetes.io/name: api-{i}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: api-{i}
      annotations:
        prometheus.io/scrape: "true"
    spec:
      terminationGracePeriodSeconds: 30
      containers:
      - name: api
        image: {image}
        args: ["--port=8080", "--log-level=info"]
        ports:
        - name: http
          containerPort: 8080
        - name: metrics
          containerPort: 9090
        env:
        - name: APP_DRAIN_SECONDS
          value: "15"
        - name: APP_SHUTDOWN_TIMEOUT_SECONDS
          value: "{shutdown}"
        resources:
          requests:
            cpu: 250m
            memory: 256Mi
          limits:
            memory: 512Mi{gpu}
        livenessProbe:
          httpGet:
            path: /healthz
            port: http
          initialDelaySeconds: {delay}
          periodSeconds: 10
          failureThreshold: 3
        readinessProbe:
          httpGet:
            path: {ready_path}
            port: 8080
          periodSeconds: 5
        lifecycle:
          preStop:
            exec:
              command: ["sh", "-c", "sleep 10"]
"#,
        ns = i % 7,
        shutdown = 5 + i % 20,
        delay = if i % 4 == 0 { 45 } else { 5 },
    )
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Runs `f` RUNS times; returns the median time and the peak bytes allocated
/// above the baseline during one run.
fn measure<T>(mut f: impl FnMut() -> T) -> (Duration, usize) {
    let mut times = Vec::with_capacity(RUNS);
    let mut peak = 0;
    for _ in 0..RUNS {
        let base = ALLOC.current_usage();
        ALLOC.reset_peak_usage();
        let t = Instant::now();
        let out = f();
        times.push(t.elapsed());
        peak = peak.max(ALLOC.peak_usage().saturating_sub(base));
        drop(out);
    }
    (median(times), peak)
}

fn main() {
    let count: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(10_000);
    let text: String = (0..count).map(deployment).collect();
    let limits = Limits {
        max_document_chars: usize::MAX,
        ..Limits::default()
    };
    let policy = Policy::default();

    let (events_time, events_mem) =
        measure(|| saphyr_parser::Parser::new_from_str(&text).filter(|e| e.is_ok()).count());
    let (parse_time, parse_mem) = measure(|| parse_stream(&text, &limits));
    // Each phase returns what it built so that freeing it is not timed.
    let (lint_time, lint_mem) = measure(|| {
        let (documents, err) = parse_stream(&text, &limits);
        assert!(err.is_none(), "generated YAML must parse");
        let parsed = [Parsed {
            file: "bench.yaml".into(),
            documents,
        }];
        let out = lint_parsed(&parsed, &policy);
        assert_eq!(out.objects, count);
        (parsed, out)
    });
    let (documents, _) = parse_stream(&text, &limits);
    let parsed = [Parsed {
        file: "bench.yaml".into(),
        documents,
    }];
    let (engine_time, engine_mem) = measure(|| lint_parsed(&parsed, &policy));
    let findings = lint_parsed(&parsed, &policy).findings.len();

    let mib = |b: usize| b as f64 / (1024.0 * 1024.0);
    let per_s = |d: Duration| count as f64 / d.as_secs_f64();
    println!(
        "input: {count} Deployments, {:.1} MiB of YAML, {findings} findings; median of {RUNS} runs",
        mib(text.len())
    );
    println!("{:<34} {:>10} {:>14} {:>12}", "phase", "time", "objects/s", "peak MiB");
    for (name, t, m) in [
        ("YAML events only (saphyr-parser)", events_time, events_mem),
        ("parse: JSON values + positions", parse_time, parse_mem),
        ("rules + locations (parsed input)", engine_time, engine_mem),
        ("lint: parse + rules + locations", lint_time, lint_mem),
    ] {
        println!(
            "{name:<34} {:>8.1}ms {:>14.0} {:>12.1}",
            t.as_secs_f64() * 1e3,
            per_s(t),
            mib(m)
        );
    }
    println!(
        "lint / parse time: {:.2}x (target <= 1.30x)",
        lint_time.as_secs_f64() / parse_time.as_secs_f64()
    );
}
