//! A real node beside the control plane: containerd, the kubelet,
//! kube-proxy and kube-scheduler (with kube-controller-manager for
//! Deployments and EndpointSlices), so Pods run and every claim lifeguard
//! makes about the kubelet can be checked against one.
//!
//! Built by `.ci/install-node.sh` (kubelet and kube-scheduler from the
//! control plane's Go module; containerd, runc and the CNI plugins from the
//! distribution's packages). The images are ours: the test workload
//! (`tests/workload`) built statically, packed as OCI archives
//! ([`super::image`]) and imported into the node's containerd; the pods say
//! `imagePullPolicy: Never`, and no registry is ever asked.
//!
//! Everything the node creates stays under the test's directory or is
//! undone when the test binary exits, however it exits: containerd's root,
//! state and socket, the kubelet's root and pod logs, the pods' cgroups
//! (under a cgroup root of the node's own in every hierarchy), their mounts,
//! and the kernel settings the kubelet changes at start. A janitor process
//! that waits on a pipe from the test binary does it, by PID and by path,
//! never by process name.
//!
//! The machine's cgroups are v1 and the tests lack `CAP_SYS_RESOURCE`: the
//! kubelet runs with `failCgroupV1: false`, `cgroupDriver: cgroupfs` and
//! `oomScoreAdj: 0`, containerd with `restrict_oom_score_adj`.
//!
//! The node, its control plane and the tests that use them run in a network
//! namespace of the test binary's own ([`super::network`]). Most pods use
//! the node's network on 127.0.0.1 (`hostNetwork: true`, each on a port of
//! its own); pods that need addresses of their own (a Service's endpoints)
//! get them on a bridge that exists only in that namespace.
//!
//! Over 400 lines: starting the node is one sequence (`Node::start` and its
//! helpers, about 190 lines), and the config files it writes (containerd's, the
//! kubelet's, kube-proxy's; about 135) and its clean-up (the cgroups and the
//! janitor, about 105) must agree on the same paths, so they stay together.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use serde_json::{Value, json};

use super::control_plane::{ControlPlane, TOOLS};
use super::image;
use super::network;
use super::process::{Supervised, at_exit, free_port, panic_text, tail, wait_for};
use crate::{installed_tool, skip};

/// The node's name, as registered.
pub const NODE_NAME: &str = "lifeguard-node";
const INSTALLER: &str = ".ci/install-node.sh";

/// How long containerd and the kubelet get to come up and the node to be
/// Ready (7-12 s on two cores when warm).
const START_LIMIT: Duration = Duration::from_secs(120);

/// The kernel settings the kubelet sets at start (its "kernel defaults"),
/// put back when the node stops.
const KERNEL_SETTINGS: [&str; 6] = [
    "vm/overcommit_memory",
    "vm/panic_on_oom",
    "kernel/panic",
    "kernel/panic_on_oops",
    "kernel/keys/root_maxkeys",
    "kernel/keys/root_maxbytes",
];

/// A running node.
pub struct Node {
    /// The control plane it is registered with.
    pub plane: &'static ControlPlane,
    /// Its working directory (containerd's and the kubelet's roots, logs).
    pub dir: PathBuf,
    /// containerd's socket.
    pub containerd_socket: PathBuf,
    processes: Mutex<Vec<Supervised>>,
    _janitor: Option<std::process::ChildStdin>,
}

static SHARED: OnceLock<Result<Node, String>> = OnceLock::new();

/// What the node needs that a fresh clone or an unprivileged user lacks;
/// `None` (after printing why) when something is missing.
fn prerequisites() -> Option<PathBuf> {
    if !is_root() {
        skip("the node tests run containers and need root");
        return None;
    }
    let tools = super::control_plane::tools()?;
    for binary in ["kubelet", "kube-scheduler", "kube-proxy"] {
        installed_tool(&format!("{TOOLS}/{binary}"), INSTALLER)?;
    }
    for program in ["containerd", "containerd-shim-runc-v2", "ctr", "runc", "iptables"] {
        if which(program).is_none() {
            skip(&format!("{program} is not installed (run {INSTALLER}, as .ci/run does)"));
            return None;
        }
    }
    for plugin in ["bridge", "host-local", "loopback"] {
        if !Path::new(CNI_BIN_DIR).join(plugin).is_file() {
            skip(&format!(
                "the CNI plugin {plugin} is not installed in {CNI_BIN_DIR} (run {INSTALLER}, as .ci/run does)"
            ));
            return None;
        }
    }
    if which("ip").is_none() {
        skip(&format!("ip (iproute2) is not installed (run {INSTALLER}, as .ci/run does)"));
        return None;
    }
    Some(tools)
}

