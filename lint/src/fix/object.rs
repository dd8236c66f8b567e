//! Fixing one object: plan its fixes, write them into its document's text
//! (located in as few parses as they allow), and check the result reads
//! back as the fixed object. A rule whose fix cannot be written (an alias, a
//! block scalar) is left out and the plan redone, so the other rules' fixes
//! still apply.

use std::collections::HashSet;

use policies::{AppliedFix, Batch, Finding, Policy, lint_object, plan_fixes};
use serde_json::Value;

use super::edit::{self, EditError};
use super::readback::verify;
use super::splice;
use super::stale::Changed;
use crate::input::{Document, Limits};
use crate::outcome::InputError;

/// Which object of the file, and where.
pub(super) struct Place<'a> {
    pub(super) prefix: String,
    pub(super) object: &'a Value,
    pub(super) name: String,
}

/// A fix that was planned but not written, and why.
#[derive(Debug, Clone)]
pub struct Skipped {
    /// File name as shown.
    pub file: String,
    /// Line of the finding, 1-based.
    pub line: u32,
    /// `Kind/namespace/name`.
    pub object: String,
    /// The rule whose fix was left out.
    pub rule: String,
    /// Why.
    pub reason: String,
}

/// What fixing one object needs besides the object.
pub(super) struct Ctx<'a> {
    pub(super) file: &'a str,
    pub(super) doc: &'a Document,
    pub(super) json: bool,
    pub(super) batch: &'a Batch,
    pub(super) policy: &'a Policy,
    pub(super) only: Option<&'a [String]>,
    pub(super) limits: &'a Limits,
}

/// What fixing one object did.
#[derive(Default)]
pub(super) struct Fixed {
    /// Findings left on the object.
    pub(super) findings: Vec<Finding>,
    /// The document's new text, when the object was fixed.
    pub(super) edited: Option<String>,
    /// The fixes in `edited`.
    pub(super) applied: Vec<AppliedFix>,
    /// Rules whose fix could not be written, and why.
    pub(super) skipped: Vec<Skipped>,
    /// Unreadable specs and fixes that failed their check.
    pub(super) errors: Vec<InputError>,
    /// Scalars the fixes changed: pointer from the document root, old and new value.
    pub(super) changed: Vec<Changed>,
    /// The operations written, relative to the object.
    pub(super) operations: Vec<json_patch::PatchOperation>,
}

/// Fixes one object in its document's text `doc_text`; on success the
/// expected document value is updated.
pub(super) fn fix_object(ctx: &Ctx<'_>, place: &Place<'_>, doc_text: &str, expected: &mut Value) -> Fixed {
    let mut done = Fixed::default();
    let first = match lint_object(place.object, ctx.batch, ctx.policy) {
        Ok(Some(report)) => report.findings,
        Ok(None) => return done,
        Err(e) => {
            let pointer = format!("{}{}", place.prefix, e.pointer);
            let message = format!("{}: {pointer}: {}", place.name, e.message);
            done.errors.push(error_at(ctx.file, ctx.doc, &pointer, message));
            return done;
        }
    };
    // Rules whose fix could not be written are left out and the plan redone,
    // so the other rules' fixes still apply.
    let mut excluded: Vec<String> = Vec::new();
    // Each round excludes at least one more rule, so this ends.
    for _ in 0..=policies::rules::RULES.len() {
        let allowed: Vec<String> = policies::rules::RULES
            .iter()
            .map(|r| r.name.to_owned())
            .filter(|r| ctx.only.is_none_or(|o| o.contains(r)) && !excluded.contains(r))
            .collect();
        let plan = match plan_fixes(place.object, ctx.batch, ctx.policy, Some(&allowed)) {
            Ok(Some(plan)) => plan,
            Ok(None) | Err(_) => break,
        };
        let Some(fixed_object) = plan.fixed.as_ref().filter(|_| !plan.operations.is_empty()) else {
            done.findings = plan.remaining;
            return done;
        };
        match write_plan(place, doc_text, &plan.operations, ctx.json, ctx.limits) {
            Ok(text) => {
                let mut want = expected.clone();
                if let Some(slot) = pointer_mut(&mut want, &place.prefix) {
                    *slot = fixed_object.clone();
                }
                if let Err(why) = verify(ctx.file, &text, std::slice::from_ref(&want), ctx.json, ctx.limits) {
                    let message = format!(
                        "{}: internal error: the edited text would not read back as the fixed object ({why}); not fixed (please report)",
                        place.name
                    );
                    done.errors.push(error_at(ctx.file, ctx.doc, &place.prefix, message));
                    break;
                }
                *expected = want;
                done.changed = changed_scalars(place, &plan.operations, fixed_object);
                done.edited = Some(text);
                done.applied = plan.applied;
                done.findings = plan.remaining;
                done.operations = plan.operations;
                return done;
            }
            Err((pointer, error)) => {
                // The rule whose fix writes there: from the first findings,
                // else every rule in the plan (the object is left as it is).
                let relative = pointer.strip_prefix(&place.prefix).unwrap_or(&pointer);
                let owner = first.iter().find(|f| {
                    allowed.contains(&f.rule)
                        && f.automatic_fix()
                            .is_some_and(|x| x.operations.iter().any(|op| op.path().as_str() == relative))
                });
                let rules: Vec<String> = match owner {
                    Some(f) => vec![f.rule.clone()],
                    None => plan.applied.iter().map(|a| a.rule.clone()).collect(),
                };
                for rule in rules {
                    let finding = first.iter().find(|f| f.rule == rule);
                    let at = ctx.doc.locate(&format!("{}{}", place.prefix, finding.map_or("", |f| f.pointer.as_str())));
                    done.skipped.push(Skipped {
                        file: ctx.file.to_owned(),
                        line: at.line,
                        object: place.name.clone(),
                        rule: rule.clone(),
                        reason: error.to_string(),
                    });
                    excluded.push(rule);
                }
            }
        }
    }
    done.findings = first;
    done
}

