//! The decision on one thread, in process, without TLS or HTTP: where the
//! CPU of a review goes. Times each step of `POST /validate/warn` on the
//! same typical Deployment AdmissionReview the load bench sends, and the
//! whole `review()` call for every endpoint.
//!
//! Run: `cargo bench -p lifeguard-webhook --bench decide`
//! (`LIFEGUARD_BENCH_ITERATIONS` sets the iterations per figure; default
//! 3000). Each figure is the median of 7 batches. With
//! `LIFEGUARD_BENCH_PROFILE` set it only runs `/validate/warn` reviews, for
//! a profiler (`perf record --call-graph dwarf`).

// A benchmark's edge: what it measured is its report on the terminal.
#![allow(clippy::print_stderr, clippy::print_stdout)]

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

use lifeguard_e2e::support::applied;
use policies::Policy;
use policies::policy::AdmissionMode;
use webhook::review::{Endpoint, Reply, ReviewOptions, parse, review, wire_json};

// The server's allocator, so the figures are the server's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const BATCHES: usize = 7;

/// The median over [`BATCHES`] of the mean µs per call of `f`.
fn micros(iterations: u32, mut f: impl FnMut()) -> f64 {
    let mut batches: Vec<f64> = (0..BATCHES)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..iterations {
                f();
            }
            start.elapsed().as_secs_f64() * 1e6 / f64::from(iterations)
        })
        .collect();
    batches.sort_by(f64::total_cmp);
    batches[BATCHES / 2]
}

fn main() -> ExitCode {
    let iterations = std::env::var("LIFEGUARD_BENCH_ITERATIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(3000);
    let Ok(body) = serde_json::to_vec(&applied::review()) else {
        eprintln!("cannot encode the review body");
        return ExitCode::FAILURE;
    };
    let policy = Policy::default();
    let options = ReviewOptions::default();
    let warn = Endpoint::Validate(Some(AdmissionMode::Warn));
    let Reply::Review { review: answer, .. } = review(&body, warn, &policy, &options) else {
        eprintln!("the review body was refused");
        return ExitCode::FAILURE;
    };
    let warnings = answer.response.as_ref().and_then(|r| r.warnings.as_ref()).map_or(0, Vec::len);
    if warnings == 0 {
        eprintln!("the review has no warnings: the bench would measure nothing");
        return ExitCode::FAILURE;
    }

    if std::env::var_os("LIFEGUARD_BENCH_PROFILE").is_some() {
        for _ in 0..iterations {
            black_box(review(black_box(&body), warn, &policy, &options));
        }
        return ExitCode::SUCCESS;
    }
    println!(
        "review body: {:.1} KiB Deployment AdmissionReview, {warnings} warnings; one thread, median of {BATCHES} \
         batches of {iterations}",
        body.len() as f64 / 1024.0
    );
    println!("{:<44} {:>10}", "step", "µs/call");
    let row = |name: &str, us: f64| println!("{name:<44} {us:>10.1}");
    row(
        "serde_json::Value of the whole body",
        micros(iterations, || {
            black_box(serde_json::from_slice::<serde_json::Value>(black_box(&body)).ok());
        }),
    );
    row(
        "scan the body, build nothing (IgnoredAny)",
        micros(iterations, || {
            black_box(serde_json::from_slice::<serde::de::IgnoredAny>(black_box(&body)).ok());
        }),
    );
    row(
        "parse (request, object, head)",
        micros(iterations, || {
            black_box(parse(black_box(&body)).ok());
        }),
    );
    for (name, endpoint) in [
        ("review: /validate/warn", warn),
        ("review: /validate/enforce", Endpoint::Validate(Some(AdmissionMode::Enforce))),
        ("review: /validate/audit", Endpoint::Validate(Some(AdmissionMode::Audit))),
        ("review: /mutate", Endpoint::Mutate),
    ] {
        row(
            name,
            micros(iterations, || {
                black_box(review(black_box(&body), endpoint, &policy, &options));
            }),
        );
    }
    row(
        "encode the /validate/warn answer",
        micros(iterations, || {
            black_box(wire_json(black_box(&answer)).ok());
        }),
    );
    ExitCode::SUCCESS
}
