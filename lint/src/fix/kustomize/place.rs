//! Where each of a fixed object's operations goes in the user's files,
//! and the plan of its fixes again without a rule whose fix goes nowhere.

use std::sync::Arc;

use policies::{Finding, FixPlan};
use serde_json::Value;

use super::planner::{Origins, Planner};
use crate::fix::edit;
use crate::fix::file::ObjectFixes;
use crate::input::render::Build;
use crate::input::render::kustomize::WriteAt;
use crate::input::{Document, Template};

/// One object's operations, placed in the user's files.
pub(super) struct Placed {
    /// Index in the text's fixed objects.
    pub(super) object: usize,
    /// Its document in the build's output.
    pub(super) doc: usize,
    pub(super) edits: Vec<(WriteAt, Value)>,
    /// Its document as the placed fixes leave it: what building again must give.
    pub(super) want: Value,
}

/// What became of one fixed object's fixes.
pub(super) enum Placing {
    /// Placed, after leaving out the rules whose fixes could not be (each
    /// with why), when any: then the plan of the others.
    Placed(Placed, Vec<(String, String)>, Option<Box<FixPlan>>),
    /// None of it could be placed, and why.
    LeftOut(String),
}

/// Places one object's fixes, leaving out (and planning again without)
/// each rule whose fix writes where no file of the user's can take it.
pub(super) fn place_object(
    build: &Build,
    o: &ObjectFixes,
    docs: &[Document],
    fixed_doc: Option<&Value>,
    origins: &Origins<'_>,
    planner: &Planner<'_>,
) -> Placing {
    let (Some(doc), Some(fixed_doc)) = (docs.get(o.doc), fixed_doc) else {
        return Placing::LeftOut("internal error: its document is not in the build's output (please report)".into());
    };
    let Some(object) = doc.value.pointer(&o.prefix) else {
        return Placing::LeftOut("internal error: the object is not in its document (please report)".into());
    };
    let (mut operations, mut want) = (o.operations.clone(), fixed_doc.clone());
    let (mut excluded, mut plan): (Vec<(String, String)>, Option<Box<FixPlan>>) = (Vec::new(), None);
    let mut first: Option<Vec<Finding>> = None;
    // Each round leaves out one more rule, so this ends.
    for _ in 0..=policies::rules::RULES.len() {
        let (at, why) = match place(build, &o.prefix, &operations, origins.get(o.doc).and_then(Option::as_ref)) {
            Ok(edits) => return Placing::Placed(Placed { object: 0, doc: 0, edits, want }, excluded, plan),
            Err((None, why)) => return Placing::LeftOut(why),
            Err((Some(at), why)) => (at, why),
        };
        let findings = first.get_or_insert_with(|| {
            policies::lint_object(object, planner.batch, planner.policy)
                .ok()
                .flatten()
                .map(|r| r.findings)
                .unwrap_or_default()
        });
        let path = operations.get(at).map(|op| op.path().to_string()).unwrap_or_default();
        let owner = findings
            .iter()
            .find(|f| f.automatic_fix().is_some_and(|x| x.operations.iter().any(|op| op.path().as_str() == path)));
        let Some(rule) = owner.map(|f| f.rule.clone()) else { return Placing::LeftOut(why) };
        excluded.push((rule, why));
        let allowed: Vec<String> = policies::rules::RULES
            .iter()
            .map(|r| r.name.to_owned())
            .filter(|r| planner.only.is_none_or(|o| o.contains(r)) && !excluded.iter().any(|(x, _)| x == r))
            .collect();
        let Ok(Some(again)) = policies::plan_fixes(object, planner.batch, planner.policy, Some(&allowed)) else {
            return Placing::LeftOut("internal error: the fixes could not be planned again (please report)".into());
        };
        want = doc.value.clone();
        if let (Some(slot), Some(fixed)) = (pointer_mut(&mut want, &o.prefix), again.fixed.as_ref()) {
            slot.clone_from(fixed);
        }
        operations.clone_from(&again.operations);
        plan = Some(Box::new(again));
    }
    Placing::LeftOut("internal error: no plan of its fixes could be placed (please report)".into())
}

fn pointer_mut<'v>(value: &'v mut Value, pointer: &str) -> Option<&'v mut Value> {
    if pointer.is_empty() { Some(value) } else { value.pointer_mut(pointer) }
}

/// A value and where it is written.
type Edit = (WriteAt, Value);

/// Where each operation goes in the user's files; else the operation that
/// cannot go anywhere (`None`: none can), and why.
fn place(
    build: &Build,
    prefix: &str,
    operations: &[json_patch::PatchOperation],
    origin: Option<&(Template, &str)>,
) -> Result<Vec<Edit>, (Option<usize>, String)> {
    let Some((template, text)) = origin else {
        return Err((None, "the build names no file it came from (a generator or a remote base made it)".into()));
    };
    let origin_text = std::fs::read_to_string(&template.path).map_err(|e| (None, format!("{}: {e}", template.path)))?;
    let mut pointers = Vec::with_capacity(operations.len());
    let mut values = Vec::with_capacity(operations.len());
    for (i, op) in operations.iter().enumerate() {
        let (path, value) = edit::parts(op).map_err(|e| (Some(i), e.to_string()))?;
        pointers.push(format!("{prefix}{path}"));
        values.push(value.clone());
    }
    let file: Arc<str> = template.path.as_str().into();
    let targets =
        build.targets(&file, &origin_text, text, &pointers).ok_or((None, "the built object does not parse".into()))?;
    let mut edits = Vec::with_capacity(values.len());
    for (i, ((target, value), pointer)) in targets.into_iter().zip(values).zip(&pointers).enumerate() {
        match target {
            None => {
                return Err((Some(i), format!("no base or patch sets {pointer}: a transformer or a generator does")));
            }
            Some(t) if t.inline => {
                let why =
                    format!("{}:{} sets {pointer} in an inline patch, which `fix` does not edit", t.file, t.at.line);
                return Err((Some(i), why));
            }
            Some(t) => edits.push((t, value)),
        }
    }
    Ok(edits)
}
