//! The hooks of `.pre-commit-hooks.yaml`, run as pre-commit runs them: in a
//! temporary git repository, the declared `entry` plus `args` plus the staged
//! files that `files`/`exclude` select, in one invocation (`require_serial`).
//!
//! pre-commit installs a `language: rust` hook with `cargo install --path .`
//! at the repository root and runs the entry's program from there; the test
//! checks, through `cargo metadata`, that the root is an installable package
//! whose binary of that name is built from the same `main.rs` as `lifeguard`,
//! and then runs this build of `lifeguard` in its place.

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use lifeguard::input::{Limits, parse_stream};
use lifeguard_e2e::repo_root;
use regex::Regex;
use serde_json::Value;

/// A hook as declared, with pre-commit's defaults filled in.
struct Hook {
    program: String,
    entry_args: Vec<String>,
    args: Vec<String>,
    files: Regex,
    exclude: Option<Regex>,
}

fn declared_hooks() -> Vec<Value> {
    let text = std::fs::read_to_string(repo_root().join(".pre-commit-hooks.yaml")).expect(".pre-commit-hooks.yaml");
    let (docs, error) = parse_stream(&text, &Limits::default());
    assert!(error.is_none(), "{error:?}");
    match docs.into_iter().next().map(|d| d.value) {
        Some(Value::Array(hooks)) => hooks,
        other => panic!("a list of hooks, got {other:?}"),
    }
}

fn hook(id: &str) -> Hook {
    let hooks = declared_hooks();
    let h = hooks.iter().find(|h| h["id"] == id).unwrap_or_else(|| panic!("hook {id}"));
    assert_eq!(h["language"], "rust", "{id}");
    assert_eq!(h["require_serial"], true, "{id}: all files in one run, so Services inform every object");
    let text = |key: &str| h[key].as_str().map(str::to_owned);
    let mut entry = text("entry").expect("entry").split_whitespace().map(str::to_owned).collect::<Vec<_>>();
    let program = entry.remove(0);
    let args = h["args"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    Hook {
        program,
        entry_args: entry,
        args,
        files: Regex::new(&text("files").unwrap_or_default()).expect("files is a regex"),
        exclude: text("exclude").map(|e| Regex::new(&e).expect("exclude is a regex")),
    }
}

/// The root package pre-commit installs has a binary named `program`, built
/// from the `lifeguard` binary's own source file.
fn assert_installable(program: &str) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .args(["metadata", "--no-deps", "--offline", "--format-version", "1"])
        .current_dir(repo_root())
        .output()
        .expect("run cargo metadata");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let meta: Value = serde_json::from_slice(&out.stdout).expect("metadata is JSON");
    let root_manifest = repo_root().join("Cargo.toml").canonicalize().expect("root manifest");
    let packages = meta["packages"].as_array().expect("packages");
    let bin = |package: &Value, name: &str| {
        package["targets"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| t["name"] == name && t["kind"].as_array().is_some_and(|k| k.iter().any(|k| k == "bin")))
            .and_then(|t| t["src_path"].as_str())
            .map(str::to_owned)
    };
    let root = packages
        .iter()
        .find(|p| p["manifest_path"].as_str().map(PathBuf::from).as_deref() == Some(root_manifest.as_path()))
        .expect("the repository root is a package (`cargo install --path .` fails on a virtual manifest)");
    let lint = packages.iter().find(|p| p["name"] == "lifeguard").expect("the lifeguard package");
    let hook_main = bin(root, program).unwrap_or_else(|| panic!("the root package has no binary {program:?}"));
    assert_eq!(Some(hook_main), bin(lint, "lifeguard"), "the hook binary is the lifeguard CLI");
}

fn git(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git").args(args).current_dir(repo).output().expect("run git");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("git output is UTF-8")
}

