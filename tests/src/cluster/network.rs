//! The node's network: a network namespace this test binary creates, in
//! which the control plane, containerd, the kubelet, the tests' own clients
//! and every pod run. The machine's own network is never changed.
//!
//! Pods with the host's network share its loopback (`--node-ip 127.0.0.1`).
//! Pods that need addresses of their own — a Service's endpoints, which the
//! API server refuses to be loopback addresses, or several replicas on one
//! port — get them from the CNI `bridge` and `host-local` plugins that
//! containerd runs here: the bridge [`BRIDGE`] with the gateway address of
//! [`POD_SUBNET`] exists only in this namespace, pods get no route but
//! their subnet's, and there is no NAT, so nothing outside this machine is
//! ever addressed. The namespace, its bridge and every pod's veth go away
//! with the last process in it: the test binary and the node's processes,
//! which the node's janitor stops.
//!
//! A network namespace belongs to a thread, and a thread's children and new
//! threads inherit it: [`enter`] moves the calling thread in, so a test that
//! asks for the node (which calls it first) starts everything from inside.

use std::fs::File;
use std::os::unix::fs::MetadataExt as _;
use std::process::Command;
use std::sync::OnceLock;

use nix::sched::{CloneFlags, setns, unshare};

/// The pods' subnet (addresses from `.2`; `.1` is the bridge, their
/// gateway to each other and to the node's processes).
pub const POD_SUBNET: &str = "10.244.0.0/24";

/// The bridge's address in [`POD_SUBNET`]: the pods' gateway to the
/// node's processes.
pub const GATEWAY: &str = "10.244.0.1";

/// The Services' cluster IPs (`--service-cluster-ip-range`).
pub const SERVICE_CIDR: &str = "10.0.0.0/24";

/// The `kubernetes` Service's cluster IP, the range's first.
pub const KUBERNETES_SERVICE_IP: &str = "10.0.0.1";

/// The bridge the CNI plugin creates in the namespace.
pub const BRIDGE: &str = "lifeguard0";

/// The namespace, held open by this process for its whole life.
struct Namespace {
    file: File,
    inode: u64,
}

static NAMESPACE: OnceLock<Result<Namespace, String>> = OnceLock::new();

/// Moves the calling thread into the node's network namespace, creating it
/// (with its loopback up) on first use.
pub fn enter() -> Result<(), String> {
    let namespace = NAMESPACE.get_or_init(create).as_ref().map_err(Clone::clone)?;
    if current() == Some(namespace.inode) {
        return Ok(());
    }
    // CLONE_NEWNET changes only the calling thread's network.
    setns(&namespace.file, CloneFlags::CLONE_NEWNET).map_err(|e| format!("enter the node's network namespace: {e}"))
}

/// Whether the calling thread is in the node's network namespace.
pub fn inside() -> bool {
    let Some(Ok(namespace)) = NAMESPACE.get() else { return false };
    current() == Some(namespace.inode)
}

/// The calling thread's network namespace, by inode.
pub fn current() -> Option<u64> {
    std::fs::metadata("/proc/thread-self/ns/net").ok().map(|m| m.ino())
}

/// A new namespace, made on a thread of its own so no other thread of the
/// test binary changes network by accident; the thread ends, the open file
/// keeps the namespace.
fn create() -> Result<Namespace, String> {
    std::thread::spawn(|| {
        // CLONE_NEWNET changes only this thread's network namespace.
        unshare(CloneFlags::CLONE_NEWNET).map_err(|e| format!("create a network namespace: {e}"))?;
        let file = File::open("/proc/thread-self/ns/net").map_err(|e| format!("open the network namespace: {e}"))?;
        let inode = file.metadata().map_err(|e| format!("the network namespace: {e}"))?.ino();
        // A new namespace's loopback is down; everything here listens on it.
        let up = Command::new("ip")
            .args(["link", "set", "lo", "up"])
            .output()
            .map_err(|e| format!("run ip link set lo up: {e}"))?;
        if !up.status.success() {
            return Err(format!("ip link set lo up: {}", String::from_utf8_lossy(&up.stderr)));
        }
        Ok(Namespace { file, inode })
    })
    .join()
    .unwrap_or_else(|_| Err("creating the network namespace panicked".to_owned()))
}

/// The CNI network containerd loads: a bridge in the node's namespace with
/// host-local addresses from [`POD_SUBNET`], its state under `ipam_dir`.
/// `isGateway` gives the bridge the subnet's first address, so the kubelet's
/// probes and the API server's webhook calls reach the pods; no masquerade,
/// and one route beyond the subnet: the Services' cluster IPs, through the
/// gateway, where kube-proxy's rules send them on. A pod reaches nothing
/// else.
pub fn cni_config(name: &str, ipam_dir: &std::path::Path) -> String {
    let config = serde_json::json!({
        "cniVersion": "1.0.0",
        "name": name,
        "plugins": [{
            "type": "bridge",
            "bridge": BRIDGE,
            "isGateway": true,
            "ipMasq": false,
            "hairpinMode": false,
            "ipam": {
                "type": "host-local",
                "ranges": [[{"subnet": POD_SUBNET, "gateway": GATEWAY}]],
                "routes": [{"dst": SERVICE_CIDR}],
                "dataDir": ipam_dir,
            },
        }],
    });
    serde_json::to_string_pretty(&config).expect("CNI configuration")
}
