//! Reading an AdmissionReview body: the raw JSON (what the engine judges and
//! what patches apply to) and the `kube-core` request (what the response is
//! built from). A body that is not an `admission.k8s.io/v1` review with a
//! `uid` cannot be answered as one: that is an HTTP error.

use kube_core::DynamicObject;
use kube_core::admission::{AdmissionRequest, AdmissionReview};
use serde::Deserialize;
use serde_json::Value;

/// The only review version served (the webhook configurations say so).
pub const REVIEW_API_VERSION: &str = "admission.k8s.io/v1";
const REVIEW_KIND: &str = "AdmissionReview";

/// A body that cannot be answered with an AdmissionReview.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    /// HTTP status (400, 413, 408, ...).
    pub status: u16,
    /// Why, one line.
    pub message: String,
}

impl Invalid {
    fn bad(message: impl Into<String>) -> Invalid {
        Invalid { status: 400, message: message.into() }
    }
}

/// What every answer and log line needs, read leniently from the raw body so
/// it is known even when the typed request does not deserialize.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RequestHead {
    /// `request.uid`, echoed in every response.
    pub uid: String,
    /// The object's label (`Deployment/shop/orders`) or the requested kind and name.
    pub object: String,
    /// `CREATE`, `UPDATE`, `DELETE`, `CONNECT` (empty when missing).
    pub operation: String,
}

/// A review whose `uid` is known.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// Lenient fields for answers and logs.
    pub head: RequestHead,
    /// The whole body as JSON, less `request.object` and `request.oldObject`.
    review: Value,
    /// `request.object` as sent.
    object: Option<Value>,
    /// `request.oldObject` as sent.
    old_object: Option<Value>,
    /// The typed request (without its objects, which are read raw), or why
    /// it did not deserialize.
    pub request: Result<AdmissionRequest<DynamicObject>, String>,
}

impl Parsed {
    /// `request` as sent, less `object` and `oldObject`.
    pub fn raw_request(&self) -> &Value {
        self.review.get("request").unwrap_or(&Value::Null)
    }

    /// `request.object` as sent (what a patch applies to).
    pub fn raw_object(&self) -> Option<&Value> {
        self.object.as_ref().filter(|v| !v.is_null())
    }

    /// `request.oldObject` as sent.
    pub fn raw_old_object(&self) -> Option<&Value> {
        self.old_object.as_ref().filter(|v| !v.is_null())
    }
}

/// Parses a body. `Err` only when no AdmissionReview can be answered.
pub fn parse(body: &[u8]) -> Result<Parsed, Invalid> {
    parse_with(body, |_| {})
}

/// [`parse`], telling `on_head` the uid and object as soon as they are
/// known, before the typed request is built (a caller whose deadline passes
/// later can still answer that uid).
pub fn parse_with(body: &[u8], on_head: impl FnOnce(&RequestHead)) -> Result<Parsed, Invalid> {
    let mut review: Value = serde_json::from_slice(body).map_err(|e| Invalid::bad(format!("body is not JSON: {e}")))?;
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
    let (api_version, kind) = (text(&review, "apiVersion"), text(&review, "kind"));
    if api_version.as_deref() != Some(REVIEW_API_VERSION) || kind.as_deref() != Some(REVIEW_KIND) {
        let shown = |v: Option<String>| v.map_or_else(|| "none".to_owned(), |s| format!("{s:?}"));
        return Err(Invalid::bad(format!(
            "expected apiVersion {REVIEW_API_VERSION:?} and kind {REVIEW_KIND:?}, got apiVersion {} and kind {}",
            shown(api_version),
            shown(kind)
        )));
    }
    let Some(raw) = review.get("request").filter(|r| r.is_object()) else {
        return Err(Invalid::bad("the AdmissionReview has no request"));
    };
    let Some(uid) = text(raw, "uid").filter(|u| !u.is_empty()) else {
        return Err(Invalid::bad("request.uid is missing or empty"));
    };
    let head = RequestHead { uid, object: describe(raw), operation: text(raw, "operation").unwrap_or_default() };
    on_head(&head);
    // The engine reads the objects as sent; the typed request would only
    // deep-copy them (managedFields and all) into values nothing reads.
    let fields = review.get_mut("request").and_then(Value::as_object_mut);
    let (object, old_object) = match fields {
        Some(fields) => (fields.remove("object"), fields.remove("oldObject")),
        None => (None, None),
    };
    let request = AdmissionReview::<DynamicObject>::deserialize(&review)
        .map_err(|e| e.to_string())
        .and_then(|r| r.try_into().map_err(|_| "the AdmissionReview has no request".to_owned()));
    Ok(Parsed { head, review, object, old_object, request })
}

/// `Deployment/shop/orders` from the object, else from the request fields.
fn describe(raw: &Value) -> String {
    if let Some(object) = raw.get("object").or_else(|| raw.get("oldObject")).filter(|o| o.is_object()) {
        let meta = object.get("metadata");
        let name = meta.and_then(|m| m.get("name").or_else(|| m.get("generateName"))).and_then(Value::as_str);
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or_default();
        let namespace = meta.and_then(|m| m.get("namespace")).and_then(Value::as_str);
        let namespace = namespace.or_else(|| raw.get("namespace").and_then(Value::as_str));
        return policies::model::object_label(
            kind,
            namespace,
            name.or_else(|| raw.get("name").and_then(Value::as_str)),
        );
    }
    let kind = raw.pointer("/kind/kind").and_then(Value::as_str).unwrap_or_default();
    let name = raw.get("name").and_then(Value::as_str).filter(|n| !n.is_empty());
    policies::model::object_label(kind, raw.get("namespace").and_then(Value::as_str), name)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn body(v: Value) -> Vec<u8> {
        serde_json::to_vec(&v).unwrap_or_default()
    }

    #[test]
    fn refuses_what_is_not_a_v1_review() {
        assert!(parse(b"{").is_err_and(|e| e.status == 400 && e.message.starts_with("body is not JSON")));
        let v1beta1 = body(json!({"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview"}));
        assert!(parse(&v1beta1).is_err_and(|e| e.message.contains("\"admission.k8s.io/v1beta1\"")));
        let no_request = body(json!({"apiVersion": REVIEW_API_VERSION, "kind": REVIEW_KIND}));
        assert!(parse(&no_request).is_err_and(|e| e.message.contains("no request")));
        let no_uid = body(json!({"apiVersion": REVIEW_API_VERSION, "kind": REVIEW_KIND, "request": {}}));
        assert!(parse(&no_uid).is_err_and(|e| e.message.contains("uid")));
    }

    #[test]
    fn a_broken_typed_request_still_has_its_uid() {
        let broken = body(json!({"apiVersion": REVIEW_API_VERSION, "kind": REVIEW_KIND, "request": {
            "uid": "u1", "operation": "CREATE", "userInfo": 7, "object": {"kind": "Pod", "metadata": {"name": 7}}}}));
        let parsed = parse(&broken).expect("parsed");
        assert_eq!(parsed.head.uid, "u1");
        assert!(parsed.request.is_err());
        assert_eq!(parsed.head.object, "Pod/<unnamed>");
        assert!(parsed.raw_object().is_some(), "the object is kept raw");
    }
}
