//! `lifeguard simulate` against the kubelet on cases nobody chose: a fixed
//! sample of the seeded random cases (`lifeguard_e2e::simulate_check::random`),
//! run on the real node a few pods at once and held to the matrix's rule of
//! agreement. The bench `node_random` runs a hundred or more of a seed.
//!
//! `LIFEGUARD_RANDOM_SEED=S` runs seed S's sample instead, and
//! `LIFEGUARD_RANDOM_CASE=k` its case k alone (a case a bench run
//! reported).

// A test's edge: it tells on the terminal what it measured and saw fail.
#![allow(clippy::print_stderr)]

use std::time::Instant;

use lifeguard_e2e::cluster::node::Node;
use lifeguard_e2e::cluster::pods;
use lifeguard_e2e::simulate_check::{RANDOM_NAMESPACE, limits, random, report, run_random};

/// The sample's seed and size: cases of every behaviour, a few minutes.
const SEED: u64 = 48;
const CASES: u64 = 10;
/// Pods on the node at once.
const PARALLEL: usize = 10;

#[test]
fn simulate_agrees_with_the_kubelet_on_a_fixed_sample_of_random_cases() {
    let Some(node) = Node::shared() else { return };
    let ns = RANDOM_NAMESPACE;
    let (seed, only) = random::from_env(SEED);
    let started = Instant::now();
    let (cases, outcomes) = run_random(node, seed, CASES, only, PARALLEL);
    let mut failures = Vec::new();
    let mut limits = 0;
    for ((k, case), outcome) in (0..).zip(&cases).zip(&outcomes) {
        let k = only.unwrap_or(k);
        if outcome.wrong.is_empty() {
            eprintln!("agrees: {} ({}): {}", case.name, case.scenario, case.what);
        } else if let Some(limit) = limits::on_limit(case, outcome) {
            eprintln!("on a limit ({limit}): {}: {}", case.name, outcome.wrong.join("; "));
            limits += 1;
        } else {
            let mut failure = report::disagreement(seed, k, case, outcome);
            if outcome.observed.as_ref().is_ok_and(|o| !o.outside.is_empty()) {
                failure.push_str(&pods::kubelet_account(node, ns, case.name, 40));
            }
            failures.push(failure);
        }
    }
    eprintln!(
        "{} of {} random cases of seed {seed} agree, {limits} disagree on a limit of docs/simulate.md, in {:.0} s",
        cases.len() - failures.len() - limits,
        cases.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "simulate and the kubelet disagree:\n{}", failures.join("\n"));
}
