//! A baseline: the findings a repository accepts for now, so `lint
//! --baseline FILE` fails only on new ones. A finding is matched by what it
//! is about, never by its line: the rule, the object (kind, namespace,
//! name) and the container; an edit elsewhere in a file moves lines and
//! churns nothing. Each entry counts how many such findings it accepts
//! (several objects of one name across overlays); findings are matched in
//! input order, so a run is deterministic. The entries left unmatched are
//! the findings since fixed or gone, said so the file shrinks.
//!
//! The file is JSON, sorted, one entry per line's worth of fields, so a
//! pull request that shrinks or grows it reads as a plain diff.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::outcome::{InputError, Located};

/// The file's format version.
pub const VERSION: u32 = 1;

/// A baseline file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineFile {
    /// [`VERSION`].
    pub version: u32,
    /// The findings accepted, sorted.
    pub findings: Vec<Entry>,
}

/// Findings of one rule on one object's container, accepted.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The rule.
    pub rule: String,
    /// The object's kind.
    pub kind: String,
    /// Its namespace, when the manifest names one.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Its name.
    #[serde(default)]
    pub name: Option<String>,
    /// The container, for a container's finding.
    #[serde(default)]
    pub container: Option<String>,
    /// Where it was found when the baseline was written: for people
    /// reading the file, not matched (a file renamed churns nothing).
    pub file: String,
    /// How many such findings it accepts.
    pub count: usize,
}

/// What a finding is matched by.
type Key = (String, String, Option<String>, Option<String>, Option<String>);

fn key_of(l: &Located) -> Key {
    (
        l.finding.rule.clone(),
        l.kind.to_string(),
        l.namespace.as_deref().map(str::to_owned),
        l.name.as_deref().map(str::to_owned),
        l.finding.container.clone(),
    )
}

/// A baseline read, and what of it is not matched yet.
#[derive(Debug, Clone)]
pub struct Baseline {
    /// The file as named.
    pub path: String,
    left: BTreeMap<Key, usize>,
}

impl Baseline {
    /// Reads a baseline's text; the error names the file, line and column.
    pub fn parse(path: &str, text: &str) -> Result<Baseline, InputError> {
        let error = |line: usize, column: usize, message: String| InputError {
            file: path.to_owned(),
            line: u32::try_from(line).ok().filter(|l| *l > 0),
            column: u32::try_from(column).ok().filter(|c| *c > 0),
            message,
        };
        let file: BaselineFile = serde_json::from_str(text).map_err(|e| {
            // serde_json's message ends with the position, which the error names already.
            let message = e.to_string();
            let message = message.rsplit_once(" at line ").map_or(message.as_str(), |(m, _)| m);
            error(e.line(), e.column(), format!("not a lifeguard baseline: {message}"))
        })?;
        if file.version != VERSION {
            return Err(error(0, 0, format!("baseline version {} (this lifeguard reads {VERSION})", file.version)));
        }
        let mut left: BTreeMap<Key, usize> = BTreeMap::new();
        for e in file.findings {
            *left.entry((e.rule, e.kind, e.namespace, e.name, e.container)).or_default() += e.count;
        }
        Ok(Baseline { path: path.to_owned(), left })
    }

    /// Whether the baseline accepts `l` (and one fewer such finding after it).
    pub fn claim(&mut self, l: &Located) -> bool {
        match self.left.get_mut(&key_of(l)) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        }
    }

    /// The note on the entries no finding matched (fixed, or their object
    /// renamed), when there are any.
    pub fn unmatched(&self) -> Option<InputError> {
        let left: Vec<(&Key, &usize)> = self.left.iter().filter(|(_, n)| **n > 0).collect();
        if left.is_empty() {
            return None;
        }
        let total: usize = left.iter().map(|(_, n)| **n).sum();
        let shown: Vec<String> = left
            .iter()
            .take(5)
            .map(|((rule, kind, namespace, name, container), _)| {
                let object = policies::model::object_label(kind, namespace.as_deref(), name.as_deref());
                match container {
                    Some(c) => format!("{rule} {object} container {c:?}"),
                    None => format!("{rule} {object}"),
                }
            })
            .collect();
        let more =
            if left.len() > shown.len() { format!("; and {} more", left.len() - shown.len()) } else { String::new() };
        Some(InputError {
            file: self.path.clone(),
            line: None,
            column: None,
            message: format!(
                "{total} accepted finding{} no longer found (fixed, or the object renamed): {}{more}; \
                 `--write-baseline {}` drops {}",
                if total == 1 { " is" } else { "s are" },
                shown.join("; "),
                self.path,
                if total == 1 { "it" } else { "them" }
            ),
        })
    }
}

/// Findings gathered for a baseline file, as they come.
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    counts: BTreeMap<(Key, String), usize>,
}

impl Recorder {
    /// Records a finding.
    pub fn record(&mut self, l: &Located) {
        *self.counts.entry((key_of(l), l.primary().0.to_string())).or_default() += 1;
    }

    /// The baseline file of every finding recorded, as written: sorted,
    /// pretty JSON ending in a newline.
    pub fn file_text(&self) -> String {
        let findings = self
            .counts
            .iter()
            .map(|((key, file), count)| {
                let (rule, kind, namespace, name, container) = key.clone();
                Entry { rule, kind, namespace, name, container, file: file.clone(), count: *count }
            })
            .collect();
        let file = BaselineFile { version: VERSION, findings };
        let mut text = serde_json::to_string_pretty(&file).unwrap_or_default();
        text.push('\n');
        text
    }
}
