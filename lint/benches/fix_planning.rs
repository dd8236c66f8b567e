//! Planning and applying the fixes of one object as its fixes grow: one
//! Deployment of 1, 10, 100 and 1,000 containers, each container with a
//! liveness probe that `liveness-too-aggressive` fixes (two operations:
//! `failureThreshold` raised in place, `timeoutSeconds` added after it).
//!
//! - `lifeguard fix`: the parse and `fix_text`, what the CLI does with a
//!   file's text: plan, write every operation into the text, read it back.
//! - `/mutate planning`: `plan_fixes` with the arguments `/mutate` passes
//!   (the object alone, the default policy, every rule) and the JSON Patch
//!   it answers with (the operations and the annotation's, serialised).
//!
//! Run: `cargo bench -p lifeguard --bench fix_planning` (`-- --quick` for a
//! short run; `LIFEGUARD_BENCH_MAX_CONTAINERS=100` to leave out the larger
//! objects). Figures go to BENCHMARKS.md.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use lifeguard::documents::parse_text;
use lifeguard::fix::fix_text;
use lifeguard::input::Limits;
use policies::finding::add_op;
use policies::{Batch, Policy, plan_fixes};
use serde_json::{Value, json};

// The CLI's allocator, so the figures are the CLI's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SIZES: [usize; 4] = [1, 10, 100, 1000];

/// The sizes run: all, or those up to `LIFEGUARD_BENCH_MAX_CONTAINERS`.
fn sizes() -> Vec<usize> {
    let max = std::env::var("LIFEGUARD_BENCH_MAX_CONTAINERS").ok().and_then(|v| v.parse().ok()).unwrap_or(usize::MAX);
    SIZES.into_iter().filter(|n| *n <= max).collect()
}

/// The Deployment as a manifest file would hold it (kubectl's layout).
fn manifest(containers: usize) -> String {
    let mut text = String::from(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: many\nspec:\n  selector:\n    matchLabels: {app: many}\n  template:\n    metadata:\n      labels: {app: many}\n    spec:\n      containers:\n",
    );
    for i in 0..containers {
        let port = 8000 + i;
        text.push_str(&format!(
            "        - name: c{i}\n          image: example/app:1\n          ports:\n            - containerPort: {port}\n          readinessProbe:\n            httpGet: {{path: /ready, port: {port}}}\n          livenessProbe:\n            httpGet: {{path: /livez, port: {port}}}\n            periodSeconds: 5\n            failureThreshold: 1\n"
        ));
    }
    text
}

/// The same Deployment as the API server sends it.
fn object(containers: usize) -> Value {
    let containers: Vec<Value> = (0..containers)
        .map(|i| {
            let port = 8000 + i;
            json!({"name": format!("c{i}"), "image": "example/app:1", "ports": [{"containerPort": port}],
                "readinessProbe": {"httpGet": {"path": "/ready", "port": port}},
                "livenessProbe": {"httpGet": {"path": "/livez", "port": port}, "periodSeconds": 5, "failureThreshold": 1}})
        })
        .collect();
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "many"},
        "spec": {"selector": {"matchLabels": {"app": "many"}}, "template": {"metadata": {"labels": {"app": "many"}},
            "spec": {"containers": containers}}}})
}

/// What `/mutate` computes before it wraps the answer: the plan, and the
/// patch with the annotation naming the rules fixed. Returns the patch's size.
fn mutate_patch(object: &Value, policy: &Policy) -> usize {
    let Ok(Some(plan)) = plan_fixes(object, &Batch::default(), policy, None) else {
        return 0;
    };
    let mut rules: Vec<&str> = Vec::new();
    for fix in &plan.applied {
        if !rules.contains(&fix.rule.as_str()) {
            rules.push(&fix.rule);
        }
    }
    let mut operations = plan.operations;
    operations.extend(add_op("/metadata/annotations", json!({"lifeguard.dev/mutated": rules.join(",")})));
    serde_json::to_vec(&operations).map_or(0, |patch| patch.len())
}

fn lifeguard_fix(c: &mut Criterion) {
    let policy = Policy::default();
    let limits = Limits::default();
    let mut group = c.benchmark_group("lifeguard fix");
    group.sample_size(10).warm_up_time(Duration::from_millis(500));
    for n in sizes() {
        let text = manifest(n);
        let check = fix_text(
            "many.yaml",
            &text,
            parse_text("many.yaml", &text, &limits),
            &Batch::default(),
            &policy,
            None,
            &limits,
        );
        assert_eq!(check.fix_count(), n, "one fix per container");
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &text, |b, text| {
            b.iter(|| {
                let parse = parse_text("many.yaml", text, &limits);
                let fixed = fix_text("many.yaml", text, parse, &Batch::default(), &policy, None, &limits);
                black_box(fixed.fixed.len())
            });
        });
    }
    group.finish();
}

fn mutate_planning(c: &mut Criterion) {
    let policy = Policy::default();
    let mut group = c.benchmark_group("/mutate planning");
    group.sample_size(10).warm_up_time(Duration::from_millis(500));
    for n in sizes() {
        let object = object(n);
        assert!(mutate_patch(&object, &policy) > 0, "a patch");
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &object, |b, object| {
            b.iter(|| black_box(mutate_patch(object, &policy)));
        });
    }
    group.finish();
}

criterion_group!(benches, lifeguard_fix, mutate_planning);
criterion_main!(benches);
