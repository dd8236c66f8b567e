//! lifeguard beside kube-score, the kyverno CLI and Checkov on the same
//! inputs: the shared corpus (the files both kube-score and kyverno read:
//! each stops the whole run at the first file it cannot read) and a stream
//! of 10,000 Deployments
//! (lint/benches/stream.rs, the throughput bench's). Each tool runs with
//! the checks a user would turn on for probes and lifecycle
//! (`lifeguard_e2e::peers::Tools::command`), in alternating rounds in one
//! process so the machine's drift hits all alike; lifeguard also on one
//! thread, so the ratio per core shows. Per tool and input: the median wall
//! and CPU time and the peak RSS, as ratios against lifeguard in the same
//! run; then, from the corpus runs, the coverage table: for each of
//! lifeguard's rules, the objects it reports and how many of those each
//! peer reports anything equivalent for, and the peer findings lifeguard
//! has no rule for.
//!
//! `.ci/install-peers.sh && cargo bench -p lifeguard-e2e --bench peers`
//! (`-- --rounds N` for another number of rounds than 3, `-- --count N`
//! for another stream than 10,000 Deployments, `-- --tools
//! lifeguard,kube-score` for some of the tools, `-- --before PATH` to
//! measure another build of lifeguard in the same rounds, as "lifeguard,
//! before"). Figures go to BENCHMARKS.md.

// A benchmark's edge: what it measured is its report on the terminal.
#![allow(clippy::print_stdout)]

mod measure;
mod tables;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use lifeguard_e2e::peers::{Flag, Input, Tool, Tools, read};
use lifeguard_e2e::{corpus_dir, files_under};

use measure::Cost;

#[path = "../../../lint/benches/stream.rs"]
mod stream;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "--measure") {
        measure::child(&args[1..]);
        return;
    }
    let number = |flag: &str, default: usize| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(default)
    };
    let rounds = number("--rounds", 3).max(1);
    let count = number("--count", 10_000);
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1));
    let mut chosen: Vec<Tool> = match value("--tools") {
        Some(keys) => {
            keys.split(',').map(|key| Tool::by_key(key).unwrap_or_else(|| panic!("--tools: no tool {key:?}"))).collect()
        }
        None => Tool::ALL.to_vec(),
    };
    let Some(mut tools) = Tools::installed() else { return };
    if let Some(before) = value("--before") {
        tools = tools.with_before(before.into());
        chosen.insert(1, Tool::LifeguardBefore);
    }
    let Some(corpus) = corpus_dir() else { return };
    let work = lifeguard_e2e::peers::work_dir();

    let (mut corpus, unreadable) = readable_corpus(&tools, &corpus.join("files"), &work.path().join("corpus"));
    corpus.groups = kyverno_groups(&corpus.files);
    let stream_dir = work.path().join("stream");
    std::fs::create_dir_all(&stream_dir).expect("the stream's directory");
    let text: String = (0..count).map(stream::deployment).collect();
    std::fs::write(stream_dir.join("stream.yaml"), &text).expect("write the stream");
    let stream = Input::dir(&stream_dir);

    let inputs = [
        (
            format!(
                "corpus: the {} files kube-score and kyverno read (kyverno: {} runs, no two objects of one name in a run)",
                corpus.files.len(),
                corpus.groups.len()
            ),
            corpus,
        ),
        (format!("stream: {count} Deployments, {:.1} MiB", text.len() as f64 / (1024.0 * 1024.0)), stream),
    ];
    drop(text);
    println!("{rounds} alternating rounds per input; {} threads", lifeguard::pipeline::threads());
    if !unreadable.is_empty() {
        println!("left out of the corpus (a peer stops its whole run at them):");
        for (file, tools) in &unreadable {
            println!("  {file} ({})", tools.join(", "));
        }
    }
    let outputs = work.path().join("out");
    std::fs::create_dir_all(&outputs).expect("the outputs' directory");
    let mut corpus_flags = BTreeMap::new();
    for (index, (label, input)) in inputs.iter().enumerate() {
        let mut costs: BTreeMap<Tool, Vec<Cost>> = BTreeMap::new();
        let mut flags: BTreeMap<Tool, BTreeSet<Flag>> = BTreeMap::new();
        for round in 0..rounds {
            for &tool in &chosen {
                let out = outputs.join(format!("{index}-{}", tool.name().replace([' ', ','], "")));
                let (cost, codes) = measure::run(&tools.commands(tool, input), &out);
                let mut found = BTreeSet::new();
                for (i, code) in codes.iter().enumerate() {
                    let report = std::fs::read_to_string(measure::output(&out, i)).unwrap_or_default();
                    found.extend(read(tool, &report).unwrap_or_else(|e| {
                        let stderr =
                            std::fs::read_to_string(out.with_extension(format!("{i}.stderr"))).unwrap_or_default();
                        panic!("{label}: {} exited {code}: {e}\n{}", tool.name(), tail(&stderr));
                    }));
                }
                costs.entry(tool).or_default().push(cost);
                if round == 0 {
                    flags.insert(tool, found);
                }
            }
        }
        tables::costs(label, &costs);
        if index == 0 {
            corpus_flags = flags;
        }
    }
    let rules: Vec<&'static str> = policies::rules::RULES.iter().map(|r| r.name).collect();
    tables::coverage(&rules, &corpus_flags);
}

