//! A local control plane with lifeguard installed, to try by hand: the
//! same etcd, kube-apiserver, webhook and chart configurations the cluster
//! tests use (`deploy/local-cluster.sh` builds what it needs and runs this).
//! Also what the docs' commands expect: the `lifeguard` namespace with the
//! chart's policy ConfigMap (`lifeguard audit --policy
//! configmap:lifeguard/lifeguard-policy`) and a `demo` namespace (the
//! ValidatingAdmissionPolicy example of docs/vap.md). Prints the `kubectl`
//! line to use and waits; Ctrl-C (or end of input) stops everything.

// An example's edge: it shows on the terminal what it did.
#![allow(clippy::print_stderr, clippy::print_stdout)]

use std::io::Read as _;

use lifeguard_e2e::cluster::chart::RELEASE;
use lifeguard_e2e::cluster::control_plane::tools;
use lifeguard_e2e::cluster::{ControlPlane, Installation};
use lifeguard_e2e::support::deployment;

/// The chart's policy ConfigMap (`<release>-policy`), which the webhook
/// mounts and `lifeguard audit --policy configmap:lifeguard/lifeguard-policy` reads.
const POLICY_CONFIGMAP: &str = "lifeguard-policy";

fn main() {
    let Some(tools) = tools() else { std::process::exit(2) };
    let controllers = std::env::args().any(|a| a == "--controllers");
    let plane = ControlPlane::start(&tools);
    if controllers {
        plane.start_controllers();
    }
    let Some(lifeguard) = Installation::install(&plane, &["certManager.enabled=false"]) else { std::process::exit(2) };
    // The release's namespace and policy ConfigMap, as `helm install` leaves
    // them: the chart's own rendered object, applied as it is.
    plane.kubectl.namespace(RELEASE, &[]);
    let Some(policy) = lifeguard.rendered.find("ConfigMap", Some(POLICY_CONFIGMAP)) else {
        eprintln!("the chart renders no ConfigMap {POLICY_CONFIGMAP}");
        std::process::exit(2)
    };
    plane.kubectl.apply(policy);
    // docs/vap.md's example namespace: no lifeguard label, so only an exported policy judges it.
    plane.kubectl.namespace("demo", &[]);
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
    let naive = serde_json::to_string_pretty(&deployment::naive_gpu("llm")).unwrap_or_default();
    std::fs::write(&manifest, naive).unwrap_or_else(|e| panic!("write {}: {e}", manifest.display()));
    let kubectl = plane.dir.join("kubectl");
    let _ = std::os::unix::fs::symlink(tools.join("kubectl"), &kubectl);
    println!("kube-apiserver {} with lifeguard-webhook at {}", plane.server, lifeguard.webhook.url(""));
    println!(
        "namespaces: demo-enforce, demo-warn, demo-audit (lifeguard.dev/mode) and demo-mutate (lifeguard.dev/mutate=true); \
         demo (no label, for an exported ValidatingAdmissionPolicy)"
    );
    println!(
        "policy: ConfigMap {RELEASE}/{POLICY_CONFIGMAP} (lifeguard audit --policy configmap:{RELEASE}/{POLICY_CONFIGMAP})"
    );
    println!(
        "lifeguard-registration-probe: empty; where the start dry-ran a Deployment until the API server called the webhook"
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
