//! Why no client could be made: what [`super::connect`] and
//! [`super::transport`] both answer with.

use thiserror::Error;

use super::identity::IdentityError;

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
    /// The user's client certificate or key cannot be used.
    #[error(transparent)]
    Identity(#[from] IdentityError),
    /// The client could not be built (TLS settings, say).
    #[error("{0}")]
    Client(String),
}
