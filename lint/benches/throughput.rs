//! Lint throughput and peak memory on a generated stream of 10,000
//! Deployments, next to the time to merely parse the same YAML.
//!
//! Run: `cargo bench -p lifeguard --bench throughput` (add `-- N` for another
//! object count). Each phase runs in its own child process so its peak
//! memory (VmHWM, Linux) is its own and no counting allocator skews the
//! timings. Prints one table; figures go to BENCHMARKS.md.

use std::process::Command;
use std::time::{Duration, Instant};

use lifeguard::input::{Limits, parse_stream};
use lifeguard::lint::{Parsed, lint_parsed};
use lifeguard::pipeline::lint_sources;
use policies::Policy;

const RUNS: usize = 7;

/// One Deployment, varied by `i` so rules see a realistic mix of findings.
fn deployment(i: usize) -> String {
    let gpu = if i % 10 == 0 { "\n            nvidia.com/gpu: \"1\"" } else { "" };
    let image = if i % 10 == 0 { "vllm/vllm-openai:v0.6.0" } else { "registry.example.com/team/api:1.4.2" };
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

/// Peak and current resident memory of this process, in bytes (Linux).
fn memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

/// Child: runs one phase RUNS times; prints `median_ns peak_bytes findings`.
fn run_phase(phase: &str, count: usize) {
    let text: String = (0..count).map(deployment).collect();
    let limits = Limits { max_document_chars: usize::MAX, ..Limits::default() };
    let policy = Policy::default();
    // Parsed input for the rules-only phase is built before the baseline.
    let pre = (phase == "rules").then(|| {
        let (documents, _) = parse_stream(&text, &limits);
        [Parsed { file: "bench.yaml".into(), documents, templates: Vec::new() }]
    });
    let sources = [("bench.yaml".to_owned(), text.clone())];
    let (_, base) = memory();
    let mut times = Vec::with_capacity(RUNS);
    let mut findings = 0;
    for _ in 0..RUNS {
        let t = Instant::now();
        // Each run returns what it built so that freeing it is not timed.
        let kept: Box<dyn std::any::Any> = match phase {
            "events" => Box::new(saphyr_parser::Parser::new_from_str(&text).filter(Result::is_ok).count()),
            "parse" => Box::new(parse_stream(&text, &limits)),
            "rules" => {
                let out = lint_parsed(pre.as_ref().map_or(&[][..], |p| &p[..]), &policy);
                findings = out.findings.len();
                Box::new(out)
            }
            _ => {
                let linted = lint_sources(&sources, &policy, &limits);
                assert!(linted.syntax_errors.is_empty(), "generated YAML must parse");
                assert_eq!(linted.outcome.objects, count);
                findings = linted.outcome.findings.len();
                Box::new(linted)
            }
        };
        times.push(t.elapsed());
        drop(kept);
    }
    times.sort();
    let (peak, _) = memory();
    println!("{} {} {findings}", times[RUNS / 2].as_nanos(), peak.saturating_sub(base));
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let count: usize = args.iter().find_map(|a| a.parse().ok()).unwrap_or(10_000);
    if let Some(i) = args.iter().position(|a| a == "--phase") {
        run_phase(args.get(i + 1).map_or("lint", String::as_str), count);
        return;
    }
    let exe = std::env::current_exe().expect("own path");
    let mut rows = Vec::new();
    for (phase, name) in [
        ("events", "YAML events only (saphyr-parser)"),
        ("parse", "parse: JSON values + positions"),
        ("rules", "rules + locations, one thread"),
        ("lint", "lint: parse || rules + locations"),
    ] {
        let out = Command::new(&exe).args(["--phase", phase, &count.to_string()]).output().expect("run phase");
        let line = String::from_utf8_lossy(&out.stdout);
        let mut it = line.split_whitespace().map(|v| v.parse::<u128>().unwrap_or(0));
        let (ns, peak, findings) = (it.next().unwrap_or(0), it.next().unwrap_or(0), it.next().unwrap_or(0));
        rows.push((phase, name, Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX)), peak, findings));
    }
    let size: usize = (0..count).map(|i| deployment(i).len()).sum();
    let mib = |b: u128| b as f64 / (1024.0 * 1024.0);
    let findings = rows.last().map_or(0, |r| r.4);
    println!(
        "input: {count} Deployments, {:.1} MiB of YAML, {findings} findings; median of {RUNS} runs, {} threads",
        mib(size as u128),
        std::thread::available_parallelism().map_or(1, usize::from)
    );
    println!("{:<34} {:>10} {:>12} {:>16}", "phase", "time", "objects/s", "peak RSS MiB");
    for (_, name, t, peak, _) in &rows {
        let per_s = count as f64 / t.as_secs_f64();
        println!("{name:<34} {:>8.1}ms {:>12.0} {:>16.1}", t.as_secs_f64() * 1e3, per_s, mib(*peak));
    }
    let time = |p: &str| rows.iter().find(|r| r.0 == p).map_or(f64::NAN, |r| r.2.as_secs_f64());
    println!("lint / parse time: {:.2}x (target <= 1.30x)", time("lint") / time("parse"));
}
