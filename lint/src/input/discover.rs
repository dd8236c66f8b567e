//! Turning command-line paths into inputs: files, directories (recursive,
//! `.yaml`/`.yml`/`.json`, honouring `.gitignore`), globs, `-` for stdin,
//! minus what `--exclude` names; and reading them as text.
//!
//! Over 400 lines: the whole way from a command-line path to text: what counts
//! as a manifest, `--exclude`, `discover_with` and `walk_dir` (about 150 lines
//! together: files, globs, directories, charts, Kustomize builds) and
//! `read_text` with its limits, sharing `Walk` and `Discovered`.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use globset::{GlobBuilder, GlobMatcher, GlobSet, GlobSetBuilder};
use ignore::WalkBuilder;
use thiserror::Error;

use super::blank::holds_no_document;
pub use super::read_error::ReadError;
use super::render::{self, RenderOptions, Rendered, kustomization};
use super::strict_json::strict_json_error;
use policies::yaml::limits::Limits;

/// One input to read.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Input {
    /// A file on disk.
    File(PathBuf),
    /// Standard input (`-`).
    Stdin,
    /// A Kustomize directory built, or a Helm chart rendered.
    Rendered(Arc<Rendered>),
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
            Input::Rendered(r) => r.name.clone(),
        }
    }
}

impl ReadError {
    /// Line and column, when the error has a position.
    pub fn position(&self) -> (Option<u32>, Option<u32>) {
        match self {
            ReadError::NotJson { line, column, .. } => (Some(*line), Some(*column)),
            _ => (None, None),
        }
    }
}

/// Whether a file name has a manifest extension and is not a YAML file that
/// plainly holds something else (see [`is_plainly_not_a_manifest`]).
pub fn is_manifest(path: &Path) -> bool {
    matches!(path.extension().and_then(|e| e.to_str()), Some("yaml" | "yml" | "json"))
        && !is_plainly_not_a_manifest(path)
}

/// YAML that tools other than Kubernetes read, by their fixed names: a
/// chart's `Chart.yaml` and `values.yaml`, kustomize's `kustomization.yaml`,
/// pre-commit's and GitLab's configurations, Compose files, and anything
/// under `.github/` (workflows, dependabot). Never reported as anything,
/// walked or named: a pre-commit hook or `lifeguard lint $(git ls-files)`
/// hands them over with the manifests.
pub fn is_plainly_not_a_manifest(path: &Path) -> bool {
    const NAMES: [&str; 14] = [
        "Chart.yaml",
        "values.yaml",
        "values.yml",
        "values.schema.json",
        "kustomization.yaml",
        "kustomization.yml",
        ".pre-commit-config.yaml",
        ".pre-commit-hooks.yaml",
        ".gitlab-ci.yml",
        ".gitlab-ci.yaml",
        "docker-compose.yaml",
        "docker-compose.yml",
        "compose.yaml",
        "compose.yml",
    ];
    let named = path.file_name().and_then(|n| n.to_str()).is_some_and(|n| NAMES.contains(&n));
    named || path.components().any(|c| c.as_os_str() == ".github")
}

/// What [`discover`] found.
#[derive(Debug, Default)]
pub struct Discovered {
    /// Inputs to read, in order.
    pub inputs: Vec<Input>,
    /// Paths that could not be read.
    pub errors: Vec<(String, ReadError)>,
    /// What a walk left out that should have been checked, and why, for
    /// the report's warnings: (path, reason).
    pub warnings: Vec<(String, String)>,
    /// What a walk left out that is checked otherwise, and why, for the
    /// report's notes: (path, reason).
    pub notes: Vec<(String, String)>,
    /// The files met in a walk (a directory, a glob) rather than named:
    /// such a file that is another tool's template is skipped with a note.
    pub walked: Arc<HashSet<PathBuf>>,
    /// `--allow-empty`: a stdin without a document is a clean result, not an error.
    pub allow_empty_stdin: bool,
}

/// Reads an input as [`read_text`] does; stdin without a single document
/// is an error unless `allow_empty_stdin` (`--allow-empty`).
pub fn read_input(input: &Input, limits: &Limits, allow_empty_stdin: bool) -> Result<String, ReadError> {
    let text = read_text(input, limits)?;
    if matches!(input, Input::Stdin) && !allow_empty_stdin && holds_no_document(&text) {
        return Err(ReadError::EmptyStdin);
    }
    Ok(text)
}

/// How paths are expanded: what `--exclude` leaves out, and how Helm
/// charts are rendered.
#[derive(Debug, Clone, Default)]
pub struct Walk {
    /// Globs with a `/`, matched against the whole path as shown (without a
    /// leading `./`).
    paths: Option<GlobSet>,
    /// Globs without a `/`, matched against each file or directory name.
    names: Option<GlobSet>,
    /// How charts are rendered.
    pub render: RenderOptions,
}

