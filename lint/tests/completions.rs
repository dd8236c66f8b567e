//! `lifeguard completions SHELL` prints a completion script that knows the
//! subcommands, flags (fish writes `-l format`, so names go without `--`)
//! and format values; the bash one is valid bash; `completions --help` and
//! docs/ci.md tell the user to put the scripts in the same places.

use std::process::Command;

fn completions(shell: &str) -> (Option<i32>, String) {
    let out =
        Command::new(env!("CARGO_BIN_EXE_lifeguard")).args(["completions", shell]).output().expect("run lifeguard");
    (out.status.code(), String::from_utf8(out.stdout).expect("UTF-8"))
}

#[test]
fn each_shell_gets_a_script_with_the_subcommands_and_flags() {
    for shell in ["bash", "zsh", "fish"] {
        let (code, script) = completions(shell);
        assert_eq!(code, Some(0), "{shell}");
        for word in ["lint", "fix", "explain", "completions", "format", "helm-chart-root", "sarif", "junit"] {
            assert!(script.contains(word), "{shell}: no {word:?} in\n{script}");
        }
    }
}

#[test]
fn the_bash_script_parses() {
    let (_, script) = completions("bash");
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("lifeguard.bash");
    std::fs::write(&file, script).expect("write");
    let status = Command::new("bash").arg("-n").arg(&file).status().expect("run bash");
    assert!(status.success());
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let (code, script) = completions("cmd.exe");
    assert_eq!(code, Some(2));
    assert_eq!(script, "");
}

/// The `lifeguard completions SHELL > PATH` lines of `text`, each without
/// its indentation and trailing `# comment`.
fn install_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split_once(" #").map_or(l, |(command, _)| command).trim())
        .filter(|l| l.starts_with("lifeguard completions ") && l.contains(" > "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_help_and_the_docs_put_the_scripts_in_the_same_places() {
    let out =
        Command::new(env!("CARGO_BIN_EXE_lifeguard")).args(["completions", "--help"]).output().expect("run lifeguard");
    assert_eq!(out.status.code(), Some(0));
    let help = install_lines(&String::from_utf8(out.stdout).expect("UTF-8"));
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/ci.md")).expect("docs/ci.md");
    let section = docs.split_once("### Shell completions").expect("docs/ci.md's shell completions section").1;
    let documented = install_lines(section.split("\n#").next().unwrap_or_default());
    assert_eq!(help.len(), 3, "bash, zsh and fish: {help:?}");
    assert_eq!(help, documented, "`lifeguard completions --help` and docs/ci.md");
}
