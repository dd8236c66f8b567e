//! The kubeconfig user's client certificate and key, loaded as kubectl
//! loads them: any X.509 version, the key in PKCS#1, PKCS#8 or SEC1 PEM
//! (other PEM blocks, such as the `EC PARAMETERS` of `openssl ecparam
//! -genkey`, skipped).
//!
//! rustls's own loader (`ConfigBuilder::with_client_auth_cert`, which kube
//! calls) checks that the key matches the certificate by parsing the
//! certificate with webpki, which refuses anything but X.509 v3: a v1
//! certificate made by `openssl x509 -req` without extensions, which kubectl
//! and the API server accept, failed there as "invalid private key: invalid
//! peer certificate: UnsupportedCertVersion". Here the match is checked with
//! a parser that reads every version, and the pair is handed to rustls
//! as is: the client never verifies its own certificate, the API server does.

use std::sync::Arc;

use base64::Engine as _;
use kube::config::AuthInfo;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::{self, PemObject as _};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::CertifiedKey;
use secrecy::ExposeSecret as _;
use thiserror::Error;

/// Why the user's client certificate or key cannot be used; each names the
/// kubeconfig user and the field (`client-key-data`, or `client-key FILE`).
#[derive(Debug, Error)]
pub enum IdentityError {
    /// A certificate without a key, or a key without a certificate.
    #[error("kubeconfig user {user:?}: {given} is set but {missing} is not; give both, as kubectl needs")]
    Half {
        /// The user.
        user: String,
        /// The field that is set.
        given: &'static str,
        /// The one that is not.
        missing: &'static str,
    },
    /// The field could not be read: a file that is not there, base64 that
    /// does not decode, PEM that does not parse.
    #[error("kubeconfig user {user:?}: {field}: {message}")]
    Unreadable {
        /// The user.
        user: String,
        /// The field (and the file).
        field: String,
        /// Why.
        message: String,
    },
    /// The key does not belong to the certificate.
    #[error(
        "kubeconfig user {user:?}: the private key ({key}) is not the key of the client certificate ({cert}, X.509 v{version}): give the key the certificate was issued for"
    )]
    Mismatch {
        /// The user.
        user: String,
        /// The key's field.
        key: String,
        /// The certificate's field.
        cert: String,
        /// The certificate's X.509 version (1, 2 or 3).
        version: u32,
    },
}

/// The user's client certificate chain and key, ready for the TLS
/// handshake; `None` when the user has neither (a token, an exec plugin).
pub fn load(
    auth: &AuthInfo,
    user: &str,
    provider: &CryptoProvider,
) -> Result<Option<Arc<CertifiedKey>>, IdentityError> {
    let cert =
        source(auth.client_certificate_data.as_deref(), auth.client_certificate.as_deref(), "client-certificate");
    let key_data = auth.client_key_data.as_ref().map(|k| k.expose_secret());
    let key = source(key_data, auth.client_key.as_deref(), "client-key");
    let (cert, key) = match (cert, key) {
        (None, None) => return Ok(None),
        (Some(_), None) => {
            return Err(IdentityError::Half {
                user: user.to_owned(),
                given: "client-certificate",
                missing: "client-key",
            });
        }
        (None, Some(_)) => {
            return Err(IdentityError::Half {
                user: user.to_owned(),
                given: "client-key",
                missing: "client-certificate",
            });
        }
        (Some(cert), Some(key)) => (cert, key),
    };
    let unreadable = |field: &Source, message: String| IdentityError::Unreadable {
        user: user.to_owned(),
        field: field.name.clone(),
        message,
    };
    let cert_pem = cert.read().map_err(|m| unreadable(&cert, m))?;
    let key_pem = key.read().map_err(|m| unreadable(&key, m))?;
    let chain = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| unreadable(&cert, format!("not PEM: {e}")))?;
    let Some(leaf) = chain.first() else {
        return Err(unreadable(&cert, "holds no PEM certificate (-----BEGIN CERTIFICATE-----)".to_owned()));
    };
    let private_key =
        PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| unreadable(&key, key_problem(&key_pem, &e)))?;
    let signing_key = provider
        .key_provider
        .load_private_key(private_key)
        .map_err(|e| unreadable(&key, format!("the key cannot sign: {e}")))?;
    let (_, parsed) = x509_parser::parse_x509_certificate(leaf)
        .map_err(|e| unreadable(&cert, format!("not an X.509 certificate: {e}")))?;
    // A key rustls cannot describe (none of ring's) is left to the API
    // server's handshake, as rustls itself leaves it.
    if let Some(public) = signing_key.public_key() {
        if public.as_ref() != parsed.tbs_certificate.subject_pki.raw {
            return Err(IdentityError::Mismatch {
                user: user.to_owned(),
                key: key.name,
                cert: cert.name,
                version: parsed.tbs_certificate.version.0 + 1,
            });
        }
    }
    Ok(Some(Arc::new(CertifiedKey::new(chain, signing_key))))
}

/// Where a field's PEM comes from, and how messages name it.
struct Source {
    name: String,
    origin: Origin,
}

enum Origin {
    /// The `-data` field: base64 of the PEM.
    Data(String),
    /// A file.
    File(String),
}

/// The `-data` field wins over the file, as in kubectl.
fn source(data: Option<&str>, file: Option<&str>, field: &str) -> Option<Source> {
    match (data, file) {
        (Some(data), _) => Some(Source { name: format!("{field}-data"), origin: Origin::Data(data.to_owned()) }),
        (None, Some(file)) => Some(Source { name: format!("{field} {file}"), origin: Origin::File(file.to_owned()) }),
        (None, None) => None,
    }
}

impl Source {
    fn read(&self) -> Result<Vec<u8>, String> {
        match &self.origin {
            Origin::Data(data) => {
                // Line breaks in a long value are not part of it (Go's
                // decoder, kubectl's, skips them too).
                let data: String = data.split_whitespace().collect();
                base64::engine::general_purpose::STANDARD.decode(data).map_err(|e| format!("not base64: {e}"))
            }
            Origin::File(file) => std::fs::read(file).map_err(|e| e.to_string()),
        }
    }
}

/// Why no key was found, with what to do for an encrypted one.
fn key_problem(pem: &[u8], e: &pem::Error) -> String {
    let encrypted = [b"ENCRYPTED PRIVATE KEY".as_slice(), b"Proc-Type: 4,ENCRYPTED"]
        .iter()
        .any(|marker| pem.windows(marker.len()).any(|w| w == *marker));
    if encrypted {
        return "the key is encrypted, which kubectl does not read either: decrypt it (openssl pkey -in KEY -out PLAIN)"
            .to_owned();
    }
    if matches!(e, pem::Error::NoItemsFound) {
        return "holds no private key: PKCS#1 (-----BEGIN RSA PRIVATE KEY-----), PKCS#8 (-----BEGIN PRIVATE KEY-----) or SEC1 (-----BEGIN EC PRIVATE KEY-----)".to_owned();
    }
    format!("not PEM: {e}")
}
