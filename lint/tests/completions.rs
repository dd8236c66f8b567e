//! `lifeguard completions SHELL` prints a completion script that knows the
//! subcommands, flags (fish writes `-l format`, so names go without `--`)
//! and format values; the bash one is valid bash.

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
