//! Per-rule fixtures: `policies/src/rules/<rule>/fixtures/bad*.yaml` (the
//! rule's folder, its name in snake case) hold the
//! anti-pattern in the variants the rule's doc lists, `good*.yaml` the tricky
//! non-findings its doc names. Each file is linted on its own, copied alone
//! into an empty directory (so Services in a file inform only that file, not
//! its sibling fixtures), through the library as `lifeguard lint` does.
//!
//! In a bad file, every line that ends in `# <- finding` must carry exactly
//! one finding of the rule (`# <- finding x2`: two), and no other line may
//! carry one: this checks the count, the cases and the reported lines. The
//! findings are also snapshotted per rule, in the rule's folder
//! (`snapshots/rule_fixtures__<rule>.snap`),
//! each with its one-line warning (`rule: short`), which must fit in 120
//! characters with a container name of 20.
//!
//! Fixtures are linted under the default policy, or under a `policy.yaml`
//! beside them (a rule that is opt-in, such as `prestop-bridge-missing`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use lifeguard::input::Limits;
use lifeguard::lint::lint_paths;
use lifeguard::outcome::Located;
use policies::Policy;
use policies::finding::SHORT_LINE_CHARS;
use policies::rules::RULES;

const MARKER: &str = "# <- finding";

fn rules_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../policies/src/rules")
}

/// A rule's folder: its code, `fixtures/` and `snapshots/`.
fn rule_dir(rule: &str) -> PathBuf {
    rules_dir().join(rule.replace('-', "_"))
}

/// `bad.yaml` then `bad-*.yaml` (sorted), or the same for `good`.
fn fixture_files(dir: &Path, stem: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        name == format!("{stem}.yaml") || (name.starts_with(&format!("{stem}-")) && name.ends_with(".yaml"))
    });
    files.sort_by_key(|p| (p.file_name() != Some(format!("{stem}.yaml").as_ref()), p.clone()));
    files
}

/// The lines a bad file marks, once per expected finding, in order.
fn marked_lines(text: &str) -> Vec<u32> {
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = u32::try_from(i + 1).expect("fixture line number fits u32");
        // A marker inside a comment-only line is prose about the marker.
        if line.trim_start().starts_with('#') {
            continue;
        }
        let Some(at) = line.find(MARKER) else { continue };
        let count = match line[at + MARKER.len()..].trim() {
            "" => 1,
            "x2" => 2,
            other => panic!("line {line_no}: unknown marker suffix {other:?}"),
        };
        lines.extend(std::iter::repeat_n(line_no, count));
    }
    lines
}

/// The policy a rule's fixtures are linted under: `policy.yaml` in their
/// directory, else the default.
fn fixture_policy(dir: &Path) -> Policy {
    let path = dir.join("policy.yaml");
    match std::fs::read_to_string(&path) {
        Ok(text) => Policy::load(&text, &path.display().to_string()).unwrap_or_else(|e| panic!("{e}")),
        Err(_) => Policy::default(),
    }
}

/// Lints one fixture file alone in its directory; a fixture must never hold
/// an input error.
fn findings(rule: &str, path: &Path, policy: &Policy) -> Vec<Located> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let alone = dir.path().join(path.file_name().expect("a fixture file name"));
    std::fs::copy(path, &alone).expect("copy the fixture");
    let out = lint_paths(&[alone.display().to_string()], policy, &Limits::default());
    assert!(out.errors.is_empty(), "{}: input errors: {:?}", path.display(), out.errors);
    out.findings.into_iter().filter(|l| l.finding.rule == rule).collect()
}

fn file_name(path: &Path) -> String {
    path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned()
}

/// Two lines per finding: position, severity, rule, container, message;
/// then, indented, the one-line warning `rule: short`.
fn render(located: &[Located]) -> String {
    let mut s = String::new();
    for l in located {
        let f = &l.finding;
        let _ = writeln!(
            s,
            "{}:{} {}[{}] {}: {}",
            l.line,
            l.column,
            f.severity,
            f.rule,
            f.container.as_deref().unwrap_or("-"),
            f.located_message()
        );
        let _ = writeln!(s, "    {}: {}", f.rule, f.located_short());
    }
    s
}

/// A realistic container name's length: the short forms fit with one this long.
const NAME_CHARS: usize = 20;

