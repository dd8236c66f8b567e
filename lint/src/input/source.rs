//! A parsed source file: its text and its documents. The position types live
//! in the engine crate with the loader; they are re-exported here so
//! `lifeguard::input::source::{Document, Mark, Node, Location}` keep working.

pub use policies::yaml::source::*;

/// A file (or stdin) and what was read from it.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The name to show (`-` is shown as `<stdin>`).
    pub name: String,
    /// The full text.
    pub text: String,
}
