//! One input as both paths take it, and what each gives back for it.

use policies::Policy;

use crate::outcome::InputError;

/// One input: its name as shown, its text, its context (an index into the
/// seeds) and the policy its documents are judged with.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    /// File name as shown.
    pub name: &'a str,
    /// The whole text.
    pub text: &'a str,
    /// The context whose Services inform it.
    pub context: usize,
    /// The policy for its documents.
    pub policy: &'a Policy,
}

/// What one source gave.
#[derive(Debug, Default)]
pub struct SourceResult<Out> {
    /// Its documents' outputs, joined in order.
    pub out: Out,
    /// Its syntax error, if any (the documents before it were done).
    pub syntax: Option<InputError>,
    /// Whether the single-threaded path did it (the tests' window on the fallback).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(super) serial: bool,
}
