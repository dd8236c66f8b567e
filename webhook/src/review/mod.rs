//! The decision: an AdmissionReview body in, an AdmissionReview (or an HTTP
//! error) out. Pure and synchronous, no I/O and no axum types, so tests and
//! the self-test call it directly; the handlers only add limits, time and
//! metrics around it.

mod endpoint;
mod object;
mod on_update;
mod options;
mod outcome;
mod request;
mod restore;
mod scope;
mod text;
mod validate;

mod mutate;

use policies::Policy;

pub use endpoint::Endpoint;
pub use options::ReviewOptions;
pub use outcome::{Reply, Summary, Verdict, error_reply, wire_json};
pub use request::{Invalid, Parsed, RequestHead, parse, parse_with};
pub use text::{API_SERVER_WARNING_CHARS, MAX_WARNING_CHARS, WARNING_BUDGET_CHARS, warning_line};

/// Judges one AdmissionReview body.
pub fn review(body: &[u8], endpoint: Endpoint, policy: &Policy, options: &ReviewOptions) -> Reply {
    match parse(body) {
        Err(invalid) => Reply::Invalid(invalid),
        Ok(parsed) => decide(&parsed, endpoint, policy, options),
    }
}

/// Judges a parsed request.
pub fn decide(parsed: &Parsed, endpoint: Endpoint, policy: &Policy, options: &ReviewOptions) -> Reply {
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
