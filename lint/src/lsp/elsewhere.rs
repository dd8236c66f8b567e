//! A Service of another file than the one analysed: what the server reads
//! of a file's directory, and the analysis places a finding's related
//! Services with.

use lsp_types::{Range, Uri};
use serde_json::Value;

/// A Service of another file, and where it is.
#[derive(Debug, Clone)]
pub struct Elsewhere {
    /// Its file.
    pub uri: Uri,
    /// The object.
    pub object: Value,
    /// Where it starts.
    pub range: Range,
}
