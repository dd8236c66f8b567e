//! Helpers shared by the end-to-end tests.
//!
//! Some tests need what a fresh clone does not have: the shared corpus of
//! real manifests beside the repository, or tools `.ci/run` installs into
//! `target/tools/` (helm, kubernetes-validate). Without them those tests
//! skip with a printed reason, so `cargo test --workspace` passes on a fresh
//! clone; CI sets `LIFEGUARD_NO_SKIP=1`, which turns every skip into a
//! failure, so CI still runs them all.

use std::io::Write as _;
pub mod cluster;
pub mod docs;
pub mod lsp_client;
pub mod peers;
pub mod simulate_check;
pub mod support;
pub mod vap_parity;

use std::path::{Path, PathBuf};

/// Set (to anything but `0`) to make a skipped test fail instead.
pub const NO_SKIP_ENV: &str = "LIFEGUARD_NO_SKIP";

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// One `#[test]` per rule, named by the rule, each calling `$check(RULE)`
/// (so a failure names the rule), and `TESTED`, the rules that have one,
/// for a test that compares it with the registry.
#[macro_export]
macro_rules! rule_tests {
    ($check:path; $($test:ident => $rule:literal,)*) => {
        $(
            #[test]
            fn $test() {
                $check($rule);
            }
        )*
        const TESTED: &[&str] = &[$($rule),*];
    };
}

/// A rule's fixtures (`bad*.yaml`, `good*.yaml`, a fixable rule's
/// `fix.yaml`), in the rule's folder beside its code.
pub fn rule_fixtures(rule: &str) -> PathBuf {
    repo_root().join("policies/src/rules").join(rule.replace('-', "_")).join("fixtures")
}

/// The shared corpus of real manifests (beside the repository, read-only),
/// or `None` after printing why the test skips.
pub fn corpus_dir() -> Option<PathBuf> {
    let dir = repo_root().join("../shared/corpus");
    if dir.join("SOURCES.tsv").is_file() {
        return Some(dir);
    }
    skip("the shared corpus of real manifests (shared/corpus beside the repository) is not there");
    None
}

/// LeaderWorkerSet's CRD in the corpus (its chart's, unchanged), and the
/// CRD it holds.
pub const LWS_CRD: (&str, &str) = (
    "layouts/lws/charts/lws/crds/leaderworkerset.x-k8s.io_leaderworkersets.yaml",
    "leaderworkersets.leaderworkerset.x-k8s.io",
);

/// A tool `.ci/run` installs under the repository (`target/tools/helm`),
/// or `None` after printing why the test skips.
pub fn installed_tool(relative: &str, installer: &str) -> Option<PathBuf> {
    let path = repo_root().join(relative);
    if path.is_file() {
        return Some(path);
    }
    skip(&format!("{relative} is not installed (run {installer}, as .ci/run does)"));
    None
}

/// Prints why a test skips, or fails it when skips are not allowed.
pub fn skip(reason: &str) {
    let strict = std::env::var_os(NO_SKIP_ENV).is_some_and(|v| v != "0");
    assert!(!strict, "{reason}, and {NO_SKIP_ENV} forbids skipping");
    // Straight to stderr: the test harness captures `eprintln!`, and a skip
    // must be seen.
    let _ = writeln!(std::io::stderr(), "skipped: {reason}");
}

/// The files under `dir` that `keep` accepts (e.g.
/// `lifeguard::input::is_manifest`), in path order.
pub fn files_under(dir: &Path, keep: fn(&Path) -> bool) -> Vec<PathBuf> {
    fn walk(dir: &Path, keep: fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, keep, out);
            } else if keep(&path) {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, keep, &mut out);
    out.sort();
    out
}

/// A copy of one file alone in a fresh directory: lint reads a file's
/// directory for Services, so this lints the file with only its own.
pub struct Alone {
    /// The copy.
    pub path: PathBuf,
    _dir: tempfile::TempDir,
}

/// Copies `file` into a directory of its own.
pub fn alone(file: &Path) -> Alone {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(file.file_name().expect("a file name"));
    std::fs::copy(file, &path).unwrap_or_else(|e| panic!("copy {}: {e}", file.display()));
    Alone { path, _dir: dir }
}

/// The example policy of docs/policies.md (the YAML of its `policy-example` block).
pub fn documented_policy_example() -> String {
    docs::marked_block("docs/policies.md", "policy-example")
}

/// Every `.yaml` and `.yml` file under `dir`, in name order, depth first
/// (none when `dir` cannot be read).
pub fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            yaml_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(p);
        }
    }
}