/// The distribution's CNI plugins.
const CNI_BIN_DIR: &str = "/usr/lib/cni";

impl Node {
    /// The test binary's node (and control plane, with its controllers),
    /// started on first use; `None` (after printing why) when the node
    /// cannot run here. A start that fails fails every test that asks.
    pub fn shared() -> Option<&'static Node> {
        let tools = prerequisites()?;
        // Before the control plane, which must start inside too; and on every
        // call, so each test's thread (and what it starts) is inside.
        network::enter().unwrap_or_else(|e| panic!("{e}"));
        let plane = ControlPlane::shared()?;
        assert!(
            plane.network.is_some() && network::inside(),
            "the control plane started outside the node's network: a node test asks for Node::shared() first"
        );
        let started = SHARED.get_or_init(|| {
            // The plane is only read; a panic leaves nothing half-changed in it.
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                plane.start_controllers();
                Node::start(plane, &tools)
            }))
            .map_err(|panic| panic_text(&*panic, "the node did not start"))
        });
        match started {
            Ok(node) => Some(node),
            Err(message) => panic!("{message}"),
        }
    }

    fn start(plane: &'static ControlPlane, tools: &Path) -> Node {
        // Not under the control plane's directory, which its janitor removes
        // whole: this one holds mounts, and only this node's janitor removes
        // it, once they are gone.
        let dir = std::env::temp_dir().join(format!("lifeguard-node-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("node directory");
        super::kept_logs::keep_on_failure("node", &dir);
        let cgroup_root = format!("/lifeguard-node-{}", std::process::id());
        let janitor = janitor(&dir, &cgroup_root);
        let cgroups = Cgroups::create(&cgroup_root);

        // containerd, in a cgroup of the node's own: its shims (which outlive
        // it) and so every container's process can be found by PID at exit.
        let containerd_socket = dir.join("containerd.sock");
        let containerd_config = dir.join("containerd.toml");
        std::fs::write(&containerd_config, containerd_config_text(&dir, &containerd_socket))
            .expect("containerd config");
        let cni = dir.join("cni");
        std::fs::create_dir_all(&cni).expect("CNI config directory");
        std::fs::write(
            cni.join("10-lifeguard.conflist"),
            network::cni_config(&cni_network_name(), &dir.join("cni-ipam")),
        )
        .expect("CNI config");
        let mut containerd = Command::new("sh");
        containerd.arg("-c").arg(format!(
            "for tasks in {}; do echo $$ > \"$tasks\"; done; exec containerd --config '{}'",
            cgroups.runtime_tasks().join(" "),
            containerd_config.display()
        ));
        let mut processes = vec![Supervised::spawn("containerd", containerd, &dir.join("containerd.log"))];
        wait_for("containerd's socket", START_LIMIT, || {
            assert_running(&mut processes);
            let run = ctr(&containerd_socket, &["version"]);
            if run.status.success() { Ok(()) } else { Err(String::from_utf8_lossy(&run.stderr).into_owned()) }
        });
        import_images(&dir, &containerd_socket);

        // The kubelet's client identity, as a node's: the Node authorizer
        // and RBAC's system:nodes give it what a real kubelet gets.
        let identity = plane.pki.ca.client(&format!("system:node:{NODE_NAME}"), &["system:nodes"]);
        let serving = plane.pki.ca.serving(NODE_NAME, &[NODE_NAME]);
        let write = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
            path
        };
        let kubelet_cert = write("kubelet.crt", &serving.cert);
        let kubelet_key = write("kubelet.key", &serving.key);
        let kubeconfig = write(
            "kubelet.kubeconfig",
            &super::control_plane::kubeconfig_for(&plane.server, &plane.pki.ca.pem, &identity),
        );
        let resolv = write("resolv.conf", "nameserver 127.0.0.1\n");
        let config = write(
            "kubelet.yaml",
            &kubelet_config(&KubeletPaths {
                dir: &dir,
                cgroup_root: &cgroup_root,
                containerd_socket: &containerd_socket,
                ca: &plane.pki.ca_file,
                cert: &kubelet_cert,
                key: &kubelet_key,
                resolv: &resolv,
            }),
        );
        let mut kubelet = Command::new(tools.join("kubelet"));
        kubelet
            .arg(format!("--config={}", config.display()))
            .arg(format!("--kubeconfig={}", kubeconfig.display()))
            .arg(format!("--root-dir={}", dir.join("kubelet").display()))
            .arg(format!("--cert-dir={}", dir.join("kubelet-certs").display()))
            .arg(format!("--hostname-override={NODE_NAME}"))
            .arg("--node-ip=127.0.0.1")
            .arg("--v=2")
            .current_dir(&dir);
        remove_proxies(&mut kubelet);
        processes.push(Supervised::spawn("kubelet", kubelet, &dir.join("kubelet.log")));

        let mut scheduler = Command::new(tools.join("kube-scheduler"));
        scheduler
            .arg(format!("--kubeconfig={}", plane.kubeconfig.display()))
            .arg("--leader-elect=false")
            .arg("--secure-port=0")
            .arg("--v=1");
        remove_proxies(&mut scheduler);
        processes.push(Supervised::spawn("kube-scheduler", scheduler, &dir.join("kube-scheduler.log")));

        // kube-proxy routes the Services' cluster IPs (the `kubernetes`
        // Service among them) with iptables rules in the node's network
        // namespace, where they stay.
        let proxy_identity = plane.pki.ca.client("system:kube-proxy", &[]);
        let proxy_kubeconfig = write(
            "kube-proxy.kubeconfig",
            &super::control_plane::kubeconfig_for(&plane.server, &plane.pki.ca.pem, &proxy_identity),
        );
        let proxy_config = write("kube-proxy.yaml", &kube_proxy_config(&proxy_kubeconfig));
        let mut proxy = Command::new(tools.join("kube-proxy"));
        proxy.arg(format!("--config={}", proxy_config.display())).arg("--v=1");
        remove_proxies(&mut proxy);
        processes.push(Supervised::spawn("kube-proxy", proxy, &dir.join("kube-proxy.log")));

        let node =
            Node { plane, dir: dir.clone(), containerd_socket, processes: Mutex::new(processes), _janitor: janitor };
        wait_for("the node's registration", START_LIMIT, || {
            node.assert_running();
            let run = plane.kubectl.run(&["get", "node", NODE_NAME, "-o", "name"]);
            if run.code == 0 { Ok(()) } else { Err(run.stderr) }
        });
        // The kubelet refuses a loopback --node-ip in its own status updates
        // ("nodeIP can't be loopback address") and so leaves the addresses
        // alone: set once, they stay. hostNetwork pods take their IP from here,
        // and the kubelet's probes go to it.
        let addresses = json!({"status": {"addresses": [
            {"type": "InternalIP", "address": "127.0.0.1"},
            {"type": "Hostname", "address": NODE_NAME},
        ]}});
        plane
            .kubectl
            .run(&["patch", "node", NODE_NAME, "--subresource=status", "--type=merge", "-p", &addresses.to_string()])
            .ok();
        wait_for("the node to be Ready", START_LIMIT, || {
            node.assert_running();
            let node_object = plane.kubectl.run(&["get", "node", NODE_NAME, "-o", "json"]);
            if node_object.code != 0 {
                return Err(node_object.stderr);
            }
            let object = node_object.json();
            let ready = conditions(&object["status"]).get("Ready").cloned().unwrap_or_default();
            if ready == "True" {
                Ok(())
            } else {
                let log = tail(&node.dir.join("kubelet.log"), 20);
                Err(format!("Ready={ready}: {}\nthe kubelet's log ends:\n{log}", object["status"]["conditions"]))
            }
        });
        node
    }

    /// Imports an OCI image archive into the node's containerd: pods then
    /// run it by the name the archive gives it, with no registry.
    pub fn import_image(&self, archive: &Path) {
        import(&self.containerd_socket, archive);
    }

    /// Sends a container's process SIGKILL through the runtime, as an OOM
    /// kill or a crash would end it; `container_id` as the pod's status
    /// gives it (`containerd://ID`).
    pub fn kill_container(&self, container_id: &str) {
        let id = container_id.trim_start_matches("containerd://");
        let run = ctr(&self.containerd_socket, &["-n", "k8s.io", "tasks", "kill", "--signal", "SIGKILL", id]);
        assert!(run.status.success(), "ctr tasks kill {id}: {}", String::from_utf8_lossy(&run.stderr));
    }

    /// Panics with a log's end if a component has exited.
    pub fn assert_running(&self) {
        self.plane.assert_running();
        assert_running(&mut self.processes.lock().expect("processes"));
    }
}

