//! A second mutating webhook, as a service mesh's sidecar injector is: it
//! adds a `mesh-proxy` container whose preStop sleeps 40 s to Deployments
//! that do not have it. Registered after lifeguard's configuration (its
//! name sorts later), it changes the object after lifeguard has fixed it,
//! so the API server has to call lifeguard again (`reinvocationPolicy:
//! IfNeeded`) for the stored object to be fixed: a 40 s sleep needs a
//! longer grace period than the default 30 s.
//!
//! HTTP/1.1 over TLS on loopback, one thread per connection: the API
//! server's webhook client speaks nothing else.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine as _;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::{Value, json};

use super::pki::Pair;

/// The container the injector adds.
pub const SIDECAR: &str = "mesh-proxy";

/// A running injector (its threads live as long as the test binary).
pub struct Injector {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Reviews answered so far.
    pub calls: Arc<AtomicUsize>,
}

impl Injector {
    /// Serves `pair` on a free loopback port.
    pub fn start(pair: &Pair) -> Injector {
        Injector::serve(pair, true)
    }

    /// The same server allowing everything and changing nothing: what any
    /// webhook costs the API server, to measure lifeguard against.
    pub fn no_op(pair: &Pair) -> Injector {
        Injector::serve(pair, false)
    }

    fn serve(pair: &Pair, inject: bool) -> Injector {
        let certs: Vec<CertificateDer<'static>> =
            CertificateDer::pem_slice_iter(pair.cert.as_bytes()).collect::<Result<_, _>>().expect("certificate PEM");
        let key = PrivateKeyDer::from_pem_slice(pair.key.as_bytes()).expect("key PEM");
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .expect("protocol versions")
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .expect("serving pair");
        let config = Arc::new(config);
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("address");
        let calls = Arc::new(AtomicUsize::new(0));
        let counter = calls.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let config = config.clone();
                let counter = counter.clone();
                std::thread::spawn(move || serve(stream, config, &counter, inject));
            }
        });
        Injector { addr, calls }
    }

    /// Its MutatingWebhookConfiguration: Deployments created in `namespace`.
    pub fn configuration(&self, namespace: &str, ca_pem: &str) -> Value {
        self.configuration_as("MutatingWebhookConfiguration", "zz-sidecar-injector", namespace, ca_pem)
    }

    /// A webhook configuration of `kind` named `name` calling it for
    /// Deployments created in `namespace`.
    pub fn configuration_as(&self, kind: &str, name: &str, namespace: &str, ca_pem: &str) -> Value {
        let mut configuration = json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": kind,
            "metadata": { "name": name },
            "webhooks": [{
                "name": format!("{name}.webhooks.test"),
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "failurePolicy": "Fail",
                "timeoutSeconds": 5,
                "reinvocationPolicy": "Never",
                "namespaceSelector": { "matchLabels": { "kubernetes.io/metadata.name": namespace } },
                "clientConfig": {
                    "url": format!("https://{}/inject", self.addr),
                    "caBundle": base64::engine::general_purpose::STANDARD.encode(ca_pem),
                },
                "rules": [{
                    "operations": ["CREATE"],
                    "apiGroups": ["apps"],
                    "apiVersions": ["v1"],
                    "resources": ["deployments"],
                    "scope": "Namespaced",
                }],
            }],
        });
        if kind == "ValidatingWebhookConfiguration" {
            configuration["webhooks"][0].as_object_mut().map(|w| w.remove("reinvocationPolicy"));
        }
        configuration
    }
}

fn serve(stream: TcpStream, config: Arc<rustls::ServerConfig>, calls: &AtomicUsize, inject: bool) {
    let Ok(connection) = rustls::ServerConnection::new(config) else { return };
    let mut reader = BufReader::new(rustls::StreamOwned::new(connection, stream));
    // Keep-alive: one request after another until the client hangs up.
    loop {
        let mut length = 0usize;
        let mut line = String::new();
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        calls.fetch_add(1, Ordering::SeqCst);
        let review: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let answer = answer(&review, inject).to_string();
        let response = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{answer}",
            answer.len()
        );
        let stream = reader.get_mut();
        if stream.write_all(response.as_bytes()).and_then(|()| stream.flush()).is_err() {
            return;
        }
    }
}

/// The AdmissionReview answer: the sidecar added unless it is there (or
/// `inject` is false).
fn answer(review: &Value, inject: bool) -> Value {
    let request = &review["request"];
    let containers = request["object"]["spec"]["template"]["spec"]["containers"].as_array();
    let injected = containers.is_some_and(|c| c.iter().any(|c| c["name"] == SIDECAR));
    let mut response = json!({ "uid": request["uid"], "allowed": true });
    if inject && !injected && containers.is_some() {
        let patch = json!([{
            "op": "add",
            "path": "/spec/template/spec/containers/-",
            "value": {
                "name": SIDECAR,
                "image": "registry.example/mesh-proxy:1.0",
                "lifecycle": { "preStop": { "sleep": { "seconds": 40 } } },
            },
        }]);
        response["patchType"] = json!("JSONPatch");
        response["patch"] = json!(base64::engine::general_purpose::STANDARD.encode(patch.to_string()));
    }
    json!({ "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response })
}
