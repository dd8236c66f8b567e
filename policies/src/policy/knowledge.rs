//! The policy handed down to the model as [`Knowledge`]: the model reads
//! the settings and the compiled matchers through the trait, and never
//! names the policy above it.

use super::compiled::Policy;
use crate::model::Knowledge;
use crate::settings::Settings;

/// The model reads the policy through this: the policy sits above it.
impl Knowledge for Policy {
    fn settings(&self) -> &Settings {
        &self.settings
    }
    fn is_dependency_path(&self, path: &str) -> bool {
        Policy::is_dependency_path(self, path)
    }
    fn is_readiness_path(&self, path: &str) -> bool {
        Policy::is_readiness_path(self, path)
    }
    fn is_slow_boot_image(&self, image: &str) -> bool {
        Policy::is_slow_boot_image(self, image)
    }
    fn is_local_health_path(&self, path: &str) -> bool {
        Policy::is_local_health_path(self, path)
    }
    fn is_local_health_image(&self, image: &str) -> bool {
        Policy::is_local_health_image(self, image)
    }
    fn is_database_image(&self, image: &str) -> bool {
        Policy::is_database_image(self, image)
    }
    fn is_drain_env(&self, name: &str) -> bool {
        Policy::is_drain_env(self, name)
    }
    fn is_shutdown_env(&self, name: &str) -> bool {
        Policy::is_shutdown_env(self, name)
    }
}
