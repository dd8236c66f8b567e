//! A real Kubernetes control plane for the tests: etcd and kube-apiserver
//! (and kube-controller-manager when a test needs controllers) on loopback,
//! built from their Go modules by `.ci/install-control-plane.sh`; the real
//! `lifeguard-webhook` binary run as the chart's Deployment runs it; the
//! chart's own webhook configurations registered with the API server;
//! `kubectl` and `helm` as a user runs them.
//!
//! One control plane per test binary ([`ControlPlane::shared`]), started on
//! first use and stopped when the binary exits, however it exits. Without
//! the binaries (a fresh clone, no Go) the tests skip and say why;
//! `LIFEGUARD_NO_SKIP=1` makes that a failure, as in CI. The version
//! matrix starts control planes of older releases of its own
//! ([`ControlPlane::start_release`], [`release::Release`]).

pub mod chart;
pub mod control_plane;
pub mod dependency;
pub mod http;
pub mod image;
pub mod injector;
pub mod kept_logs;
pub mod kubectl;
pub mod network;
pub mod node;
pub mod pki;
pub mod pods;
pub mod process;
pub mod reapply;
pub mod release;
pub mod traffic;
pub mod webhook;
pub mod writes;

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::Value;

pub use control_plane::ControlPlane;
pub use kubectl::{Client, Run};

use crate::support::deployment;
use crate::support::webhook::Server;
use chart::{Rendered, changes, pointed_at};
use pki::Pair;

/// lifeguard installed in a control plane: the webhook process and the
/// chart's configurations pointing at it.
pub struct Installation {
    /// The webhook the configurations call.
    pub webhook: Server,
    /// What the chart rendered.
    pub rendered: Rendered,
    /// The configurations as registered (pointed at the webhook).
    pub registered: Vec<Value>,
}

impl Installation {
    /// Renders the chart with `set`, starts the webhook as its Deployment
    /// would, registers its webhook configurations pointed at that process,
    /// and waits until the API server calls it.
    pub fn install(plane: &ControlPlane, set: &[&str]) -> Option<Installation> {
        Installation::install_serving(plane, set, &webhook::serving_pair(&plane.pki.ca), &plane.pki.ca.pem)
    }

    /// [`Installation::install`] with the webhook serving `pair` and the
    /// configurations' `caBundle` set to `bundle` (PEM, one CA or several).
    pub fn install_serving(plane: &ControlPlane, set: &[&str], pair: &Pair, bundle: &str) -> Option<Installation> {
        let binary = webhook::binary()?;
        let helm = plane.helm()?;
        let rendered = Rendered::render(&helm, &plane.kubectl, set);
        let webhook = webhook::start(&binary, &rendered, pair);
        let registered: Vec<Value> =
            rendered.webhook_configurations().iter().map(|c| pointed_at(c, &webhook.url(""), bundle)).collect();
        let installation = Installation { webhook, rendered, registered };
        installation.register(plane);
        Some(installation)
    }

    /// Applies the configurations and waits until the API server sends the
    /// webhook a review (the configuration informer lags a write).
    pub fn register(&self, plane: &ControlPlane) {
        for configuration in &self.registered {
            plane.kubectl.apply(configuration);
        }
        let before = self.webhook.reviews().len();
        let probe = "lifeguard-registration-probe";
        if plane.kubectl.get("", "namespace", probe).is_none() {
            plane.kubectl.namespace(probe, &["lifeguard.dev/mode=audit"]);
        }
        let object = deployment::naive_gpu("probe").to_string();
        process::wait_for("the API server calling the webhook", Duration::from_secs(30), || {
            let run = plane
                .kubectl
                .run_with_input(&["create", "--dry-run=server", "-n", probe, "-o", "name", "-f", "-"], Some(&object));
            if self.webhook.reviews().len() > before { Ok(()) } else { Err(format!("{}{}", run.stdout, run.stderr)) }
        });
    }

    /// Deletes the configurations.
    pub fn unregister(&self, plane: &ControlPlane) {
        for configuration in &self.registered {
            let kind = configuration["kind"].as_str().unwrap_or_default();
            let name = configuration["metadata"]["name"].as_str().unwrap_or_default();
            plane.kubectl.run(&["delete", kind, name, "--ignore-not-found"]).ok();
        }
    }

    /// Every difference between the chart's configurations and what the API
    /// server stores, besides `clientConfig` (see [`chart::changes`]).
    pub fn stored_changes(&self, plane: &ControlPlane) -> Vec<String> {
        let mut out = Vec::new();
        for rendered in self.rendered.webhook_configurations() {
            let kind = rendered["kind"].as_str().unwrap_or_default();
            let name = rendered["metadata"]["name"].as_str().unwrap_or_default();
            let stored = plane.kubectl.run(&["get", kind, name, "-o", "json"]).json();
            out.extend(changes(&rendered, &stored).into_iter().map(|c| format!("{kind}/{name}{c}")));
        }
        out
    }
}

/// A plain HTTP/1.1 GET on loopback: (status, body), status 0 and why
/// when there was no response.
pub fn http_get(addr: SocketAddr, path: &str) -> (u16, String) {
    match http::get(addr, path, Duration::from_secs(5)) {
        Ok(response) => (response.status, response.body),
        Err(e) => (0, e),
    }
}