/// A git repository with manifests, a Helm chart's template, and other files, all staged.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/formats");
    for (from, to) in [("web.yaml", "k8s/web.yaml"), ("good.yaml", "k8s/good.yml"), ("worker.yaml", "jobs/worker.yaml")]
    {
        std::fs::create_dir_all(root.join(to).parent().expect("parent")).expect("mkdir");
        std::fs::copy(fixtures.join(from), root.join(to)).expect("copy fixture");
    }
    std::fs::create_dir_all(root.join("chart/templates")).expect("mkdir");
    // Not YAML until Helm renders it: the hooks must not be handed it.
    std::fs::write(root.join("chart/templates/deployment.yaml"), "spec: {{ .Values.spec }}\n").expect("write");
    std::fs::write(root.join("chart/values.yaml"), "spec: {}\n").expect("write");
    std::fs::write(root.join("README.md"), "# demo\n").expect("write");
    std::fs::write(root.join("package.json"), "{\"name\": \"demo\"}\n").expect("write");
    git(root, &["init", "-q"]);
    git(root, &["add", "-A"]);
    dir
}

/// The staged files pre-commit hands a hook: `files` matches and `exclude` does not.
fn selected(hook: &Hook, repo: &Path) -> Vec<String> {
    git(repo, &["diff", "--staged", "--name-only", "--no-ext-diff", "--diff-filter=ACMRTUXB"])
        .lines()
        .filter(|f| hook.files.is_match(f) && !hook.exclude.as_ref().is_some_and(|e| e.is_match(f)))
        .map(str::to_owned)
        .collect()
}

fn run(hook: &Hook, repo: &Path, files: &[String]) -> Output {
    assert_installable(&hook.program);
    Command::new(env!("CARGO_BIN_EXE_lifeguard"))
        .args(&hook.entry_args)
        .args(&hook.args)
        .args(files)
        .current_dir(repo)
        .env("NO_COLOR", "1")
        .output()
        .expect("run the hook")
}

#[test]
fn the_hooks_select_yaml_and_json_but_not_helm_templates_or_other_files() {
    let repo = repo();
    for id in ["lifeguard-lint", "lifeguard-fix"] {
        let mut files = selected(&hook(id), repo.path());
        files.sort();
        assert_eq!(
            files,
            ["chart/values.yaml", "jobs/worker.yaml", "k8s/good.yml", "k8s/web.yaml", "package.json"],
            "{id}"
        );
    }
}

#[test]
fn the_lint_hook_fails_on_an_error_and_names_the_file() {
    let repo = repo();
    let lint = hook("lifeguard-lint");
    assert_eq!(lint.entry_args, ["lint"]);
    let files = selected(&lint, repo.path());
    let out = run(&lint, repo.path(), &files);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("k8s/web.yaml:34:11 error[probe-endpoint-reused]"), "{stdout}");
    assert!(stdout.contains("jobs/worker.yaml:19:13 info[exec-probe]"), "{stdout}");
    // chart/values.yaml is handed over but is not a manifest: it is not read.
    assert!(stdout.contains("across 4 files"), "{stdout}");
    // No input error (the template was not passed); a JSON file that is
    // not a manifest is named as checking nothing, never an error.
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "package.json input note: no object checked: no document in it has a `kind` (not a Kubernetes manifest)\n"
    );

    // A commit that stages only clean manifests passes.
    let clean = vec!["k8s/good.yml".to_owned(), "chart/values.yaml".to_owned()];
    let out = run(&lint, repo.path(), &clean);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn the_fix_hook_rewrites_files_in_place_so_pre_commit_sees_them_modified() {
    let repo = repo();
    let fix = hook("lifeguard-fix");
    assert_eq!(fix.entry_args, ["fix"]);
    let files = selected(&fix, repo.path());
    let out = run(&fix, repo.path(), &files);
    // An error without an automatic fix is left, so the hook fails either way.
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    // pre-commit fails a hook that modified files: the fixed file differs from the index.
    let changed = git(repo.path(), &["diff", "--name-only"]);
    assert_eq!(changed, "k8s/web.yaml\n");
    let fixed = std::fs::read_to_string(repo.path().join("k8s/web.yaml")).expect("read");
    assert!(fixed.contains("failureThreshold: 3"), "{fixed}");

    // Once the fixes are staged, a second run changes nothing more.
    git(repo.path(), &["add", "-A"]);
    run(&fix, repo.path(), &files);
    assert_eq!(git(repo.path(), &["diff", "--name-only"]), "");
}

