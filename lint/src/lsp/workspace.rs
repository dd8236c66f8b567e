//! What the server knows: the open files (their text as the editor has
//! it), and for each the policy and the Services `lint` would use, read
//! again whenever the files behind them change (a stamp of size and
//! modification time tells).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use lsp_types::{Range, Uri};
use policies::{Batch, Policy};
use serde_json::Value;

use super::analysis::{Analysis, analyze, located_context};
use super::elsewhere::Elsewhere;
use super::text::Lines;
use super::uri::{from_path, to_path};
use crate::input::Limits;
use crate::input::context::{shared_dir, siblings};
use crate::policy_discovery::source_for;
use crate::policy_source::PolicySource;

/// A file open in the editor.
#[derive(Debug, Clone)]
pub struct Open {
    /// The text as the editor has it.
    pub text: String,
    /// The editor's version of it.
    pub version: i32,
    /// The file it is, when it is one.
    pub path: Option<PathBuf>,
    /// Its last analysis.
    pub analysis: Analysis,
    /// The policy and context it was analysed with.
    pub policy: Result<Policy, String>,
    /// The Services of its directory's other files when it was analysed.
    pub context: Batch,
    /// The same Services, each with its file and place.
    pub siblings: Vec<Elsewhere>,
}

impl Open {
    /// The Services `lint` judges this file with: its directory's others
    /// and its own.
    pub fn batch_with_own(&self, limits: &Limits) -> Batch {
        let mut batch = self.context.clone();
        let (docs, _) = crate::documents::parse_text("", &self.text, limits);
        batch.add_documents(docs.iter().map(|d| &d.value));
        batch
    }
}

/// Size and modification time: what tells a file changed.
type Stamp = Option<(u64, SystemTime)>;

fn stamp(path: &Path) -> Stamp {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

/// The open files and what was read for them.
#[derive(Debug, Default)]
pub struct Workspace {
    /// Where policies are looked up from when a file has no directory.
    pub root: PathBuf,
    /// Open files by URI.
    pub open: HashMap<Uri, Open>,
    /// Policies loaded, by source, with the stamp of the file they came from.
    policies: HashMap<PolicySource, (Stamp, Result<Policy, String>)>,
    /// The Services of files on disk (each with where it starts), with their stamp.
    services: HashMap<PathBuf, (Stamp, Vec<(Value, Range)>)>,
    /// The limits `lint` has.
    pub limits: Limits,
}

impl Workspace {
    /// An empty workspace rooted at `root`.
    pub fn new(root: PathBuf) -> Workspace {
        Workspace { root, ..Workspace::default() }
    }

    /// The policy `lint` would use for `path`: the nearest `.lifeguard.yaml`
    /// (read again when it changes), else the default pack.
    pub fn policy_for(&mut self, path: Option<&Path>) -> Result<Policy, String> {
        let cwd = path.and_then(Path::parent).map_or_else(|| self.root.clone(), Path::to_path_buf);
        let source = source_for(path, &cwd);
        let now = match &source {
            PolicySource::File(file) => stamp(file),
            _ => None,
        };
        if let Some((seen, policy)) = self.policies.get(&source)
            && *seen == now
        {
            return policy.clone();
        }
        let loaded = source.load_in(&cwd).map_err(|e| format!("invalid policy, so this file is not linted: {e}"));
        self.policies.insert(source, (now, loaded.clone()));
        loaded
    }

    /// The Services of the other manifest files of `path`'s directory, as
    /// the editor has them when they are open, else as on disk.
    pub fn context_for(&mut self, path: Option<&Path>) -> (Batch, Vec<Elsewhere>) {
        let mut batch = Batch::default();
        let mut found: Vec<Elsewhere> = Vec::new();
        let Some(path) = path else { return (batch, found) };
        let Some(dir) = shared_dir(path) else { return (batch, found) };
        let me = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let open: HashMap<PathBuf, &str> = self
            .open
            .values()
            .filter_map(|o| Some((std::fs::canonicalize(o.path.as_ref()?).ok()?, o.text.as_str())))
            .collect();
        for sibling in siblings(&dir) {
            let canonical = std::fs::canonicalize(&sibling).unwrap_or_else(|_| sibling.clone());
            if canonical == me {
                continue;
            }
            let Some(uri) = from_path(&sibling) else { continue };
            let services = match open.get(&canonical) {
                Some(text) => located_context(text, &Lines::new(text), &self.limits),
                None => {
                    let now = stamp(&sibling);
                    match self.services.get(&sibling).filter(|(seen, _)| *seen == now) {
                        Some((_, cached)) => cached.clone(),
                        None => {
                            let read = std::fs::read_to_string(&sibling)
                                .map(|text| located_context(&text, &Lines::new(&text), &self.limits))
                                .unwrap_or_default();
                            self.services.insert(sibling.clone(), (now, read.clone()));
                            read
                        }
                    }
                }
            };
            found.extend(services.into_iter().map(|(object, range)| Elsewhere { uri: uri.clone(), object, range }));
        }
        for service in &found {
            batch.add(&service.object);
        }
        (batch, found)
    }

    /// Analyses an open file again with its current policy and context.
    pub fn analyze(&mut self, uri: &Uri) -> Option<&Open> {
        let (path, name) = {
            let open = self.open.get(uri)?;
            (open.path.clone(), open.path.as_ref().map_or_else(|| uri.as_str().to_owned(), |p| p.display().to_string()))
        };
        let policy = self.policy_for(path.as_deref());
        let (context, siblings) = self.context_for(path.as_deref());
        let open = self.open.get_mut(uri)?;
        open.analysis = match &policy {
            Ok(policy) => analyze(&name, &open.text, policy, (&context, &siblings), &self.limits),
            Err(message) => Analysis {
                problems: vec![super::analysis::Problem {
                    range: lsp_types::Range::default(),
                    severity: lsp_types::DiagnosticSeverity::ERROR,
                    message: message.clone(),
                }],
                ..Analysis::default()
            },
        };
        open.policy = policy;
        open.context = context;
        open.siblings = siblings;
        Some(open)
    }

    /// Opens (or replaces) a file's text.
    pub fn set(&mut self, uri: Uri, text: String, version: i32) {
        let path = to_path(&uri);
        let entry = self.open.entry(uri).or_insert_with(|| Open {
            text: String::new(),
            version,
            path,
            analysis: Analysis::default(),
            policy: Ok(Policy::default()),
            context: Batch::default(),
            siblings: Vec::new(),
        });
        entry.text = text;
        entry.version = version;
    }

    /// The other open files whose findings may depend on `uri`'s text: those
    /// of the same directory (its Services), or every one when it is a policy file.
    pub fn dependents(&self, uri: &Uri) -> Vec<Uri> {
        let Some(path) = self.open.get(uri).and_then(|o| o.path.clone()).or_else(|| to_path(uri)) else {
            return Vec::new();
        };
        let policy_file = path.file_name().is_some_and(|n| n == ".lifeguard.yaml" || n == ".lifeguard.yml");
        let dir = path.parent().map(Path::to_path_buf);
        self.open
            .iter()
            .filter(|(other, o)| {
                *other != uri && (policy_file || o.path.as_ref().and_then(|p| p.parent().map(Path::to_path_buf)) == dir)
            })
            .map(|(other, _)| other.clone())
            .collect()
    }
}
