//! The real `lifeguard-webhook` binary, started with the arguments and
//! environment of the chart's own Deployment (its files and listen
//! addresses moved to a directory and ports of the test's by the shared
//! harness, [`crate::support::webhook`]), its serving pair from the test CA
//! in a Secret-volume layout, and its policy from the chart's ConfigMap;
//! and the workspace's binaries the tests run.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::chart::Rendered;
use super::pki::{Ca, Pair};
use crate::skip;
use crate::support::webhook::{Server, Start};

/// The flags of the chart's webhook container that the harness sets
/// itself, to the test's directory and loopback ports.
const HARNESS_FLAGS: [&str; 5] = ["--tls-cert=", "--tls-key=", "--policy=", "--listen=", "--health-listen="];

/// The `lifeguard-webhook` binary beside this test binary's directory
/// (see [`workspace_binary`]).
pub fn binary() -> Option<PathBuf> {
    workspace_binary("lifeguard-webhook", "lifeguard-webhook")
}

/// The workspace's `lifeguard` run with `args` and `input` on stdin, as a
/// user pipes a manifest (or `helm template` output) through it.
pub fn lifeguard_with_input(args: &[&str], input: &str) -> std::process::Output {
    use std::io::Write as _;
    let binary = workspace_binary("lifeguard", "lifeguard").expect("the lifeguard binary");
    let mut child = Command::new(binary)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run lifeguard");
    child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write the input");
    child.wait_with_output().expect("lifeguard")
}

/// Binary `bin` of workspace package `package`, beside this test binary's
/// directory (`cargo test --workspace` builds it); built with `cargo build`
/// when it is missing (a run of this crate's tests alone) or for a
/// benchmark, `None` if that fails.
pub fn workspace_binary(package: &str, bin: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    // target/<profile>/deps/<test> -> target/<profile>/<bin>
    let path = exe.parent()?.parent()?.join(bin);
    // A benchmark (target/release) always builds it, so it measures this tree.
    let release = path.parent().and_then(Path::file_name).is_some_and(|p| p == "release");
    if !path.is_file() || release {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = Command::new(cargo);
        build.args(["build", "-p", package, "--bin", bin]);
        if release {
            build.arg("--release");
        }
        let built = build.status();
        if !built.is_ok_and(|s| s.success()) || !path.is_file() {
            skip(&format!("{} is not built (cargo build -p {package})", path.display()));
            return None;
        }
    }
    Some(path)
}

/// The chart's webhook container: its args and env, as rendered.
fn container(rendered: &Rendered) -> Value {
    let deployment = rendered.find("Deployment", None).expect("the chart renders a Deployment");
    let containers = deployment["spec"]["template"]["spec"]["containers"].as_array().cloned().unwrap_or_default();
    containers.into_iter().find(|c| c["name"] == "webhook").expect("the chart's Deployment has a webhook container")
}

/// Starts `binary` as `rendered`'s Deployment runs it, serving `pair`,
/// and waits until `/readyz` is 200.
pub fn start(binary: &Path, rendered: &Rendered, pair: &Pair) -> Server {
    let container = container(rendered);
    let args: Vec<&str> = container["args"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let owned = |arg: &str| HARNESS_FLAGS.iter().any(|flag| arg.starts_with(flag));
    // The chart gives the five the harness sets (to the test's files and
    // ports) and maybe others, which are passed on as the chart gives them.
    assert_eq!(args.iter().filter(|a| owned(a)).count(), HARNESS_FLAGS.len(), "the chart's webhook flags: {args:?}");
    let env = container["env"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|var| Some((var["name"].as_str()?.to_owned(), var["value"].as_str()?.to_owned())))
        .collect();
    let config_map = rendered
        .objects
        .iter()
        .find(|o| o["kind"] == "ConfigMap" && o["data"]["policy.yaml"].is_string())
        .expect("the chart renders the policy ConfigMap");
    Server::start(Start {
        binary: Some(binary.to_owned()),
        args: args.into_iter().filter(|a| !owned(a)).map(str::to_owned).collect(),
        env,
        policy: config_map["data"]["policy.yaml"].as_str().map(str::to_owned),
        pair: Some(pair.clone()),
        secret_volume: true,
        quick: false,
        ..Start::default()
    })
}

/// A serving pair from `ca` for the webhook on loopback.
pub fn serving_pair(ca: &Ca) -> Pair {
    ca.serving("lifeguard-webhook", &["lifeguard.lifeguard.svc"])
}
