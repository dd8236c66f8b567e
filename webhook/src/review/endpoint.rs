//! Which admission path a request came to: what the decision and the
//! metrics tell apart.

use policies::policy::AdmissionMode;

/// Which admission path was called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// `/validate` (`None`: the policy's mode) or `/validate/MODE`.
    Validate(Option<AdmissionMode>),
    /// `/mutate`.
    Mutate,
}

impl Endpoint {
    /// `validate` or `mutate`, for metrics and logs.
    pub fn name(self) -> &'static str {
        match self {
            Endpoint::Validate(_) => "validate",
            Endpoint::Mutate => "mutate",
        }
    }
}