/// An `--exclude` glob that does not parse.
#[derive(Debug, Error)]
#[error("--exclude {glob:?}: {message}")]
pub struct GlobError {
    glob: String,
    message: String,
}

impl Walk {
    /// A walk that leaves out what matches any of `exclude`.
    pub fn excluding(exclude: &[String]) -> Result<Walk, GlobError> {
        let (mut paths, mut names) = (GlobSetBuilder::new(), GlobSetBuilder::new());
        let (mut any_path, mut any_name) = (false, false);
        for raw in exclude {
            let glob = raw.strip_prefix("./").unwrap_or(raw).trim_end_matches('/');
            let parsed = GlobBuilder::new(glob)
                .literal_separator(true)
                .build()
                .map_err(|e| GlobError { glob: raw.clone(), message: e.kind().to_string() })?;
            if glob.contains('/') {
                paths.add(parsed);
                any_path = true;
            } else {
                names.add(parsed);
                any_name = true;
            }
        }
        let build = |b: GlobSetBuilder, any: bool, raw: &[String]| -> Result<Option<GlobSet>, GlobError> {
            if !any {
                return Ok(None);
            }
            b.build().map(Some).map_err(|e| GlobError { glob: raw.join(" "), message: e.to_string() })
        };
        Ok(Walk {
            paths: build(paths, any_path, exclude)?,
            names: build(names, any_name, exclude)?,
            render: RenderOptions::default(),
        })
    }

    /// Whether `--exclude` leaves this path out.
    pub fn excludes(&self, path: &Path) -> bool {
        let shown = path.strip_prefix(".").unwrap_or(path);
        let by_path = self.paths.as_ref().is_some_and(|g| g.is_match(shown));
        let by_name = self.names.as_ref().is_some_and(|g| {
            // A name glob matches any component, so `vendor` excludes the
            // files under a `vendor/` named by a path too.
            shown.components().any(|c| g.is_match(c.as_os_str()))
        });
        by_path || by_name
    }
}

/// Expands paths with no `--exclude`: see [`discover_with`].
pub fn discover(paths: &[String]) -> Discovered {
    discover_with(paths, &Walk::default())
}

/// The chart whose `templates/` holds `dir` (the directory itself or one
/// of its subdirectories), if it is in one: a `templates` directory beside
/// a `Chart.yaml`.
fn chart_of_templates(dir: &Path) -> Option<PathBuf> {
    let chart_of = |dir: &Path| {
        dir.ancestors()
            .find(|a| {
                a.file_name().is_some_and(|n| n == "templates")
                    && a.parent().is_some_and(|p| p.join("Chart.yaml").is_file())
            })
            .and_then(Path::parent)
            .map(|p| if p.as_os_str().is_empty() { PathBuf::from(".") } else { p.to_path_buf() })
    };
    // As the user wrote it where it shows (`chart/templates`), else from
    // the full path (`.` inside `templates/`).
    chart_of(dir).or_else(|| chart_of(&dir.canonicalize().ok()?))
}

/// Expands paths: files are kept as given (whatever their extension);
/// directories are walked for manifests in sorted order, honouring
/// `.gitignore` inside a git repository and skipping hidden entries; a path
/// that does not exist but holds a glob (`'k8s/**/*.yaml'`, quoted so the
/// shell leaves it alone) is matched against the manifests under its
/// literal prefix. `walk` leaves out what `--exclude` names, wherever it
/// comes from. A file reached twice (`k8s k8s/x.yaml`) is read once, under
/// its first name.
///
/// A Helm chart (a directory with a `Chart.yaml`), named or met in a walk,
/// is rendered with `helm template` as `walk` says, not walked. The
/// Kustomize directories a walk meets are built with kustomize, those no
/// other kustomization of the walk builds on; the files the builds read
/// (resources, patches) are not linted on their own.
pub fn discover_with(paths: &[String], walk: &Walk) -> Discovered {
    let mut found = Discovered::default();
    let mut seen = HashSet::new();
    let mut walked = HashSet::new();
    for raw in paths {
        if raw == "-" {
            if seen.insert(None) {
                found.inputs.push(Input::Stdin);
            }
            continue;
        }
        let path = PathBuf::from(raw);
        let metadata = std::fs::metadata(&path);
        let from_walk = metadata.as_ref().map_or(is_glob(raw), std::fs::Metadata::is_dir);
        let items = match metadata {
            Ok(m) if m.is_dir() => match chart_of_templates(&path) {
                Some(chart) => {
                    found.errors.push((raw.clone(), ReadError::ChartTemplates { chart }));
                    Vec::new()
                }
                None if render::is_chart(&path) => vec![Walked::Chart(path)],
                None => walk_dir(&path, None, walk, &mut found),
            },
            Ok(_) if walk.excludes(&path) || is_plainly_not_a_manifest(&path) => Vec::new(),
            Ok(_) => vec![Walked::File(path)],
            Err(_) if is_glob(raw) => {
                let matched = expand_glob(raw, walk, &mut found);
                if matched.is_empty() {
                    found.errors.push((raw.clone(), ReadError::Io("no manifest matches this glob".into())));
                }
                matched
            }
            Err(e) => {
                found.errors.push((raw.clone(), ReadError::Io(e.to_string())));
                Vec::new()
            }
        };
        for item in items {
            // Canonical paths tell `k8s/x.yaml` and `./k8s/x.yaml` apart from a
            // different file; a path that cannot be resolved is its own key.
            let key = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
            match item {
                Walked::File(file) => {
                    if seen.insert(Some(key(&file))) {
                        if from_walk {
                            walked.insert(file.clone());
                        }
                        found.inputs.push(Input::File(file));
                    }
                }
                Walked::Chart(dir) => {
                    if seen.insert(Some(key(&dir))) {
                        found.add_rendered(&dir, render::helm(&dir, &walk.render));
                    }
                }
                Walked::Kustomize(dir) => {
                    if seen.insert(Some(key(&dir))) {
                        found.add_rendered(&dir, render::kustomize(&dir));
                    }
                }
            }
        }
    }
    found.walked = Arc::new(walked);
    found
}

