//! How requests are judged beyond the policy: the server's flags the
//! decision reads.

use crate::config::OnError;

/// How requests are judged beyond the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReviewOptions {
    /// Ratcheting on UPDATE.
    pub ratchet: bool,
    /// Judge controller-owned objects too.
    pub include_controlled: bool,
    /// The answer when a request cannot be judged.
    pub on_error: OnError,
}

impl Default for ReviewOptions {
    fn default() -> Self {
        ReviewOptions { ratchet: true, include_controlled: false, on_error: OnError::Allow }
    }
}
