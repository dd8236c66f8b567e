//! Credentials as kubectl finds them: `--kubeconfig`, else `KUBECONFIG`
//! (merged), else `~/.kube/config`, with `--context`; else the pod's service
//! account when run in a cluster.

use std::path::Path;
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use thiserror::Error;

/// Why no client could be made.
#[derive(Debug, Error)]
pub enum ConnectError {
    /// A kubeconfig that could not be read or used.
    #[error("kubeconfig {file}: {message}")]
    Kubeconfig {
        /// The file (or `KUBECONFIG`'s list).
        file: String,
        /// Why.
        message: String,
    },
    /// No kubeconfig, and not in a pod.
    #[error(
        "no kubeconfig: --kubeconfig is not given, KUBECONFIG is not set, {0} does not exist, and this is not a pod with a service account (KUBERNETES_SERVICE_HOST is unset)"
    )]
    Nothing(String),
    /// In a pod, but its service account cannot be read.
    #[error("the pod's service account: {0}")]
    InCluster(String),
    /// `--context` without a kubeconfig.
    #[error("--context {0:?} needs a kubeconfig; in a pod the service account has no contexts")]
    ContextInCluster(String),
    /// The client could not be built (TLS settings, say).
    #[error("{0}")]
    Client(String),
}

/// A client and how the report names what it talks to.
pub struct Connected {
    /// The client, with the request timeout set and kube's own retries off
    /// (the fetcher retries, with its own bounds).
    pub client: Client,
    /// `context kind-prod (https://127.0.0.1:6443)` or `in-cluster (https://10.0.0.1)`.
    pub describe: String,
}

/// Connects as kubectl would, each request bounded by `timeout`.
pub async fn connect(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
    timeout: Duration,
) -> Result<Connected, ConnectError> {
    let options = KubeConfigOptions { context: context.map(str::to_owned), ..KubeConfigOptions::default() };
    let (config, name) = match kubeconfig {
        Some(path) => {
            let file = path.display().to_string();
            let kc = Kubeconfig::read_from(path)
                .map_err(|e| ConnectError::Kubeconfig { file: file.clone(), message: e.to_string() })?;
            let name = context.map(str::to_owned).or_else(|| kc.current_context.clone());
            let config = Config::from_custom_kubeconfig(kc, &options)
                .await
                .map_err(|e| ConnectError::Kubeconfig { file, message: e.to_string() })?;
            (config, name.map(|c| format!("context {c}")))
        }
        None => from_environment(context, &options).await?,
    };
    let describe = match name {
        Some(name) => format!("{name} ({})", config.cluster_url),
        None => format!("in-cluster ({})", config.cluster_url),
    };
    let client = Client::try_from(bounded(config, timeout)).map_err(|e| ConnectError::Client(e.to_string()))?;
    Ok(Connected { client, describe })
}

async fn from_environment(
    context: Option<&str>,
    options: &KubeConfigOptions,
) -> Result<(Config, Option<String>), ConnectError> {
    let from_env = std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty());
    let home = std::env::var_os("HOME").map(|h| Path::new(&h).join(".kube").join("config"));
    let file = match (&from_env, &home) {
        (Some(list), _) => Some(format!("{} (KUBECONFIG)", list.to_string_lossy())),
        (None, Some(home)) if home.exists() => Some(home.display().to_string()),
        _ => None,
    };
    if let Some(file) = file {
        let kc =
            Kubeconfig::read().map_err(|e| ConnectError::Kubeconfig { file: file.clone(), message: e.to_string() })?;
        let name = context.map(str::to_owned).or_else(|| kc.current_context.clone());
        let config = Config::from_custom_kubeconfig(kc, options)
            .await
            .map_err(|e| ConnectError::Kubeconfig { file, message: e.to_string() })?;
        return Ok((config, name.map(|c| format!("context {c}"))));
    }
    if std::env::var_os("KUBERNETES_SERVICE_HOST").is_none() {
        let home = home.map_or("~/.kube/config".to_owned(), |h| h.display().to_string());
        return Err(ConnectError::Nothing(home));
    }
    if let Some(context) = context {
        return Err(ConnectError::ContextInCluster(context.to_owned()));
    }
    let config = Config::incluster().map_err(|e| ConnectError::InCluster(e.to_string()))?;
    Ok((config, None))
}

/// Every request ends within `timeout` of being sent: a connection the API
/// server stops answering on is not waited on forever.
fn bounded(mut config: Config, timeout: Duration) -> Config {
    config.connect_timeout = Some(timeout.min(Duration::from_secs(10)));
    config.read_timeout = Some(timeout);
    config.write_timeout = Some(timeout);
    // The timeout counts from the request, not from when a pooled
    // connection went idle.
    config.reset_reader_on_write = true;
    config.default_retry = false;
    config
}
