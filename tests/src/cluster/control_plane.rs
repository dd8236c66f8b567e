//! etcd, kube-apiserver and (on demand) kube-controller-manager on
//! loopback, built by `.ci/install-control-plane.sh` from their Go modules.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use super::kubectl::Client;
use super::pki::Pki;
use super::process::{Supervised, at_exit, free_port, panic_text, wait_for};
use super::release::Release;
use crate::{installed_tool, repo_root};

/// Where `.ci/install-control-plane.sh` puts the binaries.
pub const TOOLS: &str = "target/tools/k8s";
const INSTALLER: &str = ".ci/install-control-plane.sh";

/// How long each component gets to come up (kube-apiserver takes 5-15 s on
/// two cores; a cold machine more).
const START_LIMIT: Duration = Duration::from_secs(120);

/// The audit policy: every request at `Metadata`, which carries the
/// annotations admission webhooks add.
const AUDIT_POLICY: &str =
    "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n  - level: Metadata\n";

/// A running control plane.
pub struct ControlPlane {
    /// Its working directory: certificates, etcd's data, logs, kubeconfig.
    pub dir: PathBuf,
    /// The cluster's PKI.
    pub pki: Pki,
    /// `https://127.0.0.1:PORT`.
    pub server: String,
    /// An admin kubeconfig (`system:masters`) for `kubectl` and `helm`.
    pub kubeconfig: PathBuf,
    /// The API server's audit log (JSON lines).
    pub audit_log: PathBuf,
    /// `kubectl` (the newest release's), with that kubeconfig.
    pub kubectl: Client,
    /// The release of its kube-apiserver and kube-controller-manager.
    pub release: Release,
    /// Where they are.
    servers: PathBuf,
    processes: Mutex<Vec<Supervised>>,
    controllers: OnceLock<()>,
    /// The network namespace it runs in (by inode): the node's when a node
    /// test started it (tests/src/cluster/network.rs).
    pub network: Option<u64>,
}

/// The binaries, or `None` after printing why the test skips.
pub fn tools() -> Option<PathBuf> {
    let dir = installed_tool(&format!("{TOOLS}/kube-apiserver"), INSTALLER)?;
    let dir = dir.parent().expect("a directory").to_owned();
    for binary in ["etcd", "kubectl", "kube-controller-manager"] {
        installed_tool(&format!("{TOOLS}/{binary}"), INSTALLER)?;
    }
    Some(dir)
}

static SHARED: OnceLock<Result<ControlPlane, String>> = OnceLock::new();

