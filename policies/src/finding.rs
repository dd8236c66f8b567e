//! What a rule reports: a finding, its severity and its optional fix.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How serious a finding is. Ordered: `Info < Warning < Error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; not wrong on its own.
    Info,
    /// Likely to hurt under load, on rollout or on a slow dependency.
    Warning,
    /// Breaks pods or drops traffic as written.
    Error,
}

impl Severity {
    /// The lower-case name used in every output format.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }

    /// Parses `info`, `warning` or `error` (case-insensitive).
    pub fn parse(s: &str) -> Option<Severity> {
        match s.to_ascii_lowercase().as_str() {
            "info" | "note" => Some(Severity::Info),
            "warning" | "warn" => Some(Severity::Warning),
            "error" => Some(Severity::Error),
            _ => None,
        }
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A fix: RFC 6902 operations against the object the finding came from,
/// with a short description a person can review.
#[derive(Debug, Clone, PartialEq)]
pub struct Fix {
    /// One line: what the fix changes and to which values.
    pub description: String,
    /// Operations on the object; pointers are relative to the object root.
    pub operations: Vec<json_patch::PatchOperation>,
}

/// An RFC 6902 `add` of `value` at `path` (an `add` also replaces an
/// existing member, so it applies whether or not the field is there).
/// `None` when the path is not a valid JSON pointer.
pub fn add_op(path: &str, value: serde_json::Value) -> Option<json_patch::PatchOperation> {
    let path = json_patch::jsonptr::PointerBuf::parse(path).ok()?;
    Some(json_patch::PatchOperation::Add(json_patch::AddOperation { path, value }))
}

/// One anti-pattern found in one object.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// Stable rule name (`probe-endpoint-reused`, ...).
    pub rule: String,
    /// Severity after policy overrides.
    pub severity: Severity,
    /// One line naming the container and the values involved.
    pub message: String,
    /// A short hint on what to do instead.
    pub help: String,
    /// JSON pointer of the offending field, relative to the object root.
    pub pointer: String,
    /// Container the finding is about, if any.
    pub container: Option<String>,
    /// The automatic fix, where one is safe.
    pub fix: Option<Fix>,
    /// The fix of an info-tier finding that the policy leaves out
    /// (`fixInfoFindings: false`, the default): shown, never applied. The
    /// finding's `fix` is then `None`, so every front end agrees.
    pub opt_in_fix: Option<Fix>,
}
