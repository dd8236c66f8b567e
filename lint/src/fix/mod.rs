//! `lifeguard fix`: applies the engine's fixes (JSON Patch operations) to the
//! text of YAML and JSON files so that every line a fix does not change
//! stays byte-identical, and writes nothing it has not read back and checked.

pub mod diff;
pub mod edit;
pub mod file;
pub mod kustomize;
mod layout;
mod object;
mod path;
mod readback;
mod render;
pub mod run;
mod splice;
pub mod stale;
pub mod stream;
pub mod summary;
mod text;

pub use edit::EditError;
pub use file::{FileFix, ObjectFixes, Skipped, fix_text};
pub use kustomize::SourceFix;
pub use run::{FixOutcome, FixedInput, Output, fix_each, fix_found, fix_paths, write};
pub use stale::StaleComment;
#[cfg(test)]
mod splice_tests;
#[cfg(test)]
mod tests;
