//! `fix` on a Kustomize build: the build's output is fixed as any text is,
//! then each object's operations are written where the build takes the
//! field from (the object's own file, or the patch that sets the field:
//! [`crate::input::render::source_map::target`]), and kept only when
//! building again with the edited files gives exactly the fixed objects
//! (`check`). A fix that cannot be placed (`place`) is left out, and said
//! why, and the object's other fixes are planned again without it; its
//! finding stays. Findings left are named at the line of the file that
//! sets their field, as `lint` names them. Builds that share a file fix it
//! once (`sources`).

use policies::model::object_label_of;
use policies::{FixPlan, objects_in};

use super::diff::LineMap;
use super::file::{FileFix, located};
use super::object::Skipped;
use crate::input::render::Renderer;
use crate::input::{Document, Input, Limits, TemplateFinder, TemplateScanner, parse_stream};
use check::place_and_check;
use place::Placing;
use planner::Origins;
pub(super) use planner::Planner;
pub use sources::{SourceFix, Sources};

mod check;
mod place;
mod planner;
mod sources;

/// Moves the fixes of a Kustomize build's output (`fix`, made by
/// [`super::fix_text`]) to the user's files (`fix.sources`): the output
/// itself is never written.
pub(super) fn to_sources(input: &Input, fix: &mut FileFix, planner: &Planner<'_>, limits: &Limits) {
    let Input::Rendered(rendered) = input else { return };
    if rendered.renderer != Renderer::Kustomize {
        return;
    }
    let original = fix.original.clone();
    let (docs, _) = parse_stream(&original, limits);
    let mut finder = TemplateFinder::on_disk(None).knowing(std::slice::from_ref(input));
    let mut scanner = TemplateScanner::new(&original);
    let origins: Origins<'_> = docs
        .iter()
        .map(|d| {
            scanner.next(d).map(|(t, span)| {
                let text = scanner.rendered(span);
                (finder.find(&rendered.name, t, || text), text)
            })
        })
        .collect();
    if fix.fixed != original {
        let placings = place_and_check(rendered, fix, &docs, &origins, planner, limits);
        settle(fix, &docs, &origins, placings, planner);
    }
    fix.fixed.clone_from(&original);
    // The output's comments are lifeguard's own `# Source:` lines.
    fix.stale_comments.clear();
    let doc_of = |object: &str| {
        docs.iter().enumerate().find(|(_, d)| objects_in(&d.value).iter().any(|(_, o)| object_label_of(o) == object))
    };
    for k in fix.skipped.iter_mut().filter(|k| k.file == fix.file) {
        let placed = doc_of(&k.object).and_then(|(i, _)| origins.get(i)?.as_ref()?.0.place(k.line));
        if let Some((file, line, _)) = placed {
            (k.file, k.line) = (file.to_owned(), line);
        }
    }
    for l in &mut fix.remaining {
        let Some((i, doc)) = doc_of(&l.object()) else { continue };
        let line = doc.locate(&l.pointer).line;
        (l.line, l.object_at) = (line, doc.locate(""));
        if let Some(Some((template, _))) = origins.get(i)
            && let Some((file, line, column)) = template.place(line)
        {
            (l.file, l.line, l.column) = (file.into(), line, column.unwrap_or(1));
        }
    }
}

/// Settles the objects whose fixes were not all placed: the fixes left out
/// become fixes left out with why (an object none of whose fixes stay is
/// no longer fixed), and their findings are those the unfixed text has
/// that the fixes kept do not settle.
fn settle(fix: &mut FileFix, docs: &[Document], origins: &Origins<'_>, placings: Vec<Placing>, planner: &Planner<'_>) {
    if placings.iter().all(|p| matches!(p, Placing::Placed(_, excluded, _) if excluded.is_empty())) {
        return;
    }
    // The objects settled, and the findings left on them.
    let (mut labels, mut found) = (Vec::new(), Vec::new());
    for (i, placing) in placings.into_iter().enumerate().rev() {
        let Some(o) = fix.objects.get(i) else { continue };
        let (left_out, plan): (Vec<(String, String)>, Option<Box<FixPlan>>) = match placing {
            Placing::Placed(_, excluded, plan) if !excluded.is_empty() => (excluded, plan),
            Placing::Placed(..) => continue,
            Placing::LeftOut(why) => (o.applied.iter().map(|a| (a.rule.clone(), why.clone())).collect(), None),
        };
        for (rule, why) in left_out {
            let pointer = o.applied.iter().find(|a| a.rule == rule).map(|a| format!("{}{}", o.prefix, a.pointer));
            let line = docs.get(o.doc).map_or(1, |d| d.locate(pointer.as_deref().unwrap_or("")).line);
            let placed = origins.get(o.doc).and_then(Option::as_ref).and_then(|(t, _)| t.place(line));
            let (file, line) = placed.map_or_else(|| (fix.file.clone(), line), |(f, l, _)| (f.to_owned(), l));
            fix.skipped.push(Skipped { file, line, object: o.object.clone(), rule, reason: why });
        }
        // What is left on it: what the fixes kept leave, else all it had.
        let object = docs.get(o.doc).and_then(|d| d.value.pointer(&o.prefix));
        let left = match &plan {
            Some(plan) => plan.remaining.clone(),
            None => object
                .and_then(|object| policies::lint_object(object, planner.batch, planner.policy).ok().flatten())
                .map(|r| r.findings)
                .unwrap_or_default(),
        };
        labels.push(o.object.clone());
        found.extend(left.into_iter().map(|f| located(&fix.file, docs.get(o.doc), &o.prefix, f)));
        match plan.filter(|p| !p.applied.is_empty()) {
            Some(plan) => {
                if let Some(o) = fix.objects.get_mut(i) {
                    (o.applied, o.operations) = (plan.applied, plan.operations);
                }
            }
            None => {
                fix.objects.remove(i);
            }
        }
    }
    fix.remaining.retain(|l| !labels.contains(&l.object()));
    fix.remaining.append(&mut found);
}

/// A fix run's lines as the files are once it is over: the remaining
/// findings and the fixes left out of a file a build's fixes were written
/// to are moved to that file's lines as fixed.
pub(super) fn lines_as_fixed(fix: &mut FileFix) {
    let maps: Vec<(&str, LineMap)> =
        fix.sources.iter().map(|s| (s.file.as_str(), LineMap::new(&s.original, &s.fixed))).collect();
    let map = |file: &str| maps.iter().find(|(f, _)| *f == file).map(|(_, m)| m);
    for l in &mut fix.remaining {
        if let Some(m) = map(&l.file) {
            l.line = m.new_line(l.line);
        }
    }
    for k in &mut fix.skipped {
        if let Some(m) = map(&k.file) {
            k.line = m.new_line(k.line);
        }
    }
}