fn assert_running(processes: &mut [Supervised]) {
    for process in processes.iter_mut() {
        process.assert_running();
    }
}

/// A status's conditions by type: `{"Ready": "True", ...}`.
pub fn conditions(status: &Value) -> std::collections::BTreeMap<String, String> {
    status["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| Some((c["type"].as_str()?.to_owned(), c["status"].as_str()?.to_owned())))
        .collect()
}

/// The test workload's image and the pause image, built from the workload's
/// static binary and imported into the node's containerd.
fn import_images(dir: &Path, socket: &Path) {
    let binary = image::workload_binary().unwrap_or_else(|e| panic!("the test workload did not build: {e}"));
    for (reference, entrypoint, file) in [
        (image::WORKLOAD_IMAGE, vec!["/lifeguard-test-workload"], "workload.oci.tar"),
        (image::PAUSE_IMAGE, vec!["/lifeguard-test-workload", "pause"], "pause.oci.tar"),
    ] {
        let archive = dir.join(file);
        image::write_oci_archive(&binary, reference, &entrypoint, &archive)
            .unwrap_or_else(|e| panic!("write {}: {e}", archive.display()));
        import(socket, &archive);
    }
}

/// `ctr images import` of an OCI archive into the CRI's namespace, where the
/// kubelet finds its images.
fn import(socket: &Path, archive: &Path) {
    let archive_arg = archive.display().to_string();
    let run = ctr(socket, &["-n", "k8s.io", "images", "import", &archive_arg]);
    assert!(
        run.status.success(),
        "ctr images import {archive_arg}: {}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
}

fn ctr(socket: &Path, args: &[&str]) -> std::process::Output {
    Command::new("ctr")
        .arg("--address")
        .arg(socket)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("run ctr: {e}"))
}

fn remove_proxies(command: &mut Command) {
    for var in ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"] {
        command.env_remove(var);
    }
}