/// Builds exactly the Kustomize directory `dir` (`-k DIR`, as kubectl
/// spells it): an error when it holds no kustomization, or a component.
pub fn discover_kustomization(dir: &str, found: &mut Discovered) {
    let path = PathBuf::from(dir);
    if kustomization::file_in(&path).is_none() {
        let message = format!("-k: no {} in this directory", kustomization::FILE_NAMES.join(", "));
        found.errors.push((dir.to_owned(), ReadError::Io(message)));
        return;
    }
    match kustomization::read(&path) {
        Err(e) => found.errors.push(unread_kustomization(e)),
        Ok(k) if k.component => found.errors.push((dir.to_owned(), ReadError::Component)),
        Ok(_) => found.add_rendered(&path, render::kustomize(&path)),
    }
}

fn unread_kustomization(e: kustomization::Unread) -> (String, ReadError) {
    let at = e.line.map(|l| format!(":{l}")).unwrap_or_default();
    (
        format!("{}{at}", e.file.display()),
        ReadError::NotRendered(format!("not a kustomization kustomize can read: {}", e.message)),
    )
}

impl Discovered {
    fn add_rendered(&mut self, dir: &Path, rendered: Result<Rendered, String>) {
        match rendered {
            Ok(r) => self.inputs.push(Input::Rendered(Arc::new(r))),
            Err(message) => self.errors.push((dir.display().to_string(), ReadError::NotRendered(message))),
        }
    }
}

/// What a walk found: a manifest, a chart to render, a Kustomize
/// directory to build.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Walked {
    File(PathBuf),
    Chart(PathBuf),
    Kustomize(PathBuf),
}

impl Walked {
    /// The path it sorts by: a chart and a build take the place of their
    /// `Chart.yaml` and kustomization file.
    fn sort_key(&self) -> PathBuf {
        match self {
            Walked::File(p) => p.clone(),
            Walked::Chart(dir) => dir.join("Chart.yaml"),
            Walked::Kustomize(dir) => kustomization::file_in(dir).unwrap_or_else(|| dir.join("kustomization.yaml")),
        }
    }
}

fn is_glob(raw: &str) -> bool {
    raw.contains(['*', '?', '[', '{'])
}

/// The manifests under a glob's literal prefix that match it.
fn expand_glob(raw: &str, walk: &Walk, found: &mut Discovered) -> Vec<Walked> {
    let pattern = raw.strip_prefix("./").unwrap_or(raw);
    let glob = match GlobBuilder::new(pattern).literal_separator(true).build() {
        Ok(g) => g.compile_matcher(),
        Err(e) => {
            found.errors.push((raw.to_owned(), ReadError::Io(format!("not a valid glob: {}", e.kind()))));
            return Vec::new();
        }
    };
    let literal: PathBuf =
        Path::new(pattern).components().take_while(|c| !is_glob(&c.as_os_str().to_string_lossy())).collect();
    let base = if literal.as_os_str().is_empty() { PathBuf::from(".") } else { literal };
    if !base.is_dir() {
        return Vec::new();
    }
    walk_dir(&base, Some(&glob), walk, found)
}

