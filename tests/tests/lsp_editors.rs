//! `lifeguard lsp` with real editors' clients, from other ecosystems than
//! ours: VS Code's protocol library (`vscode-languageserver-protocol` over
//! `vscode-jsonrpc`, npm, under node) and Neovim's built-in LSP client
//! (Debian's `neovim`, headless, set up by docs/editors.md's init.lua).
//! Each opens `lint/examples/web-api.yaml`,
//! gets diagnostics whose codes and ranges are lint's findings, applies
//! the quick fix, and ends with the bytes `lifeguard fix` writes.
//! `.ci/install-editor-tools.sh` installs both.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lifeguard_e2e::cluster::webhook::workspace_binary;
use lifeguard_e2e::{repo_root, skip};
use serde_json::Value;

/// A copy of the example alone in a directory, and what `lifeguard fix` makes of it.
fn example(binary: &Path) -> (tempfile::TempDir, PathBuf, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("web-api.yaml");
    std::fs::copy(repo_root().join("lint/examples/web-api.yaml"), &file).expect("copy the example");
    let cli = dir.path().join("cli");
    std::fs::create_dir(&cli).expect("mkdir");
    std::fs::copy(&file, cli.join("web-api.yaml")).expect("copy");
    Command::new(binary).arg("fix").arg(cli.join("web-api.yaml")).env_remove("LIFEGUARD_POLICY").output().expect("fix");
    let fixed = std::fs::read_to_string(cli.join("web-api.yaml")).expect("read");
    (dir, file, fixed)
}

/// lint's findings of the file: (rule, 0-based line, 0-based column), sorted.
fn linted(binary: &Path, file: &Path) -> Vec<(String, u64, u64)> {
    let out = Command::new(binary)
        .args(["lint", "--format", "json", "--fail-on", "never"])
        .arg(file)
        .env_remove("LIFEGUARD_POLICY")
        .output()
        .expect("lint");
    let entries: Vec<Value> = serde_json::from_slice(&out.stdout).expect("JSON");
    let mut found: Vec<(String, u64, u64)> = entries
        .iter()
        .filter(|e| e["rule"].is_string())
        .map(|e| {
            (
                e["rule"].as_str().unwrap_or_default().to_owned(),
                e["line"].as_u64().unwrap_or(1) - 1,
                e["column"].as_u64().unwrap_or(1) - 1,
            )
        })
        .collect();
    found.sort();
    found
}

fn reported(diagnostics: &Value) -> Vec<(String, u64, u64)> {
    let mut found: Vec<(String, u64, u64)> = diagnostics
        .as_array()
        .into_iter()
        .flatten()
        .filter(|d| d["code"].is_string())
        .map(|d| {
            let s = &d["range"]["start"];
            (
                d["code"].as_str().unwrap_or_default().to_owned(),
                s["line"].as_u64().unwrap_or(0),
                s["character"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    found.sort();
    found
}

/// Runs `command`, killing it after `limit`.
fn bounded(mut command: Command, limit: Duration) -> std::process::Output {
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("start the client");
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    child.wait_with_output().expect("the client's output")
}

#[test]
fn vscode_languageserver_protocol_under_node() {
    let modules = repo_root().join("target/tools/node-lsp/node_modules");
    if !modules.join("vscode-languageserver-protocol").is_dir() {
        return skip("target/tools/node-lsp is not installed (run .ci/install-editor-tools.sh, as .ci/run does)");
    }
    let binary = workspace_binary("lifeguard", "lifeguard").expect("the lifeguard binary");
    let (_dir, file, fixed_by_cli) = example(&binary);
    let mut command = Command::new("node");
    command.arg(repo_root().join("tests/editors/vscode_client.cjs")).arg(&binary).arg(&file).env("NODE_PATH", &modules);
    let out = bounded(command, Duration::from_secs(60));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let result: Value = serde_json::from_slice(&out.stdout).expect("the client's JSON");
    assert_eq!(reported(&result["diagnostics"]), linted(&binary, &file));
    let reused = result["diagnostics"]
        .as_array()
        .and_then(|d| d.iter().find(|d| d["code"] == "probe-endpoint-reused"))
        .expect("found");
    assert!(
        reused["codeDescription"]["href"].as_str().is_some_and(|h| h.ends_with("#probe-endpoint-reused")),
        "{reused}"
    );
    assert_eq!(result["fixes"], 1);
    assert_eq!(result["fixed"].as_str(), Some(fixed_by_cli.as_str()), "the quick fix is lifeguard fix's result");
}

#[test]
fn neovim_builtin_client_headless() {
    if Command::new("nvim").arg("--version").output().is_err() {
        return skip("nvim is not installed (run .ci/install-editor-tools.sh, as .ci/run does)");
    }
    let binary = workspace_binary("lifeguard", "lifeguard").expect("the lifeguard binary");
    let (dir, file, fixed_by_cli) = example(&binary);
    let out_file = dir.path().join("diagnostics.json");
    // Neovim as docs/editors.md sets it up: its init.lua, lifeguard on PATH.
    let init = dir.path().join("init.lua");
    std::fs::write(&init, lifeguard_e2e::docs::marked_block("docs/editors.md", "neovim-config"))
        .expect("write init.lua");
    let bin_dir = binary.parent().expect("the binaries' directory");
    let script = repo_root().join("tests/editors/neovim.lua");
    let mut command = Command::new("nvim");
    command
        .args(["--headless", "-n", "-i", "NONE", "-u"])
        .arg(&init)
        .arg(&file)
        .arg("-c")
        .arg(format!("luafile {}", script.display()))
        .env("PATH", format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default()))
        .env("LG_FILE", &file)
        .env("LG_OUT", &out_file)
        .env("HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .current_dir(dir.path())
        .stdin(Stdio::null());
    let expected = linted(&binary, &file);
    let out = bounded(command, Duration::from_secs(60));
    assert!(
        out.status.success(),
        "nvim: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(&out_file).expect("the recorded diagnostics")).expect("JSON");
    assert_eq!(reported(&result["diagnostics"]), expected);
    assert_eq!(result["fixes"], 1);
    // Written by Neovim: the bytes lifeguard fix writes.
    assert_eq!(std::fs::read_to_string(&file).expect("read"), fixed_by_cli);
}