/// The CNI network's name, which names the results the CNI library caches
/// on the host (`/var/lib/cni/results/NAME-...`): this process's own, so the
/// janitor removes exactly those.
fn cni_network_name() -> String {
    format!("lifeguard-node-{}", std::process::id())
}

/// Where the CNI library caches each attachment's result (not configurable
/// in containerd 1.6).
const CNI_CACHE_DIR: &str = "/var/lib/cni/results";

fn containerd_config_text(dir: &Path, socket: &Path) -> String {
    let root = dir.join("containerd");
    format!(
        r#"version = 2
root = "{root}/root"
state = "{root}/state"
# The tests lack CAP_SYS_RESOURCE: nothing may lower an OOM score.
oom_score = 0
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "{socket}"

[ttrpc]
  address = "{root}/ttrpc.sock"

[plugins."io.containerd.internal.v1.opt"]
  path = "{root}/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{pause}"
  restrict_oom_score_adj = true
  # The pods' network namespaces are mounted under the node's directory,
  # where the janitor finds them, not under the host's /var/run/netns.
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "{cni_bin}"
    conf_dir = "{cni_conf}"
"#,
        root = root.display(),
        socket = socket.display(),
        pause = image::PAUSE_IMAGE,
        cni_bin = CNI_BIN_DIR,
        cni_conf = dir.join("cni").display(),
    )
}

struct KubeletPaths<'a> {
    dir: &'a Path,
    cgroup_root: &'a str,
    containerd_socket: &'a Path,
    ca: &'a Path,
    cert: &'a Path,
    key: &'a Path,
    resolv: &'a Path,
}

