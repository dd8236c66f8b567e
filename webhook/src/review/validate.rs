//! `/validate`: the engine's findings, judged by mode, with ratcheting on
//! UPDATE so enforce can be turned on without freezing legacy workloads.

use std::collections::HashSet;

use kube_core::admission::{AdmissionRequest, AdmissionResponse, Operation};
use kube_core::{DynamicObject, Status};
use policies::policy::AdmissionMode;
use policies::{Batch, Finding, Policy, lint_object};
use serde_json::Value;

use super::endpoint::Endpoint;
use super::options::ReviewOptions;
use super::outcome::{Reply, Summary, Verdict, error_reply, reply, skipped};
use super::request::Parsed;
use super::scope::unparsable;
use super::text::{deny_message, finding_warning, findings_annotation, fitted};

/// Judges `object` (the request's own JSON) in `mode`.
pub fn validate(
    request: &AdmissionRequest<DynamicObject>,
    parsed: &Parsed,
    object: &Value,
    mode: AdmissionMode,
    policy: &Policy,
    options: &ReviewOptions,
) -> Reply {
    let endpoint = Endpoint::Validate(Some(mode));
    // One object at a time: the webhook sees no Services, exactly like
    // `lifeguard lint` on that object's file alone.
    let batch = Batch::default();
    let report = match lint_object(object, &batch, policy) {
        Ok(Some(report)) => report,
        Ok(None) => return skipped(&parsed.head, endpoint, Some(mode), "the object carries no pod spec".to_owned()),
        Err(e) => return error_reply(&parsed.head, endpoint, Some(mode), options.on_error, &unparsable(&e)),
    };
    let before = if options.ratchet && request.operation == Operation::Update {
        old_findings(parsed.raw_old_object(), &batch, policy)
    } else {
        HashSet::new()
    };
    let judged: Vec<(&Finding, bool)> = report
        .findings
        .iter()
        .map(|f| (f, !before.is_empty() && before.contains(&(f.rule.clone(), f.container.clone()))))
        .collect();
    let denies = |(f, pre): &(&Finding, bool)| !pre && policy.denies(f.severity);

    let mut response = AdmissionResponse::from(request);
    let would_deny = judged.iter().any(denies);
    response.audit_annotations.insert("mode".to_owned(), mode.as_str().to_owned());
    response.audit_annotations.insert("would-deny".to_owned(), would_deny.to_string());
    if !judged.is_empty() {
        response.audit_annotations.insert("finding-count".to_owned(), judged.len().to_string());
        response.audit_annotations.insert("findings".to_owned(), findings_annotation(&judged));
    }
    if !report.suppressed.is_empty() {
        response.audit_annotations.insert("suppressed".to_owned(), report.suppressed.len().to_string());
    }
    let warn = |items: &mut dyn Iterator<Item = &(&Finding, bool)>| -> Vec<String> {
        fitted(items.map(|(f, pre)| finding_warning(f, *pre && policy.denies(f.severity))).collect(), "findings")
    };
    let mut verdict = match mode {
        _ if judged.is_empty() => Verdict::Allowed,
        AdmissionMode::Audit => Verdict::Audited,
        AdmissionMode::Enforce | AdmissionMode::Warn => Verdict::Warned,
    };
    match mode {
        AdmissionMode::Enforce => {
            let denied: Vec<&Finding> = judged.iter().filter(|j| denies(j)).map(|(f, _)| *f).collect();
            let warnings = warn(&mut judged.iter().filter(|j| !denies(j)));
            if !denied.is_empty() {
                let origin = if policy.origin.is_empty() { "the policy" } else { policy.origin.as_str() };
                let message = deny_message(&parsed.head.object, origin, &denied);
                response.allowed = false;
                response.result = Status::failure(&message, "Forbidden").with_code(403);
                verdict = Verdict::Denied;
            }
            if !warnings.is_empty() {
                response.warnings = Some(warnings);
            }
        }
        AdmissionMode::Warn if !judged.is_empty() => response.warnings = Some(warn(&mut judged.iter())),
        AdmissionMode::Warn | AdmissionMode::Audit => {}
    }
    let mut summary = Summary::new(&parsed.head, endpoint, Some(mode), verdict);
    summary.rules = judged.iter().map(|(f, _)| f.rule.clone()).collect();
    reply(response, summary)
}

/// `(rule, container)` of the old object's findings; empty when it cannot
/// be read (then every finding counts as new).
fn old_findings(old: Option<&Value>, batch: &Batch, policy: &Policy) -> HashSet<(String, Option<String>)> {
    match old.map(|o| lint_object(o, batch, policy)) {
        Some(Ok(Some(report))) => report.findings.into_iter().map(|f| (f.rule, f.container)).collect(),
        _ => HashSet::new(),
    }
}
