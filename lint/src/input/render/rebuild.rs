//! A Kustomize build made again with some of its files edited, to check
//! that edits of the user's files give the objects a fix meant before any
//! is written: the directories of the build's kustomizations and the files
//! they name are copied to a temporary directory (their layout kept), the
//! edited texts written over their copies, and the copy built. The user's
//! files are never written here.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::kustomize::{Build, Builder, build};

/// Most files a rebuild copies: a kustomization at the top of a large
/// repository would copy all of it.
pub const MAX_FILES: usize = 5_000;

/// Most bytes a rebuild copies.
pub const MAX_BYTES: u64 = 64 * 1024 * 1024;

/// `dir`'s build (as [`build`] made `built`) made again with each
/// `(file, text)` of `edited` in place of that file; the output, or why it
/// could not be made.
pub fn rebuild(builder: &Builder, dir: &Path, built: &Build, edited: &[(PathBuf, String)]) -> Result<String, String> {
    let canonical = |p: &Path| p.canonicalize().map_err(|e| format!("{}: {e}", p.display()));
    let dir = canonical(dir)?;
    let edited: Vec<(PathBuf, &str)> =
        edited.iter().map(|(file, text)| Ok((canonical(file)?, text.as_str()))).collect::<Result<_, String>>()?;
    let all = built.dirs.iter().chain(&built.files).chain(edited.iter().map(|(f, _)| f)).chain([&dir]);
    let root = all.fold(None::<PathBuf>, |common, p| {
        Some(match common {
            None => p.clone(),
            Some(c) => c.ancestors().find(|a| p.starts_with(a)).map(Path::to_path_buf).unwrap_or_default(),
        })
    });
    let root = root.unwrap_or_else(|| dir.clone());
    let scratch = tempfile::tempdir().map_err(|e| format!("a temporary directory: {e}"))?;
    let mut copy = Copy { root: &root, to: scratch.path(), files: 0, bytes: 0, done: HashSet::new() };
    for d in &built.dirs {
        copy.tree(d, 0)?;
    }
    for file in &built.files {
        if file.is_file() {
            copy.file(file)?;
        }
    }
    for (file, text) in &edited {
        let to = copy.place(file)?;
        std::fs::write(&to, text).map_err(|e| format!("{}: {e}", to.display()))?;
    }
    let (text, _) = build(builder, &copy.place(&dir)?)?;
    Ok(text)
}

/// Copies files under `root` to the same place under `to`, within the limits.
struct Copy<'a> {
    root: &'a Path,
    to: &'a Path,
    files: usize,
    bytes: u64,
    done: HashSet<PathBuf>,
}

impl Copy<'_> {
    /// Where `path` (canonical, under the root) goes, its directory made.
    fn place(&self, path: &Path) -> Result<PathBuf, String> {
        let relative = path.strip_prefix(self.root).map_err(|_| format!("{}: outside the build", path.display()))?;
        let to = self.to.join(relative);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        Ok(to)
    }

    /// Copies a directory with what it holds but hidden entries (`.git`).
    fn tree(&mut self, dir: &Path, depth: usize) -> Result<(), String> {
        // A symbolic link back up the tree would copy without end.
        if depth > 32 {
            return Err(format!("{}: directories nested too deep to copy", dir.display()));
        }
        let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let path = entry.path();
            if path.is_dir() {
                self.tree(&path, depth + 1)?;
            } else if path.is_file() {
                self.file(&path)?;
            }
        }
        Ok(())
    }

    fn file(&mut self, file: &Path) -> Result<(), String> {
        let file = file.canonicalize().unwrap_or_else(|_| file.to_path_buf());
        if !self.done.insert(file.clone()) {
            return Ok(());
        }
        self.files += 1;
        self.bytes += std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
        if self.files > MAX_FILES || self.bytes > MAX_BYTES {
            return Err(format!(
                "its directories hold more than {MAX_FILES} files or {} MiB, more than a rebuild copies",
                MAX_BYTES / 1024 / 1024
            ));
        }
        let to = self.place(&file)?;
        std::fs::copy(&file, &to).map(|_| ()).map_err(|e| format!("{}: {e}", file.display()))
    }
}
