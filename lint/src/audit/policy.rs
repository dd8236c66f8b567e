//! The audit's policy: a file or pack as for `lint` (or the nearest
//! `.lifeguard.yaml` from the current directory), or the policy the
//! webhook's ConfigMap holds in the cluster (`configmap:NAMESPACE/NAME`).

use policies::Policy;

use super::fetch::Fetcher;
use crate::policy_source::PolicySource;

/// The prefix of a policy read from a ConfigMap.
pub const CONFIGMAP: &str = "configmap:";
/// The ConfigMap key the chart writes the policy under.
pub const KEY: &str = "policy.yaml";

/// A policy loaded for the audit, and how the summary names it.
pub type Loaded = (Policy, String);

/// Loads the policy `--policy` names; `Err` is a usage error to print.
pub async fn load(arg: Option<&str>, fetcher: &Fetcher) -> Result<Loaded, String> {
    match arg.and_then(|a| a.strip_prefix(CONFIGMAP)) {
        Some(reference) => from_configmap(reference, fetcher).await,
        None => {
            let cwd = std::env::current_dir().unwrap_or_default();
            let source = PolicySource::choose(arg, &cwd);
            let policy = source.load().map_err(|e| e.to_string())?;
            let name = match &source {
                PolicySource::File(p) => format!("policy {}", p.display()),
                PolicySource::Pack(name) => format!("policy pack {name}"),
                PolicySource::Default => "policy pack default".to_owned(),
            };
            Ok((policy, name))
        }
    }
}

async fn from_configmap(reference: &str, fetcher: &Fetcher) -> Result<Loaded, String> {
    let name = format!("{CONFIGMAP}{reference}");
    let Some((namespace, configmap)) = reference.split_once('/').filter(|(ns, n)| !ns.is_empty() && !n.is_empty())
    else {
        return Err(format!("--policy {name:?}: give the ConfigMap as configmap:NAMESPACE/NAME"));
    };
    let path = format!("/api/v1/namespaces/{namespace}/configmaps/{configmap}");
    let object = fetcher
        .get(&path, &format!("get configmap {configmap} in namespace {namespace}"), "get")
        .await
        .map_err(|e| format!("--policy {name}: {e}"))?;
    let Some(text) = object.pointer(&format!("/data/{KEY}")).and_then(serde_json::Value::as_str) else {
        return Err(format!("--policy {name}: the ConfigMap has no `{KEY}` key (the chart writes the policy there)"));
    };
    let policy = Policy::load(text, &name).map_err(|e| e.to_string())?;
    Ok((policy, format!("policy {name}")))
}
