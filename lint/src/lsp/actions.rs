//! Code actions: each finding's fix as a quick fix (exactly the edits
//! `lifeguard fix --rule RULE` makes to that finding's document, comments
//! kept), every fix of the file at once, and "ignore with a reason" (the
//! `lifeguard.dev/ignore` annotations, the reason left empty for the user
//! to write: until then `ignore-annotation-invalid` says it is missing).

use std::collections::HashMap;

use lsp_types::{CodeAction, CodeActionKind, CodeActionOrCommand, Diagnostic, Range, TextEdit, Uri, WorkspaceEdit};
use policies::Policy;
use policies::model::escape_token;
use policies::model::{ANNOTATION_IGNORE, ANNOTATION_IGNORE_REASON};
use policies::policy::ignore_list;
use serde_json::{Value, json};

use super::analysis::Placed;
use super::text::edits;
use super::workspace::Open;
use crate::documents::parse_text;
use crate::fix::{edit, fix_text};
use crate::input::Limits;

/// The kind of the action that applies every fix (`source.fixAll.lifeguard`).
pub fn fix_all_kind() -> CodeActionKind {
    CodeActionKind::new("source.fixAll.lifeguard")
}

fn overlaps(a: &Range, b: &Range) -> bool {
    a.start <= b.end && b.start <= a.end
}

/// An action; `preferred` for a finding's own fix (what an editor's "fix
/// this" applies), never for ignoring it.
fn action(
    title: String,
    kind: CodeActionKind,
    uri: &Uri,
    edits: Vec<TextEdit>,
    diagnostics: Vec<Diagnostic>,
    preferred: bool,
) -> CodeActionOrCommand {
    CodeActionOrCommand::CodeAction(CodeAction {
        title,
        kind: Some(kind),
        diagnostics: (!diagnostics.is_empty()).then_some(diagnostics),
        edit: Some(WorkspaceEdit { changes: Some(HashMap::from([(uri.clone(), edits)])), ..WorkspaceEdit::default() }),
        is_preferred: preferred.then_some(true),
        ..CodeAction::default()
    })
}

/// The actions for `range` of the open file (`diagnostics`: those the client
/// names, each matched to a finding by its range and code).
pub fn actions(
    uri: &Uri,
    open: &Open,
    range: &Range,
    diagnostics: &[Diagnostic],
    only: Option<&[CodeActionKind]>,
    limits: &Limits,
) -> Vec<CodeActionOrCommand> {
    let Ok(policy) = &open.policy else { return Vec::new() };
    let wants =
        |kind: &CodeActionKind| only.is_none_or(|only| only.iter().any(|o| kind.as_str().starts_with(o.as_str())));
    let name = open.path.as_ref().map_or_else(|| uri.as_str().to_owned(), |p| p.display().to_string());
    let mut out = Vec::new();
    // A diagnostic is this finding when it names its rule and starts on its
    // line (clients convert columns their own way).
    let is = |d: &Diagnostic, p: &Placed| {
        d.range.start.line == p.range.start.line
            && d.code == Some(lsp_types::NumberOrString::String(p.located.finding.rule.clone()))
    };
    // The findings the client names, else those the range touches.
    let here: Vec<&Placed> = if diagnostics.is_empty() {
        open.analysis.findings.iter().filter(|p| overlaps(&p.range, range)).collect()
    } else {
        open.analysis.findings.iter().filter(|p| diagnostics.iter().any(|d| is(d, p))).collect()
    };
    let diagnostic_of = |p: &Placed| -> Vec<Diagnostic> { diagnostics.iter().filter(|d| is(d, p)).cloned().collect() };
    if wants(&CodeActionKind::QUICKFIX) {
        for placed in &here {
            let f = &placed.located.finding;
            if let Some(fix) = f.automatic_fix() {
                let changes = fixed_edits(&name, &open.text, open, policy, Some(&f.rule), Some(placed), limits);
                if !changes.is_empty() {
                    out.push(action(
                        format!("lifeguard: {}", fix.description),
                        CodeActionKind::QUICKFIX,
                        uri,
                        changes,
                        diagnostic_of(placed),
                        true,
                    ));
                }
            }
            if let Some(changes) = ignore_edits(&open.text, placed, limits) {
                let label = policies::model::object_label(
                    &placed.located.kind,
                    placed.located.namespace.as_deref(),
                    placed.located.name.as_deref(),
                );
                out.push(action(
                    format!("lifeguard: ignore {} on {label} (write the reason)", f.rule),
                    CodeActionKind::QUICKFIX,
                    uri,
                    changes,
                    diagnostic_of(placed),
                    false,
                ));
            }
        }
    }
    let fixable = open.analysis.findings.iter().filter(|p| p.located.finding.automatic_fix().is_some()).count();
    if fixable > 0 && (wants(&fix_all_kind()) || (wants(&CodeActionKind::QUICKFIX) && !here.is_empty())) {
        let changes = fixed_edits(&name, &open.text, open, policy, None, None, limits);
        if !changes.is_empty() {
            let kind = if only.is_some_and(|o| o.iter().any(|k| fix_all_kind().as_str().starts_with(k.as_str()))) {
                fix_all_kind()
            } else {
                CodeActionKind::QUICKFIX
            };
            out.push(action(
                "lifeguard: apply every fix in this file".to_owned(),
                kind,
                uri,
                changes,
                Vec::new(),
                false,
            ));
        }
    }
    out
}

