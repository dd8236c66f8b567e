//! Every kubeconfig form kubectl takes, `lifeguard audit` takes, against the
//! real kube-apiserver: client certificates made by the real `openssl`
//! (X.509 v1 from `openssl x509 -req` without extensions, and v3), keys in
//! PKCS#1, PKCS#8 and SEC1, the `-data` fields and files (relative to the
//! kubeconfig), CA bundles with an unrelated CA first, a v1 CA, a bearer
//! token, a `tokenFile` and an `exec` plugin. Each case is first checked
//! with `kubectl get --raw /version` on the same kubeconfig. What neither
//! can use (a key of another certificate, a v1 serving certificate) is one
//! clear error naming the kubeconfig's user or cluster.

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

mod audit_corpus;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use audit_corpus::lifeguard_with;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use lifeguard_e2e::cluster::chart::Rendered;
use lifeguard_e2e::cluster::process::{Supervised, free_port, wait_for};
use lifeguard_e2e::cluster::{Client, ControlPlane, Run};
use lifeguard_e2e::support::deployment::Deployment;
use serde_json::{Value, json};

/// The namespace audited, its Deployment, and who may read it.
const NAMESPACE: &str = "credentials";
/// The user the client certificates name (their common name).
const USER: &str = "lifeguard-credentials";
/// The ServiceAccount the tokens are for.
const SERVICE_ACCOUNT: &str = "auditor";

/// The cluster, its CA as files `openssl` signs with, the audit's rights
/// granted, and a token; made once per test binary.
struct Setup {
    plane: &'static ControlPlane,
    kubectl: PathBuf,
    work: PathBuf,
    token: String,
}

static SETUP: OnceLock<Option<Setup>> = OnceLock::new();

/// The next certificate's serial number.
static SERIAL: AtomicU32 = AtomicU32::new(1000);

fn setup() -> Option<&'static Setup> {
    SETUP
        .get_or_init(|| {
            let plane = ControlPlane::shared()?;
            let helm = plane.helm()?;
            let kubectl = lifeguard_e2e::cluster::control_plane::tools()?.join("kubectl");
            openssl(&["version"], Path::new("."))?;
            let work = plane.dir.join("credentials");
            std::fs::create_dir_all(&work).expect("the credentials directory");
            std::fs::write(work.join("ca.crt"), &plane.pki.ca.pem).expect("ca.crt");
            std::fs::write(work.join("ca.key"), plane.pki.ca.key_pem()).expect("ca.key");
            // The rights the chart gives its audit CronJob, no more.
            let rendered = Rendered::render(&helm, &plane.kubectl, &["audit.enabled=true", "certManager.enabled=false"]);
            let mut role = rendered.find("ClusterRole", None).expect("the chart's audit ClusterRole").clone();
            role["metadata"] = json!({"name": "lifeguard-credentials"});
            plane.kubectl.apply(&role);
            plane.kubectl.namespace(NAMESPACE, &[]);
            plane.kubectl.default_service_account(NAMESPACE);
            plane.kubectl.run(&["create", "serviceaccount", SERVICE_ACCOUNT, "-n", NAMESPACE]).ok();
            plane.kubectl.apply(&json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                "metadata": {"name": "lifeguard-credentials"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "lifeguard-credentials"},
                "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": USER},
                    {"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": NAMESPACE}]}));
            plane.kubectl.apply(
                &Deployment::new("web")
                    .namespace(NAMESPACE)
                    .containers(json!([{"name": "web", "image": "example/web:1",
                        "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080},
                            "periodSeconds": 1, "failureThreshold": 1}}]))
                    .build(),
            );
            let token = plane.kubectl.run(&["create", "token", SERVICE_ACCOUNT, "-n", NAMESPACE]).ok().trim().to_owned();
            Some(Setup { plane, kubectl, work, token })
        })
        .as_ref()
}

