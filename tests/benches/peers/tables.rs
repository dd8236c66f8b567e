//! The bench's two tables: cost per tool against lifeguard, and coverage.

// A benchmark's edge: what it measured is its report on the terminal.
#![allow(clippy::print_stdout)]

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use lifeguard_e2e::peers::coverage::{by_rule, unmatched};
use lifeguard_e2e::peers::{Flag, Tool};

use super::measure::Cost;

/// Target ratios of the issue: lifeguard's CPU time at most 1/5 of the
/// fastest peer's, its wall time at most 1/8, its peak RSS below each peer's.
const CPU_TARGET: f64 = 5.0;
const WALL_TARGET: f64 = 8.0;

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values.get(values.len() / 2).copied().unwrap_or_default()
}

/// Median wall, median CPU, largest peak RSS of a tool's runs.
fn summary(costs: &[Cost]) -> (Duration, Duration, u64) {
    (
        median(costs.iter().map(|c| c.wall).collect()),
        median(costs.iter().map(|c| c.cpu).collect()),
        costs.iter().map(|c| c.peak_rss).max().unwrap_or(0),
    )
}

/// Per tool: wall, CPU, peak RSS and each as a multiple of lifeguard's;
/// then whether the targets hold.
pub fn costs(label: &str, costs: &BTreeMap<Tool, Vec<Cost>>) {
    let rounds = costs.values().map(Vec::len).max().unwrap_or(0);
    let Some(lifeguard) = costs.get(&Tool::Lifeguard).map(|c| summary(c)) else { return };
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    println!();
    println!("{label} (median of {rounds} runs; peak RSS: the largest of them; x: the tool / lifeguard)");
    println!("{:<22} {:>9} {:>8} {:>9} {:>8} {:>10} {:>8}", "tool", "wall s", "x", "CPU s", "x", "peak MiB", "x");
    for (tool, runs) in costs {
        let (wall, cpu, rss) = summary(runs);
        println!(
            "{:<22} {:>9.2} {:>8.1} {:>9.2} {:>8.1} {:>10.1} {:>8.1}",
            tool.name(),
            wall.as_secs_f64(),
            wall.as_secs_f64() / lifeguard.0.as_secs_f64(),
            cpu.as_secs_f64(),
            cpu.as_secs_f64() / lifeguard.1.as_secs_f64(),
            mib(rss),
            rss as f64 / lifeguard.2 as f64,
        );
    }
    let peers: Vec<(Duration, Duration, u64)> =
        Tool::PEERS.iter().filter_map(|t| costs.get(t)).map(|c| summary(c)).collect();
    let fastest_cpu = peers.iter().map(|p| p.1).min().unwrap_or_default();
    let fastest_wall = peers.iter().map(|p| p.0).min().unwrap_or_default();
    let smallest_rss = peers.iter().map(|p| p.2).min().unwrap_or(0);
    let verdict = |met: bool| if met { "met" } else { "NOT met" };
    let cpu_ratio = fastest_cpu.as_secs_f64() / lifeguard.1.as_secs_f64();
    let wall_ratio = fastest_wall.as_secs_f64() / lifeguard.0.as_secs_f64();
    println!(
        "targets: CPU, fastest peer / lifeguard {cpu_ratio:.1}x (>= {CPU_TARGET}x: {}); wall {wall_ratio:.1}x (>= {WALL_TARGET}x: {}); \
         peak RSS below every peer's ({:.1} MiB against {:.1} MiB: {})",
        verdict(cpu_ratio >= CPU_TARGET),
        verdict(wall_ratio >= WALL_TARGET),
        mib(lifeguard.2),
        mib(smallest_rss),
        verdict(lifeguard.2 < smallest_rss),
    );
}

/// For each rule, the objects lifeguard reports it on and how many of
/// those each peer reports an equivalent check on; then the peers' checks
/// with no lifeguard rule.
pub fn coverage(rules: &[&'static str], flags: &BTreeMap<Tool, BTreeSet<Flag>>) {
    println!();
    println!("coverage on the corpus: objects lifeguard reports per rule, and of those, how many each peer reports");
    println!("anything equivalent for (-: the peer has no equivalent check)");
    print!("{:<28} {:>9}", "rule", "lifeguard");
    for peer in Tool::PEERS {
        print!(" {:>10}", peer.name());
    }
    println!();
    for row in by_rule(rules, flags) {
        print!("{:<28} {:>9}", row.rule, row.objects);
        for (_, found) in &row.peers {
            match found {
                Some(n) => print!(" {n:>10}"),
                None => print!(" {:>10}", "-"),
            }
        }
        println!();
    }
    println!();
    println!("peer checks with no lifeguard rule: objects reported");
    for (tool, check, objects) in unmatched(flags) {
        println!("{:<11} {check:<60} {objects:>6}", tool.name());
    }
}
