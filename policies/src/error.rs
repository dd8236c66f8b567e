//! Errors the engine reports about input objects.

use thiserror::Error;

/// An object that claims to carry a pod spec but whose spec cannot be read
/// (a string where an integer goes, a map where a list goes, ...).
///
/// The pointer names the offending field so callers can map it to a line.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{pointer}: {message}")]
pub struct ModelError {
    /// JSON pointer (RFC 6901) of the offending field, relative to the object.
    pub pointer: String,
    /// What is wrong, in lower case, without location.
    pub message: String,
}