/// The file hooks of the `.pre-commit-config.yaml` snippet of docs/ci.md: each
/// declared hook with the snippet's `args` and `files` (pre-commit lets the
/// config's `files` replace the hook's).
fn readme_hooks() -> Vec<Hook> {
    let readme = std::fs::read_to_string(repo_root().join("docs/ci.md")).expect("docs/ci.md");
    let start = readme.find("# .pre-commit-config.yaml\n").expect("the pre-commit snippet of docs/ci.md");
    let block = &readme[start..];
    let block = &block[..block.find("```").expect("end of the snippet")];
    let (docs, error) = parse_stream(block, &Limits::default());
    assert!(error.is_none(), "{error:?}");
    let config = docs.into_iter().next().expect("a document").value;
    let hooks = config["repos"][0]["hooks"].as_array().expect("hooks").clone();
    // The helm hook lints a chart, not the staged files (its own test runs it).
    let declared = declared_hooks();
    let on_files = |id: &str| declared.iter().any(|d| d["id"] == id && d["pass_filenames"] != false);
    hooks
        .iter()
        .filter(|h| h["id"].as_str().is_some_and(on_files))
        .map(|h| {
            let mut hook = hook(h["id"].as_str().expect("id"));
            if let Some(args) = h["args"].as_array() {
                hook.args = args.iter().filter_map(Value::as_str).map(str::to_owned).collect();
            }
            if let Some(files) = h["files"].as_str() {
                hook.files = Regex::new(files).expect("files is a regex");
            }
            hook
        })
        .collect()
}

/// The `language: system` hook of docs/ci.md, for a lifeguard already on
/// PATH, selects and runs what the shipped `lifeguard-lint` hook does: its
/// entry is the shipped one with `lifeguard` for the program pre-commit
/// builds, and it has the same `files`, `exclude` and `require_serial`.
#[test]
fn the_documented_system_hook_is_the_shipped_lint_hook_with_lifeguard_on_path() {
    let docs = std::fs::read_to_string(repo_root().join("docs/ci.md")).expect("docs/ci.md");
    let start =
        docs.find("# .pre-commit-config.yaml, with lifeguard on PATH\n").expect("the system hook of docs/ci.md");
    let block = &docs[start..];
    let (parsed, error) = parse_stream(&block[..block.find("```").expect("end of the snippet")], &Limits::default());
    assert!(error.is_none(), "{error:?}");
    let config = parsed.into_iter().next().expect("a document").value;
    assert_eq!(config["repos"][0]["repo"], "local");
    let local = &config["repos"][0]["hooks"][0];
    assert_eq!(local["language"], "system");
    let declared = declared_hooks();
    let shipped = declared.iter().find(|h| h["id"] == "lifeguard-lint").expect("the lifeguard-lint hook");
    let entry = shipped["entry"].as_str().expect("entry").replacen("lifeguard-pre-commit", "lifeguard", 1);
    assert_eq!(local["entry"], entry.as_str());
    for key in ["files", "exclude", "require_serial"] {
        assert_eq!(local[key], shipped[key], "{key}");
    }
}

/// Each thing reported, whatever the hook's wording: `(file:line, rule)` for
/// findings and fixes left out, `(file:line, "input error")` for errors.
fn reported(output: &str) -> Vec<(String, String)> {
    let finding = Regex::new(r"^(\S+?:\d+)(?::\d+)? (?:error|warning|info)\[([\w-]+)\]").expect("regex");
    let left_out = Regex::new(r"^(\S+?:\d+): not fixed \S+: \[([\w-]+)\]").expect("regex");
    let error = Regex::new(r"^(\S+?:\d+)(?::\d+)? (?:input )?error: ").expect("regex");
    output
        .lines()
        .filter_map(|l| {
            if let Some(c) = finding.captures(l).or_else(|| left_out.captures(l)) {
                return Some((c[1].to_owned(), c[2].to_owned()));
            }
            error.captures(l).map(|c| (c[1].to_owned(), "input error".to_owned()))
        })
        .collect()
}

