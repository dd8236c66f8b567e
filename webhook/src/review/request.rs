//! Reading an AdmissionReview body: the raw JSON (what the engine judges and
//! what patches apply to) and the `kube-core` request (what the response is
//! built from). A body that is not an `admission.k8s.io/v1` review with a
//! `uid` cannot be answered as one: that is an HTTP error.

use kube_core::DynamicObject;
use kube_core::admission::{AdmissionRequest, AdmissionReview};
use serde::Deserialize;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};

use super::object;

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
    /// The body's envelope and `request` as JSON, less `request.object`
    /// and `request.oldObject`.
    review: Value,
    /// `request.object` as sent (less what [`object::read`] leaves out).
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
    // One pass over the body: the objects are read as they stream by,
    // leaving out what nothing reads (see `object`).
    let mut de = serde_json::Deserializer::from_slice(body);
    let mut on_head = Some(on_head);
    let top = serde::Deserializer::deserialize_map(&mut de, EnvelopeVisitor { on_head: &mut on_head })
        .and_then(|top| de.end().map(|()| top))
        .map_err(|e| Invalid::bad(format!("body is not JSON: {e}")))?;
    let (api_version, kind) = (top.api_version, top.kind);
    if !envelope_is_v1(api_version.as_ref(), kind.as_ref()) {
        let shown = |v: Option<Value>| {
            v.as_ref().and_then(Value::as_str).map_or_else(|| "none".to_owned(), |s| format!("{s:?}"))
        };
        return Err(Invalid::bad(format!(
            "expected apiVersion {REVIEW_API_VERSION:?} and kind {REVIEW_KIND:?}, got apiVersion {} and kind {}",
            shown(api_version),
            shown(kind)
        )));
    }
    let Some(Some(RequestMap { fields, object, old_object })) = top.request else {
        return Err(Invalid::bad("the AdmissionReview has no request"));
    };
    let Some(head) = head_of(&fields, object.as_ref().or(old_object.as_ref())) else {
        return Err(Invalid::bad("request.uid is missing or empty"));
    };
    let raw = Value::Object(fields);
    if let Some(on_head) = on_head.take() {
        on_head(&head);
    }
    let mut envelope = Map::new();
    envelope.insert("apiVersion".to_owned(), Value::from(REVIEW_API_VERSION));
    envelope.insert("kind".to_owned(), Value::from(REVIEW_KIND));
    envelope.insert("request".to_owned(), raw);
    let review = Value::Object(envelope);
    // The engine reads the objects as they came; the typed request would
    // only deep-copy them into values nothing reads.
    let request = AdmissionReview::<DynamicObject>::deserialize(&review)
        .map_err(|e| e.to_string())
        .and_then(|r| r.try_into().map_err(|_| "the AdmissionReview has no request".to_owned()));
    Ok(Parsed { head, review, object, old_object, request })
}

fn envelope_is_v1(api_version: Option<&Value>, kind: Option<&Value>) -> bool {
    api_version.and_then(Value::as_str) == Some(REVIEW_API_VERSION) && kind.and_then(Value::as_str) == Some(REVIEW_KIND)
}

/// The head of a request with a uid; `object` names it when present.
fn head_of(raw: &Map<String, Value>, object: Option<&Value>) -> Option<RequestHead> {
    let uid = raw.get("uid").and_then(Value::as_str).filter(|u| !u.is_empty())?;
    Some(RequestHead {
        uid: uid.to_owned(),
        object: describe(raw, object),
        operation: raw.get("operation").and_then(Value::as_str).unwrap_or_default().to_owned(),
    })
}

type OnHead<'h, F> = &'h mut Option<F>;

/// The body's envelope.
struct Envelope {
    api_version: Option<Value>,
    kind: Option<Value>,
    request: Option<RequestParts>,
}

/// Reads the envelope, handing `on_head` to the request once the envelope
/// is known to be a v1 review.
struct EnvelopeVisitor<'h, F> {
    on_head: OnHead<'h, F>,
}

