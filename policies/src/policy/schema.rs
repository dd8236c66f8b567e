//! The JSON Schema of the policy file, derived from the Rust types that read
//! it (`policies/schema/policy.schema.json` is this, committed; a test keeps
//! it current).

use super::file::PolicyFile;

/// The policy file's JSON Schema, pretty-printed with a trailing newline.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(PolicyFile);
    let mut s = serde_json::to_string_pretty(&schema).unwrap_or_default();
    s.push('\n');
    s
}
