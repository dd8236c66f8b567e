//! Policy discovery per file, like ruff's: the nearest `.lifeguard.yaml` or
//! `.lifeguard.yml` from each linted file up to the repository root (from
//! the current directory for stdin), `--policy` over all; the summary and
//! `--verbose` name the policy in force. Real directory trees, real binary.

mod support;

use std::path::Path;

use support::{Run, lifeguard};

/// One warning (`liveness-too-aggressive`, fixable) and nothing else.
const MANIFEST: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: prod
spec:
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: example/web:1.2
        livenessProbe:
          httpGet: {path: /livez, port: 8080}
          failureThreshold: 1
";

const HEAD: &str = "apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\n";
const DENY_WARNINGS: &str = "denySeverity: warning\n";
const RULE_OFF: &str = "rules:\n  liveness-too-aggressive: {enabled: false}\n";

fn write(root: &Path, file: &str, text: &str) {
    let path = root.join(file);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// `outer/` holds a policy that would turn the rule off, above the
/// repository `outer/repo` (a `.git` directory): it must never apply.
/// In the repository: `web.yaml` under a root policy that denies warnings,
/// `team/web.yaml` under `team/.lifeguard.yml` that turns the rule off.
fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let outer = dir.path();
    write(outer, ".lifeguard.yaml", &format!("{HEAD}{RULE_OFF}"));
    write(outer, "repo/.git/HEAD", "ref: refs/heads/main\n");
    write(outer, "repo/.lifeguard.yaml", &format!("{HEAD}{DENY_WARNINGS}"));
    write(outer, "repo/web.yaml", MANIFEST);
    write(outer, "repo/team/.lifeguard.yml", &format!("{HEAD}{RULE_OFF}"));
    write(outer, "repo/team/web.yaml", MANIFEST);
    write(outer, "repo/plain/web.yaml", MANIFEST);
    dir
}

fn run(dir: &Path, args: &[&str], stdin: Option<&str>) -> Run {
    let r = lifeguard(dir, args, stdin, &[("LIFEGUARD_POLICY", None), ("NO_COLOR", Some("1"))]);
    r.assert_no_panic();
    r
}

fn flagged(r: &Run) -> Vec<&str> {
    r.stdout.lines().filter(|l| l.contains("warning[liveness-too-aggressive]")).collect()
}

#[test]
fn each_file_is_linted_with_its_nearest_policy_and_the_summary_names_them() {
    let dir = repository();
    let repo = dir.path().join("repo");
    let r = run(&repo, &["lint", "web.yaml", "team/web.yaml", "plain/web.yaml"], None);
    assert_eq!(
        flagged(&r),
        [
            "web.yaml:16:11 warning[liveness-too-aggressive] Deployment/prod/web",
            "plain/web.yaml:16:11 warning[liveness-too-aggressive] Deployment/prod/web"
        ],
        "team/ turns the rule off; plain/ has no policy of its own, so the root's applies"
    );
    // The root policy denies warnings: web.yaml's warning fails the run.
    assert_eq!(r.code, 1, "{}", r.stderr);
    insta::assert_snapshot!("nested_summary", r.stdout.lines().last().unwrap_or_default());

    // team/ alone: its policy turns the rule off and keeps denySeverity at error.
    let r = run(&repo, &["lint", "team/web.yaml"], None);
    assert_eq!(flagged(&r), Vec::<&str>::new());
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.stdout.ends_with("; policy team/.lifeguard.yml\n"), "{}", r.stdout);
}

#[test]
fn verbose_names_the_policy_of_every_file() {
    let dir = repository();
    let repo = dir.path().join("repo");
    let r = run(&repo, &["lint", "--verbose", "--format", "json", "web.yaml", "team/web.yaml", "-"], Some(MANIFEST));
    insta::assert_snapshot!("verbose", r.stderr);
    let r = run(&repo, &["lint", "--verbose", "--quiet", "web.yaml"], None);
    assert_eq!(r.code, 2, "--verbose and --quiet contradict each other: {}", r.stderr);
}