/// Walks a directory for manifests (or, with `glob`, the manifests it
/// matches), Helm charts (not walked into) and Kustomize directories (see
/// [`render::plan`]).
fn walk_dir(dir: &Path, glob: Option<&GlobMatcher>, walk: &Walk, found: &mut Discovered) -> Vec<Walked> {
    let charts = Arc::new(Mutex::new(Vec::new()));
    let (met, exclude) = (Arc::clone(&charts), walk.clone());
    let walker = WalkBuilder::new(dir)
        .hidden(true)
        .ignore(false)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(true)
        .parents(true)
        // Symlinked directories are not followed: they can loop.
        .follow_links(false)
        .sort_by_file_name(std::ffi::OsStr::cmp)
        .filter_entry(move |entry| {
            let path = entry.path();
            if entry.depth() > 0 && exclude.excludes(path) {
                return false;
            }
            let chart = entry.depth() > 0 && entry.file_type().is_some_and(|t| t.is_dir()) && render::is_chart(path);
            if chart && let Ok(mut charts) = met.lock() {
                charts.push(path.to_path_buf());
            }
            !chart
        })
        .build();
    let mut files = Vec::new();
    let mut kustomizations = Vec::new();
    for entry in walker {
        match entry {
            Ok(e) if e.file_type().is_some_and(|t| t.is_file()) && is_manifest(e.path()) => {
                let path = e.into_path();
                let shown = path.strip_prefix(".").unwrap_or(&path);
                if glob.is_none_or(|g| g.is_match(shown)) {
                    files.push(path);
                }
            }
            Ok(e) if e.file_type().is_some_and(|t| t.is_dir()) && kustomization::file_in(e.path()).is_some() => {
                kustomizations.push(e.into_path());
            }
            Ok(_) => {}
            Err(e) => found.errors.push((dir.display().to_string(), ReadError::Io(e.to_string()))),
        }
    }
    let mut items: Vec<Walked> = Vec::new();
    if glob.is_none() {
        let plan = render::plan(&kustomizations);
        found.errors.extend(plan.errors.into_iter().map(unread_kustomization));
        for component in &plan.orphan_components {
            found.warnings.push((
                component.display().to_string(),
                "Kustomize component not built: no kustomization in the walk includes it (`components:`)".into(),
            ));
        }
        let read_by = |p: &Path| plan.read.get(&p.canonicalize().unwrap_or_else(|_| p.to_path_buf()));
        files.retain(|f| {
            let Some(kustomization) = read_by(f) else { return true };
            found.notes.push((f.display().to_string(), crate::outcome::unchecked::read_by_build(kustomization)));
            false
        });
        items.extend(plan.roots.into_iter().map(Walked::Kustomize));
        if let Ok(mut charts) = charts.lock() {
            items.extend(charts.drain(..).map(Walked::Chart));
        }
    }
    items.extend(files.into_iter().map(Walked::File));
    // A directory's own files before its subdirectories' (`x.yaml` before
    // `team/x.yaml`), as `ls -R` lists them: the walk sorts each
    // directory's entries by name, files and directories mixed. Comparing
    // parents component by component orders directories depth first.
    items.sort_by_cached_key(|item| {
        let key = item.sort_key();
        (key.parent().map(Path::to_path_buf), key.file_name().map(std::ffi::OsStr::to_os_string))
    });
    items
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
        Input::Rendered(r) => r.text.len() as u64 > limit,
    };
    if known_too_large {
        return Err(ReadError::TooLarge(limit));
    }
    let read = match input {
        Input::File(p) => std::fs::File::open(p).and_then(|f| f.take(limit + 1).read_to_end(&mut bytes)),
        Input::Stdin => std::io::stdin().lock().take(limit + 1).read_to_end(&mut bytes),
        Input::Rendered(r) => return Ok(r.text.clone()),
    };
    read.map_err(|e| ReadError::Io(e.to_string()))?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge(limit));
    }
    // memchr: this runs on every byte of every input, on the calling thread.
    if let Some(pos) = memchr::memchr(0, &bytes) {
        return Err(ReadError::NotText(format!("NUL byte at line {}", line_of(&bytes, pos))));
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").map(<[u8]>::to_vec).unwrap_or(bytes);
    let text = String::from_utf8(bytes).map_err(|e| {
        let pos = e.utf8_error().valid_up_to();
        ReadError::NotText(format!("invalid UTF-8 at line {}", line_of(e.as_bytes(), pos)))
    })?;
    let named_json = matches!(input, Input::File(p) if p.extension().is_some_and(|e| e.eq_ignore_ascii_case("json")));
    if named_json && let Some((line, column, what)) = strict_json_error(&text) {
        return Err(ReadError::NotJson { line, column, what });
    }
    Ok(text)
}

fn line_of(bytes: &[u8], pos: usize) -> usize {
    bytes[..pos.min(bytes.len())].iter().filter(|b| **b == b'\n').count() + 1
}
