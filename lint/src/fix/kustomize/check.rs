//! The placed edits written into the user's files (as texts: nothing is
//! written here) and checked by building the tree again with them.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::place::{Placed, Placing, place_object};
use super::planner::{Origins, Planner};
use super::sources::SourceFix;
use super::sources::{Edit, write_edits};
use crate::fix::file::FileFix;
use crate::input::render::Rendered;
use crate::input::render::kustomize::Builder;
use crate::input::render::rebuild::rebuild;
use crate::input::{Document, Limits, parse_stream};

/// Places every fixed object's operations in the user's files and checks
/// the edits by building again; sets `fix.sources` and each kept object's
/// `written_to`. Returns what became of each object's fixes, by index.
pub(super) fn place_and_check(
    rendered: &Rendered,
    fix: &mut FileFix,
    docs: &[Document],
    origins: &Origins<'_>,
    planner: &Planner<'_>,
    limits: &Limits,
) -> Vec<Placing> {
    let Some(build) = rendered.build.as_ref() else { return Vec::new() };
    // The fixed output: what building again must give for the objects kept.
    let (fixed_docs, _) = parse_stream(&fix.fixed, limits);
    let mut placings: Vec<Placing> = fix
        .objects
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let mut placing = place_object(build, o, docs, fixed_docs.get(o.doc).map(|d| &d.value), origins, planner);
            if let Placing::Placed(p, ..) = &mut placing {
                (p.object, p.doc) = (i, o.doc);
            }
            placing
        })
        .collect();
    let leave = |placings: &mut Vec<Placing>, object: usize, why: String| {
        if let Some(p) = placings.get_mut(object) {
            *p = Placing::LeftOut(why);
        }
    };
    let builder = match Builder::on_path() {
        Ok(b) => b,
        Err(e) => return placings.iter().map(|_| Placing::LeftOut(e.clone())).collect(),
    };
    // A second round builds without the objects the first found wrong.
    for round in 0..2 {
        let placed: Vec<&Placed> =
            placings.iter().filter_map(|p| if let Placing::Placed(p, ..) = p { Some(p) } else { None }).collect();
        let (texts, failed) = write(&placed, limits);
        let edited: Vec<(PathBuf, String)> = texts.iter().map(|(f, (_, t, _))| (PathBuf::from(f), t.clone())).collect();
        let placed: Vec<&Placed> = placed.into_iter().filter(|p| !failed.iter().any(|(i, _)| *i == p.object)).collect();
        let wrong = if placed.iter().all(|p| p.edits.is_empty()) {
            None
        } else {
            match rebuild(&builder, &rendered.dir, build, &edited) {
                Ok(text) => differing(&text, docs, &placed, limits),
                Err(e) => {
                    let why = format!("the edits could not be checked by building again: {e}");
                    Some(placed.iter().map(|p| (p.object, why.clone())).collect())
                }
            }
        };
        let settled = wrong.is_none();
        let retry = round == 0 && wrong.as_ref().is_some_and(|w| w.len() < placed.len());
        let written: Vec<(usize, Vec<String>)> = placed
            .iter()
            .map(|p| {
                let mut files: Vec<String> = p.edits.iter().map(|(w, _)| w.file.to_string()).collect();
                files.dedup();
                (p.object, files)
            })
            .collect();
        for (object, why) in failed.into_iter().chain(wrong.into_iter().flatten()) {
            leave(&mut placings, object, why);
        }
        if settled {
            for (object, files) in written {
                if let Some(o) = fix.objects.get_mut(object) {
                    o.written_to = files;
                }
            }
            fix.sources = texts
                .into_iter()
                .map(|(file, (original, fixed, edits))| SourceFix { file, original, fixed, edits })
                .collect();
            return placings;
        }
        if !retry {
            let why = "building again with the edits does not give the fixed objects";
            for (object, _) in written {
                leave(&mut placings, object, why.to_owned());
            }
            return placings;
        }
    }
    placings
}

/// A file as read, as edited, and the edits.
type Edited = (String, String, Vec<Edit>);

/// The user's files with the placed edits written in, each object's all or
/// none: `file -> (as read, edited)`, and the objects whose edits could not
/// be written, and why.
fn write(placed: &[&Placed], limits: &Limits) -> (BTreeMap<String, Edited>, Vec<(usize, String)>) {
    let mut texts: BTreeMap<String, Edited> = BTreeMap::new();
    let mut failed = Vec::new();
    for p in placed {
        let mut trial = texts.clone();
        if let Err(why) = write_object(p, &mut trial, limits) {
            failed.push((p.object, why));
        } else {
            texts = trial;
        }
    }
    (texts, failed)
}

fn write_object(p: &Placed, texts: &mut BTreeMap<String, Edited>, limits: &Limits) -> Result<(), String> {
    // A file's edits in the object's order, with where each is in the file.
    let mut by_file: Vec<(String, Vec<Edit>, Vec<u32>)> = Vec::new();
    for (at, value) in &p.edits {
        let file = at.file.to_string();
        let i = match by_file.iter().position(|(f, ..)| *f == file) {
            Some(i) => i,
            None => {
                by_file.push((file, Vec::new(), Vec::new()));
                by_file.len() - 1
            }
        };
        by_file[i].1.push((at.index, at.pointer.clone(), value.clone()));
        by_file[i].2.push(at.at.line);
    }
    for (file, edits, lines) in by_file {
        if !texts.contains_key(&file) {
            let text = std::fs::read_to_string(&file).map_err(|e| format!("{file}: {e}"))?;
            texts.insert(file.clone(), (text.clone(), text, Vec::new()));
        }
        let Some((_, text, written)) = texts.get_mut(&file) else { continue };
        let edited = write_edits(&file, text, &edits, written, limits).map_err(|(i, why)| {
            // A text that does not parse is named at the first edit's line.
            let at = lines.get(i.unwrap_or(0)).map_or_else(|| file.clone(), |line| format!("{file}:{line}"));
            let why = why.unwrap_or_else(|| "the edited file would not read back as the fixed value".to_owned());
            format!("{at}: {why}")
        })?;
        *text = edited;
        written.extend(edits);
    }
    Ok(())
}

/// The objects whose documents the rebuilt output does not give as fixed
/// (or as they were, for the others), with why; `None` when it gives them
/// all. Every placed object, when a document no placed object is in differs.
fn differing(rebuilt: &str, docs: &[Document], placed: &[&Placed], limits: &Limits) -> Option<Vec<(usize, String)>> {
    let (again, _) = parse_stream(rebuilt, limits);
    let every = || -> Vec<(usize, String)> {
        let why = "building again with the edits changes other objects too".to_owned();
        placed.iter().map(|p| (p.object, why.clone())).collect()
    };
    if again.len() != docs.len() {
        return Some(every());
    }
    let mut wrong = Vec::new();
    for (i, (doc, before)) in again.iter().zip(docs).enumerate() {
        let kept: Vec<&&Placed> = placed.iter().filter(|p| p.doc == i).collect();
        let want = kept.last().map_or(&before.value, |p| &p.want);
        if *want == doc.value {
            continue;
        }
        if kept.is_empty() {
            return Some(every());
        }
        for p in kept {
            let mut at: Vec<String> = p.edits.iter().map(|(w, _)| format!("{}:{}", w.file, w.at.line)).collect();
            at.dedup();
            let why = format!(
                "written at {}, the fix does not reach the built object: a later patch or transformer sets the field again",
                at.join(", ")
            );
            wrong.push((p.object, why));
        }
    }
    (!wrong.is_empty()).then_some(wrong)
}
