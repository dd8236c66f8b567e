//! Choosing the policy: `--policy FILE|PACK`, else the first
//! `.lifeguard.yaml` from the current directory upward, else the `default`
//! pack. This module reads the file; the engine parses and validates it.

use std::path::{Path, PathBuf};

use policies::policy::packs::pack_names;
use policies::{Policy, PolicyError};
use thiserror::Error;

use crate::input::{Input, Limits, read_text};

/// The file name searched for from the current directory upward.
pub const DISCOVERED_NAME: &str = ".lifeguard.yaml";

/// Where the policy comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicySource {
    /// A policy file.
    File(PathBuf),
    /// A built-in pack.
    Pack(String),
    /// No `--policy` and no `.lifeguard.yaml`: the `default` pack.
    Default,
}

/// Why the policy could not be loaded.
#[derive(Debug, Error)]
pub enum PolicySourceError {
    /// The file could not be read.
    #[error("{file}: {message}")]
    Read {
        /// The file as given.
        file: String,
        /// Why.
        message: String,
    },
    /// The file (or pack) is not a valid policy.
    #[error("{0}")]
    Invalid(#[from] PolicyError),
}

impl PolicySource {
    /// The policy for a `--policy` value (an existing path wins over a pack
    /// of the same name), or the one discovered from `cwd` upward.
    pub fn choose(arg: Option<&str>, cwd: &Path) -> PolicySource {
        match arg {
            Some(value) => {
                let path = cwd.join(value);
                if !path.exists() && policies::policy::find_pack(value).is_some() {
                    PolicySource::Pack(value.to_owned())
                } else {
                    PolicySource::File(PathBuf::from(value))
                }
            }
            None => discover(cwd).map_or(PolicySource::Default, PolicySource::File),
        }
    }

    /// Reads, validates and compiles the policy: a complete policy or an error.
    pub fn load(&self) -> Result<Policy, PolicySourceError> {
        match self {
            PolicySource::Default => Ok(Policy::pack("default")?),
            PolicySource::Pack(name) => Ok(Policy::pack(name)?),
            PolicySource::File(path) => {
                let file = path.display().to_string();
                let text = read_text(&Input::File(path.clone()), &Limits::default()).map_err(|e| {
                    let message = if path.exists() {
                        e.to_string()
                    } else {
                        format!("{e} (and not a built-in pack: {})", pack_names())
                    };
                    PolicySourceError::Read { file: file.clone(), message }
                })?;
                Ok(Policy::load(&text, &file)?)
            }
        }
    }

    /// `pack gpu-serving`, `file ./.lifeguard.yaml`, `pack default (no policy file found)`.
    pub fn describe(&self) -> String {
        match self {
            PolicySource::File(p) => format!("file {}", p.display()),
            PolicySource::Pack(name) => format!("pack {name}"),
            PolicySource::Default => format!("pack default (no --policy and no {DISCOVERED_NAME} found)"),
        }
    }
}

/// The first `.lifeguard.yaml` in `start` or one of its parents.
pub fn discover(start: &Path) -> Option<PathBuf> {
    start.ancestors().map(|dir| dir.join(DISCOVERED_NAME)).find(|candidate| candidate.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_names_choose_packs_unless_a_file_exists() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(PolicySource::choose(Some("strict"), dir.path()), PolicySource::Pack("strict".into()));
        std::fs::write(dir.path().join("strict"), "").expect("write");
        assert_eq!(PolicySource::choose(Some("strict"), dir.path()), PolicySource::File("strict".into()));
        assert_eq!(PolicySource::choose(Some("nope.yaml"), dir.path()), PolicySource::File("nope.yaml".into()));
    }

    #[test]
    fn discovery_walks_up_to_the_nearest_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let deep = dir.path().join("a/b/c");
        std::fs::create_dir_all(&deep).expect("mkdir");
        assert_eq!(discover(&deep), None);
        std::fs::write(dir.path().join(DISCOVERED_NAME), "").expect("write");
        assert_eq!(discover(&deep), Some(dir.path().join(DISCOVERED_NAME)));
        std::fs::write(dir.path().join("a").join(DISCOVERED_NAME), "").expect("write");
        assert_eq!(discover(&deep), Some(dir.path().join("a").join(DISCOVERED_NAME)));
    }
}