impl ControlPlane {
    /// The test binary's control plane, started on first use; `None` (after
    /// printing why) when the binaries are not built. A start that fails
    /// fails every test that asks, with the same message.
    pub fn shared() -> Option<&'static ControlPlane> {
        let tools = tools()?;
        let started = SHARED.get_or_init(|| {
            std::panic::catch_unwind(|| ControlPlane::start(&tools))
                .map_err(|panic| panic_text(&*panic, "the control plane did not start"))
        });
        match started {
            Ok(plane) => Some(plane),
            Err(message) => panic!("{message}"),
        }
    }

    /// Starts etcd and kube-apiserver, waits for `/readyz`.
    pub fn start(tools: &Path) -> ControlPlane {
        ControlPlane::start_servers(tools, tools, Release::Newest, &[])
    }

    /// A control plane of its own running `release`'s kube-apiserver (and,
    /// on demand, kube-controller-manager), with the newest etcd and
    /// kubectl; `None` (after printing why) when its binaries are not built.
    /// Its processes stop when it is dropped.
    pub fn start_release(release: Release) -> Option<ControlPlane> {
        ControlPlane::start_release_with(release, &[])
    }

    /// [`ControlPlane::start_release`] with more kube-apiserver flags (a
    /// feature gate a user of that release would switch on).
    pub fn start_release_with(release: Release, apiserver_flags: &[&str]) -> Option<ControlPlane> {
        let tools = tools()?;
        let servers = release.server_tools()?;
        Some(ControlPlane::start_servers(&tools, &servers, release, apiserver_flags))
    }

    /// etcd and kubectl from `tools`, kube-apiserver and
    /// kube-controller-manager of `release` from `servers`.
    fn start_servers(tools: &Path, servers: &Path, release: Release, apiserver_flags: &[&str]) -> ControlPlane {
        // One directory per release: a test binary may run several at once.
        let name = match release {
            Release::Newest => format!("lifeguard-cluster-{}", std::process::id()),
            _ => format!("lifeguard-cluster-{}-v{}", std::process::id(), release.minor()),
        };
        let dir = std::env::temp_dir().join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("cluster directory");
        janitor(&dir);
        let what = match release {
            Release::Newest => "control plane".to_owned(),
            _ => format!("control plane v{}", release.minor()),
        };
        super::kept_logs::keep_on_failure(&what, &dir);
        let pki = Pki::write(&dir);
        let mut processes = Vec::new();

        let client_port = free_port();
        let peer_port = free_port();
        let etcd_url = format!("http://127.0.0.1:{client_port}");
        let peer_url = format!("http://127.0.0.1:{peer_port}");
        let mut etcd = command(&tools.join("etcd"));
        etcd.arg("--name=default")
            .arg(format!("--data-dir={}", dir.join("etcd").display()))
            .arg(format!("--listen-client-urls={etcd_url}"))
            .arg(format!("--advertise-client-urls={etcd_url}"))
            .arg(format!("--listen-peer-urls={peer_url}"))
            .arg(format!("--initial-advertise-peer-urls={peer_url}"))
            .arg(format!("--initial-cluster=default={peer_url}"))
            // A test cluster's data does not outlive it: no fsync, and the
            // API server's latency is the webhook's and its own, not the disk's.
            .arg("--unsafe-no-fsync")
            .arg("--log-level=warn");
        processes.push(Supervised::spawn("etcd", etcd, &dir.join("etcd.log")));

        let port = free_port();
        let server = format!("https://127.0.0.1:{port}");
        let audit_policy = dir.join("audit-policy.yaml");
        std::fs::write(&audit_policy, AUDIT_POLICY).expect("write the audit policy");
        let audit_log = dir.join("audit.log");
        let mut apiserver = command(&servers.join("kube-apiserver"));
        apiserver
            .args(apiserver_flags)
            .arg(format!("--etcd-servers={etcd_url}"))
            .args(kubernetes_service_args())
            .arg(format!("--secure-port={port}"))
            .arg(format!("--cert-dir={}", dir.join("apiserver-certs").display()))
            .arg(format!("--tls-cert-file={}", pki.apiserver.0.display()))
            .arg(format!("--tls-private-key-file={}", pki.apiserver.1.display()))
            .arg(format!("--client-ca-file={}", pki.ca_file.display()))
            .arg("--service-account-issuer=https://kubernetes.default.svc.cluster.local")
            .arg(format!("--service-account-key-file={}", pki.service_account.0.display()))
            .arg(format!("--service-account-signing-key-file={}", pki.service_account.1.display()))
            .arg(format!("--service-cluster-ip-range={}", super::network::SERVICE_CIDR))
            // Webhook calls for a Service go to its ready endpoints, as no
            // kube-proxy runs here to route its cluster IP.
            .arg("--enable-aggregator-routing=true")
            // The node's kubelet (logs, exec) at its InternalIP, never its
            // name, which nothing here resolves; both sides verified.
            .arg("--kubelet-preferred-address-types=InternalIP")
            .arg(format!("--kubelet-certificate-authority={}", pki.ca_file.display()))
            .arg(format!("--kubelet-client-certificate={}", pki.kubelet_client.0.display()))
            .arg(format!("--kubelet-client-key={}", pki.kubelet_client.1.display()))
            // Node for the node's kubelet (tests/src/cluster/node.rs), as a
            // real cluster authorizes its kubelets; RBAC for everyone else.
            .arg("--authorization-mode=Node,RBAC")
            // The defaults (MutatingAdmissionWebhook, ValidatingAdmissionWebhook
            // and ValidatingAdmissionPolicy among them) are what is tested.
            .arg(format!("--audit-policy-file={}", audit_policy.display()))
            .arg(format!("--audit-log-path={}", audit_log.display()))
            .arg("--audit-log-mode=blocking")
            .arg("--profiling=false")
            .arg("--v=1");
        processes.push(Supervised::spawn("kube-apiserver", apiserver, &dir.join("kube-apiserver.log")));

        let kubeconfig = dir.join("kubeconfig");
        std::fs::write(&kubeconfig, kubeconfig_for(&server, &pki.ca.pem, &pki.admin)).expect("write the kubeconfig");
        let home = dir.join("home");
        std::fs::create_dir_all(&home).expect("home directory");
        let kubectl = Client::new(&tools.join("kubectl"), &kubeconfig, &home);
        let plane = ControlPlane {
            dir,
            pki,
            server,
            kubeconfig,
            audit_log,
            kubectl,
            release,
            servers: servers.to_owned(),
            processes: Mutex::new(processes),
            controllers: OnceLock::new(),
            network: super::network::current(),
        };
        wait_for("kube-apiserver /readyz", START_LIMIT, || {
            plane.assert_running();
            let run = plane.kubectl.run(&["get", "--raw=/readyz"]);
            if run.code == 0 { Ok(()) } else { Err(format!("{}{}", run.stdout, run.stderr)) }
        });
        plane
    }

    /// Starts kube-controller-manager (once) and waits until its controllers
    /// act: the `default` ServiceAccount appears in `default`.
    pub fn start_controllers(&self) {
        self.controllers.get_or_init(|| {
            let mut kcm = command(&self.servers.join("kube-controller-manager"));
            kcm.arg(format!("--kubeconfig={}", self.kubeconfig.display()))
                .arg("--secure-port=0")
                .arg("--leader-elect=false")
                .arg("--use-service-account-credentials=false")
                .arg(format!("--service-account-private-key-file={}", self.pki.service_account.1.display()))
                .arg(format!("--root-ca-file={}", self.pki.ca_file.display()))
                .arg("--controllers=*")
                .arg("--v=1");
            let log = self.dir.join("kube-controller-manager.log");
            self.processes.lock().expect("processes").push(Supervised::spawn("kube-controller-manager", kcm, &log));
            wait_for("kube-controller-manager's serviceaccount controller", START_LIMIT, || {
                self.assert_running();
                let run = self.kubectl.run(&["get", "serviceaccount", "default", "-n", "default", "-o", "name"]);
                if run.code == 0 { Ok(()) } else { Err(run.stderr) }
            });
        });
    }

    /// Panics with a log's end if a component has exited.
    pub fn assert_running(&self) {
        for process in self.processes.lock().expect("processes").iter_mut() {
            process.assert_running();
        }
    }

    /// `helm` from `.ci/install-helm.sh`, with this cluster's kubeconfig.
    pub fn helm(&self) -> Option<Client> {
        let helm = installed_tool("target/tools/helm", ".ci/install-helm.sh")?;
        Some(Client::new(&helm, &self.kubeconfig, &self.dir.join("home")))
    }

    /// The audit log's events (one JSON object per line), read now.
    pub fn audit_events(&self) -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(&self.audit_log).unwrap_or_default();
        text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
    }
}

