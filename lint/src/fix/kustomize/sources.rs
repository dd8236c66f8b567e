//! The user's files a run's builds fix, and how two builds that read one
//! file fix it once.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use crate::documents::parse_text;
use crate::fix::diff::unified;
use crate::fix::run::{Output, write_fixed};
use crate::fix::splice;
use crate::input::Limits;
use crate::outcome::InputError;

/// A file of the user's that a build's fixes are written to.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceFix {
    /// The file, as shown (from the working directory when under it), and
    /// the path it is opened by.
    pub file: String,
    /// Its text as read.
    pub original: String,
    /// Its text with the fixes.
    pub fixed: String,
    /// What was written: the document, the pointer there and the value.
    pub edits: Vec<Edit>,
}

/// The user's files the builds of a run fix: two builds that read one base
/// fix it once, with the fixes of both (each build fixes the objects it
/// makes of it), and never two ways.
#[derive(Debug, Default)]
pub struct Sources {
    /// Each file (canonical): the build that first fixed it, and the file
    /// with every build's fixes so far.
    files: BTreeMap<PathBuf, (String, SourceFix)>,
}

impl Sources {
    /// Adds `build`'s fixes of a file to those of the builds before; an
    /// error when they set a value an earlier build's set otherwise (then
    /// none of them is added).
    pub fn claim(&mut self, build: &str, source: SourceFix, limits: &Limits) -> Result<(), InputError> {
        let path = std::path::Path::new(&source.file);
        let key = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let Some((first, merged)) = self.files.get_mut(&key) else {
            self.files.insert(key, (build.to_owned(), source));
            return Ok(());
        };
        // Every build's values must hold in the file with them all.
        let text =
            write_edits(&source.file, &merged.fixed, &source.edits, &merged.edits, limits).map_err(|(_, why)| {
                let why = why.unwrap_or_else(|| "the builds derive different values from it".to_owned());
                conflict(&source.file, build, first, &why)
            })?;
        merged.fixed = text;
        merged.edits.extend(source.edits);
        Ok(())
    }

    /// How many files are fixed.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether no file is fixed.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Writes every file fixed, with the fixes of all builds: in place, or
    /// its diff to `stdout` (`--diff`). The `Err` is stdout's; the files
    /// that could not be written are in the `Ok`.
    pub fn write(self, mode: Output, stdout: &mut impl std::io::Write) -> std::io::Result<Vec<InputError>> {
        let mut errors = Vec::new();
        for (_, source) in self.files.into_values() {
            match mode {
                Output::Diff => stdout.write_all(unified(&source.file, &source.original, &source.fixed).as_bytes())?,
                Output::InPlace => {
                    let path = std::path::Path::new(&source.file);
                    errors.extend(write_fixed(path, &source.file, source.fixed.as_bytes()).err());
                }
            }
        }
        Ok(errors)
    }
}

/// One value written: the document, the pointer there and the value.
pub(super) type Edit = (usize, String, Value);

/// `text` of `file` with `edits` written one after another, read back: it
/// must parse, and the last value each of `held` (written before) and of
/// `edits` writes at a place must hold in it (two rules' fixes may set one
/// field in turn: a grace period for the preStop, then for the shutdown).
/// On failure, the edit at fault when one is (its index in `edits`), and
/// why the splice failed (`None`: the text does not read back as written).
pub(super) fn write_edits(
    file: &str,
    text: &str,
    edits: &[Edit],
    held: &[Edit],
    limits: &Limits,
) -> Result<String, (Option<usize>, Option<String>)> {
    let json = serde_json::from_str::<Value>(text).is_ok();
    let mut text = text.to_owned();
    for (i, (index, pointer, value)) in edits.iter().enumerate() {
        text = splice::apply_all(&text, *index, &[(pointer.clone(), value)], json, limits)
            .map_err(|(_, e)| (Some(i), Some(e.to_string())))?;
    }
    let (docs, error) = parse_text(file, &text, limits);
    let holds = |(index, pointer, value): &Edit| docs.get(*index).and_then(|d| d.value.pointer(pointer)) == Some(value);
    if error.is_some() {
        return Err((None, None));
    }
    let last = |all: &[Edit], i: usize| !all[i + 1..].iter().any(|(d, p, _)| *d == all[i].0 && *p == all[i].1);
    if let Some(i) = (0..edits.len()).find(|&i| last(edits, i) && !holds(&edits[i])) {
        return Err((Some(i), None));
    }
    if (0..held.len()).any(|i| last(held, i) && !holds(&held[i])) {
        return Err((None, None));
    }
    Ok(text)
}

fn conflict(file: &str, build: &str, first: &str, why: &str) -> InputError {
    InputError {
        file: file.to_owned(),
        line: None,
        column: None,
        message: format!(
            "not fixed for {build}: {first} fixes this file otherwise ({why}); fix one build at a time with \
             `lifeguard fix -k DIR`"
        ),
    }
}