/// The edits `lifeguard fix` makes to the text (`--rule RULE` when `rule`
/// is given), narrowed to the document of `within` when it is given.
pub fn fixed_edits(
    name: &str,
    text: &str,
    open: &Open,
    policy: &Policy,
    rule: Option<&String>,
    within: Option<&Placed>,
    limits: &Limits,
) -> Vec<TextEdit> {
    let only = rule.map(|r| vec![r.clone()]);
    let fixed = fix_text(
        name,
        text,
        parse_text(name, text, limits),
        &open.batch_with_own(limits),
        policy,
        only.as_deref(),
        limits,
    );
    if !fixed.changed() {
        return Vec::new();
    }
    let span = within.and_then(|p| open.analysis.documents.get(p.doc).copied());
    edits(text, &fixed.fixed, |line| span.is_none_or(|(from, to)| (from as usize..to as usize).contains(&line)))
}

/// The edits that add the finding's rule to the object's
/// `lifeguard.dev/ignore` annotation and an empty `ignore-reason` (kept
/// when there is one).
fn ignore_edits(text: &str, placed: &Placed, limits: &Limits) -> Option<Vec<TextEdit>> {
    let l = &placed.located;
    let prefix = l.pointer.strip_suffix(l.finding.pointer.as_str())?;
    let (docs, error) = parse_text("", text, limits);
    if error.is_some() {
        return None;
    }
    let object = docs.get(placed.doc)?.value.pointer(if prefix.is_empty() { "" } else { prefix })?;
    let annotations = object.pointer("/metadata/annotations");
    let listed = annotations.and_then(|a| a.get(ANNOTATION_IGNORE)).and_then(Value::as_str);
    let rules = match listed {
        Some(list) if ignore_list(list).any(|r| r == l.finding.rule) => return None,
        Some(list) if !list.trim().is_empty() => format!("{},{}", list.trim_end_matches([',', ' ']), l.finding.rule),
        _ => l.finding.rule.clone(),
    };
    let json = serde_json::from_str::<Value>(text).is_ok();
    let at = |key: &str| format!("{prefix}/metadata/annotations/{}", escape_token(key));
    let mut new = edit::apply(text, placed.doc, &at(ANNOTATION_IGNORE), &json!(rules), json, limits).ok()?;
    if annotations.and_then(|a| a.get(ANNOTATION_IGNORE_REASON)).is_none() {
        new = edit::apply(&new, placed.doc, &at(ANNOTATION_IGNORE_REASON), &json!(""), json, limits).ok()?;
    }
    Some(edits(text, &new, |_| true))
}