/// Where the API server listens and what the `kubernetes` Service's
/// endpoints say. On the machine's own network: loopback only, and no
/// endpoints (they would have to be a routable address; nothing there uses
/// that Service). In the node's network namespace, where nothing but the
/// test's own processes and pods can reach it: every address of the
/// namespace, and the pod network's gateway as the Service's endpoint, so
/// pods reach the API server as in a cluster (the `kubernetes` Service's
/// cluster IP, routed by kube-proxy).
fn kubernetes_service_args() -> Vec<String> {
    if super::network::inside() {
        vec!["--bind-address=0.0.0.0".to_owned(), format!("--advertise-address={}", super::network::GATEWAY)]
    } else {
        ["--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--endpoint-reconciler-type=none"]
            .map(str::to_owned)
            .to_vec()
    }
}

/// A command with no proxy settings: the API server would send webhook
/// calls to 127.0.0.1 through `HTTPS_PROXY` otherwise.
fn command(binary: &Path) -> Command {
    let mut command = Command::new(binary);
    for var in ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"] {
        command.env_remove(var);
    }
    command.current_dir(repo_root());
    command
}

/// Removes `dir` some seconds after this process ends (the watchdogs kill
/// the components first).
fn janitor(dir: &Path) {
    if let Some((_, stdin)) = at_exit(&format!("sleep 8; rm -rf '{}'", dir.display())) {
        // Leaked on purpose: the pipe must stay open until this process ends.
        std::mem::forget(stdin);
    }
}

/// A kubeconfig for `server` (trusting `ca_pem`) as the client `identity`.
pub fn kubeconfig_for(server: &str, ca_pem: &str, identity: &super::pki::Pair) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n  - name: lifeguard-test\n    cluster:\n      server: {server}\n      \
         certificate-authority-data: {ca}\nusers:\n  - name: admin\n    user:\n      client-certificate-data: {cert}\n      \
         client-key-data: {key}\ncontexts:\n  - name: lifeguard-test\n    context:\n      cluster: lifeguard-test\n      \
         user: admin\ncurrent-context: lifeguard-test\n",
        ca = BASE64.encode(ca_pem),
        cert = BASE64.encode(&identity.cert),
        key = BASE64.encode(&identity.key),
    )
}
