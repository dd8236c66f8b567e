//! A set of cases run on the node, a bounded number of pods at once: each
//! case simulated first (its own file, its own dependency), then its pod
//! created, watched for its window and judged.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

use crate::cluster::dependency::Dependency;
use crate::cluster::node::Node;
use crate::cluster::pods::PodWatch;

use super::case::{Case, pod_for};
use super::compare::judge;
use super::observed::{Observed, observe};
use super::predicted::{Predicted, simulate};

/// One case's run.
#[derive(Debug)]
pub struct Outcome {
    /// How long the kubelet was watched from the case's 0, in seconds.
    pub window: u64,
    /// The pod as created.
    pub pod: Value,
    pub predicted: Predicted,
    /// What the kubelet did, or why the case could not be watched (its
    /// pod never started, say), with the workload's log and the kubelet's
    /// account.
    pub observed: Result<Observed, String>,
    /// Its disagreements ([`judge`]); one that says why it was not
    /// watched when it was not.
    pub wrong: Vec<String>,
}

/// Runs `cases` in namespace `ns` (watched by `watch`), at most `parallel`
/// pods at once, each case's files in `dir`. Every case is simulated
/// before any pod is created; with `remove`, each pod is deleted once its
/// window is over, so a long run keeps only `parallel` pods on the node.
/// `trim` may shorten a case's window from what simulate said of it.
pub fn run(
    node: &Node,
    (ns, watch): (&str, &PodWatch),
    cases: &[Case],
    (parallel, remove): (usize, bool),
    dir: &Path,
    trim: impl Fn(&Case, &Predicted) -> u64,
) -> Vec<Outcome> {
    // One dependency per case, so one case's stall is not another's.
    let dependencies: Vec<Dependency> = cases.iter().map(|_| Dependency::start()).collect();
    let pods: Vec<Value> = cases.iter().zip(&dependencies).map(|(c, d)| pod_for(node, c, d)).collect();
    let predicted: Vec<Predicted> = cases.iter().zip(&pods).map(|(c, p)| simulate(c, p, dir)).collect();
    let cases: Vec<Case> =
        cases.iter().zip(&predicted).map(|(c, p)| Case { observe: trim(c, p), ..c.clone() }).collect();
    let next = AtomicUsize::new(0);
    let observed: Vec<Mutex<Option<Result<Observed, String>>>> = cases.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..parallel.clamp(1, cases.len().max(1)) {
            scope.spawn(|| {
                while let Some(i) = Some(next.fetch_add(1, Ordering::SeqCst)).filter(|i| *i < cases.len()) {
                    let (case, pod, dependency) = (&cases[i], &pods[i], &dependencies[i]);
                    // A pod that never starts fails its own case, not the run.
                    let seen = catch_unwind(AssertUnwindSafe(|| observe(node, ns, case, pod, watch, dependency)))
                        .map_err(|panic| panic_text(&*panic));
                    if remove {
                        // A deletion's pod may be gone already: what this
                        // says is not the case's.
                        let _ = node.plane.kubectl.run(&[
                            "delete",
                            "pod",
                            case.name,
                            "-n",
                            ns,
                            "--grace-period=0",
                            "--force",
                            "--wait=false",
                        ]);
                    }
                    if let Ok(mut slot) = observed[i].lock() {
                        *slot = Some(seen);
                    }
                }
            });
        }
    });
    cases
        .iter()
        .zip(pods)
        .zip(predicted)
        .zip(observed)
        .map(|(((case, pod), predicted), seen)| {
            let observed =
                seen.into_inner().ok().flatten().unwrap_or_else(|| Err("the case's thread left nothing".to_owned()));
            let wrong = match &observed {
                Ok(o) => judge(case, &predicted, o),
                Err(why) => vec![format!("not watched: {why}")],
            };
            Outcome { window: case.observe, pod, predicted, observed, wrong }
        })
        .collect()
}

fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// The namespace the random cases run in.
pub const RANDOM_NAMESPACE: &str = "random";

/// Runs random cases 0..`count` of `seed` (or case `only` alone), at most
/// `parallel` pods at once, each pod deleted after its window: the node
/// suite's sample and the bench, which differ only in what they report.
pub fn run_random(node: &Node, seed: u64, count: u64, only: Option<u64>, parallel: usize) -> (Vec<Case>, Vec<Outcome>) {
    let kubectl = &node.plane.kubectl;
    kubectl.namespace(RANDOM_NAMESPACE, &[]);
    kubectl.default_service_account(RANDOM_NAMESPACE);
    let watch = PodWatch::start(node, RANDOM_NAMESPACE);
    let dir = tempfile::tempdir().expect("a directory for the cases' files");
    let cases = super::random::cases(seed, count, only);
    let outcomes = run(node, (RANDOM_NAMESPACE, &watch), &cases, (parallel, true), dir.path(), super::random::window);
    (cases, outcomes)
}
