//! A local control plane with lifeguard installed, to try by hand: the
//! same etcd, kube-apiserver, webhook and chart configurations the cluster
//! tests use (`deploy/local-cluster.sh` builds what it needs and runs this).
//! Prints the `kubectl` line to use and waits; Ctrl-C (or end of input)
//! stops everything.

use std::io::Read as _;

use lifeguard_e2e::cluster::control_plane::tools;
use lifeguard_e2e::cluster::{ControlPlane, Installation, objects};

fn main() {
    let Some(tools) = tools() else { std::process::exit(2) };
    let controllers = std::env::args().any(|a| a == "--controllers");
    let plane = ControlPlane::start(&tools);
    if controllers {
        plane.start_controllers();
    }
    let Some(lifeguard) = Installation::install(&plane, &["certManager.enabled=false"]) else { std::process::exit(2) };
    for (namespace, labels) in [
        ("demo-enforce", &["lifeguard.dev/mode=enforce"][..]),
        ("demo-warn", &["lifeguard.dev/mode=warn"]),
        ("demo-audit", &["lifeguard.dev/mode=audit"]),
        ("demo-mutate", &["lifeguard.dev/mutate=true"]),
    ] {
        plane.kubectl.namespace(namespace, labels);
    }
    // The seed's naive GPU model server, as the tests send it.
    let manifest = plane.dir.join("naive-gpu-server.json");
    let naive = serde_json::to_string_pretty(&objects::naive_gpu_deployment("llm")).unwrap_or_default();
    std::fs::write(&manifest, naive).unwrap_or_else(|e| panic!("write {}: {e}", manifest.display()));
    let kubectl = plane.dir.join("kubectl");
    let _ = std::os::unix::fs::symlink(tools.join("kubectl"), &kubectl);
    println!("kube-apiserver {} with lifeguard-webhook at {}", plane.server, lifeguard.webhook.base_url());
    println!(
        "namespaces: demo-enforce, demo-warn, demo-audit (lifeguard.dev/mode) and demo-mutate (lifeguard.dev/mutate=true)"
    );
    println!("audit log: {}", plane.audit_log.display());
    println!();
    println!("  export KUBECONFIG={}", plane.kubeconfig.display());
    for namespace in ["demo-enforce", "demo-warn", "demo-mutate"] {
        println!("  {} -n {namespace} create -f {}", kubectl.display(), manifest.display());
    }
    println!();
    println!("Ctrl-C stops the control plane and the webhook.");
    // Blocks until the input ends (or the process is interrupted, which
    // ends the components through their watchdogs).
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
}
