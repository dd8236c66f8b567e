//! Credentials as kubectl finds them: `--kubeconfig`, else `KUBECONFIG`
//! (merged), else `~/.kube/config`, with `--context`; else the pod's service
//! account when run in a cluster. The client is built by
//! [`super::transport`].

use std::path::Path;
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

use super::connect_error::ConnectError;
use super::transport::{self, Names};

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
    let (config, context) = match kubeconfig {
        Some(path) => {
            let file = path.display().to_string();
            let kc = Kubeconfig::read_from(path)
                .map_err(|e| ConnectError::Kubeconfig { file: file.clone(), message: e.to_string() })?;
            from_kubeconfig(kc, file, &options).await?
        }
        None => from_environment(&options).await?,
    };
    let (describe, names) = match context {
        Some(context) => (
            format!("context {} ({})", context.name, config.cluster_url),
            Names {
                cluster: format!("kubeconfig cluster {:?} ({})", context.cluster, config.cluster_url),
                user: context.user,
            },
        ),
        None => (
            format!("in-cluster ({})", config.cluster_url),
            Names { cluster: format!("the in-cluster API server ({})", config.cluster_url), user: None },
        ),
    };
    let client = transport::client(bounded(config, timeout), &names)?;
    Ok(Connected { client, describe })
}

/// The context a kubeconfig's client uses, by its names.
struct Context {
    name: String,
    cluster: String,
    user: Option<String>,
}

/// The config `kc` gives for `options`' context (else its current one), and
/// that context's names.
async fn from_kubeconfig(
    kc: Kubeconfig,
    file: String,
    options: &KubeConfigOptions,
) -> Result<(Config, Option<Context>), ConnectError> {
    let name = options.context.clone().or_else(|| kc.current_context.clone());
    let context = name.map(|name| {
        let named = kc.contexts.iter().find(|c| c.name == name).and_then(|c| c.context.as_ref());
        Context {
            cluster: named.map(|c| c.cluster.clone()).unwrap_or_default(),
            user: named.and_then(|c| c.user.clone()),
            name,
        }
    });
    let config = Config::from_custom_kubeconfig(kc, options)
        .await
        .map_err(|e| ConnectError::Kubeconfig { file, message: e.to_string() })?;
    Ok((config, context))
}

async fn from_environment(options: &KubeConfigOptions) -> Result<(Config, Option<Context>), ConnectError> {
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
        return from_kubeconfig(kc, file, options).await;
    }
    if std::env::var_os("KUBERNETES_SERVICE_HOST").is_none() {
        let home = home.map_or("~/.kube/config".to_owned(), |h| h.display().to_string());
        return Err(ConnectError::Nothing(home));
    }
    if let Some(context) = &options.context {
        return Err(ConnectError::ContextInCluster(context.clone()));
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