/// `openssl ARGS` in `dir`, which must succeed; `None` (after saying why)
/// when there is no `openssl`.
fn openssl(args: &[&str], dir: &Path) -> Option<String> {
    let out = match Command::new("openssl").args(args).current_dir(dir).output() {
        Ok(out) => out,
        Err(e) => {
            lifeguard_e2e::skip(&format!("openssl cannot be run ({e})"));
            return None;
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "openssl {}: {stderr}", args.join(" "));
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The private key forms kubectl reads.
#[derive(Clone, Copy)]
enum Key {
    /// `openssl genrsa -traditional`: `RSA PRIVATE KEY`.
    Pkcs1,
    /// `openssl genpkey -algorithm RSA`: `PRIVATE KEY`.
    Pkcs8,
    /// `openssl ecparam -genkey`: `EC PARAMETERS`, then `EC PRIVATE KEY`.
    Sec1,
}

impl Setup {
    /// A new key `NAME.key` in `form`.
    fn key(&self, name: &str, form: Key) -> PathBuf {
        let file = format!("{name}.key");
        let (args, header): (Vec<&str>, &str) = match form {
            Key::Pkcs1 => (vec!["genrsa", "-traditional", "-out", &file, "2048"], "-----BEGIN RSA PRIVATE KEY-----"),
            Key::Pkcs8 => (
                vec!["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", &file],
                "-----BEGIN PRIVATE KEY-----",
            ),
            Key::Sec1 => {
                (vec!["ecparam", "-name", "prime256v1", "-genkey", "-out", &file], "-----BEGIN EC PARAMETERS-----")
            }
        };
        openssl(&args, &self.work).expect("openssl");
        let path = self.work.join(&file);
        let text = std::fs::read_to_string(&path).expect("the key");
        assert!(text.starts_with(header), "{file} is not in the form asked for:\n{text}");
        path
    }

    /// `NAME.crt` for `key`, signed by the cluster CA with `openssl x509
    /// -req`: with `extensions` (an `-extfile`) an X.509 v3 certificate,
    /// without, v1.
    fn certificate(&self, name: &str, key: &Path, subject: &str, extensions: Option<&str>) -> PathBuf {
        let (csr, crt) = (format!("{name}.csr"), format!("{name}.crt"));
        let key = key.to_string_lossy();
        openssl(&["req", "-new", "-key", &key, "-subj", subject, "-out", &csr], &self.work).expect("openssl");
        // A serial of its own: the tests sign at the same time, and
        // `-CAcreateserial`'s shared file would race.
        let serial = format!("{}", SERIAL.fetch_add(1, Ordering::Relaxed));
        let mut args = vec!["x509", "-req", "-in", &csr, "-CA", "ca.crt", "-CAkey", "ca.key", "-set_serial", &serial];
        args.extend(["-days", "1"]);
        let ext = format!("{name}.ext");
        if let Some(extensions) = extensions {
            std::fs::write(self.work.join(&ext), extensions).expect("the extensions file");
            args.extend(["-extfile", &ext]);
        }
        args.extend(["-out", &crt]);
        openssl(&args, &self.work).expect("openssl");
        let text = openssl(&["x509", "-in", &crt, "-noout", "-text"], &self.work).expect("openssl");
        let version = if extensions.is_some() { "Version: 3 (0x2)" } else { "Version: 1 (0x0)" };
        assert!(text.contains(version), "{crt} is not {version}:\n{text}");
        self.work.join(crt)
    }

    /// A client certificate for [`USER`] with its key in `form`.
    fn client(&self, name: &str, form: Key, v3: bool) -> (PathBuf, PathBuf) {
        let key = self.key(name, form);
        let extensions = v3.then_some(
            "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n",
        );
        (self.certificate(name, &key, &format!("/CN={USER}"), extensions), key)
    }

    /// `kubeconfig-NAME` with one context of `cluster` (and server) and `user`.
    fn kubeconfig(
        &self,
        name: &str,
        (cluster_name, cluster): (&str, Value),
        (user_name, user): (&str, Value),
    ) -> PathBuf {
        let mut cluster = cluster;
        if cluster.get("server").is_none() {
            cluster["server"] = json!(self.plane.server);
        }
        let config = json!({"apiVersion": "v1", "kind": "Config",
            "clusters": [{"name": cluster_name, "cluster": cluster}],
            "users": [{"name": user_name, "user": user}],
            "contexts": [{"name": "credentials", "context": {"cluster": cluster_name, "user": user_name}}],
            "current-context": "credentials"});
        let path = self.work.join(format!("kubeconfig-{name}"));
        std::fs::write(&path, serde_json::to_string_pretty(&config).expect("JSON")).expect("write the kubeconfig");
        path
    }

    /// `kubectl get --raw /version` with `kubeconfig`.
    fn kubectl_version(&self, kubeconfig: &Path) -> Run {
        Client::new(&self.kubectl, kubeconfig, &self.plane.dir.join("home")).run(&["get", "--raw", "/version"])
    }
}

/// `lifeguard audit` of [`NAMESPACE`] with `kubeconfig`, as JSON.
fn audit(kubeconfig: &Path) -> Run {
    lifeguard_with(kubeconfig, &["audit", "-n", NAMESPACE, "--format", "json", "--fail-on", "never"])
}

/// What is wrong with an audit that should have read the Deployment with
/// all the rights it needs, if anything.
fn audit_problem(run: &Run) -> Option<String> {
    let judged = serde_json::from_str::<Vec<Value>>(&run.stdout)
        .is_ok_and(|findings| findings.iter().any(|f| f["name"] == "web" && f["rule"] == "liveness-too-aggressive"));
    if run.code == 0 && judged && !run.stderr.contains("lifeguard: warning") {
        return None;
    }
    Some(format!("exit {}\nstdout: {}\nstderr: {}", run.code, run.stdout, run.stderr))
}

fn file(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

fn data(path: &Path) -> String {
    BASE64.encode(std::fs::read(path).expect("read"))
}

#[test]
fn every_kubeconfig_form_kubectl_takes_audit_takes() {
    let Some(s) = setup() else { return };
    let ca = s.work.join("ca.crt");
    // A bundle of several certificates, an unrelated CA first.
    let unrelated_key = s.key("unrelated-ca", Key::Pkcs8);
    let unrelated = s.certificate(
        "unrelated-ca",
        &unrelated_key,
        "/CN=an unrelated CA",
        Some("basicConstraints=critical,CA:TRUE\n"),
    );
    let bundle = s.work.join("bundle.crt");
    let unrelated_pem = std::fs::read_to_string(&unrelated).expect("read");
    std::fs::write(&bundle, format!("{unrelated_pem}{}", s.plane.pki.ca.pem)).expect("write the bundle");
    // The cluster's CA re-issued as X.509 v1 (`openssl x509 -req -signkey`,
    // no extensions): the same name and key, so it verifies the serving
    // certificate it signed.
    openssl(&["x509", "-x509toreq", "-in", "ca.crt", "-signkey", "ca.key", "-out", "ca-v1.csr"], &s.work)
        .expect("openssl");
    openssl(&["x509", "-req", "-in", "ca-v1.csr", "-signkey", "ca.key", "-days", "1", "-out", "ca-v1.crt"], &s.work)
        .expect("openssl");
    let ca_v1 = s.work.join("ca-v1.crt");
    let text = openssl(&["x509", "-in", "ca-v1.crt", "-noout", "-text"], &s.work).expect("openssl");
    assert!(text.contains("Version: 1 (0x0)"), "ca-v1.crt is not v1:\n{text}");

    let ca_file = || ("ca-file", json!({"certificate-authority": file(&ca)}));
    let ca_data = || ("ca-data", json!({"certificate-authority-data": data(&ca)}));
    let bundle_file = || ("bundle-file", json!({"certificate-authority": file(&bundle)}));
    let bundle_data = || ("bundle-data", json!({"certificate-authority-data": data(&bundle)}));
    let v1_ca = || ("v1-ca", json!({"certificate-authority": file(&ca_v1)}));
    let files = |(cert, key): &(PathBuf, PathBuf)| json!({"client-certificate": file(cert), "client-key": file(key)});
    let datas =
        |(cert, key): &(PathBuf, PathBuf)| json!({"client-certificate-data": data(cert), "client-key-data": data(key)});

    let (cert, key) = s.client("v1-pkcs1", Key::Pkcs1, false);
    // Relative to the kubeconfig's directory (the same), as kubectl reads them.
    let name = |path: &Path| path.file_name().map(|n| n.to_string_lossy().into_owned());
    let relative = json!({"client-certificate": name(&cert), "client-key": name(&key)});
    let token_file = s.work.join("token");
    std::fs::write(&token_file, &s.token).expect("write the token");
    let plugin = s.work.join("exec-credential.sh");
    std::fs::write(
        &plugin,
        format!(
            "#!/bin/sh\nprintf '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"%s\"}}}}' \"$(cat '{}')\"\n",
            token_file.display()
        ),
    )
    .expect("write the plugin");
    std::fs::set_permissions(&plugin, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod the plugin");
    let exec = json!({"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": file(&plugin),
        "interactiveMode": "Never"}});

    let cases: Vec<(&str, (&str, Value), Value)> = vec![
        ("v1 client certificate (openssl x509 -req, no extensions), PKCS#1 key, relative files", ca_file(), relative),
        ("v1 client certificate, PKCS#8 key, -data fields", ca_data(), datas(&s.client("v1-pkcs8", Key::Pkcs8, false))),
        (
            "v1 client certificate, SEC1 EC key after EC PARAMETERS, files",
            bundle_file(),
            files(&s.client("v1-sec1", Key::Sec1, false)),
        ),
        (
            "v3 client certificate, PKCS#1 key, -data fields",
            bundle_data(),
            datas(&s.client("v3-pkcs1", Key::Pkcs1, true)),
        ),
        ("v3 client certificate, PKCS#8 key, files", v1_ca(), files(&s.client("v3-pkcs8", Key::Pkcs8, true))),
        ("v3 client certificate, SEC1 EC key, -data fields", ca_file(), datas(&s.client("v3-sec1", Key::Sec1, true))),
        ("bearer token", bundle_file(), json!({"token": s.token})),
        ("tokenFile", v1_ca(), json!({"tokenFile": file(&token_file)})),
        ("exec plugin printing an ExecCredential with a token", ca_data(), exec),
    ];
    // Each case named by its user and its cluster's CA (the cluster's name).
    let kubeconfigs: Vec<(String, PathBuf)> = cases
        .into_iter()
        .enumerate()
        .map(|(i, (name, cluster, user))| {
            (format!("{name}; CA: {}", cluster.0), s.kubeconfig(&i.to_string(), cluster, ("user", user)))
        })
        .collect();
    // The binding reaches the authorizer's cache a moment after it is made.
    for who in [USER.to_owned(), format!("system:serviceaccount:{NAMESPACE}:{SERVICE_ACCOUNT}")] {
        wait_for(&format!("list on deployments for {who}"), Duration::from_secs(30), || {
            let run =
                s.plane.kubectl.run(&["auth", "can-i", "list", "deployments.apps", "-n", NAMESPACE, "--as", &who]);
            if run.code == 0 { Ok(()) } else { Err(format!("{}{}", run.stdout, run.stderr)) }
        });
    }
    let mut failed = Vec::new();
    for (name, kubeconfig) in &kubeconfigs {
        let kubectl = s.kubectl_version(kubeconfig);
        if kubectl.code != 0 {
            failed.push(format!("{name}: kubectl refused it too, so the case is wrong: {}", kubectl.stderr));
            continue;
        }
        if let Some(problem) = audit_problem(&audit(kubeconfig)) {
            failed.push(format!("{name}: kubectl takes it, lifeguard audit does not: {problem}"));
        }
    }
    assert!(failed.is_empty(), "{} of {} kubeconfigs:\n{}", failed.len(), kubeconfigs.len(), failed.join("\n\n"));
}

#[test]
fn a_key_of_another_certificate_is_one_error_naming_the_user() {
    let Some(s) = setup() else { return };
    let (cert, _) = s.client("mismatch", Key::Pkcs1, false);
    let other = s.key("mismatch-other", Key::Pkcs8);
    let kubeconfig = s.kubeconfig(
        "mismatch",
        ("cluster", json!({"certificate-authority": file(&s.work.join("ca.crt"))})),
        ("mismatched", json!({"client-certificate": file(&cert), "client-key": file(&other)})),
    );
    let kubectl = s.kubectl_version(&kubeconfig);
    assert_ne!(kubectl.code, 0, "kubectl refuses the pair: {kubectl:#?}");
    let run = audit(&kubeconfig);
    assert_eq!(run.code, 2, "{run:#?}");
    assert_eq!(
        run.stderr,
        format!(
            "lifeguard: kubeconfig user \"mismatched\": the private key (client-key {}) is not the key of the client \
             certificate (client-certificate {}, X.509 v1): give the key the certificate was issued for\n",
            other.display(),
            cert.display()
        )
    );
}

#[test]
fn a_v1_serving_certificate_is_one_error_naming_the_cluster() {
    let Some(s) = setup() else { return };
    // A real TLS server (`openssl s_server`) with a v1 certificate for
    // 127.0.0.1 from the cluster CA: the handshake is what is tested.
    let key = s.key("v1-serving", Key::Pkcs8);
    let cert = s.certificate("v1-serving", &key, "/CN=127.0.0.1", None);
    let port = free_port();
    let mut server = Command::new("openssl");
    server
        .args(["s_server", "-www", "-accept", &format!("127.0.0.1:{port}"), "-cert"])
        .arg(&cert)
        .arg("-key")
        .arg(&key)
        .current_dir(&s.work);
    let _server = Supervised::spawn("openssl s_server", server, &s.work.join("s_server.log"));
    wait_for("openssl s_server", Duration::from_secs(10), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).map(drop).map_err(|e| e.to_string())
    });
    let server_url = format!("https://127.0.0.1:{port}");
    let kubeconfig = s.kubeconfig(
        "v1-serving",
        ("v1-serving", json!({"server": server_url, "certificate-authority": file(&s.work.join("ca.crt"))})),
        ("user", json!({"token": s.token})),
    );
    let kubectl = s.kubectl_version(&kubeconfig);
    assert_ne!(kubectl.code, 0, "kubectl refuses a v1 serving certificate: {kubectl:#?}");
    eprintln!("kubectl: {}", kubectl.stderr.trim());
    let run = audit(&kubeconfig);
    assert_eq!(run.code, 2, "{run:#?}");
    assert_eq!(
        run.stderr,
        format!(
            "lifeguard: discover the API groups: the API server's certificate for kubeconfig cluster \"v1-serving\" \
             ({server_url}/), or an intermediate it sends, is not X.509 v3 (v1 is what `openssl x509 -req` makes \
             without an extensions file); rustls verifies only v3 certificates from a server (a v1 CA in \
             certificate-authority is fine) and kubectl refuses a v1 serving certificate too, as it has no \
             subjectAltName: re-issue the API server's certificate with v3 extensions (subjectAltName with its \
             names and addresses, extendedKeyUsage serverAuth)\n"
        )
    );
}
