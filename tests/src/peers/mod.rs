//! lifeguard beside the tools a platform team would pick instead of it
//! (kube-score, the kyverno CLI, Checkov), on the same inputs: how each is
//! run, its report read object by object, and which of lifeguard's
//! findings each reports anything equivalent for. Used by the peer bench
//! (`tests/benches/peers/`) and its short version (`tests/tests/peers.rs`).

pub mod coverage;
pub mod reports;
pub mod tools;

pub use reports::{Flag, Object, ReportError, read};
pub use tools::{Input, Tool, Tools};

/// A temporary directory for the tools' inputs whose path holds no hidden
/// component: Checkov silently skips a directory under one (`/tmp/.tmpX`,
/// `tempfile`'s default name), reporting no resource at all.
pub fn work_dir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("lifeguard-peers-").tempdir().expect("a temporary directory")
}