/// The corpus's manifests that kube-score and kyverno read, each file tried
/// alone (each stops a run at the first file it cannot read, where the
/// others report that file and go on), copied into `into`; and the files
/// left out, with the peers that cannot read them.
fn readable_corpus(tools: &Tools, files: &Path, into: &Path) -> (Input, Vec<(String, Vec<&'static str>)>) {
    std::fs::create_dir_all(into).expect("the corpus copy's directory");
    let mut unreadable = Vec::new();
    for file in files_under(files, lifeguard::input::is_manifest) {
        let alone = Input { dir: files.to_owned(), files: vec![file.clone()], groups: vec![vec![file.clone()]] };
        let refused: Vec<&'static str> = [Tool::KubeScore, Tool::Kyverno]
            .into_iter()
            .filter(|&tool| {
                let output = tools.commands(tool, &alone)[0].output().expect("run a peer");
                read(tool, &String::from_utf8_lossy(&output.stdout)).is_err()
            })
            .map(Tool::name)
            .collect();
        let name: PathBuf = file.file_name().expect("a file name").into();
        if refused.is_empty() {
            std::fs::copy(&file, into.join(&name)).expect("copy a corpus file");
        } else {
            unreadable.push((name.display().to_string(), refused));
        }
    }
    (Input::dir(into), unreadable)
}

/// `files` in groups with no two objects of one kind, namespace and name,
/// first fit in file order: the kyverno CLI loads a run's objects into one
/// fake cluster and stops at the second of a name.
fn kyverno_groups(files: &[PathBuf]) -> Vec<Vec<PathBuf>> {
    // (kind, namespace, name) of the objects a group holds, and its files.
    type Key = (String, String, String);
    let mut groups: Vec<(BTreeSet<Key>, Vec<PathBuf>)> = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("read {}: {e}", file.display()));
        let (documents, _) = lifeguard::input::parse_stream(&text, &lifeguard::input::Limits::default());
        let field = |v: &serde_json::Value, p: &str| v.pointer(p).and_then(|v| v.as_str()).unwrap_or("").to_owned();
        let keys: BTreeSet<Key> = documents
            .iter()
            .map(|d| {
                // An object without a namespace lands in `default`.
                let namespace = field(&d.value, "/metadata/namespace");
                let namespace = if namespace == "default" { String::new() } else { namespace };
                (field(&d.value, "/kind"), namespace, field(&d.value, "/metadata/name"))
            })
            .collect();
        match groups.iter_mut().find(|(taken, _)| taken.is_disjoint(&keys)) {
            Some((taken, group)) => {
                taken.extend(keys);
                group.push(file.clone());
            }
            None => groups.push((keys, vec![file.clone()])),
        }
    }
    groups.into_iter().map(|(_, group)| group).collect()
}

/// The last lines of a tool's error output.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}
