//! Reading manifests: finding files, parsing YAML/JSON with positions, and
//! mapping JSON pointers back to `line:column`.

pub mod blank;
pub mod context;
pub mod context_objects;
pub mod discover;
pub mod helm;
pub mod helm_lines;
pub mod helm_path;
pub mod read_error;
pub mod render;
pub mod source;
pub mod split;
pub mod strict_json;

pub use blank::holds_no_document;
pub use context::{Contexts, contexts};
pub use discover::{
    Discovered, Input, InputName, ReadError, Walk, discover, discover_kustomization, discover_with, is_manifest,
    read_input, read_text,
};
pub use helm::{OnDisk, Template, TemplateFinder, TemplateScanner};
// The loader lives in the engine crate (policy files are YAML too).
pub use context_objects::{context_in, context_of, may_hold_context};
pub use policies::yaml::limits::Limits;
pub use policies::yaml::parse::{
    ParseError, parse_part_context, parse_part_each, parse_part_lean, parse_stream, parse_stream_each,
};
pub use policies::yaml::read_inert;
pub use source::{Document, Location, SourceFile};
