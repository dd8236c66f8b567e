//! Choosing a policy: `--policy FILE|PACK`, else the nearest
//! `.lifeguard.yaml` (or `.lifeguard.yml`) from a directory upward, else the
//! `default` pack. `lint` and `fix` choose one per file
//! ([`crate::policy_discovery`]). This module reads the file; the engine
//! parses and validates it.

use std::path::{Path, PathBuf};

use policies::policy::PACKS;
use policies::policy::packs::pack_names;
use policies::{Policy, PolicyError};
use thiserror::Error;

use crate::input::{Input, Limits, read_text};
use crate::options::did_you_mean;

/// The file name searched for from the current directory upward.
pub const DISCOVERED_NAME: &str = ".lifeguard.yaml";

/// Where the policy comes from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
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
        self.load_in(Path::new(""))
    }

    /// [`PolicySource::load`] with a relative file read from `cwd` (and
    /// named as given in messages).
    pub fn load_in(&self, cwd: &Path) -> Result<Policy, PolicySourceError> {
        match self {
            PolicySource::Default => Ok(Policy::pack("default")?),
            PolicySource::Pack(name) => Ok(Policy::pack(name)?),
            PolicySource::File(path) => {
                let file = path.display().to_string();
                let text = read_text(&Input::File(cwd.join(path)), &Limits::default()).map_err(|e| {
                    let message = if cwd.join(path).exists() {
                        e.to_string()
                    } else {
                        let meant = pack_meant(path).map_or(String::new(), |p| format!("; did you mean {p:?}?"));
                        format!("{e} (and not a built-in pack: {}){meant}", pack_names())
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
            PolicySource::Default => {
                format!("pack default (no --policy and no {DISCOVERED_NAME} or {DISCOVERED_ALT_NAME} found)")
            }
        }
    }
}

/// The pack a `--policy` value that names neither a file nor a pack was
/// probably meant to be. Only a bare word: a path or a file name is no
/// mistyped pack, however close its letters.
fn pack_meant(value: &Path) -> Option<&'static str> {
    let word = value.to_str().filter(|w| !w.contains(['/', '\\', '.']))?;
    did_you_mean(word, PACKS.iter().map(|p| p.name))
}

/// The other spelling searched for, after [`DISCOVERED_NAME`] in each directory.
pub const DISCOVERED_ALT_NAME: &str = ".lifeguard.yml";

/// The nearest `.lifeguard.yaml` (or `.lifeguard.yml`) in `start` or one of
/// its parents, up to the repository root (the directory holding `.git`):
/// a policy outside the repository is not the repository's.
pub fn discover(start: &Path) -> Option<PathBuf> {
    for dir in start.ancestors() {
        let found = [DISCOVERED_NAME, DISCOVERED_ALT_NAME].iter().map(|n| dir.join(n)).find(|c| c.is_file());
        if found.is_some() {
            return found;
        }
        if dir.join(".git").exists() {
            return None;
        }
    }
    None
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

    #[test]
    fn discovery_takes_the_yml_spelling_and_stops_at_the_repository_root() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = dir.path().join("repo");
        let deep = repo.join("k8s/api");
        std::fs::create_dir_all(&deep).expect("mkdir");
        std::fs::create_dir_all(repo.join(".git")).expect("mkdir");
        std::fs::write(dir.path().join(DISCOVERED_NAME), "").expect("write");
        assert_eq!(discover(&deep), None, "outside the repository");
        std::fs::write(repo.join("k8s").join(DISCOVERED_ALT_NAME), "").expect("write");
        assert_eq!(discover(&deep), Some(repo.join("k8s").join(DISCOVERED_ALT_NAME)));
        std::fs::write(repo.join("k8s").join(DISCOVERED_NAME), "").expect("write");
        assert_eq!(discover(&deep), Some(repo.join("k8s").join(DISCOVERED_NAME)), ".yaml first");
    }
}
