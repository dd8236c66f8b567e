//! The one reader of a text's context objects (Services,
//! PodDisruptionBudgets, HorizontalPodAutoscalers:
//! `policies::model::CONTEXT_KINDS`): what a file
//! adds to its context, read before its workloads are judged, so that each
//! file (or each part of a stream) can then be parsed, judged and dropped
//! on its own while the rules see every object of the context, wherever it
//! comes. `fix`, the siblings read for context and the editor's server read
//! them here; the pipeline's parallel path reads the same parts
//! ([`may_hold_context`]) in its first pass and keeps their documents for
//! its second, so that no part is read twice (`crate::pipeline`).
//!
//! Only the documents whose text may hold one ([`may_hold_context`]) are
//! parsed, each alone (see [`crate::input::split`]). A whole read stops at
//! a syntax error, and the objects after it do not count: so the documents
//! before the last one found are checked to read without error as well (a
//! read that builds the values of context objects alone, so a workload
//! costs little more than its YAML events), and a file where anything
//! fails to parse alone is read in one piece, as a whole read would. The
//! caller then meets each file's context objects again and counts them, so
//! a misread is caught (see [`crate::pipeline`] and [`crate::fix::run`]).

use std::panic::{AssertUnwindSafe, catch_unwind};

use policies::model::{CONTEXT_KINDS, is_context_object};
use policies::objects_in;
use policies::yaml::inert_kind;
use serde_json::Value;

use super::source::Document;
use super::split::{Part, parts};
use policies::yaml::limits::Limits;
use policies::yaml::parse::{parse_part_context, parse_stream_each};
use policies::yaml::read_inert;

/// The Service objects of `text`, in order, as a whole read of it finds them.
pub fn context_in(text: &str, limits: &Limits) -> Vec<Value> {
    context_with(text, limits, &|_, _, service| service.clone())
}

/// [`context_in`], each Service given by `take` from its document, its
/// pointer in it and its value: for a caller that also needs where it is.
pub fn context_with<T>(text: &str, limits: &Limits, take: &impl Fn(&Document, &str, &Value) -> T) -> Vec<T> {
    let parts = parts(text);
    let candidates: Vec<usize> =
        (0..parts.len()).filter(|&k| may_hold_context(&text[parts[k].start..parts[k].end])).collect();
    let mut found: Vec<(usize, Vec<T>)> = Vec::with_capacity(candidates.len());
    for &k in &candidates {
        match read_part(text, parts[k], limits, take) {
            Some(services) => found.push((k, services)),
            None => return whole(text, limits, take),
        }
    }
    let Some(last) = found.iter().rev().find(|(_, s)| !s.is_empty()).map(|(k, _)| *k) else {
        return Vec::new();
    };
    // A syntax error before the last Service would end a whole read there.
    let before = (0..last).filter(|k| candidates.binary_search(k).is_err());
    for k in before {
        if read_part(text, parts[k], limits, &|_, _, _| ()).is_none() {
            return whole(text, limits, take);
        }
    }
    found.into_iter().flat_map(|(_, services)| services).collect()
}

fn read_part<T>(
    text: &str,
    part: Part,
    limits: &Limits,
    take: &impl Fn(&Document, &str, &Value) -> T,
) -> Option<Vec<T>> {
    let text = &text[part.start..part.end];
    // A document of a kind no rule reads (a CRD that names a Service in
    // its text) holds none, and is checked to read without error here
    // without the parser.
    if read_inert(text, part.origin, limits, inert_kind).is_some() {
        return Some(Vec::new());
    }
    let mut services = Vec::new();
    let parsed = catch_unwind(AssertUnwindSafe(|| {
        parse_part_context(text, part.origin, limits, |document| {
            services.extend(located(&document).map(|(pointer, service)| take(&document, &pointer, service)));
        })
    }));
    matches!(parsed, Ok(None)).then_some(services)
}

/// What a whole read finds: the Services of the documents before its first
/// error (or a parser panic, never expected).
fn whole<T>(text: &str, limits: &Limits, take: &impl Fn(&Document, &str, &Value) -> T) -> Vec<T> {
    let mut services = Vec::new();
    let _ = catch_unwind(AssertUnwindSafe(|| {
        parse_stream_each(text, limits, |document| {
            services.extend(located(&document).map(|(pointer, service)| take(&document, &pointer, service)));
        })
    }));
    services
}

/// The Service objects of a parsed document (a `List`'s items too).
pub fn context_of(document: &Document) -> impl Iterator<Item = &Value> {
    located(document).map(|(_, service)| service)
}

/// [`context_of`], each with its pointer in the document.
fn located(document: &Document) -> impl Iterator<Item = (String, &Value)> {
    objects_in(&document.value).into_iter().filter(|(_, o)| is_context_object(o))
}

/// Whether a document's text could hold an object of the context: the
/// word `Service`, `PodDisruptionBudget` or `HorizontalPodAutoscaler` (not
/// the start of a longer word
/// such as `ServiceAccount`) stands as the value of a `kind` key, or where
/// a YAML form this textual check cannot follow puts it (an anchor, a tag,
/// a block scalar, a flow collection, a comment), or a line naming `kind`
/// holds an escape that could spell it. Only a text this rules out is left
/// unparsed: `Service` in prose (descriptions of CRDs) is not a reason to
/// parse a large document.
pub fn may_hold_context(text: &str) -> bool {
    // `kind: "Serv\u0069ce"`: an escape on a line that names `kind`. Only
    // the lines with an escape are looked at (a CRD's descriptions hold many).
    let bytes = text.as_bytes();
    let mut next_line = 0;
    for at in memchr::memchr_iter(b'\\', bytes) {
        if at < next_line {
            continue;
        }
        let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |n| n + 1);
        next_line = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |n| at + n);
        if memchr::memmem::find(&bytes[start..next_line], b"kind").is_some() {
            return true;
        }
    }
    CONTEXT_KINDS.iter().any(|word| names_kind(text, word))
}

