//! A file's findings do not depend on which other files are named in the
//! same run: the corpus linted as one run (its directory), file by file,
//! and in random groups gives each file the same findings. Linting a file
//! reads its directory's other manifests for their Services, so the
//! file-by-file and group runs take a fixed-seed sample to stay bounded.

use std::collections::BTreeMap;

use lifeguard::input::Limits;
use lifeguard::lint::lint_paths;
use lifeguard::outcome::Outcome;
use lifeguard_e2e::corpus_dir;
use policies::Policy;

/// Files linted on their own; groups of random size and membership.
const ALONE: usize = 12;
const GROUPS: usize = 4;
const SEED: u64 = 0x6c69_6665_6775_6172;

/// A small deterministic generator (xorshift64*): the same groups every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        usize::try_from(x % n.max(1) as u64).unwrap_or(0)
    }

    fn sample(&mut self, files: &[String], n: usize) -> Vec<String> {
        let mut pool = files.to_vec();
        (0..n.min(pool.len())).map(|_| pool.swap_remove(self.below(pool.len()))).collect()
    }
}

/// Each file's findings, one line each (position, rule, severity, message).
fn by_file(out: &Outcome) -> BTreeMap<String, Vec<String>> {
    let mut map: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in &out.findings {
        let line = format!("{}:{} {} {} {}", f.line, f.column, f.finding.rule, f.finding.severity, f.finding.message);
        map.entry(f.file.to_string()).or_default().push(line);
    }
    map
}

#[test]
fn findings_are_the_same_however_the_corpus_is_grouped() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = corpus.join("files");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("the shared corpus (../shared/corpus/files beside the repository) is needed for this test")
        .filter_map(Result::ok)
        .map(|e| e.path().display().to_string())
        .filter(|p| p.ends_with(".yaml") || p.ends_with(".yml") || p.ends_with(".json"))
        .collect();
    files.sort();
    assert!(files.len() >= 190, "corpus has {} files", files.len());
    let (policy, limits) = (Policy::default(), Limits::default());
    let whole = lint_paths(&[dir.display().to_string()], &policy, &limits);
    assert!(whole.errors.is_empty(), "{:?}", whole.errors);
    let whole = by_file(&whole);
    let mut rng = Rng(SEED);
    let mut runs: Vec<Vec<String>> = rng.sample(&files, ALONE).into_iter().map(|f| vec![f]).collect();
    for _ in 0..GROUPS {
        let size = 2 + rng.below(files.len() / 4);
        runs.push(rng.sample(&files, size));
    }
    let mut problems = Vec::new();
    for run in &runs {
        let found = by_file(&lint_paths(run, &policy, &limits));
        for file in run {
            let (alone, all) = (found.get(file), whole.get(file));
            if alone != all {
                problems.push(format!("{file} (in a run of {}):\n  {alone:?}\n  whole corpus: {all:?}", run.len()));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
