//! Lint throughput and peak memory on a generated stream of 10,000
//! Deployments, next to the time to merely parse the same YAML, and the
//! lint of the shared corpus of real manifests as one run.
//!
//! Run: `cargo bench -p lifeguard --bench throughput` (add `-- N` for another
//! object count, `-- --write FILE` to write the stream instead). Each phase
//! runs in its own child process so its peak memory (VmHWM, Linux) is its
//! own and no counting allocator skews the timings; the lint / parse ratio
//! comes from one more child that alternates the two (`--phase paired`).
//! `-- --phase NAME` runs one phase alone and prints its raw figures
//! (`corpus`, `corpus-events`: the corpus's lint, and the parser's events
//! alone on the same files).
//! Prints one table; figures go to BENCHMARKS.md.

// A benchmark's edge: what it measured is its report on the terminal.
#![allow(clippy::print_stderr, clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use lifeguard::input::split::parts;
use lifeguard::input::{Limits, TemplateFinder, parse_part_each, parse_stream, parse_stream_each};
use lifeguard::lint::{Parsed, lint_parsed, lint_paths};
use lifeguard::pipeline::{Keep, Source, lint_each, threads};
use lifeguard::report::Format;
use lifeguard::report::stream::Render;
use policies::{Batch, Policy};

mod stream;

// The CLI's allocator, so the phases cost what they cost in `lifeguard lint`.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use stream::deployment;

const RUNS: usize = 7;

/// Rounds of the paired parse-then-lint runs the ratio is read from.
const PAIRED_RUNS: usize = 15;

/// The phases, in the order printed: `(name, label)`.
const PHASES: [(&str, &str); 9] = [
    ("events", "YAML events only, one core"),
    ("parse", "parse: values + positions, one core"),
    ("parse-all", "parse: values + positions, all cores"),
    ("rules", "rules + locations, one core"),
    ("lint-one", "lint, single-threaded path"),
    ("lint", "lint (all cores, default)"),
    ("corpus-one", "corpus lint, single-threaded path"),
    ("corpus", "corpus lint (all cores, default)"),
    ("corpus-events", "corpus YAML events only, one core"),
];

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

/// The shared corpus's manifests, beside the repository.
fn corpus() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/files");
    dir.is_dir().then_some(dir)
}

/// Parses the parts of `text` on `threads` threads, dropping each document
/// as soon as it is built; returns how many there were.
fn parse_on_all_cores(text: &str, limits: &Limits, threads: usize) -> usize {
    let parts = parts(text);
    let next = AtomicUsize::new(0);
    let documents = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut count = 0;
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(part) = parts.get(i) else { break };
                    parse_part_each(&text[part.start..part.end], part.origin, limits, |_| count += 1);
                }
                documents.fetch_add(count, Ordering::Relaxed);
            });
        }
    });
    documents.into_inner()
}

