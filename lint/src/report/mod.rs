//! Renderers: one per output format. They only format what the engine found.

pub mod json;
pub mod rules;
pub mod summary;
pub mod text;

/// Output formats of `lifeguard lint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// For a person: `file:line:col`, object, rule, message, help; colour on a terminal.
    Text,
    /// A stable JSON array of findings (see the README for the fields).
    Json,
}