#[test]
fn stdin_takes_the_policy_of_the_current_directory() {
    let dir = repository();
    let repo = dir.path().join("repo");
    let r = run(&repo.join("team"), &["lint", "-"], Some(MANIFEST));
    assert_eq!(flagged(&r), Vec::<&str>::new(), "{}", r.stdout);
    assert!(r.stdout.ends_with("; policy .lifeguard.yml\n"), "{}", r.stdout);
    let r = run(&repo, &["lint", "-"], Some(MANIFEST));
    assert_eq!(flagged(&r).len(), 1, "{}", r.stdout);
    assert_eq!(r.code, 1, "the root policy denies warnings");
}

#[test]
fn the_repository_root_stops_the_walk_up() {
    let dir = repository();
    let repo = dir.path().join("repo");
    std::fs::remove_file(repo.join(".lifeguard.yaml")).expect("remove");
    // `outer/.lifeguard.yaml` would turn the rule off, but it is outside the repository.
    let r = run(&repo, &["lint", "web.yaml"], None);
    assert_eq!(flagged(&r).len(), 1, "{}", r.stdout);
    assert!(r.stdout.ends_with("across 1 file\n"), "the implicit default is not named: {}", r.stdout);
    let r = run(&repo, &["lint", "--verbose", "web.yaml"], None);
    assert!(
        r.stderr.contains("lifeguard: web.yaml: policy pack default (no --policy and no .lifeguard.yaml"),
        "{}",
        r.stderr
    );
    // Without a `.git`, the walk goes on up and finds it.
    std::fs::remove_dir_all(repo.join(".git")).expect("remove");
    let r = run(&repo, &["lint", "web.yaml"], None);
    assert_eq!(flagged(&r), Vec::<&str>::new(), "{}", r.stdout);
}

#[test]
fn policy_overrides_discovery_for_every_file() {
    let dir = repository();
    let repo = dir.path().join("repo");
    let r = run(&repo, &["lint", "--policy", "default", "web.yaml", "team/web.yaml"], None);
    assert_eq!(flagged(&r).len(), 2, "{}", r.stdout);
    assert_eq!(r.code, 0, "the default pack denies errors only");
    assert!(r.stdout.ends_with("; policy pack default\n"), "{}", r.stdout);
    let r = lifeguard(&repo, &["lint", "web.yaml", "team/web.yaml"], None, &[("LIFEGUARD_POLICY", Some("default"))]);
    assert_eq!(flagged(&r).len(), 2, "LIFEGUARD_POLICY is --policy: {}", r.stdout);
}

#[test]
fn fix_follows_each_files_policy() {
    let dir = repository();
    let repo = dir.path().join("repo");
    let r = run(&repo, &["fix", "--diff", "web.yaml", "team/web.yaml"], None);
    assert!(r.stdout.contains("+++ b/web.yaml"), "{}", r.stdout);
    assert!(!r.stdout.contains("team/web.yaml"), "team/ turns the rule off, so nothing to fix: {}", r.stdout);
    insta::assert_snapshot!("fix_summary", r.stderr);
    let r = run(&repo, &["fix", "team/web.yaml"], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(repo.join("team/web.yaml")).expect("read"), MANIFEST);
}

#[test]
fn a_broken_nested_policy_is_an_error_at_its_line_and_the_other_files_are_linted() {
    let dir = repository();
    let repo = dir.path().join("repo");
    write(&repo, "team/.lifeguard.yml", &format!("{HEAD}denySeverity: loud\n"));
    let r = run(&repo, &["lint", "web.yaml", "team/web.yaml"], None);
    assert_eq!(r.code, 2);
    assert_eq!(flagged(&r).len(), 1, "web.yaml is still linted: {}", r.stdout);
    assert!(
        r.stderr.starts_with("team/.lifeguard.yml:3:1 input error: invalid policy, so the files it governs were not linted: denySeverity:"),
        "{}",
        r.stderr
    );
    // A broken --policy is a usage error, as before: nothing is linted.
    write(&repo, "bad.yaml", &format!("{HEAD}denySeverity: loud\n"));
    let r = run(&repo, &["lint", "--policy", "bad.yaml", "web.yaml"], None);
    assert_eq!(r.code, 2);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(r.stderr.starts_with("lifeguard: invalid policy: bad.yaml:3:1:"), "{}", r.stderr);
}

