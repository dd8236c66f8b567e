//! Helpers shared by the end-to-end tests.

use std::path::PathBuf;

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The shared corpus of real manifests (beside the repository, read-only).
pub fn corpus_dir() -> PathBuf {
    repo_root().join("../shared/corpus")
}