fn kubelet_config(paths: &KubeletPaths<'_>) -> String {
    let config = json!({
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "address": "127.0.0.1",
        "port": free_port(),
        "readOnlyPort": 0,
        "healthzBindAddress": "127.0.0.1",
        "healthzPort": free_port(),
        "tlsCertFile": paths.cert,
        "tlsPrivateKeyFile": paths.key,
        "authentication": {
            "anonymous": {"enabled": false},
            "webhook": {"enabled": false},
            "x509": {"clientCAFile": paths.ca},
        },
        "authorization": {"mode": "AlwaysAllow"},
        "containerRuntimeEndpoint": format!("unix://{}", paths.containerd_socket.display()),
        // cgroup v1 is what the machines have; 1.37 refuses it otherwise.
        "failCgroupV1": false,
        "cgroupDriver": "cgroupfs",
        // Pods' cgroups under a root of the node's own, removed at exit.
        "cgroupRoot": paths.cgroup_root,
        // Without CAP_SYS_RESOURCE the kubelet cannot lower its OOM score.
        "oomScoreAdj": 0,
        "failSwapOn": false,
        // Never touch the host's firewall.
        "makeIPTablesUtilChains": false,
        "hairpinMode": "none",
        "podLogsDir": paths.dir.join("pod-logs"),
        "volumePluginDir": paths.dir.join("volume-plugins"),
        "resolvConf": paths.resolv,
        "registerNode": true,
        "rotateCertificates": false,
        "serializeImagePulls": false,
        // A test machine's disk is shared with the build: evict only when
        // it is truly full, and never collect the imported images.
        "evictionHard": {"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%", "nodefs.inodesFree": "1%"},
        "imageGCHighThresholdPercent": 100,
        "imageGCLowThresholdPercent": 99,
        // Status changes reach the API server quickly: the tests read them.
        "nodeStatusUpdateFrequency": "2s",
        "nodeStatusReportFrequency": "10s",
        "syncFrequency": "10s",
        "fileCheckFrequency": "10s",
    });
    serde_json::to_string_pretty(&config).expect("kubelet configuration")
}

/// kube-proxy in iptables mode, changing nothing outside the node's
/// network namespace: no conntrack table size or timeouts (the table's size
/// is the machine's), no `route_localnet` (no node ports on loopback).
fn kube_proxy_config(kubeconfig: &Path) -> String {
    let config = json!({
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
        "kind": "KubeProxyConfiguration",
        "clientConnection": {"kubeconfig": kubeconfig},
        "mode": "iptables",
        "hostnameOverride": NODE_NAME,
        "clusterCIDR": network::POD_SUBNET,
        "bindAddress": "127.0.0.1",
        "healthzBindAddress": format!("127.0.0.1:{}", free_port()),
        "metricsBindAddress": format!("127.0.0.1:{}", free_port()),
        "conntrack": {"maxPerCore": 0, "min": 0, "tcpEstablishedTimeout": "0s", "tcpCloseWaitTimeout": "0s"},
        "iptables": {"localhostNodePorts": false},
    });
    serde_json::to_string_pretty(&config).expect("kube-proxy configuration")
}

/// The node's cgroup root in every hierarchy, with `runtime/` for
/// containerd and its shims.
struct Cgroups {
    runtime: Vec<PathBuf>,
}

impl Cgroups {
    fn create(root: &str) -> Cgroups {
        let mut runtime = Vec::new();
        for hierarchy in hierarchies() {
            let top = hierarchy.join(root.trim_start_matches('/'));
            let runtime_dir = top.join("runtime");
            std::fs::create_dir_all(&runtime_dir).unwrap_or_else(|e| panic!("create {}: {e}", runtime_dir.display()));
            // A cpuset cgroup takes no task until it has CPUs and memory nodes.
            for file in ["cpuset.cpus", "cpuset.mems"] {
                if let Ok(parent) = std::fs::read_to_string(hierarchy.join(file)) {
                    for dir in [&top, &runtime_dir] {
                        let _ = std::fs::write(dir.join(file), parent.trim());
                    }
                }
            }
            runtime.push(runtime_dir);
        }
        Cgroups { runtime }
    }

    fn runtime_tasks(&self) -> Vec<String> {
        self.runtime.iter().map(|d| format!("'{}'", d.join("cgroup.procs").display())).collect()
    }
}

