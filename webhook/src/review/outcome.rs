//! What a review produces: the AdmissionReview to send, and a summary for
//! the log line and the metrics.

use kube_core::admission::{AdmissionResponse, AdmissionReview};
use kube_core::{DynamicObject, Status};
use policies::policy::AdmissionMode;

use super::endpoint::Endpoint;
use super::request::{Invalid, RequestHead};
use super::text::warning_line;
use crate::config::OnError;

/// The answer to one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// An AdmissionReview (HTTP 200).
    Review {
        /// The review to send back.
        review: Box<AdmissionReview<DynamicObject>>,
        /// For the log and metrics.
        summary: Summary,
    },
    /// No review can be answered: an HTTP error.
    Invalid(Invalid),
}

/// The review as the API server reads it. `AdmissionResponse.patch` is a
/// `Vec<u8>` that serde writes as an array of numbers (kube-rs issue
/// 1781), while the API is a Go `[]byte`, which JSON carries as standard
/// base64: the patch is re-encoded here, at the edge.
pub fn wire_json(review: &AdmissionReview<DynamicObject>) -> Result<Vec<u8>, serde_json::Error> {
    use base64::Engine;
    if review.response.as_ref().is_none_or(|r| r.patch.is_none()) {
        return serde_json::to_vec(review);
    }
    let mut value = serde_json::to_value(review)?;
    if let Some(patch) = value.pointer_mut("/response/patch")
        && let Some(bytes) =
            patch.as_array().map(|a| a.iter().filter_map(|b| b.as_u64()).map(|b| b as u8).collect::<Vec<u8>>())
    {
        *patch = serde_json::Value::String(base64::engine::general_purpose::STANDARD.encode(bytes));
    }
    serde_json::to_vec(&value)
}

/// What a review decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Allowed with no finding.
    Allowed,
    /// Allowed with findings sent back as warnings, which `kubectl` shows
    /// (warn mode, and enforce mode's findings below the deny severity).
    Warned,
    /// Allowed with findings in audit mode: recorded in the audit
    /// annotations and the log, shown to nobody. Apart from `Warned` so
    /// the metrics count only the warnings someone was shown as warned.
    Audited,
    /// Denied.
    Denied,
    /// Allowed with a patch.
    Patched,
    /// Not judged (out of scope): allowed untouched.
    Skipped,
    /// Could not be judged: the on-error answer.
    Error,
}

impl Verdict {
    /// The metrics label.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allowed => "allowed",
            Verdict::Warned => "warned",
            Verdict::Audited => "audited",
            Verdict::Denied => "denied",
            Verdict::Patched => "patched",
            Verdict::Skipped => "skipped",
            Verdict::Error => "error",
        }
    }
}

/// One review, for the log line and the metrics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Request uid.
    pub uid: String,
    /// `Kind/namespace/name`.
    pub object: String,
    /// `CREATE`, `UPDATE`, ...
    pub operation: String,
    /// `validate` or `mutate`.
    pub endpoint: &'static str,
    /// The validation mode (`None` for `/mutate`).
    pub mode: Option<AdmissionMode>,
    /// The decision.
    pub verdict: Verdict,
    /// Rules of the findings reported (or fixed, for `/mutate`), in order.
    pub rules: Vec<String>,
    /// Why a request was skipped or failed.
    pub note: Option<String>,
}

impl Summary {
    pub(crate) fn new(
        head: &RequestHead,
        endpoint: Endpoint,
        mode: Option<AdmissionMode>,
        verdict: Verdict,
    ) -> Summary {
        Summary {
            uid: head.uid.clone(),
            object: head.object.clone(),
            operation: head.operation.clone(),
            endpoint: endpoint.name(),
            mode,
            verdict,
            rules: Vec::new(),
            note: None,
        }
    }
}

/// An allowing response for a request whose typed form may be unreadable.
pub(crate) fn bare_response(head: &RequestHead) -> AdmissionResponse {
    let mut response = AdmissionResponse::invalid("");
    response.uid = head.uid.clone();
    response.allowed = true;
    response.result = Status::default();
    response
}

pub(crate) fn reply(response: AdmissionResponse, summary: Summary) -> Reply {
    Reply::Review { review: Box::new(response.into_review()), summary }
}

/// Out of scope: allowed untouched.
pub(crate) fn skipped(head: &RequestHead, endpoint: Endpoint, mode: Option<AdmissionMode>, why: String) -> Reply {
    let mut summary = Summary::new(head, endpoint, mode, Verdict::Skipped);
    summary.note = Some(why);
    reply(bare_response(head), summary)
}

/// A request lifeguard should judge but cannot: allowed with a warning, or
/// denied with `--on-error deny`. `/mutate` never denies on its own error.
pub fn error_reply(
    head: &RequestHead,
    endpoint: Endpoint,
    mode: Option<AdmissionMode>,
    on_error: OnError,
    reason: &str,
) -> Reply {
    let mut response = bare_response(head);
    let deny = on_error == OnError::Deny && endpoint != Endpoint::Mutate;
    let answer = if deny { "denied (--on-error deny)" } else { "allowed unjudged" };
    response.warnings = Some(vec![warning_line(&format!("lifeguard: {answer}: {reason}"))]);
    response.audit_annotations.insert("error".to_owned(), reason.to_owned());
    if deny {
        response.allowed = false;
        let message = format!("lifeguard could not judge {}: {reason}; denied because of --on-error deny", head.object);
        response.result = Status::failure(&message, "Forbidden").with_code(403);
    }
    let mut summary = Summary::new(head, endpoint, mode, Verdict::Error);
    summary.note = Some(reason.to_owned());
    reply(response, summary)
}
