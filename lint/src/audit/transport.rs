//! The client's TLS and HTTP stack, built from kube's own parts: kube's
//! rustls configuration (the CA bundle, `insecure-skip-tls-verify`, the
//! platform's roots without a CA, the in-cluster CA that is re-read), its
//! server name, timeouts, base URI, credentials and headers, as
//! `kube::Client::try_from` assembles them. Two things differ: the client
//! certificate is loaded by [`super::identity`] (kube's loader refuses an
//! X.509 v1 certificate kubectl accepts), and a certificate refusal names
//! the kubeconfig cluster and is not retried.

use std::sync::Arc;

use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use kube::client::ConfigExt as _;
use kube::{Client, Config};
use rustls::CertificateError;
use rustls::sign::SingleCertAndKey;
use thiserror::Error;
use tower::{BoxError, ServiceBuilder, ServiceExt as _};

use super::connect_error::ConnectError;
use super::identity;

/// The API server's certificate was refused during the handshake: retrying
/// cannot help, and the message says what to change.
#[derive(Debug, Error)]
#[error("{0}")]
pub struct RefusedCertificate(pub String);

/// The kubeconfig's names for what the client talks to, for messages.
pub struct Names {
    /// `kubeconfig cluster "prod" (https://...)`, or the in-cluster server.
    pub cluster: String,
    /// The kubeconfig user, when there is one.
    pub user: Option<String>,
}

/// A client for `config`, as kube builds one but for the two differences
/// above.
pub fn client(config: Config, names: &Names) -> Result<Client, ConnectError> {
    if let Some(proxy) = &config.proxy_url {
        // kube reads `proxy-url` and `HTTPS_PROXY` but, built without its
        // proxy features, refuses them; so does this stack, saying which.
        return Err(ConnectError::Client(format!(
            "{}: proxy {proxy} (proxy-url or HTTPS_PROXY): lifeguard audit connects to the API server directly; unset it",
            names.cluster
        )));
    }
    let client_error = |e: kube::Error| ConnectError::Client(e.to_string());
    // kube's TLS configuration for everything but the client certificate.
    let mut anonymous = config.clone();
    anonymous.auth_info.client_certificate = None;
    anonymous.auth_info.client_certificate_data = None;
    anonymous.auth_info.client_key = None;
    anonymous.auth_info.client_key_data = None;
    let mut tls = anonymous.rustls_client_config().map_err(client_error)?;
    let user = names.user.as_deref().unwrap_or("(none)");
    if let Some(identity) = identity::load(&config.auth_info, user, tls.crypto_provider())? {
        tls.client_auth_cert_resolver = Arc::new(SingleCertAndKey::from(identity));
    }

    let mut http = HttpConnector::new();
    http.enforce_http(false);
    let mut https = hyper_rustls::HttpsConnectorBuilder::new().with_tls_config(tls).https_or_http();
    if let Some(name) = &config.tls_server_name {
        let name = rustls::pki_types::ServerName::try_from(name.clone())
            .map_err(|e| ConnectError::Client(format!("{}: tls-server-name {name:?}: {e}", names.cluster)))?;
        https = https.with_server_name_resolver(hyper_rustls::FixedServerNameResolver::new(name));
    }
    let cluster: Arc<str> = Arc::from(names.cluster.as_str());
    let https = https.enable_http1().wrap_connector(http).map_err(move |e: BoxError| explain(e, &cluster));
    let mut connector = hyper_timeout::TimeoutConnector::new(https);
    connector.set_connect_timeout(config.connect_timeout);
    connector.set_read_timeout(config.read_timeout);
    connector.set_write_timeout(config.write_timeout);
    connector.set_reset_reader_on_write(config.reset_reader_on_write);
    let http_client: hyper_util::client::legacy::Client<_, kube::client::Body> =
        hyper_util::client::legacy::Builder::new(TokioExecutor::new()).build(connector);
    let service = ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(config.auth_layer().map_err(client_error)?)
        .layer(config.extra_headers_layer().map_err(client_error)?)
        .map_err(BoxError::from)
        .service(http_client);
    Ok(Client::new(service, config.default_namespace))
}

/// A connection error, or the certificate refusal it hides, said plainly.
fn explain(e: BoxError, cluster: &str) -> BoxError {
    let Some(refused) = certificate_error(&*e) else { return e };
    let message = match refused {
        CertificateError::Other(other)
            if matches!(other.0.downcast_ref::<webpki::Error>(), Some(webpki::Error::UnsupportedCertVersion)) =>
        {
            format!(
                "the API server's certificate for {cluster}, or an intermediate it sends, is not X.509 v3 (v1 is what \
                 `openssl x509 -req` makes without an extensions file); rustls verifies only v3 certificates from a \
                 server (a v1 CA in certificate-authority is fine) and kubectl refuses a v1 serving certificate too, \
                 as it has no subjectAltName: re-issue the API server's certificate with v3 extensions \
                 (subjectAltName with its names and addresses, extendedKeyUsage serverAuth)"
            )
        }
        other => format!("the API server's certificate for {cluster} was refused: {other}"),
    };
    Box::new(RefusedCertificate(message))
}

/// The rustls certificate error somewhere in `e`'s chain: hyper-rustls
/// wraps tokio-rustls's `io::Error`, which wraps rustls's error, in an
/// `io::Error` of its own, and an `io::Error`'s `source` skips what it wraps.
fn certificate_error<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a CertificateError> {
    if let Some(rustls::Error::InvalidCertificate(refused)) = e.downcast_ref::<rustls::Error>() {
        return Some(refused);
    }
    let wrapped = e.downcast_ref::<std::io::Error>().and_then(std::io::Error::get_ref);
    if let Some(refused) = wrapped.and_then(|inner| certificate_error(inner)) {
        return Some(refused);
    }
    e.source().and_then(certificate_error)
}