/// The mounted cgroup hierarchies (`/sys/fs/cgroup/cpu`, ..., and the
/// unified one a hybrid machine mounts beside them, where runc makes
/// cgroups too), from /proc/self/mounts.
fn hierarchies() -> Vec<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let mut out: Vec<PathBuf> = mounts
        .lines()
        .filter_map(|l| {
            let fields: Vec<&str> = l.split(' ').collect();
            matches!(fields.get(2), Some(&"cgroup" | &"cgroup2")).then(|| PathBuf::from(fields[1]))
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// A `sh` that waits for EOF on a pipe from this process and then undoes
/// the node: stops the kubelet's pods' processes and containerd's shims (by
/// the PIDs in the node's cgroups), unmounts what is mounted under `dir`
/// (deepest first), removes the node's cgroups, puts the kernel settings
/// back, removes the kubelet's container-log links that point into `dir`
/// and the CNI library's cached results of this node's network and of its
/// sandboxes' loopback (containerd's own `cni-loopback`). The components' own watchdogs stop the kubelet, containerd and
/// the scheduler at the same moment. The directory goes last, and only when
/// nothing is mounted under it any more.
fn janitor(dir: &Path, cgroup_root: &str) -> Option<std::process::ChildStdin> {
    let restore: String = KERNEL_SETTINGS
        .iter()
        .filter_map(|setting| {
            let path = format!("/proc/sys/{setting}");
            let value = std::fs::read_to_string(&path).ok()?;
            Some(format!("echo '{}' > {path} 2>/dev/null; ", value.trim()))
        })
        .collect();
    let cgroup_dirs: Vec<String> =
        hierarchies().iter().map(|h| format!("'{}'", h.join(cgroup_root.trim_start_matches('/')).display())).collect();
    let cgroup_dirs = cgroup_dirs.join(" ");
    let dir = dir.display();
    let (cni_cache, cni_name) = (CNI_CACHE_DIR, cni_network_name());
    // The CNI library's cache directories, removed (when empty) only if
    // this node is the one that made them.
    let made: Vec<&str> = [CNI_CACHE_DIR, "/var/lib/cni"].into_iter().filter(|d| !Path::new(d).exists()).collect();
    let cni_dirs = if made.is_empty() { String::new() } else { format!("rmdir {} 2>/dev/null", made.join(" ")) };
    let script = format!(
        r#"sleep 1
for round in 1 2 3 4 5 6 7 8 9 10; do
  pids=$(for c in {cgroup_dirs}; do [ -d "$c" ] && find "$c" -name cgroup.procs -exec cat {{}} + 2>/dev/null; done | sort -u)
  [ -z "$pids" ] && break
  for pid in $pids; do kill -KILL "$pid" 2>/dev/null; done
  sleep 0.5
done
for round in 1 2 3; do
  mounts=$(awk -v d='{dir}/' 'index($5, d) == 1 {{ print $5 }}' /proc/self/mountinfo | sort -r)
  [ -z "$mounts" ] && break
  for m in $mounts; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
done
for c in {cgroup_dirs}; do [ -d "$c" ] && find "$c" -depth -type d -exec rmdir {{}} \; 2>/dev/null; done
{restore}
rm -f {cni_cache}/{cni_name}-*
for sandbox in '{dir}'/containerd/root/io.containerd.grpc.v1.cri/sandboxes/*; do
  [ -d "$sandbox" ] && rm -f {cni_cache}/*-"${{sandbox##*/}}"-*
done
{cni_dirs}
for link in /var/log/containers/*.log; do
  case "$(readlink "$link" 2>/dev/null)" in '{dir}/'*) rm -f "$link" ;; esac
done
if ! awk -v d='{dir}/' 'index($5, d) == 1 {{ found = 1 }} END {{ exit !found }}' /proc/self/mountinfo; then
  rm -rf --one-file-system '{dir}'
fi
"#
    );
    at_exit(&script).map(|(_, stdin)| stdin)
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").ok().is_some_and(|status| {
        status.lines().any(|l| l.strip_prefix("Uid:").and_then(|u| u.split_whitespace().nth(1)) == Some("0"))
    })
}

fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(program)).find(|p| p.is_file())
}
