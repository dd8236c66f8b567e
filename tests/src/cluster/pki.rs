//! The control plane's certificates, made in the test: one CA that signs the
//! API server's serving pair, the admin's client certificate and the
//! webhook's serving pairs, plus the service-account signing key.

use std::path::{Path, PathBuf};

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair};

/// A certificate authority and what it issues.
pub struct Ca {
    issuer: CertifiedIssuer<'static, KeyPair>,
    /// The CA certificate (PEM).
    pub pem: String,
}

/// A certificate and its key, both PEM.
#[derive(Clone)]
pub struct Pair {
    /// The certificate.
    pub cert: String,
    /// Its private key (PKCS#8).
    pub key: String,
}

impl Ca {
    /// A fresh CA named `name`.
    pub fn new(name: &str) -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let issuer = CertifiedIssuer::self_signed(params, KeyPair::generate().expect("CA key")).expect("CA");
        let pem = issuer.pem();
        Ca { issuer, pem }
    }

    /// The CA's private key (PKCS#8 PEM), for a test that signs with
    /// another tool (`openssl x509 -req -CAkey`).
    pub fn key_pem(&self) -> String {
        self.issuer.key().serialize_pem()
    }

    /// A serving pair for loopback (`127.0.0.1`, `localhost`) and `names`.
    pub fn serving(&self, common_name: &str, names: &[&str]) -> Pair {
        let mut sans = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
        sans.extend(names.iter().map(|n| (*n).to_owned()));
        let mut params = CertificateParams::new(sans).expect("serving params");
        params.distinguished_name.push(DnType::CommonName, common_name);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        self.sign(params)
    }

    /// A client certificate: Kubernetes reads the user from the common name
    /// and the groups from the organisations.
    pub fn client(&self, user: &str, groups: &[&str]) -> Pair {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("client params");
        params.distinguished_name.push(DnType::CommonName, user);
        for group in groups {
            params.distinguished_name.push(DnType::OrganizationName, *group);
        }
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        self.sign(params)
    }

    fn sign(&self, params: CertificateParams) -> Pair {
        let key = KeyPair::generate().expect("key");
        let cert = params.signed_by(&key, &self.issuer).expect("sign");
        Pair { cert: cert.pem(), key: key.serialize_pem() }
    }
}

/// Every file the control plane is started with, written under one directory.
pub struct Pki {
    /// The cluster CA.
    pub ca: Ca,
    /// `ca.crt`.
    pub ca_file: PathBuf,
    /// `apiserver.crt` / `apiserver.key`.
    pub apiserver: (PathBuf, PathBuf),
    /// The admin's client pair (group `system:masters`), for the kubeconfig.
    pub admin: Pair,
    /// `sa.pub` / `sa.key`: service-account token verification and signing.
    pub service_account: (PathBuf, PathBuf),
    /// `kubelet-client.crt` / `.key`: the API server's identity to the
    /// kubelet (logs, exec), as a real cluster's `apiserver-kubelet-client`.
    pub kubelet_client: (PathBuf, PathBuf),
}

impl Pki {
    /// Makes the CA and every pair, and writes the files into `dir`.
    pub fn write(dir: &Path) -> Pki {
        let ca = Ca::new("lifeguard test cluster CA");
        let apiserver = ca.serving(
            "kube-apiserver",
            &[
                "kubernetes",
                "kubernetes.default",
                "kubernetes.default.svc",
                "kubernetes.default.svc.cluster.local",
                // The `kubernetes` Service's cluster IP and the node's
                // gateway, as pods reach it (tests/src/cluster/network.rs).
                super::network::KUBERNETES_SERVICE_IP,
                super::network::GATEWAY,
            ],
        );
        let admin = ca.client("lifeguard-test-admin", &["system:masters"]);
        let sa = KeyPair::generate().expect("service-account key");
        let write = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
            path
        };
        let ca_file = write("ca.crt", &ca.pem);
        let apiserver = (write("apiserver.crt", &apiserver.cert), write("apiserver.key", &apiserver.key));
        let service_account = (write("sa.pub", &sa.public_key_pem()), write("sa.key", &sa.serialize_pem()));
        let kubelet_client = ca.client("kube-apiserver-kubelet-client", &["system:masters"]);
        let kubelet_client =
            (write("kubelet-client.crt", &kubelet_client.cert), write("kubelet-client.key", &kubelet_client.key));
        Pki { ca, ca_file, apiserver, admin, service_account, kubelet_client }
    }
}

/// A TLS client connection to `addr` (named `127.0.0.1`) trusting `ca_pem`,
/// ALPN `http/1.1` as the API server offers it, its handshake done and a
/// read timeout of 5 s: the raw stream tests write HTTP/1.1 on by hand.
pub fn connect_tls(
    addr: std::net::SocketAddr,
    ca_pem: &str,
) -> std::io::Result<rustls::StreamOwned<rustls::ClientConnection, std::net::TcpStream>> {
    let config = std::sync::Arc::new(client_tls(ca_pem, false, None));
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").map_err(std::io::Error::other)?;
    let tcp = std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(2))?;
    tcp.set_read_timeout(Some(std::time::Duration::from_secs(5)))?;
    let connection = rustls::ClientConnection::new(config, name).map_err(std::io::Error::other)?;
    let mut tls = rustls::StreamOwned::new(connection, tcp);
    while tls.conn.is_handshaking() {
        tls.conn.complete_io(&mut tls.sock)?;
    }
    Ok(tls)
}

/// rustls client configuration trusting `ca_pem`, with ALPN for h2 or
/// http/1.1 and an optional client certificate (PEM cert, PEM key).
pub fn client_tls(ca_pem: &str, h2: bool, identity: Option<(&str, &str)>) -> rustls::ClientConfig {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(cert.expect("CA PEM")).expect("add root");
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots);
    let mut config = match identity {
        None => builder.with_no_client_auth(),
        Some((cert, key)) => {
            let chain = CertificateDer::pem_slice_iter(cert.as_bytes()).collect::<Result<Vec<_>, _>>().expect("chain");
            let key = PrivateKeyDer::from_pem_slice(key.as_bytes()).expect("key");
            builder.with_client_auth_cert(chain, key).expect("client auth")
        }
    };
    config.alpn_protocols = if h2 { vec![b"h2".to_vec()] } else { vec![b"http/1.1".to_vec()] };
    config
}
