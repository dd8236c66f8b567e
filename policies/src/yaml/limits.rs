//! Explicit input limits: every one of them is documented in docs/lint.md and
//! exercised by a test, so a hostile or broken file fails fast and clearly.

/// Bounds on what the YAML loader accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest file (or stdin stream) read, in bytes.
    pub max_file_bytes: u64,
    /// Largest single YAML document, in characters.
    pub max_document_chars: usize,
    /// Deepest nesting of mappings and sequences.
    pub max_depth: usize,
    /// Most nodes that aliases may add to one document (billion-laughs guard).
    pub max_alias_nodes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_file_bytes: 256 * 1024 * 1024,
            max_document_chars: 32 * 1024 * 1024,
            max_depth: 100,
            max_alias_nodes: 100_000,
        }
    }
}
