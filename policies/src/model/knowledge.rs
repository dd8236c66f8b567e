//! What the model reads of the policy in force: its settings and the
//! matchers it compiled from them (`slowBootImages`, `dependencyPaths`,
//! the drain env names, ...). The policy hands itself down as this trait,
//! so the model, the ground floor, never names the policy above it.

use crate::settings::Settings;

/// The policy's settings and compiled matchers, as the model reads them.
pub trait Knowledge {
    /// The rule parameters.
    fn settings(&self) -> &Settings;
    /// Whether an HTTP path is known to aggregate dependency checks.
    fn is_dependency_path(&self, path: &str) -> bool;
    /// Whether an HTTP path is a readiness endpoint by its name.
    fn is_readiness_path(&self, path: &str) -> bool;
    /// Whether an image is a known slow booter (`slowBootImages`).
    fn is_slow_boot_image(&self, image: &str) -> bool;
    /// Whether an HTTP path reports the process itself (`localHealthPaths`).
    fn is_local_health_path(&self, path: &str) -> bool;
    /// Whether an image's health handler reports the process itself (`localHealthImages`).
    fn is_local_health_image(&self, image: &str) -> bool;
    /// Whether an image is a database, cache or queue server.
    fn is_database_image(&self, image: &str) -> bool;
    /// Whether an env var name holds a drain time.
    fn is_drain_env(&self, name: &str) -> bool;
    /// Whether an env var name holds a shutdown budget.
    fn is_shutdown_env(&self, name: &str) -> bool;
}