/// The existing scalars the operations gave another value, once each.
fn changed_scalars(place: &Place<'_>, operations: &[json_patch::PatchOperation], fixed: &Value) -> Vec<Changed> {
    let mut out: Vec<Changed> = Vec::new();
    // A set: searching the list per operation was quadratic in an object's fixes.
    let mut seen: HashSet<String> = HashSet::new();
    for op in operations {
        let path = op.path().to_string();
        let old = place.object.pointer(&path).filter(|v| !v.is_object() && !v.is_array());
        let new = fixed.pointer(&path);
        if let (Some(old), Some(new)) = (old, new) {
            let pointer = format!("{}{path}", place.prefix);
            if old != new && seen.insert(pointer.clone()) {
                out.push((pointer, old.clone(), new.clone()));
            }
        }
    }
    out
}

/// Applies a plan's operations to the text, in order, as if re-parsing
/// after each; on failure, the pointer (from the document root) and why.
fn write_plan(
    place: &Place<'_>,
    text: &str,
    operations: &[json_patch::PatchOperation],
    json: bool,
    limits: &Limits,
) -> Result<String, (String, EditError)> {
    // An operation the rules never emit fails where it comes, after the
    // operations before it were written (and could fail first).
    let mut ops = Vec::with_capacity(operations.len());
    let mut unsupported = None;
    for op in operations {
        match edit::parts(op) {
            Ok((path, value)) => ops.push((format!("{}{path}", place.prefix), value)),
            Err(e) => {
                unsupported = Some(e);
                break;
            }
        }
    }
    // The text is the object's document alone: document 0.
    let text = splice::apply_all(text, 0, &ops, json, limits).map_err(|(i, e)| {
        let pointer = ops.get(i).map(|(p, _)| p.clone()).unwrap_or_default();
        (pointer, e)
    })?;
    match unsupported {
        Some(e) => Err((String::new(), e)),
        None => Ok(text),
    }
}

fn pointer_mut<'v>(value: &'v mut Value, pointer: &str) -> Option<&'v mut Value> {
    if pointer.is_empty() { Some(value) } else { value.pointer_mut(pointer) }
}

/// An input error at `pointer` of the object's document.
pub(super) fn error_at(file: &str, doc: &Document, pointer: &str, message: String) -> InputError {
    let at = doc.locate(pointer);
    InputError { file: file.to_owned(), line: Some(at.line), column: Some(at.column), message }
}