/// Whether `word` stands in `text` where a `kind` could take it as its
/// value ([`may_hold_context`]).
fn names_kind(text: &str, word: &str) -> bool {
    memchr::memmem::find_iter(text.as_bytes(), word).any(|at| {
        let longer =
            text[at + word.len()..].chars().next().is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-');
        if longer {
            return false;
        }
        let before = text[..at].trim_end_matches([' ', '\t', '\n', '\r', '"', '\'']);
        let last_line = before.rsplit('\n').next().unwrap_or_default();
        let last_token = last_line.rsplit([' ', '\t']).next().unwrap_or_default();
        if last_token.starts_with(['&', '!']) || last_line.contains('#') {
            return true;
        }
        if before.ends_with(['|', '>', '-', '+', '[', ',', '{', '?']) || before.is_empty() {
            return true;
        }
        before
            .strip_suffix(':')
            .is_some_and(|key| key.trim_end_matches([' ', '\t', '\n', '\r', '"', '\'']).ends_with("kind"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::documents::parse_text;

    const SERVICE: &str = "kind: Service\nmetadata: {name: web}\nspec: {selector: {app: web}}\n";
    const WORKLOAD: &str = "kind: Deployment\nmetadata: {name: web}\nspec: {template: {spec: {containers: []}}}\n";

    /// The names of the Services a whole read finds.
    fn by_whole_read(text: &str) -> Vec<Value> {
        let (docs, _) = parse_text("x", text, &Limits::default());
        docs.iter().flat_map(|d| context_of(d).cloned().collect::<Vec<_>>()).collect()
    }

    #[test]
    fn finds_what_a_whole_read_finds() {
        let texts = [
            format!("{WORKLOAD}---\n{SERVICE}"),
            format!("{SERVICE}---\n{WORKLOAD}"),
            WORKLOAD.to_owned(),
            // A broken document before a Service ends a whole read before it...
            format!("{WORKLOAD}---\nx: [1, 2\n---\n{SERVICE}"),
            // ... and one after it does not.
            format!("{SERVICE}---\nx: [1, 2\n---\n{WORKLOAD}"),
            // A cut inside a quoted scalar, a directive.
            format!("a: \"x\n---\n\"\n---\n{SERVICE}"),
            format!("%YAML 1.2\n---\n{SERVICE}"),
            format!("kind: List\nitems:\n- {}", SERVICE.replace('\n', "\n  ")),
        ];
        for text in &texts {
            assert_eq!(context_in(text, &Limits::default()), by_whole_read(text), "{text}");
        }
        assert_eq!(context_in(&texts[0], &Limits::default()).len(), 1);
        assert!(context_in(&texts[3], &Limits::default()).is_empty());
        assert_eq!(context_in(&texts[4], &Limits::default()).len(), 1);
    }

    #[test]
    fn the_pre_filter_skips_only_texts_that_cannot_hold_a_service() {
        assert!(may_hold_context("kind: Service\n"));
        assert!(may_hold_context("{\"kind\":\"Service\"}"));
        assert!(may_hold_context("kind: v1\nitems:\n- kind: Service"));
        assert!(may_hold_context("kind: \"Serv\\x69ce\"\n"));
        assert!(!may_hold_context("kind: ServiceAccount\n"));
        assert!(!may_hold_context("kind: Deployment\nspec: {template: {spec: {enableServiceLinks: false}}}\n"));
        assert!(!may_hold_context("kind: ServiceMonitor\n"));
        assert!(!may_hold_context("description: the Service that fronts the pods.\n"));
        assert!(!may_hold_context("description: >\n  names a\n  Service to use\n"));
        assert!(may_hold_context("kind:\n  Service\n"));
        assert!(may_hold_context("x: &k Service\nkind: *k\n"));
        assert!(may_hold_context("kind: !!str Service\n"));
        assert!(may_hold_context("kind: # the type\n  Service\n"));
        assert!(may_hold_context("kind: >-\n  Service\n"));
        assert!(may_hold_context("? kind\n: Service\n"));
        assert!(may_hold_context("{\"kind\" : \"Service\"}"));
        assert!(may_hold_context("apiVersion: policy/v1\nkind: PodDisruptionBudget\n"));
        assert!(!may_hold_context("kind: PodDisruptionBudgetList\n"));
        assert!(!may_hold_context("description: a PodDisruptionBudget limits evictions.\n"));
    }

    #[test]
    fn finds_disruption_budgets_beside_services() {
        let pdb = "kind: PodDisruptionBudget\nmetadata: {name: web}\nspec: {maxUnavailable: 0}\n";
        let text = format!("{SERVICE}---\n{WORKLOAD}---\n{pdb}");
        let found = context_in(&text, &Limits::default());
        let kinds: Vec<&str> = found.iter().filter_map(|o| o["kind"].as_str()).collect();
        assert_eq!(kinds, ["Service", "PodDisruptionBudget"]);
        assert_eq!(found, by_whole_read(&text));
    }
}