#[test]
fn policy_show_names_the_policy_a_file_or_directory_gets() {
    let dir = repository();
    let repo = dir.path().join("repo");
    let head = |r: &Run| r.stdout.lines().next().unwrap_or_default().to_owned();
    assert_eq!(
        head(&run(&repo, &["policy", "show", "team/web.yaml"], None)),
        "# The effective policy (file team/.lifeguard.yml)."
    );
    assert_eq!(
        head(&run(&repo, &["policy", "show", "team"], None)),
        "# The effective policy (file team/.lifeguard.yml)."
    );
    assert_eq!(
        head(&run(&repo, &["policy", "show", "plain/web.yaml"], None)),
        "# The effective policy (file .lifeguard.yaml)."
    );
    assert_eq!(
        head(&run(&repo.join("team"), &["policy", "show"], None)),
        "# The effective policy (file .lifeguard.yml)."
    );
    assert_eq!(
        head(&run(&repo, &["policy", "show", "--policy", "strict", "team"], None)),
        "# The effective policy (pack strict)."
    );
}

/// JUnit fails each case at the `denySeverity` of the policy that governs
/// its file, as the exit code does, not at the first policy's.
#[test]
fn junit_fails_each_case_at_its_own_files_deny_severity() {
    let dir = repository();
    let repo = dir.path().join("repo");
    write(&repo, "lenient/.lifeguard.yaml", &format!("{HEAD}denySeverity: error\n"));
    write(&repo, "lenient/web.yaml", MANIFEST);
    // The lenient file first, so its policy is the first one in force.
    let r = run(&repo, &["lint", "--format", "junit", "lenient/web.yaml", "web.yaml"], None);
    assert_eq!(r.code, 1, "web.yaml's warning is denied by the root policy: {}", r.stderr);
    let suite = |name: &str| {
        let start = r.stdout.find(&format!("<testsuite name=\"{name}\"")).unwrap_or_else(|| panic!("{}", r.stdout));
        let end = r.stdout[start..].find("</testsuite>").map_or(r.stdout.len(), |e| start + e);
        &r.stdout[start..end]
    };
    assert_eq!(suite("web.yaml").matches("<failure ").count(), 1, "{}", suite("web.yaml"));
    assert_eq!(suite("lenient/web.yaml").matches("<failure ").count(), 0, "{}", suite("lenient/web.yaml"));
    assert!(suite("lenient/web.yaml").contains("warning[liveness-too-aggressive]"), "kept as system-out");
}

/// `--select` and `--ignore` naming a custom rule that only a nested policy
/// defines select it where it exists, and are no usage error for the files
/// of the other policies; a name no policy in force knows still is.
#[test]
fn select_and_ignore_take_a_custom_rule_of_a_nested_policy() {
    let dir = repository();
    let repo = dir.path().join("repo");
    let custom = "customRules:\n- name: image-from-corp-registry\n  severity: error\n  message: \"container {container}: image {value} is not from registry.corp\"\n  help: mirror the image\n  path: $.image\n  when: {matches: '^example/'}\n";
    write(&repo, "corp/.lifeguard.yaml", &format!("{HEAD}{custom}"));
    write(&repo, "corp/web.yaml", MANIFEST);
    let files = ["web.yaml", "corp/web.yaml"];

    let mut args = vec!["lint", "--select", "image-from-corp-registry"];
    args.extend(files);
    let r = run(&repo, &args, None);
    assert_eq!(r.code, 1, "no usage error: {}", r.stderr);
    let found: Vec<&str> = r.stdout.lines().filter(|l| l.contains(" error[") || l.contains(" warning[")).collect();
    assert_eq!(found, ["corp/web.yaml:13:9 error[image-from-corp-registry] Deployment/prod/web"], "{}", r.stdout);

    let mut args = vec!["lint", "--ignore", "image-from-corp-registry"];
    args.extend(files);
    let r = run(&repo, &args, None);
    assert!(!r.stdout.contains("image-from-corp-registry"), "{}", r.stdout);
    assert!(r.stdout.contains("web.yaml:16:11 warning[liveness-too-aggressive]"), "the rest still runs: {}", r.stdout);

    let r = run(&repo, &["lint", "--select", "image-from-corp-registy", "web.yaml", "corp/web.yaml"], None);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("did you mean \"image-from-corp-registry\"?"), "{}", r.stderr);
}