/// Child: runs one phase RUNS times; prints `median_ns peak_above_base_bytes peak_bytes findings objects`.
fn run_phase(phase: &str, count: usize) {
    let corpus_dir = corpus().map(|d| d.display().to_string());
    let text: String = if phase.starts_with("corpus") { String::new() } else { (0..count).map(deployment).collect() };
    // The corpus's files, read before the baseline, for the parser's floor on them.
    let texts: Vec<String> = match (phase, &corpus_dir) {
        ("corpus-events", Some(dir)) => {
            let files: Vec<PathBuf> =
                std::fs::read_dir(dir).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
            files.iter().filter_map(|f| std::fs::read_to_string(f).ok()).collect()
        }
        _ => Vec::new(),
    };
    let limits = Limits { max_document_chars: usize::MAX, ..Limits::default() };
    let policy = Policy::default();
    let threads = threads();
    // Parsed input for the rules-only phase is built before the baseline.
    let pre = (phase == "rules").then(|| {
        let (documents, _) = parse_stream(&text, &limits);
        [Parsed { file: "bench.yaml".into(), documents, templates: Vec::new() }]
    });
    let source = [Source { name: "bench.yaml", text: &text, context: 0, policy: &policy }];
    let (_, base) = memory();
    // One run of a phase; it returns what it built so that freeing it is not timed.
    let once = |phase: &str| -> (Box<dyn std::any::Any>, usize, usize) {
        match phase {
            "events" => (Box::new(saphyr_parser::Parser::new_from_str(&text).filter(Result::is_ok).count()), 0, 0),
            "corpus-events" => {
                let events: usize =
                    texts.iter().map(|t| saphyr_parser::Parser::new_from_str(t).filter(Result::is_ok).count()).sum();
                (Box::new(events), 0, 0)
            }
            "parse" => {
                let mut documents = 0;
                parse_stream_each(&text, &limits, |_| documents += 1);
                (Box::new(documents), 0, 0)
            }
            "parse-all" => (Box::new(parse_on_all_cores(&text, &limits, threads)), 0, 0),
            "rules" => {
                let out = lint_parsed(pre.as_ref().map_or(&[][..], |p| &p[..]), &policy);
                let (findings, objects) = (out.findings.len(), out.objects);
                (Box::new(out), findings, objects)
            }
            "lint" | "lint-one" => {
                let threads = if phase == "lint" { threads } else { 1 };
                // As `lifeguard lint` does: templates looked for on disk, and
                // the text report rendered as documents are linted.
                let keep = &mut Keep {
                    templates: TemplateFinder::on_disk(None),
                    render: Render::new(Format::Text),
                    ..Keep::default()
                };
                let linted = lint_each(&source, vec![Batch::default()], &limits, threads, keep);
                assert!(linted.syntax_errors.is_empty(), "generated YAML must parse");
                assert_eq!(linted.outcome.objects, count);
                let (findings, objects) = (linted.outcome.finding_count(), linted.outcome.objects);
                (Box::new(linted), findings, objects)
            }
            _ => {
                // The corpus through `lint_paths`, as `lifeguard lint DIR` reads it;
                // `corpus-one` runs with LIFEGUARD_THREADS=1 (set by `main`).
                let Some(dir) = corpus_dir.as_deref() else { return (Box::new(()), 0, 0) };
                let out = lint_paths(&[dir.to_owned()], &policy, &Limits::default());
                let (findings, objects) = (out.findings.len(), out.objects);
                (Box::new(out), findings, objects)
            }
        }
    };
    let timed = |phase: &str| {
        let t = Instant::now();
        let (kept, findings, objects) = once(phase);
        let elapsed = t.elapsed();
        drop(kept);
        (elapsed, findings, objects)
    };
    let median = |times: &mut Vec<Duration>| {
        times.sort();
        times.get(times.len() / 2).map_or(0, Duration::as_nanos)
    };
    if phase == "paired" {
        // The parse on one core and the lint on all cores in alternate runs
        // of one process: this machine's speed drifts by tens of percent
        // from one second to the next, which separate phases would read as
        // a change of ratio. Prints `parse_ns lint_ns ratio_per_mille`.
        let (mut parse, mut lint, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..PAIRED_RUNS {
            let (p, _, _) = timed("parse");
            let (l, _, _) = timed("lint");
            ratios.push((l.as_secs_f64() / p.as_secs_f64() * 1000.0) as u64);
            parse.push(p);
            lint.push(l);
        }
        ratios.sort_unstable();
        let ratio = ratios.get(ratios.len() / 2).copied().unwrap_or(0);
        println!("{} {} {ratio}", median(&mut parse), median(&mut lint));
        return;
    }
    let mut times = Vec::with_capacity(RUNS);
    let (mut findings, mut objects) = (0, 0);
    for _ in 0..RUNS {
        let (elapsed, f, o) = timed(phase);
        (findings, objects) = (f, o);
        times.push(elapsed);
    }
    let (peak, _) = memory();
    println!("{} {} {peak} {findings} {objects}", median(&mut times), peak.saturating_sub(base));
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let count: usize = args.iter().find_map(|a| a.parse().ok()).unwrap_or(10_000);
    if let Some(i) = args.iter().position(|a| a == "--phase") {
        run_phase(args.get(i + 1).map_or("lint", String::as_str), count);
        return;
    }
    // `-- --write FILE`: the stream itself, to time the binary on it.
    if let Some(path) = args.iter().position(|a| a == "--write").and_then(|i| args.get(i + 1)) {
        let text: String = (0..count).map(deployment).collect();
        std::fs::write(path, text).expect("write the stream");
        return;
    }
    let exe = std::env::current_exe().expect("own path");
    let mut rows = Vec::new();
    for (phase, name) in PHASES {
        if phase.starts_with("corpus") && corpus().is_none() {
            eprintln!("skipped {phase}: the shared corpus (shared/corpus beside the repository) is not there");
            continue;
        }
        let mut child = Command::new(&exe);
        child.args(["--phase", phase, &count.to_string()]);
        if phase == "corpus-one" {
            child.env("LIFEGUARD_THREADS", "1");
        } else {
            child.env_remove("LIFEGUARD_THREADS");
        }
        let out = child.output().expect("run phase");
        let line = String::from_utf8_lossy(&out.stdout);
        let v: Vec<u128> = line.split_whitespace().map(|v| v.parse::<u128>().unwrap_or(0)).collect();
        let at = |i: usize| v.get(i).copied().unwrap_or(0);
        let time = Duration::from_nanos(u64::try_from(at(0)).unwrap_or(u64::MAX));
        rows.push((phase, name, time, at(1), at(2), at(3), at(4)));
    }
    let size: usize = (0..count).map(|i| deployment(i).len()).sum();
    let mib = |b: u128| b as f64 / (1024.0 * 1024.0);
    let findings = rows.iter().find(|r| r.0 == "lint").map_or(0, |r| r.5);
    println!(
        "input: {count} Deployments, {:.1} MiB of YAML, {findings} findings; median of {RUNS} runs, {} threads",
        mib(size as u128),
        threads()
    );
    println!("{:<38} {:>10} {:>12} {:>14} {:>12}", "phase", "time", "objects/s", "peak +MiB", "peak MiB");
    for (phase, name, t, above, peak, _, objects) in &rows {
        let objects = if phase.starts_with("corpus") { *objects as f64 } else { count as f64 };
        let per_s = objects / t.as_secs_f64();
        println!(
            "{name:<38} {:>8.1}ms {:>12.0} {:>14.1} {:>12.1}",
            t.as_secs_f64() * 1e3,
            per_s,
            mib(*above),
            mib(*peak)
        );
    }
    let time = |p: &str| rows.iter().find(|r| r.0 == p).map_or(f64::NAN, |r| r.2.as_secs_f64());
    let paired = Command::new(&exe).args(["--phase", "paired", &count.to_string()]).output().expect("run paired");
    let paired: Vec<f64> =
        String::from_utf8_lossy(&paired.stdout).split_whitespace().map(|v| v.parse().unwrap_or(f64::NAN)).collect();
    let at = |i: usize| paired.get(i).copied().unwrap_or(f64::NAN);
    println!(
        "lint / parse on one core: {:.2}x (target <= 0.75x), median of {PAIRED_RUNS} alternate runs in one process \
         (parse {:.1}ms, lint {:.1}ms); from the table's phases: {:.2}x",
        at(2) / 1000.0,
        at(0) / 1e6,
        at(1) / 1e6,
        time("lint") / time("parse")
    );
    println!("lint / parse on all cores: {:.2}x", time("lint") / time("parse-all"));
    if let Some(r) = rows.iter().find(|r| r.0 == "corpus") {
        println!("corpus: {} pod-bearing objects linted, {} findings", r.6, r.5);
        println!(
            "corpus: lint on all cores / YAML events alone on one core: {:.2}x",
            time("corpus") / time("corpus-events")
        );
    }
}
