//! Turning command-line paths into inputs: files, directories (recursive,
//! `.yaml`/`.yml`/`.json`) and `-` for stdin; and reading them as text.

use std::io::Read;
use std::path::{Path, PathBuf};

use thiserror::Error;

use super::limits::Limits;

/// One input to read.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Input {
    /// A file on disk.
    File(PathBuf),
    /// Standard input (`-`).
    Stdin,
}

/// Something that names an input in messages.
pub trait InputName {
    /// The name shown to a person.
    fn display_name(&self) -> String;
}

impl InputName for Input {
    fn display_name(&self) -> String {
        match self {
            Input::File(p) => p.display().to_string(),
            Input::Stdin => "<stdin>".to_owned(),
        }
    }
}

/// Why an input could not be read.
#[derive(Debug, Error)]
pub enum ReadError {
    /// The path does not exist or cannot be listed.
    #[error("{0}")]
    Io(String),
    /// The input is larger than the limit.
    #[error("larger than the {0}-byte limit")]
    TooLarge(u64),
    /// The input is not UTF-8 text.
    #[error("not a text file: {0}")]
    NotText(String),
}

/// Whether a file name has a manifest extension.
pub fn is_manifest(path: &Path) -> bool {
    matches!(path.extension().and_then(|e| e.to_str()), Some("yaml" | "yml" | "json"))
}

/// What [`discover`] found.
#[derive(Debug, Default)]
pub struct Discovered {
    /// Inputs to read, in order.
    pub inputs: Vec<Input>,
    /// Paths that could not be read.
    pub errors: Vec<(String, ReadError)>,
    /// Helm charts whose `templates/` a directory walk skipped.
    pub skipped_charts: Vec<PathBuf>,
}

/// Expands paths: files are kept as given (whatever their extension),
/// directories are walked for manifests, in sorted order. A walk skips a
/// Helm chart's `templates/` (beside a `Chart.yaml`): templates are not YAML
/// until `helm template` renders them.
pub fn discover(paths: &[String]) -> Discovered {
    let mut found = Discovered::default();
    let (inputs, errors) = (&mut found.inputs, &mut found.errors);
    let skipped = &mut found.skipped_charts;
    for raw in paths {
        if raw == "-" {
            inputs.push(Input::Stdin);
            continue;
        }
        let path = PathBuf::from(raw);
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => walk(&path, inputs, errors, skipped),
            Ok(_) => inputs.push(Input::File(path)),
            Err(e) => errors.push((raw.clone(), ReadError::Io(e.to_string()))),
        }
    }
    found
}

fn walk(dir: &Path, inputs: &mut Vec<Input>, errors: &mut Vec<(String, ReadError)>, skipped: &mut Vec<PathBuf>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            errors.push((dir.display().to_string(), ReadError::Io(e.to_string())));
            return;
        }
    };
    let mut paths: Vec<(PathBuf, bool)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            // Symlinked directories are not followed: they can loop.
            let ft = e.file_type().ok()?;
            Some((e.path(), ft.is_dir()))
        })
        .collect();
    paths.sort();
    for (path, is_dir) in paths {
        let hidden = path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with('.'));
        if is_dir {
            let templates = path.file_name().is_some_and(|n| n == "templates") && dir.join("Chart.yaml").is_file();
            if templates {
                skipped.push(dir.to_path_buf());
            } else if !hidden {
                walk(&path, inputs, errors, skipped);
            }
        } else if is_manifest(&path) {
            inputs.push(Input::File(path));
        }
    }
}

/// Reads an input as text, enforcing the size limit and UTF-8.
pub fn read_text(input: &Input, limits: &Limits) -> Result<String, ReadError> {
    let mut bytes = Vec::new();
    let limit = limits.max_file_bytes;
    // A regular file's size is known up front: refuse it before reading
    // (and allocating) up to the limit. Pipes and stdin are bounded below.
    let known_too_large = match input {
        Input::File(p) => std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() > limit),
        Input::Stdin => false,
    };
    if known_too_large {
        return Err(ReadError::TooLarge(limit));
    }
    let read = match input {
        Input::File(p) => std::fs::File::open(p).and_then(|f| f.take(limit + 1).read_to_end(&mut bytes)),
        Input::Stdin => std::io::stdin().lock().take(limit + 1).read_to_end(&mut bytes),
    };
    read.map_err(|e| ReadError::Io(e.to_string()))?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge(limit));
    }
    if let Some(pos) = bytes.iter().position(|b| *b == 0) {
        return Err(ReadError::NotText(format!("NUL byte at line {}", line_of(&bytes, pos))));
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").map(<[u8]>::to_vec).unwrap_or(bytes);
    String::from_utf8(bytes).map_err(|e| {
        let pos = e.utf8_error().valid_up_to();
        ReadError::NotText(format!("invalid UTF-8 at line {}", line_of(e.as_bytes(), pos)))
    })
}

fn line_of(bytes: &[u8], pos: usize) -> usize {
    bytes[..pos.min(bytes.len())].iter().filter(|b| **b == b'\n').count() + 1
}
