//! A bounded loop of writes through the API server, the way a cluster admin
//! judges an admission webhook's availability: `kubectl create
//! --dry-run=server` of a Deployment lifeguard has findings on, into a
//! `warn` namespace. Each write
//! is kept with how it ended: created and judged (the webhook's warnings
//! came back), created unjudged (no warnings: `failurePolicy: Ignore` let
//! it through while the webhook could not be reached), or failed (with
//! `Fail`, a webhook that cannot be reached fails the write), with the error.
//!
//! A server-side dry run goes through every admission step a create does
//! (the webhooks are called, with `dryRun: true`, which the chart's
//! `sideEffects: None` allows) and stores nothing: real creates at this rate
//! flooded kube-controller-manager's Deployment queue with thousands of
//! objects, and the chart's own rollout waited minutes behind them.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::json;

use super::kubectl::Client;
use super::pods::now_ms;
use crate::support::deployment::Deployment;

/// The most writes one loop makes, whatever its duration.
const MAX_WRITES: usize = 20_000;

/// The shortest time between two writes of one writer: each `kubectl` costs
/// a tenth of a second of CPU or more, and on two cores writers as fast as
/// they can go starve the node and the controllers they are measuring.
pub const PACE: Duration = Duration::from_millis(400);

/// How a write ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Created, with the webhook's warnings.
    Judged,
    /// Created with no warning: the webhook did not judge it.
    Unjudged,
    /// Refused or failed: the error.
    Failed(String),
}

/// One write.
#[derive(Debug, Clone)]
pub struct Write {
    /// When it was sent (ms since the Unix epoch).
    pub start_ms: u64,
    /// When it ended.
    pub end_ms: u64,
    /// The Deployment's name.
    pub name: String,
    /// How it ended.
    pub outcome: Outcome,
}

/// A running loop; [`Writes::stop`] ends it.
pub struct Writes {
    stop: Arc<AtomicBool>,
    done: Arc<Mutex<Vec<Write>>>,
    writers: Vec<JoinHandle<()>>,
}

/// What the loop counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    /// Writes made.
    pub attempted: usize,
    /// Created and judged.
    pub judged: usize,
    /// Created, not judged.
    pub unjudged: usize,
    /// Failed.
    pub failed: usize,
}

impl Writes {
    /// Starts `writers` writers into `namespace`, one write at a time each
    /// and at most one every [`PACE`], for at most `limit`; `prefix` names
    /// the Deployments.
    pub fn start(kubectl: &Client, namespace: &str, prefix: &str, writers: usize, limit: Duration) -> Writes {
        let stop = Arc::new(AtomicBool::new(false));
        let done: Arc<Mutex<Vec<Write>>> = Arc::default();
        let count = Arc::new(AtomicUsize::new(0));
        let deadline = Instant::now() + limit;
        let writers = (0..writers)
            .map(|writer| {
                let (stop, done, count, kubectl) =
                    (Arc::clone(&stop), Arc::clone(&done), Arc::clone(&count), kubectl.clone());
                let (namespace, prefix) = (namespace.to_owned(), prefix.to_owned());
                std::thread::spawn(move || {
                    let mut n = 0_usize;
                    while !stop.load(Ordering::SeqCst)
                        && Instant::now() < deadline
                        && count.fetch_add(1, Ordering::SeqCst) < MAX_WRITES
                    {
                        n += 1;
                        let name = format!("{prefix}-{writer}-{n}");
                        let start_ms = now_ms();
                        let started = Instant::now();
                        let outcome = write(&kubectl, &namespace, &name);
                        done.lock().expect("writes").push(Write { start_ms, end_ms: now_ms(), name, outcome });
                        std::thread::sleep(PACE.saturating_sub(started.elapsed()));
                    }
                })
            })
            .collect();
        Writes { stop, done, writers }
    }

    /// Stops writing, waits for the writes under way, and returns every
    /// write in the order they started.
    pub fn stop(mut self) -> Vec<Write> {
        self.stop.store(true, Ordering::SeqCst);
        for writer in std::mem::take(&mut self.writers) {
            let _ = writer.join();
        }
        let mut done = self.done.lock().expect("writes").clone();
        done.sort_by_key(|w| w.start_ms);
        done
    }
}

impl Drop for Writes {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// The counts of `writes`.
pub fn counts(writes: &[Write]) -> Counts {
    let mut counts = Counts { attempted: writes.len(), ..Counts::default() };
    for write in writes {
        match write.outcome {
            Outcome::Judged => counts.judged += 1,
            Outcome::Unjudged => counts.unjudged += 1,
            Outcome::Failed(_) => counts.failed += 1,
        }
    }
    counts
}

/// A Deployment with no readiness probe (`readiness-probe-missing`, a
/// warning in a `warn` namespace).
fn object(name: &str) -> serde_json::Value {
    Deployment::new(name)
        .labels(json!({"app": "writes"}))
        .replicas(0)
        .containers(json!([{"name": "web", "image": "example.test/web:1", "ports": [{"containerPort": 8080}]}]))
        .build()
}

fn write(kubectl: &Client, namespace: &str, name: &str) -> Outcome {
    let run = kubectl.run_with_input(
        &["create", "--dry-run=server", "-n", namespace, "-o", "name", "-f", "-"],
        Some(&object(name).to_string()),
    );
    if run.code != 0 {
        return Outcome::Failed(run.stderr.trim().to_owned());
    }
    if run.warnings().is_empty() { Outcome::Unjudged } else { Outcome::Judged }
}
