//! `lifeguard simulate` against the kubelet on random cases: case 0..N of
//! a seed (`lifeguard_e2e::simulate_check::random`), each a pod of the test
//! workload run on the real node, a bounded number at once, and held to the
//! matrix's rule of agreement (docs/simulate.md, Checked against the
//! kubelet). Reported: the agreement rate, by scenario, the run's time, and
//! every disagreement with its seed and case, the pod and both timelines.
//!
//! `.ci/install-control-plane.sh && .ci/install-node.sh && cargo bench -p lifeguard-e2e --bench node_random`
//! (`-- --seed S --cases N --parallel P`; defaults 48, 100 and 10;
//! `LIFEGUARD_RANDOM_SEED` and `LIFEGUARD_RANDOM_CASE` as the test reads
//! them, to run one case again).

// A benchmark's edge: what it measured is its report on the terminal.
#![allow(clippy::print_stderr, clippy::print_stdout)]

use std::collections::BTreeMap;
use std::time::Instant;

use lifeguard_e2e::cluster::node::Node;
use lifeguard_e2e::cluster::pods;
use lifeguard_e2e::simulate_check::{RANDOM_NAMESPACE, limits, random, report, run_random};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| args.iter().skip_while(|a| *a != name).nth(1).and_then(|v| v.parse::<u64>().ok());
    let (seed, only) = random::from_env(flag("--seed").unwrap_or(48));
    let count = flag("--cases").unwrap_or(100);
    let parallel = flag("--parallel").and_then(|p| usize::try_from(p).ok()).unwrap_or(10);
    let Some(node) = Node::shared() else {
        eprintln!("node_random: no node here (see above); nothing measured");
        return;
    };
    let ns = RANDOM_NAMESPACE;
    let started = Instant::now();
    let (cases, outcomes) = run_random(node, seed, count, only, parallel);
    let elapsed = started.elapsed().as_secs_f64();

    // Cases, agreeing, and disagreeing on a documented limit, by scenario.
    let mut by_scenario: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    let mut wrong = 0;
    let mut limits = Vec::new();
    for ((k, case), outcome) in (0..).zip(&cases).zip(&outcomes) {
        let kind = case.scenario.split(':').next().unwrap_or(case.scenario);
        let kind = match case.others.names().len() {
            0 => kind.to_owned(),
            _ => format!("{kind}, several containers"),
        };
        let entry = by_scenario.entry(kind).or_default();
        entry.0 += 1;
        if outcome.wrong.is_empty() {
            entry.1 += 1;
            continue;
        }
        let shown = report::disagreement(seed, only.unwrap_or(k), case, outcome);
        if let Some(limit) = limits::on_limit(case, outcome) {
            entry.2 += 1;
            limits.push(format!("on a limit of docs/simulate.md ({limit}): {shown}"));
            continue;
        }
        wrong += 1;
        println!("{shown}");
        if outcome.observed.as_ref().is_ok_and(|o| !o.outside.is_empty()) {
            println!("{}", pods::kubelet_account(node, ns, case.name, 40));
        }
    }
    for limit in &limits {
        println!("{limit}");
    }
    let agree = cases.len() - wrong - limits.len();
    println!("| scenario | cases | agree | on a limit |\n|---|---|---|---|");
    for (kind, (n, ok, limit)) in &by_scenario {
        println!("| {kind} | {n} | {ok} | {limit} |");
    }
    println!(
        "seed {seed}: {agree} of {} cases agree ({:.0} %), {} disagree on a documented limit, {wrong} disagree; \
         {parallel} pods at once, {elapsed:.0} s",
        cases.len(),
        100.0 * agree as f64 / cases.len().max(1) as f64,
        limits.len()
    );
}
