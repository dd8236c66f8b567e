//! A validated, ready-to-use policy: settings plus their compiled forms.
//!
//! Building a [`Policy`] either yields a complete policy or an error, never a
//! half-applied one, so a server can keep its old policy on a bad reload.

use globset::{Glob, GlobSet, GlobSetBuilder};
use regex::RegexSet;
use thiserror::Error;

use crate::settings::Settings;

/// Why a policy could not be built.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PolicyError {
    /// A regular expression in a list setting does not compile.
    #[error("{key}: invalid regex {pattern:?}: {reason}")]
    Regex {
        key: &'static str,
        pattern: String,
        reason: String,
    },
    /// A glob in a list setting does not compile.
    #[error("{key}: invalid glob {pattern:?}: {reason}")]
    Glob {
        key: &'static str,
        pattern: String,
        reason: String,
    },
    /// A number outside its allowed range.
    #[error("{key}: {reason}")]
    Value { key: &'static str, reason: String },
}

/// A validated policy the rules read.
#[derive(Debug, Clone)]
pub struct Policy {
    /// The raw values, as given.
    pub settings: Settings,
    pub(crate) dependency_paths: RegexSet,
    pub(crate) slow_boot_images: RegexSet,
    pub(crate) database_images: RegexSet,
    pub(crate) drain_env: GlobSet,
    pub(crate) shutdown_env: GlobSet,
}

impl Default for Policy {
    fn default() -> Self {
        // The defaults are covered by a unit test, so this cannot fail in practice;
        // an empty policy would still be safe (rules just match nothing).
        Policy::new(Settings::default()).unwrap_or_else(|_| Policy::empty(Settings::default()))
    }
}

impl Policy {
    /// Validates and compiles settings.
    pub fn new(settings: Settings) -> Result<Policy, PolicyError> {
        positive("coldStartMarginPercent", settings.cold_start_margin_percent, true)?;
        positive("startupPeriodSeconds", settings.startup_period_seconds, false)?;
        positive("gpuBootSeconds", settings.gpu_boot_seconds, false)?;
        positive(
            "slowBootInitialDelaySeconds",
            settings.slow_boot_initial_delay_seconds,
            false,
        )?;
        positive("minLivenessBudgetSeconds", settings.min_liveness_budget_seconds, true)?;
        positive(
            "minLivenessTimeoutSeconds",
            settings.min_liveness_timeout_seconds,
            false,
        )?;
        positive(
            "minLivenessFailureThreshold",
            settings.min_liveness_failure_threshold,
            false,
        )?;
        positive(
            "prestopMinRemainingSeconds",
            settings.prestop_min_remaining_seconds,
            true,
        )?;
        positive("prestopBridgeSeconds", settings.prestop_bridge_seconds, false)?;
        Ok(Policy {
            dependency_paths: regex_set("dependencyPaths", &settings.dependency_paths)?,
            slow_boot_images: regex_set("slowBootImages", &settings.slow_boot_images)?,
            database_images: regex_set("databaseImages", &settings.database_images)?,
            drain_env: glob_set("drainEnvPatterns", &settings.drain_env_patterns)?,
            shutdown_env: glob_set("shutdownEnvPatterns", &settings.shutdown_env_patterns)?,
            settings,
        })
    }

    fn empty(settings: Settings) -> Policy {
        Policy {
            settings,
            dependency_paths: RegexSet::empty(),
            slow_boot_images: RegexSet::empty(),
            database_images: RegexSet::empty(),
            drain_env: GlobSet::empty(),
            shutdown_env: GlobSet::empty(),
        }
    }

    /// Whether an HTTP path is known to aggregate dependencies or readiness.
    pub fn is_dependency_path(&self, path: &str) -> bool {
        self.dependency_paths.is_match(path)
    }

    /// Whether an image is a known slow booter.
    pub fn is_slow_boot_image(&self, image: &str) -> bool {
        self.slow_boot_images.is_match(image)
    }

    /// Whether an image is a database, cache or queue server.
    pub fn is_database_image(&self, image: &str) -> bool {
        self.database_images.is_match(image)
    }

    /// Whether an env var name holds a drain time.
    pub fn is_drain_env(&self, name: &str) -> bool {
        self.drain_env.is_match(name)
    }

    /// Whether an env var name holds a shutdown budget.
    pub fn is_shutdown_env(&self, name: &str) -> bool {
        self.shutdown_env.is_match(name)
    }
}

fn positive(key: &'static str, value: i64, zero_ok: bool) -> Result<(), PolicyError> {
    if value < 0 || (!zero_ok && value == 0) {
        let want = if zero_ok { "zero or more" } else { "at least 1" };
        return Err(PolicyError::Value {
            key,
            reason: format!("must be {want}, got {value}"),
        });
    }
    Ok(())
}

fn regex_set(key: &'static str, patterns: &[String]) -> Result<RegexSet, PolicyError> {
    for p in patterns {
        regex::Regex::new(p).map_err(|e| PolicyError::Regex {
            key,
            pattern: p.clone(),
            reason: e.to_string(),
        })?;
    }
    RegexSet::new(patterns).map_err(|e| PolicyError::Regex {
        key,
        pattern: patterns.join(", "),
        reason: e.to_string(),
    })
}

fn glob_set(key: &'static str, patterns: &[String]) -> Result<GlobSet, PolicyError> {
    let mut builder = GlobSetBuilder::new();
    for p in patterns {
        let glob = Glob::new(p).map_err(|e| PolicyError::Glob {
            key,
            pattern: p.clone(),
            reason: e.to_string(),
        })?;
        builder.add(glob);
    }
    builder.build().map_err(|e| PolicyError::Glob {
        key,
        pattern: patterns.join(", "),
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_settings_compile() {
        assert!(Policy::new(Settings::default()).is_ok());
    }

    #[test]
    fn bad_regex_names_the_key() {
        let settings = Settings {
            dependency_paths: vec!["(".into()],
            ..Settings::default()
        };
        let err = Policy::new(settings).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.starts_with("dependencyPaths: invalid regex \"(\""), "{err}");
    }

    #[test]
    fn env_globs_match_suffixes() {
        let p = Policy::default();
        assert!(p.is_drain_env("AISUITE_DRAIN_SECONDS"));
        assert!(p.is_shutdown_env("APP_SHUTDOWN_TIMEOUT_SECONDS"));
        assert!(!p.is_drain_env("DRAIN_SECONDS_X"));
    }
}
