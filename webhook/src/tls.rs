//! TLS: the serving pair read from PEM files, a certificate resolver whose
//! pair can be swapped while connections are being accepted (hot reload),
//! optional client-certificate verification, TLS 1.2 and 1.3 with ALPN h2
//! and http/1.1.

use std::path::Path;
use std::sync::Arc;

use arc_swap::ArcSwapOption;
use rustls::RootCertStore;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert, WebPkiClientVerifier};
use rustls::sign::CertifiedKey;
use rustls::{ServerConfig, version};

/// PEM files larger than this are refused (a chain is a few KiB).
pub const MAX_PEM_BYTES: u64 = 1024 * 1024;

/// The crypto provider lifeguard uses everywhere (ring), installed as the
/// process default so no dependency can pick another.
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Installs [`provider`] as the process default; a second call is a no-op.
pub fn install_provider() {
    // Err means a provider is already installed (a second call, or a test).
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A validated serving pair.
#[derive(Debug, Clone)]
pub struct ServingPair {
    /// What rustls serves.
    pub key: Arc<CertifiedKey>,
    /// The leaf's notAfter, as a Unix time.
    pub not_after: i64,
    /// The leaf's subject, for logs.
    pub subject: String,
}

/// Reads a whole file with a size limit.
pub fn read_limited(path: &Path) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if meta.len() > MAX_PEM_BYTES {
        return Err(format!("{}: larger than {MAX_PEM_BYTES} bytes", path.display()));
    }
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// Builds a serving pair from PEM bytes: a certificate chain and a private
/// key that belongs to its first certificate.
pub fn serving_pair(cert_pem: &[u8], key_pem: &[u8], cert_name: &str, key_name: &str) -> Result<ServingPair, String> {
    let chain = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{cert_name}: not a PEM certificate chain: {e}"))?;
    let Some(leaf) = chain.first() else {
        return Err(format!("{cert_name}: no certificate in the file"));
    };
    let (not_after, subject) = match x509_parser::parse_x509_certificate(leaf) {
        Ok((_, cert)) => (cert.validity().not_after.timestamp(), cert.subject().to_string()),
        Err(e) => return Err(format!("{cert_name}: the first certificate does not parse: {e}")),
    };
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| format!("{key_name}: not a PEM private key: {e}"))?;
    let certified = CertifiedKey::from_der(chain, key, &provider())
        .map_err(|e| format!("{key_name}: the key does not fit {cert_name}: {e}"))?;
    Ok(ServingPair { key: Arc::new(certified), not_after, subject })
}

/// Serves whatever pair was stored last; none before the first load (the
/// handshake then fails, and /readyz says why).
#[derive(Debug, Default)]
pub struct Resolver {
    current: ArcSwapOption<CertifiedKey>,
}

impl Resolver {
    /// Swaps in a new pair; handshakes already under way keep the old one.
    pub fn store(&self, key: Arc<CertifiedKey>) {
        self.current.store(Some(key));
    }

    /// Whether a pair is loaded.
    pub fn is_loaded(&self) -> bool {
        self.current.load().is_some()
    }
}

impl ResolvesServerCert for Resolver {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.current.load_full()
    }
}

/// The server's TLS configuration: TLS 1.3 and 1.2, ALPN h2 then
/// http/1.1, the pair from `resolver`, and client certificates required
/// when `client_ca` (PEM) is given.
pub fn server_config(resolver: Arc<Resolver>, client_ca: Option<&Path>) -> Result<ServerConfig, String> {
    let builder = ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&version::TLS13, &version::TLS12])
        .map_err(|e| format!("TLS versions: {e}"))?;
    let builder = match client_ca {
        None => builder.with_no_client_auth(),
        Some(path) => {
            let pem = read_limited(path)?;
            let mut roots = RootCertStore::empty();
            for cert in CertificateDer::pem_slice_iter(&pem) {
                let cert = cert.map_err(|e| format!("{}: not a PEM certificate: {e}", path.display()))?;
                roots.add(cert).map_err(|e| format!("{}: {e}", path.display()))?;
            }
            if roots.is_empty() {
                return Err(format!("{}: no CA certificate in the file", path.display()));
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
                .build()
                .map_err(|e| format!("{}: {e}", path.display()))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut config = builder.with_cert_resolver(resolver);
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}
