//! YAML (and JSON) with positions: text in, JSON values and a position tree
//! out. Pure, like the rest of the engine: the caller reads the text.
//!
//! The linter reads manifests with it and the engine reads policy files with
//! it, so both report `line:column` the same way and share one set of limits.

mod block_check;
mod block_tokens;
pub mod emit;
mod guards;
pub mod inert;
#[cfg(test)]
mod inert_tests;
pub mod limits;
pub mod markers;
pub mod parse;
#[cfg(test)]
mod parse_tests;
pub mod scalar;
mod skim;
pub mod source;

pub use emit::to_yaml;
pub use inert::read_inert;
pub use limits::Limits;
pub use parse::{ParseError, parse_part_context, parse_part_each, parse_part_lean, parse_stream, parse_stream_each};
pub use skim::inert_kind;
pub use source::{Document, DuplicateKey, Location, Mark, Node};
