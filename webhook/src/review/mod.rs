//! The decision: an AdmissionReview body in, an AdmissionReview (or an HTTP
//! error) out. Pure and synchronous, no I/O and no axum types, so tests and
//! the self-test call it directly; the handlers only add limits, time and
//! metrics around it.

mod object;
mod on_update;
mod outcome;
mod request;
mod scope;
mod text;
mod validate;

mod mutate;

use policies::Policy;
use policies::policy::AdmissionMode;

pub use outcome::{Reply, Summary, Verdict, error_reply, wire_json};
pub use request::{Invalid, Parsed, RequestHead, parse, parse_with};
pub use text::{API_SERVER_WARNING_CHARS, MAX_WARNING_CHARS, WARNING_BUDGET_CHARS, warning_line};

use crate::config::OnError;

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

/// How requests are judged beyond the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Ratcheting on UPDATE.
    pub ratchet: bool,
    /// Judge controller-owned objects too.
    pub include_controlled: bool,
    /// The answer when a request cannot be judged.
    pub on_error: OnError,
}

impl Default for Options {
    fn default() -> Self {
        Options { ratchet: true, include_controlled: false, on_error: OnError::Allow }
    }
}

/// Judges one AdmissionReview body.
pub fn review(body: &[u8], endpoint: Endpoint, policy: &Policy, options: &Options) -> Reply {
    match parse(body) {
        Err(invalid) => Reply::Invalid(invalid),
        Ok(parsed) => decide(&parsed, endpoint, policy, options),
    }
}

/// Judges a parsed request.
pub fn decide(parsed: &Parsed, endpoint: Endpoint, policy: &Policy, options: &Options) -> Reply {
    let mode = match endpoint {
        Endpoint::Validate(mode) => Some(mode.unwrap_or(policy.mode)),
        Endpoint::Mutate => None,
    };
    let request = match &parsed.request {
        Ok(request) => request,
        Err(why) => {
            // Only requests lifeguard would judge deserve an error answer;
            // anything else it lets through as it always would.
            if let Some(skip) = scope::skip_raw(parsed.raw_request(), parsed.raw_object(), options) {
                return outcome::skipped(&parsed.head, endpoint, mode, skip);
            }
            return error_reply(&parsed.head, endpoint, mode, options.on_error, &format!("unreadable request: {why}"));
        }
    };
    let object = match scope::judged_object(request, parsed, options) {
        Ok(object) => object,
        Err(scope::Skip(why)) => return outcome::skipped(&parsed.head, endpoint, mode, why),
    };
    match mode {
        Some(mode) => validate::validate(request, parsed, object, mode, policy, options),
        None => mutate::mutate(request, parsed, object, policy),
    }
}
