//! How close `lifeguard lint` comes to the YAML parse floors, per input:
//! the lint of the files as `lifeguard lint FILES` reads them (all cores,
//! the default), against the event stream of the same bytes from
//! `saphyr-parser` (the parser lint uses) and from libyaml (0.2.5's parser,
//! as `unsafe-libyaml` transpiles the C to Rust, read through the `libyaml`
//! crate's events, which copy each scalar out: the workspace forbids
//! `unsafe`), each on one core.
//!
//! The inputs: the shared corpus's files; the stream of 10,000 Deployments
//! of the throughput bench; two CRD-heavy installs of the corpus (Argo CD's
//! `install.yaml`, Kubeflow's KServe); the YAML files of the layouts
//! (Kustomize trees, LeaderWorkerSet and KubeRay resources), each read as
//! the manifest it is (Helm templates, `kustomization.yaml`, `Chart.yaml`
//! and values files left out: the parsers cannot read a template, and lint
//! renders those through Helm and Kustomize, which is not a parse). Each
//! input but the corpus is linted from a directory of its own (lint reads
//! a file's siblings for the Services beside it: a file of the corpus alone
//! would have lint read the other 195 too).
//!
//! Run: `cargo bench -p lifeguard --bench floors`. Each input runs 7
//! rounds of the three, alternating, so the machine's drift hits all three
//! alike; the table gives each one's median and the ratios. Figures go to
//! BENCHMARKS.md.

// A benchmark's edge: what it measured is its report on the terminal.
#![allow(clippy::print_stderr, clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lifeguard::input::Limits;
use lifeguard::lint::lint_paths;
use policies::Policy;

#[path = "stream.rs"]
mod stream;

// The CLI's allocator, so lint costs what it costs in `lifeguard lint`.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const ROUNDS: usize = 7;

/// One input: its name, the files lint reads, and their texts for the parsers.
struct Input {
    name: String,
    files: Vec<PathBuf>,
    texts: Vec<String>,
}

impl Input {
    fn new(name: &str, files: Vec<PathBuf>) -> Input {
        let texts = files.iter().filter_map(|f| std::fs::read_to_string(f).ok()).collect();
        Input { name: name.to_owned(), files, texts }
    }

    fn bytes(&self) -> usize {
        self.texts.iter().map(String::len).sum()
    }
}

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus")
}

/// The files under `dir`, recursively, sorted, that `keep` takes.
fn files_under(dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            files_under(&path, keep, out);
        } else if keep(&path) {
            out.push(path);
        }
    }
}

/// A layout's file that is a manifest as it stands: YAML, not a Helm
/// template, a Kustomization, a chart's metadata or values.
fn plain_manifest(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let yaml = name.ends_with(".yaml") || name.ends_with(".yml");
    let tool = name.starts_with("kustomization.") || name == "Chart.yaml" || name.starts_with("values");
    let template = std::fs::read_to_string(path).is_ok_and(|t| t.contains("{{"));
    yaml && !tool && !template
}

/// saphyr-parser's events over every text; how many.
fn saphyr_events(texts: &[String]) -> usize {
    texts.iter().map(|t| saphyr_parser::Parser::new_from_str(t).filter(Result::is_ok).count()).sum()
}

/// libyaml's events over one text, until the stream's end or an error; how many.
fn libyaml_events_of(text: &str) -> usize {
    let Ok(parser) = libyaml::Parser::new(text.as_bytes()) else { return 0 };
    parser.into_iter().take_while(Result::is_ok).count()
}

fn libyaml_events(texts: &[String]) -> usize {
    texts.iter().map(|t| libyaml_events_of(t)).sum()
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

/// Copies `files` (under `root`) into `dir`, keeping their paths below
/// `root`: lint reads a file's siblings for the Services beside it, so
/// each input is linted in a tree of its own files, the bytes the parsers read.
fn staged(dir: &Path, root: &Path, files: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for file in files {
        let relative = file.strip_prefix(root).unwrap_or(file);
        let to = dir.join(relative);
        std::fs::create_dir_all(to.parent().unwrap_or(dir)).expect("create the staging directory");
        std::fs::copy(file, &to).expect("stage an input file");
        out.push(to);
    }
    out
}

fn main() {
    let corpus = shared();
    if !corpus.join("files").is_dir() {
        eprintln!("skipped: the shared corpus (shared/corpus beside the repository) is not there");
        return;
    }
    let base = std::env::temp_dir().join(format!("lifeguard-floors-{}", std::process::id()));
    let stream_dir = base.join("stream");
    std::fs::create_dir_all(&stream_dir).expect("create the staging directory");
    let stream_file = stream_dir.join("deployments.yaml");
    let stream: String = (0..10_000).map(stream::deployment).collect();
    std::fs::write(&stream_file, stream).expect("write the stream");

    let mut corpus_files = Vec::new();
    files_under(&corpus.join("files"), &|p| p.is_file(), &mut corpus_files);
    let mut layouts = Vec::new();
    files_under(&corpus.join("layouts"), &plain_manifest, &mut layouts);
    let layouts = staged(&base.join("layouts"), &corpus.join("layouts"), &layouts);
    let files = corpus.join("files");
    let single = |dir: &str, name: &str| staged(&base.join(dir), &files, &[files.join(name)]);
    let inputs = [
        Input::new("corpus (196 files)", corpus_files),
        Input::new("10,000 Deployments", vec![stream_file]),
        Input::new("Argo CD install.yaml", single("argo-cd", "argoproj__argo-cd__manifests__install.yaml")),
        Input::new(
            "Kubeflow KServe",
            single("kserve", "kubeflow__manifests__applications__kserve__kserve__kserve.yaml"),
        ),
        Input::new(&format!("layouts' manifests ({} files)", layouts.len()), layouts),
    ];
    let policy = Policy::default();
    let limits = Limits::default();
    println!("median of {ROUNDS} alternating rounds; lint on all cores, the parsers on one");
    println!(
        "{:<30} {:>8} {:>10} {:>10} {:>10} {:>12} {:>13}",
        "input", "MiB", "lint", "saphyr", "libyaml", "lint/saphyr", "lint/libyaml"
    );
    for input in &inputs {
        let paths: Vec<String> = input.files.iter().map(|f| f.display().to_string()).collect();
        let (mut lint, mut saphyr, mut libyaml) = (Vec::new(), Vec::new(), Vec::new());
        let mut events = (0, 0);
        for _ in 0..ROUNDS {
            let t = Instant::now();
            let out = lint_paths(&paths, &policy, &limits);
            lint.push(t.elapsed());
            drop(out);
            let t = Instant::now();
            events.0 = saphyr_events(&input.texts);
            saphyr.push(t.elapsed());
            let t = Instant::now();
            events.1 = libyaml_events(&input.texts);
            libyaml.push(t.elapsed());
        }
        let (lint, saphyr, libyaml) = (median(&mut lint), median(&mut saphyr), median(&mut libyaml));
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "{:<30} {:>8.1} {:>8.1}ms {:>8.1}ms {:>8.1}ms {:>11.2}x {:>12.2}x",
            input.name,
            input.bytes() as f64 / (1024.0 * 1024.0),
            ms(lint),
            ms(saphyr),
            ms(libyaml),
            ms(lint) / ms(saphyr),
            ms(lint) / ms(libyaml),
        );
        if events.0 == 0 || events.1 == 0 {
            eprintln!("{}: a parser read no event (saphyr {}, libyaml {})", input.name, events.0, events.1);
        }
    }
    std::fs::remove_dir_all(&base).ok();
}
