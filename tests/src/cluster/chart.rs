//! The chart as `helm template` renders it, read back as JSON by `kubectl`,
//! and its webhook configurations pointed at a webhook on loopback.
//!
//! kube-apiserver cannot reach a Service without a kubelet and a proxy, so
//! the one change the tests make to the chart's configurations is
//! `clientConfig.service` -> `clientConfig.url` (same path) and the
//! `caBundle` cert-manager's CA injector would set; [`changes`] lists every
//! difference between what the chart renders and what the API server
//! stores, so a test can assert there is no other.

use serde_json::{Value, json};

use super::kubectl::Client;
use crate::repo_root;

/// The chart's path in the repository.
pub const CHART: &str = "deploy/helm/lifeguard";
/// The release name and namespace the tests install as (the README's).
pub const RELEASE: &str = "lifeguard";

/// The chart's objects, rendered.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// Every object `helm template` printed, as JSON.
    pub objects: Vec<Value>,
}

impl Rendered {
    /// `helm template lifeguard deploy/helm/lifeguard --namespace lifeguard`
    /// with `set` (`--set` values), read back as JSON by `kubectl create
    /// --dry-run=client -o json` (which needs the API server for discovery).
    pub fn render(helm: &Client, kubectl: &Client, set: &[&str]) -> Rendered {
        let chart = repo_root().join(CHART);
        let chart = chart.to_string_lossy();
        let mut args = vec!["template", RELEASE, &*chart, "--namespace", RELEASE];
        for value in set {
            args.extend(["--set", value]);
        }
        let yaml = helm.run(&args);
        let read = kubectl.run_with_input(&["create", "--dry-run=client", "-o", "json", "-f", "-"], Some(yaml.ok()));
        // One JSON document per object, one after another.
        let mut objects = Vec::new();
        for value in serde_json::Deserializer::from_str(read.ok()).into_iter::<Value>() {
            let value = value.unwrap_or_else(|e| panic!("{}: not a JSON stream ({e})", read.command));
            match value["kind"].as_str() {
                Some("List") => objects.extend(value["items"].as_array().cloned().unwrap_or_default()),
                _ => objects.push(value),
            }
        }
        Rendered { objects }
    }

    /// The object of `kind` (the first, or the one named `name`).
    pub fn find(&self, kind: &str, name: Option<&str>) -> Option<&Value> {
        self.objects.iter().find(|o| o["kind"] == kind && name.is_none_or(|n| o["metadata"]["name"] == n))
    }

    /// The validating and mutating webhook configurations.
    pub fn webhook_configurations(&self) -> Vec<Value> {
        self.objects
            .iter()
            .filter(|o| {
                matches!(o["kind"].as_str(), Some("ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration"))
            })
            .cloned()
            .collect()
    }
}

/// `configuration` with each webhook's `clientConfig.service` replaced by
/// `clientConfig.url` = `base` + the service's path, and `caBundle` set.
pub fn pointed_at(configuration: &Value, base: &str, ca_pem: &str) -> Value {
    use base64::Engine as _;
    let bundle = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let mut configuration = configuration.clone();
    if let Some(webhooks) = configuration["webhooks"].as_array_mut() {
        for webhook in webhooks {
            let path = webhook["clientConfig"]["service"]["path"].as_str().unwrap_or("/").to_owned();
            webhook["clientConfig"] = json!({ "url": format!("{base}{path}"), "caBundle": bundle });
        }
    }
    configuration
}

/// Every difference between `rendered` and `stored`, as `pointer: what`,
/// ignoring what the API server adds (defaults and metadata it owns) and
/// what [`pointed_at`] changed in `clientConfig`. Empty when what is stored
/// is the chart's own configuration.
pub fn changes(rendered: &Value, stored: &Value) -> Vec<String> {
    let mut out = Vec::new();
    diff("", rendered, stored, &mut out);
    out
}

fn diff(pointer: &str, rendered: &Value, stored: &Value, out: &mut Vec<String>) {
    if pointer.ends_with("/clientConfig") {
        return;
    }
    match (rendered, stored) {
        (Value::Object(r), Value::Object(s)) => {
            for (key, value) in r {
                let here = format!("{pointer}/{key}");
                match s.get(key) {
                    Some(stored) => diff(&here, value, stored, out),
                    None if value.is_null() => {}
                    None => out.push(format!("{here}: rendered {value}, not stored")),
                }
            }
        }
        (Value::Array(r), Value::Array(s)) if r.len() == s.len() => {
            for (i, (r, s)) in r.iter().zip(s).enumerate() {
                diff(&format!("{pointer}/{i}"), r, s, out);
            }
        }
        (r, s) if r == s => {}
        (r, s) => out.push(format!("{pointer}: rendered {r}, stored {s}")),
    }
}