impl<'de, F: FnOnce(&RequestHead)> Visitor<'de> for EnvelopeVisitor<'_, F> {
    type Value = Envelope;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an AdmissionReview object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Envelope, A::Error> {
        let mut top = Envelope { api_version: None, kind: None, request: None };
        let mut none = None;
        while let Some(key) = access.next_key::<String>()? {
            match key.as_str() {
                "apiVersion" => top.api_version = Some(access.next_value()?),
                "kind" => top.kind = Some(access.next_value()?),
                "request" => {
                    // A request before its envelope gets no early head: an
                    // answer to it might not be one the API server reads.
                    let early = envelope_is_v1(top.api_version.as_ref(), top.kind.as_ref());
                    let on_head = if early { &mut *self.on_head } else { &mut none };
                    top.request = Some(access.next_value_seed(RequestVisitor { on_head })?);
                }
                _ => {
                    access.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(top)
    }
}

/// `request`: its fields as JSON, and its objects as [`object::Seed`] reads
/// them. `None` when it is not a JSON object: no request to answer (said
/// once the envelope is checked).
type RequestParts = Option<RequestMap>;

struct RequestMap {
    fields: Map<String, Value>,
    object: Option<Value>,
    old_object: Option<Value>,
}

/// Reads `request`. The API server sends the objects last: reaching them,
/// it tells `on_head` the uid (named from the request's fields), so a
/// large object that is slow to read can still be answered in time.
struct RequestVisitor<'h, F> {
    on_head: OnHead<'h, F>,
}

impl<'de, F: FnOnce(&RequestHead)> DeserializeSeed<'de> for RequestVisitor<'_, F> {
    type Value = RequestParts;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<RequestParts, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, F: FnOnce(&RequestHead)> Visitor<'de> for RequestVisitor<'_, F> {
    type Value = RequestParts;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an AdmissionRequest")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<RequestParts, A::Error> {
        let (mut fields, mut object, mut old_object) = (Map::new(), None, None);
        while let Some(key) = access.next_key::<String>()? {
            let slot = match key.as_str() {
                "object" => &mut object,
                "oldObject" => &mut old_object,
                _ => {
                    fields.insert(key, access.next_value()?);
                    continue;
                }
            };
            // Only while nobody has been told: the head is built at most once here.
            if self.on_head.is_some()
                && let Some(head) = head_of(&fields, None)
                && let Some(on_head) = self.on_head.take()
            {
                on_head(&head);
            }
            *slot = Some(access.next_value_seed(object::Seed)?);
        }
        Ok(Some(RequestMap { fields, object, old_object }))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut access: A) -> Result<RequestParts, A::Error> {
        while access.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_bool<E>(self, _: bool) -> Result<RequestParts, E> {
        Ok(None)
    }

    fn visit_i64<E>(self, _: i64) -> Result<RequestParts, E> {
        Ok(None)
    }

    fn visit_u64<E>(self, _: u64) -> Result<RequestParts, E> {
        Ok(None)
    }

    fn visit_f64<E>(self, _: f64) -> Result<RequestParts, E> {
        Ok(None)
    }

    fn visit_str<E>(self, _: &str) -> Result<RequestParts, E> {
        Ok(None)
    }

    fn visit_unit<E>(self) -> Result<RequestParts, E> {
        Ok(None)
    }
}

/// `Deployment/shop/orders` from the object, else from the request fields.
fn describe(raw: &Map<String, Value>, object: Option<&Value>) -> String {
    if let Some(object) = object.filter(|o| o.is_object()) {
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
    let kind = raw.get("kind").and_then(|k| k.get("kind")).and_then(Value::as_str).unwrap_or_default();
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

    #[test]
    fn the_envelope_is_judged_before_the_request() {
        let wrong_version = body(json!({"apiVersion": "v2", "kind": REVIEW_KIND, "request": "not a map"}));
        assert!(parse(&wrong_version).is_err_and(|e| e.message.contains("\"v2\"")));
        for request in [json!("nope"), json!([1, {"uid": "x"}]), json!(null), json!(3)] {
            let shaped = body(json!({"apiVersion": REVIEW_API_VERSION, "kind": REVIEW_KIND, "request": request}));
            assert!(parse(&shaped).is_err_and(|e| e.message.contains("no request")), "{request}");
        }
    }

    #[test]
    fn objects_are_read_without_managed_fields() {
        let object = json!({"kind": "Pod", "metadata": {"name": "p", "managedFields": [{"manager": "m"}]}});
        let review = body(json!({"apiVersion": REVIEW_API_VERSION, "kind": REVIEW_KIND, "request": {
            "uid": "u", "operation": "UPDATE", "userInfo": {}, "object": object, "oldObject": object,
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"}}}));
        let parsed = parse(&review).expect("parsed");
        let expected = json!({"kind": "Pod", "metadata": {"name": "p"}});
        assert_eq!((parsed.raw_object(), parsed.raw_old_object()), (Some(&expected), Some(&expected)));
        assert_eq!(parsed.raw_request().get("object"), None, "the objects are not kept twice");
        assert_eq!(parsed.head.object, "Pod/p");
        assert!(parsed.request.is_ok(), "{:?}", parsed.request);
    }

    #[test]
    fn the_uid_is_told_before_the_object_is_read() {
        let cut = br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1","operation":"CREATE","kind":{"kind":"Pod"},"namespace":"shop","name":"web","object":{"kind":"Pod","spec":"#;
        let mut told = None;
        assert!(parse_with(cut, |h| told = Some(h.clone())).is_err(), "a cut body is refused");
        let told = told.expect("told before the object");
        assert_eq!(
            (told.uid.as_str(), told.object.as_str(), told.operation.as_str()),
            ("u1", "Pod/shop/web", "CREATE")
        );

        // Not before the envelope is known to be a v1 review.
        let request_first = br#"{"request":{"uid":"u2","object":{"kind":"Pod","spec":"#;
        let mut told = None;
        assert!(parse_with(request_first, |h| told = Some(h.clone())).is_err());
        assert_eq!(told, None);
    }
}
