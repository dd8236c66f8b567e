//! `lifeguard audit` of a large cluster: 10,000 Deployments in 100
//! namespaces (each with a Service, half the Deployments with a finding) in
//! the real kube-apiserver, audited with `-A --format json` and `-A --format
//! openreports`. Reported: wall time, peak resident memory of the
//! `lifeguard` process (VmHWM, sampled every 10 ms while it runs, from
//! `/proc`), and the findings (JSON entries, or report results) it printed.
//!
//! `.ci/install-control-plane.sh && cargo bench -p lifeguard-e2e --bench audit_scale`
//! (`-- --namespaces N --per-namespace M` for another size, `--formats
//! json` for one format, `--lifeguard PATH` to measure another build).

// A benchmark's edge: what it measured is its report on the terminal.
#![allow(clippy::print_stdout)]

use std::io::Read as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lifeguard_e2e::cluster::ControlPlane;
use lifeguard_e2e::cluster::control_plane::tools;
use lifeguard_e2e::cluster::webhook::workspace_binary;
use lifeguard_e2e::support::deployment;
use serde_json::{Value, json};

const RUNS: usize = 3;

fn arg(name: &str, default: usize) -> usize {
    std::env::args().skip_while(|a| a != name).nth(1).and_then(|n| n.parse().ok()).unwrap_or(default)
}

fn formats() -> Vec<String> {
    let given = std::env::args().skip_while(|a| a != "--formats").nth(1);
    given.unwrap_or_else(|| "json,openreports".into()).split(',').map(str::to_owned).collect()
}

/// What a run printed: JSON entries, or the results of every report.
fn printed(format: &str, stdout: &str) -> usize {
    if format == "json" {
        let report: Vec<Value> = serde_json::from_str(stdout).unwrap_or_default();
        return report.len();
    }
    stdout.lines().filter(|l| l.trim_start().starts_with("- policy: ")).count()
}

/// A namespace's objects: its Deployments (every other one reusing its
/// readiness endpoint for liveness) and a Service selecting them all.
fn namespace_list(per_namespace: usize) -> Value {
    let mut items: Vec<Value> = (0..per_namespace)
        .map(|i| {
            let mut d = deployment::typical(&format!("web-{i}"));
            d["spec"]["template"]["metadata"]["labels"]["tier"] = json!("web");
            if i % 2 == 1 {
                d["spec"]["template"]["spec"]["containers"][0]["livenessProbe"]["httpGet"]["path"] = json!("/readyz");
            }
            d
        })
        .collect();
    // Headless: the test cluster's Service range holds 254 addresses, fewer
    // than the namespaces a large run has; a headless Service selects the
    // same pods for the rules.
    items.push(json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
        "spec": {"clusterIP": "None", "selector": {"tier": "web"}, "ports": [{"port": 80, "targetPort": "http"}]}}));
    json!({"apiVersion": "v1", "kind": "List", "items": items})
}

/// The VmHWM of a running process, in bytes.
fn peak_of(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb * 1024)
}

fn main() {
    let (namespaces, per_namespace) = (arg("--namespaces", 100), arg("--per-namespace", 100));
    let Some(tools) = tools() else { return };
    // `--lifeguard PATH`, as often as wanted: each build measured on the same cluster.
    let args: Vec<String> = std::env::args().collect();
    let mut binaries: Vec<std::path::PathBuf> =
        args.windows(2).filter(|w| w[0] == "--lifeguard").map(|w| w[1].clone().into()).collect();
    if binaries.is_empty() {
        let Some(binary) = workspace_binary("lifeguard", "lifeguard") else { return };
        binaries.push(binary);
    }
    let plane = ControlPlane::start(&tools);
    let started = Instant::now();
    let list = namespace_list(per_namespace).to_string();
    for n in 0..namespaces {
        let ns = format!("scale-{n:03}");
        plane.kubectl.namespace(&ns, &[]);
        plane.kubectl.run_with_input(&["create", "-n", &ns, "-f", "-", "-o", "name"], Some(&list)).ok();
    }
    println!(
        "created {} Deployments in {namespaces} namespaces in {:.0?}",
        namespaces * per_namespace,
        started.elapsed()
    );
    for binary in &binaries {
        println!("{}", binary.display());
        measure(binary, &plane, &formats());
    }
}

/// Runs `binary`'s audit of the whole cluster [`RUNS`] times in each format.
fn measure(binary: &std::path::Path, plane: &ControlPlane, formats: &[String]) {
    println!("| format | run | wall time | peak RSS | printed |");
    println!("|---|---:|---:|---:|---:|");
    for (format, run) in formats.iter().flat_map(|f| (1..=RUNS).map(move |run| (f, run))) {
        let started = Instant::now();
        let mut child = Command::new(binary)
            .args(["audit", "-A", "--format", format, "--fail-on", "never", "--quiet"])
            .env("KUBECONFIG", &plane.kubeconfig)
            .env_remove("LIFEGUARD_POLICY")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start lifeguard audit");
        let pid = child.id();
        let mut stdout = child.stdout.take().expect("stdout");
        let reader = std::thread::spawn(move || {
            let mut text = String::new();
            stdout.read_to_string(&mut text).ok();
            text
        });
        let mut peak = 0;
        let deadline = Instant::now() + Duration::from_secs(600);
        while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            peak = peak.max(peak_of(pid).unwrap_or(0));
            std::thread::sleep(Duration::from_millis(10));
        }
        let status = child.wait().expect("wait");
        let took = started.elapsed();
        let count = printed(format, &reader.join().unwrap_or_default());
        assert!(status.success(), "lifeguard audit exited {status}");
        let mib = peak as f64 / 1048576.0;
        println!("| {format} | {run} | {:.2} s | {mib:.1} MiB | {count} |", took.as_secs_f64());
    }
}