#[test]
fn the_readme_hooks_name_each_remaining_error_once() {
    let repo = repo();
    let root = repo.path();
    std::fs::write(root.join("k8s/broken.yaml"), "kind: Deployment\nmetadata: {name: x\n").expect("write");
    let anchors = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fix_fixtures/anchors.yaml");
    std::fs::copy(anchors, root.join("k8s/anchors.yaml")).expect("copy");
    git(root, &["add", "-A"]);
    let hooks = readme_hooks();
    assert!(!hooks.is_empty());
    // pre-commit runs the hooks one after the other on the working tree, each on the staged files it selects.
    let mut output = String::new();
    for hook in &hooks {
        let files = selected(hook, root);
        assert!(files.contains(&"k8s/broken.yaml".to_owned()), "{files:?}");
        let out = run(hook, root, &files);
        assert_eq!(out.status.code(), Some(2), "an input error fails the hook");
        // pre-commit shows stdout and stderr together.
        output.push_str(&String::from_utf8_lossy(&out.stdout));
        output.push_str(&String::from_utf8_lossy(&out.stderr));
    }
    let all = reported(&output);
    for expected in [
        ("k8s/web.yaml", "probe-endpoint-reused"),
        ("k8s/broken.yaml", "input error"),
        ("k8s/anchors.yaml", "liveness-too-aggressive"),
    ] {
        assert!(
            all.iter().any(|(at, what)| at.starts_with(expected.0) && what == expected.1),
            "{expected:?}:\n{output}"
        );
    }
    for item in &all {
        let n = all.iter().filter(|other| *other == item).count();
        assert_eq!(n, 1, "{item:?} is reported {n} times:\n{output}");
    }
}

/// Skips (or, under `LIFEGUARD_NO_SKIP`, fails) with a reason.
fn skip(reason: &str) {
    let strict = std::env::var_os("LIFEGUARD_NO_SKIP").is_some_and(|v| v != "0");
    assert!(!strict, "{reason}, and LIFEGUARD_NO_SKIP forbids skipping");
    eprintln!("skipped: {reason}");
}

#[test]
fn the_helm_hook_renders_the_chart_it_is_given_and_places_findings_in_its_templates() {
    let helm = repo_root().join("target/tools/helm");
    if !helm.is_file() {
        return skip("target/tools/helm is not installed (run .ci/install-helm.sh, as .ci/run does)");
    }
    let hooks = declared_hooks();
    let declared = hooks.iter().find(|h| h["id"] == "lifeguard-helm").expect("the lifeguard-helm hook");
    assert_eq!(declared["language"], "rust", "pre-commit installs lifeguard with the hook");
    assert_eq!(declared["pass_filenames"], false, "the chart is the argument, not the staged files");
    let entry = declared["entry"].as_str().expect("entry");
    // The program pre-commit installs, and helm, on PATH; nothing else of ours.
    let bin = tempfile::tempdir().expect("temp dir");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_lifeguard"), bin.path().join("lifeguard-pre-commit")).expect("link");
    let path = format!("{}:{}:/usr/bin:/bin", bin.path().display(), helm.parent().expect("tools").display());
    // pre-commit runs shlex.split(entry) + args without a shell; `sh -c` with
    // "$@" splits the entry by the same quoting rules.
    let chart = "tests/fixtures/charts/demo";
    let out = Command::new("sh")
        .args(["-c", &format!("{entry} \"$@\""), "pre-commit", chart, "--set", "replicaCount=2"])
        .env("PATH", &path)
        .env("NO_COLOR", "1")
        .current_dir(repo_root())
        .output()
        .expect("run the hook");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        stdout.contains(&format!("{chart}/templates/deployment.yaml:24:11 error[probe-endpoint-reused]")),
        "{stdout}"
    );
    // Without helm the hook fails and says so, rather than passing.
    let out = Command::new("sh")
        .args(["-c", &format!("{entry} \"$@\""), "pre-commit", chart])
        .env("PATH", format!("{}:/usr/bin:/bin", bin.path().display()))
        .current_dir(repo_root())
        .output()
        .expect("run the hook");
    assert_ne!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}
