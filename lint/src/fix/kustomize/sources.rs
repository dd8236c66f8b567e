//! The user's files a run's builds fix, and how two builds that read one
//! file fix it once.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use crate::engine::parse_text;
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
    pub edits: Vec<(usize, String, Value)>,
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
        let json = serde_json::from_str::<Value>(&merged.original).is_ok();
        let mut text = merged.fixed.clone();
        for (index, pointer, value) in &source.edits {
            text = splice::apply_all(&text, *index, &[(pointer.clone(), value)], json, limits)
                .map_err(|(_, e)| conflict(&source.file, build, first, &e.to_string()))?;
        }
        // Every build's values must hold in the file with them all.
        let (docs, error) = parse_text(&source.file, &text, limits);
        let holds = |(index, pointer, value): &(usize, String, Value)| {
            docs.get(*index).and_then(|d| d.value.pointer(pointer)) == Some(value)
        };
        if error.is_some() || !merged.edits.iter().chain(&source.edits).all(holds) {
            return Err(conflict(&source.file, build, first, "the builds derive different values from it"));
        }
        merged.fixed = text;
        merged.edits.extend(source.edits);
        Ok(())
    }

    /// Every file fixed, with the fixes of all builds.
    pub fn done(self) -> impl Iterator<Item = SourceFix> {
        self.files.into_values().map(|(_, source)| source)
    }
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
