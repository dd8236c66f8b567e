//! Reading manifests: finding files, parsing YAML/JSON with positions, and
//! mapping JSON pointers back to `line:column`.

pub mod context;
pub mod discover;
pub mod helm;
pub mod helm_lines;
pub mod render;
pub mod services;
pub mod source;
pub mod split;
pub mod strict_json;

pub use context::{Contexts, contexts};
pub use discover::{
    Discovered, Input, InputName, ReadError, Walk, discover, discover_kustomization, discover_with, holds_no_document,
    is_manifest, read_input, read_text,
};
pub use helm::{OnDisk, Template, TemplateFinder, TemplateScanner};
// The loader lives in the engine crate (policy files are YAML too).
pub use policies::yaml::limits::Limits;
pub use policies::yaml::parse::{
    ParseError, parse_part_each, parse_part_lean, parse_part_services, parse_stream, parse_stream_each,
};
pub use policies::yaml::read_inert;
pub use services::{may_hold_a_service, services_in, services_of};
pub use source::{Document, Location, SourceFile};
