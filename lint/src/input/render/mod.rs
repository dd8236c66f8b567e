//! Inputs that are not manifests until a tool makes them so: a Kustomize
//! directory (built with `kustomize build` or `kubectl kustomize`) and a
//! Helm chart (rendered with `helm template`). Each becomes one input whose
//! text is the tool's output, headed by `# Source:` comments, so findings
//! land on the user's own files.

pub mod helm_chart;
pub mod kustomization;
pub mod kustomize;
pub mod rebuild;
pub mod source_map;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

pub use helm_chart::HelmOptions;
pub use kustomize::{Build, Builder};

use kustomization::Kustomization;

/// What made a rendered input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Renderer {
    /// `kustomize build`.
    Kustomize,
    /// `helm template`.
    Helm,
}

/// A directory a tool made manifests of.
#[derive(Debug)]
pub struct Rendered {
    /// What made it.
    pub renderer: Renderer,
    /// The directory, as given or met in a walk.
    pub dir: PathBuf,
    /// Its name as shown: `<kustomize build DIR>`, `<helm template DIR>`
    /// (no viewer opens it; findings name the user's files).
    pub name: String,
    /// The output.
    pub text: String,
    /// For a build, its patches, to place findings by.
    pub build: Option<Build>,
}

impl PartialEq for Rendered {
    fn eq(&self, other: &Rendered) -> bool {
        self.name == other.name
    }
}

impl Eq for Rendered {}

impl PartialOrd for Rendered {
    fn partial_cmp(&self, other: &Rendered) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Rendered {
    fn cmp(&self, other: &Rendered) -> std::cmp::Ordering {
        self.name.cmp(&other.name)
    }
}

/// How a rendered input is named.
pub fn name_of(renderer: Renderer, dir: &Path) -> String {
    match renderer {
        Renderer::Kustomize => format!("<kustomize build {}>", dir.display()),
        Renderer::Helm => format!("<helm template {}>", dir.display()),
    }
}

/// Whether `dir` is a Helm chart.
pub fn is_chart(dir: &Path) -> bool {
    dir.join("Chart.yaml").is_file()
}

/// How directories are rendered.
#[derive(Debug, Clone, Default)]
pub struct RenderOptions {
    /// `helm template`'s flags.
    pub helm: HelmOptions,
}

/// Builds a Kustomize directory; the error says why it could not be.
pub fn kustomize(dir: &Path) -> Result<Rendered, String> {
    let builder = Builder::on_path()?;
    let (text, build) = kustomize::build(&builder, dir)?;
    Ok(Rendered {
        renderer: Renderer::Kustomize,
        dir: dir.to_path_buf(),
        name: name_of(Renderer::Kustomize, dir),
        text,
        build: Some(build),
    })
}

/// Renders a Helm chart; the error says why it could not be.
pub fn helm(dir: &Path, options: &RenderOptions) -> Result<Rendered, String> {
    let text = helm_chart::render(dir, &options.helm)?;
    Ok(Rendered {
        renderer: Renderer::Helm,
        dir: dir.to_path_buf(),
        name: name_of(Renderer::Helm, dir),
        text,
        build: None,
    })
}

/// What a walk does with the Kustomize directories it met: which to build
/// (those no other kustomization of the walk builds on), which files the
/// builds read (never linted on their own: a patch is not an object), and
/// the components no kustomization of the walk includes.
#[derive(Debug, Default)]
pub struct KustomizePlan {
    /// The directories to build, in the walk's order.
    pub roots: Vec<PathBuf>,
    /// Canonical paths of the files some kustomization reads, and the
    /// (first) kustomization file that reads each.
    pub read: HashMap<PathBuf, PathBuf>,
    /// Components nothing in the walk includes: not built.
    pub orphan_components: Vec<PathBuf>,
    /// Kustomizations that could not be read: (file, line, message).
    pub errors: Vec<kustomization::Unread>,
}

/// Plans the builds of the Kustomize directories a walk met.
pub fn plan(dirs: &[PathBuf]) -> KustomizePlan {
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let mut plan = KustomizePlan::default();
    // Each kustomization read once, by canonical directory: the walk's,
    // then those they build on (bases outside the walk too).
    let mut read: HashMap<PathBuf, Kustomization> = HashMap::new();
    let mut walked = Vec::new();
    for dir in dirs {
        match kustomization::read(dir) {
            Ok(k) => {
                walked.push((dir, canonical(dir), k.component));
                read.insert(canonical(dir), k);
            }
            Err(e) => plan.errors.push(e),
        }
    }
    let mut built_on: HashSet<PathBuf> = HashSet::new();
    let mut stack: Vec<PathBuf> = walked.iter().map(|(_, key, _)| key.clone()).collect();
    let mut visited: HashSet<PathBuf> = HashSet::new();
    while let Some(dir) = stack.pop() {
        if !visited.insert(dir.clone()) {
            continue;
        }
        if !read.contains_key(&dir) {
            let Ok(k) = kustomization::read(&dir) else { continue };
            read.insert(dir.clone(), k);
        }
        let Some(k) = read.get(&dir) else { continue };
        for file in k.files.iter().chain(k.patches.iter().map(|p| &p.file)) {
            plan.read.entry(canonical(file)).or_insert_with(|| k.file.clone());
        }
        for sub in k.resources.iter().chain(&k.components) {
            let sub = canonical(sub);
            built_on.insert(sub.clone());
            stack.push(sub);
        }
    }
    for (dir, key, component) in walked {
        if built_on.contains(&key) {
            continue;
        }
        if component {
            plan.orphan_components.push(dir.to_path_buf());
        } else {
            plan.roots.push(dir.to_path_buf());
        }
    }
    plan
}