/// `rule: short` fits in one warning with a container name of
/// [`NAME_CHARS`] (or the fixture's, if longer), starts with the container
/// it is about, and is not cut.
fn check_short(path: &Path, located: &[Located]) {
    for l in located {
        let f = &l.finding;
        let line = format!("{}: {}", f.rule, f.located_short());
        let mut chars = line.chars().count();
        if let Some(name) = f.container.as_deref() {
            let prefix = format!("container {name:?}: ");
            assert!(
                f.located_short().starts_with(&prefix),
                "{}: {line:?} does not start with {prefix:?}",
                path.display()
            );
            // The container is named once, by the finding, not by its texts.
            for text in [&f.message, &f.short] {
                assert!(!text.starts_with("container \""), "{}: {text:?} names the container", path.display());
            }
            chars += NAME_CHARS.saturating_sub(name.chars().count());
        }
        assert!(
            chars <= SHORT_LINE_CHARS,
            "{}: {line:?} is {chars} characters with a container name of {NAME_CHARS}, more than {SHORT_LINE_CHARS}",
            path.display()
        );
        assert!(!f.short.ends_with("..."), "{}: {line:?} is cut", path.display());
    }
}

fn check_rule(rule: &str) {
    let dir = rule_dir(rule).join("fixtures");
    let bad = fixture_files(&dir, "bad");
    let good = fixture_files(&dir, "good");
    assert!(!bad.is_empty() && !good.is_empty(), "{rule}: needs bad.yaml and good.yaml in {}", dir.display());
    let policy = fixture_policy(&dir);

    let mut snapshot = String::new();
    for path in &bad {
        let text = std::fs::read_to_string(path).expect("read fixture");
        let expected = marked_lines(&text);
        assert!(!expected.is_empty(), "{}: marks no finding", path.display());
        let found = findings(rule, path, &policy);
        let mut lines: Vec<u32> = found.iter().map(|l| l.line).collect();
        lines.sort_unstable();
        assert_eq!(
            lines,
            expected,
            "{}: lines with {rule} findings (left) differ from the marked lines (right); findings:\n{}",
            path.display(),
            render(&found)
        );
        check_short(path, &found);
        let _ = writeln!(snapshot, "# {}", file_name(path));
        snapshot.push_str(&render(&found));
    }
    for path in &good {
        let text = std::fs::read_to_string(path).expect("read fixture");
        assert!(marked_lines(&text).is_empty(), "{}: a good fixture marks findings", path.display());
        let found = findings(rule, path, &policy);
        assert!(found.is_empty(), "{}: {rule} must not fire here:\n{}", path.display(), render(&found));
    }
    let mut snapshots = insta::Settings::clone_current();
    snapshots.set_snapshot_path(rule_dir(rule).join("snapshots"));
    snapshots.bind(|| insta::assert_snapshot!(rule, snapshot));
}

lifeguard_e2e::rule_tests! {
    check_rule;
    probe_invalid => "probe-invalid",
    probe_port_unknown => "probe-port-unknown",
    probe_endpoint_reused => "probe-endpoint-reused",
    liveness_checks_dependency => "liveness-checks-dependency",
    startup_probe_missing => "startup-probe-missing",
    startup_budget_too_short => "startup-budget-too-short",
    liveness_too_aggressive => "liveness-too-aggressive",
    probe_window_too_long => "probe-window-too-long",
    readiness_port_only => "readiness-port-only",
    readiness_probe_missing => "readiness-probe-missing",
    exec_probe => "exec-probe",
    probe_runs_inference => "probe-runs-inference",
    progress_deadline_too_short => "progress-deadline-too-short",
    rollout_capacity_too_low => "rollout-capacity-too-low",
    pdb_blocks_eviction => "pdb-blocks-eviction",
    grace_period_too_short => "grace-period-too-short",
    prestop_sleep_only => "prestop-sleep-only",
    prestop_loop_unbounded => "prestop-loop-unbounded",
    prestop_bridge_missing => "prestop-bridge-missing",
    proxy_stops_before_drain => "proxy-stops-before-drain",
    init_needs_later_sidecar => "init-needs-later-sidecar",
    ignore_annotation_invalid => "ignore-annotation-invalid",
}

#[test]
fn every_rule_has_fixtures_and_a_test() {
    let mut missing = Vec::new();
    for rule in RULES {
        let dir = rule_dir(rule.name).join("fixtures");
        for stem in ["bad", "good"] {
            if !dir.join(format!("{stem}.yaml")).is_file() {
                missing.push(format!("{}: no {stem}.yaml in {}", rule.name, dir.display()));
            }
        }
        if !TESTED.contains(&rule.name) {
            missing.push(format!("{}: add it to rule_tests! in rule_fixtures.rs", rule.name));
        }
    }
    // A folder for a rule that no longer exists is stale.
    for entry in std::fs::read_dir(rules_dir()).expect("policies/src/rules exists").flatten() {
        let name = entry.file_name().to_string_lossy().replace('_', "-");
        if entry.path().is_dir() && !RULES.iter().any(|r| r.name == name) {
            missing.push(format!("policies/src/rules/{}: no such rule", entry.file_name().to_string_lossy()));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn markers_are_read_with_counts_and_prose_is_skipped() {
    let text = "# a line ending in # <- finding is prose\nkind: Pod # <- finding\nspec: # <- finding x2\n";
    assert_eq!(marked_lines(text), [2, 3, 3]);
}
