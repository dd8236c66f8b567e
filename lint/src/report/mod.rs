//! Renderers: one per output format. They only format what the engine found.

mod entries;
mod format;
pub mod github;
pub mod html;
pub mod json;
pub mod junit;
pub mod policy_report;
pub mod rules;
pub mod sarif;
pub mod simulate;
pub mod stream;
pub mod summary;
pub mod text;

pub use format::{Format, ListFormat};
