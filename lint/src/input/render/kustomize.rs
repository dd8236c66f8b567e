//! A Kustomize directory built as kubectl would apply it, with each
//! object's origin: lifeguard writes, in a temporary directory, a
//! kustomization that takes the user's as its one resource and asks for
//! `buildMetadata: [originAnnotations]`, and runs `kustomize build` (or
//! `kubectl kustomize`) on it. The user's files are never written. The
//! annotation is taken out of the output again, each object is headed by a
//! `# Source:` comment naming its file (as Helm heads its documents), and
//! the patches of every kustomization the build reads are kept, so that a
//! finding lands on the line of the file that set its field
//! ([`super::source_map`]).

use std::path::{Component, Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use serde_json::Value;

use super::kustomization::{self, Kustomization, Patch, Target};
use super::source_map::{self, Piece, SourceMap};
use crate::input::source::{Document, Location};
use crate::input::split::parts;
use policies::yaml::limits::Limits;
use policies::yaml::parse::parse_stream;

/// The annotation kustomize writes an object's origin into.
const ORIGIN: &str = "config.kubernetes.io/origin";

/// The program that builds: `kustomize build`, else `kubectl kustomize`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Builder {
    program: PathBuf,
    /// The arguments before the directory.
    args: Vec<&'static str>,
}

impl Builder {
    /// The first of `kustomize` and `kubectl` on `PATH`.
    pub fn on_path() -> Result<Builder, String> {
        if let Some(program) = on_path("kustomize") {
            return Ok(Builder { program, args: vec!["build"] });
        }
        if let Some(program) = on_path("kubectl") {
            return Ok(Builder { program, args: vec!["kustomize"] });
        }
        Err("a Kustomize directory needs `kustomize` or `kubectl` (for `kubectl kustomize`) on PATH, and neither is: \
             install one, or lint the built output: `kustomize build DIR | lifeguard lint -`"
            .into())
    }

    /// How a build is named in messages (`kustomize build`).
    pub fn name(&self) -> String {
        let program = self.program.file_name().map_or_else(|| "kustomize".into(), |n| n.to_string_lossy());
        format!("{program} {}", self.args.join(" "))
    }
}

/// An executable file named `name` in a directory of `PATH`.
pub(super) fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|candidate| is_executable(candidate))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

/// What a Kustomize build keeps beside its output, to place findings by
/// and to build it again with edited files.
#[derive(Debug)]
pub struct Build {
    /// The patches of every kustomization the build read, in the order
    /// kustomize applied them, parsed once.
    pub patches: Vec<ParsedPatch>,
    /// The directory built and those of every kustomization it builds on,
    /// canonical.
    pub dirs: Vec<PathBuf>,
    /// The files its kustomizations name outside those directories'
    /// top level (resources, patches, kustomize's configuration), canonical.
    pub files: Vec<PathBuf>,
}

/// Where a value is to be written in the user's files: the document of a
/// file and the pointer there ([`source_map::target`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteAt {
    /// The file as shown (from the working directory when under it).
    pub file: Arc<str>,
    /// Which document of the file.
    pub index: usize,
    /// The pointer in that document.
    pub pointer: String,
    /// Where it is in the file: the field, or the mapping it goes in.
    pub at: Location,
    /// Written inside a kustomization's inline patch (a block scalar), not
    /// a file of its own.
    pub inline: bool,
}

/// A patch, parsed, and the file it is shown in.
#[derive(Debug)]
pub struct ParsedPatch {
    file: Arc<str>,
    docs: Vec<Document>,
    at: (u32, u32),
    target: Option<Target>,
}

/// Builds `dir` with `builder`: the output, without the origin
/// annotations, each object headed by `# Source: FILE` where its file is
/// on disk, and the build's patches. The error is the builder's own message.
pub fn build(builder: &Builder, dir: &Path) -> Result<(String, Build), String> {
    let target = dir.canonicalize().map_err(|e| format!("{}: {e}", dir.display()))?;
    let scratch = tempfile::tempdir().map_err(|e| format!("a temporary directory: {e}"))?;
    let wrapper = scratch.path().canonicalize().map_err(|e| format!("a temporary directory: {e}"))?;
    // kustomize refuses an absolute resource: the user's directory is named
    // from the temporary one.
    let relative = relative_path(&wrapper, &target);
    let kustomization = format!(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- {}\nbuildMetadata: [originAnnotations]\n",
        serde_json::to_string(&relative.to_string_lossy()).unwrap_or_default()
    );
    std::fs::write(wrapper.join("kustomization.yaml"), kustomization).map_err(|e| format!("{e}"))?;
    let output = Command::new(&builder.program)
        .args(&builder.args)
        .arg(&wrapper)
        .output()
        .map_err(|e| format!("running {}: {e}", builder.name()))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        // Its message names our temporary kustomization: name the user's directory instead.
        let message = stderr.trim().replace(&wrapper.display().to_string(), &dir.display().to_string());
        return Err(format!("{} failed: {message}", builder.name()));
    }
    let built =
        String::from_utf8(output.stdout).map_err(|_| format!("{} wrote text that is not UTF-8", builder.name()))?;
    let cwd = std::env::current_dir().ok().and_then(|c| c.canonicalize().ok());
    let shown = |file: &Path| shown_file(cwd.as_deref(), file);
    // An origin is named from the directory kustomize built: ours.
    let text = headed_by_origin(&built, &|origin: &str| shown(&wrapper.join(origin)));
    let mut read = Read::default();
    gather(&target, &mut read);
    let patches = read.patches.into_iter().map(|p| parse_patch(p, &shown)).collect();
    let files = read.files.iter().map(|f| f.canonicalize().unwrap_or_else(|_| normalize(f))).collect();
    Ok((text, Build { patches, dirs: read.dirs, files }))
}

/// What [`gather`] collects of the kustomizations a build reads.
#[derive(Debug, Default)]
struct Read {
    dirs: Vec<PathBuf>,
    files: Vec<PathBuf>,
    patches: Vec<Patch>,
}

/// A file as shown, an object's origin or a patch alike: from the working
/// directory when under it.
fn shown_file(cwd: Option<&Path>, file: &Path) -> String {
    let file = file.canonicalize().unwrap_or_else(|_| normalize(file));
    let relative = cwd.and_then(|c| file.strip_prefix(c).ok()).map(Path::to_path_buf);
    relative.unwrap_or(file).display().to_string()
}

fn parse_patch(patch: Patch, shown: &impl Fn(&Path) -> String) -> ParsedPatch {
    let (docs, _) = parse_stream(&patch.text, &Limits::default());
    ParsedPatch { file: shown(&patch.file).into(), docs, at: patch.at.unwrap_or((0, 0)), target: patch.target }
}

/// Every patch of `dir`'s kustomization and of those it builds on, in the
/// order kustomize applies them: a kustomization's resources first, then
/// its components, then its own patches.
fn gather(dir: &Path, out: &mut Read) {
    let key = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    if out.dirs.contains(&key) {
        return;
    }
    out.dirs.push(key);
    let Ok(Kustomization { resources, components, patches, files, .. }) = kustomization::read(dir) else { return };
    for sub in resources.iter().chain(&components) {
        if kustomization::file_in(sub).is_some() {
            gather(sub, out);
        }
    }
    out.files.extend(files);
    out.patches.extend(patches);
}

/// kustomize's output with each object's origin annotation taken out (and
/// its `annotations:` with it when nothing else is left there) and a
/// `# Source: FILE` comment heading each object whose origin is a file of
/// this machine. kustomize writes the annotation in one form (a literal
/// block under `metadata.annotations`, two spaces a level), so the text is
/// edited by its lines and keeps every other line as kustomize wrote it.
fn headed_by_origin(built: &str, shown: &impl Fn(&str) -> String) -> String {
    let mut out = String::with_capacity(built.len());
    for part in parts(built) {
        let document = &built[part.start..part.end];
        let lines: Vec<&str> = document.lines().collect();
        let mut keep = vec![true; lines.len()];
        let mut origin: Option<String> = None;
        let mut remote = false;
        if let Some(k) = lines.iter().position(|l| l.trim_start().starts_with(&format!("{ORIGIN}:"))) {
            let indent = indent_of(lines[k]);
            keep[k] = false;
            let mut j = k + 1;
            while j < lines.len() && (lines[j].trim().is_empty() || indent_of(lines[j]) > indent) {
                let field = lines[j].trim();
                if let Some(path) = field.strip_prefix("path: ") {
                    origin = Some(path.trim_matches(['"', '\'']).to_owned());
                }
                remote |= field.starts_with("repo: ") || field.starts_with("configuredIn: ");
                keep[j] = false;
                j += 1;
            }
            // Its `annotations:`, left empty.
            let parent = (0..k).rev().find(|&p| indent_of(lines[p]) < indent);
            if let Some(p) = parent {
                let next = (p + 1..lines.len()).find(|&n| keep[n]);
                let empty = next.is_none_or(|n| indent_of(lines[n]) <= indent_of(lines[p]));
                if empty && lines[p].trim() == "annotations:" {
                    keep[p] = false;
                }
            }
        }
        let mut kept = lines.iter().zip(&keep).filter(|(_, k)| **k).map(|(l, _)| *l);
        let first = kept.next();
        // The separator stays first; the comment heads the object.
        let separator = first.filter(|l| l.trim_end() == "---");
        if let Some(separator) = separator {
            out.push_str(separator);
            out.push('\n');
        }
        if let Some(origin) = origin.filter(|_| !remote) {
            out.push_str("# Source: ");
            out.push_str(&shown(&origin));
            out.push('\n');
        }
        if separator.is_none()
            && let Some(first) = first
        {
            out.push_str(first);
            out.push('\n');
        }
        for line in kept {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// `to` named from `from` (both absolute and canonical).
fn relative_path(from: &Path, to: &Path) -> PathBuf {
    let (a, b): (Vec<Component<'_>>, Vec<Component<'_>>) = (from.components().collect(), to.components().collect());
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..a.len() {
        out.push("..");
    }
    for c in &b[common..] {
        out.push(c);
    }
    out
}

/// A path with `.` and `..` resolved by its text.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

impl Build {
    /// Where each line of `rendered`, one built object, came from, given
    /// its origin file's text.
    pub fn map(&self, origin_file: &Arc<str>, origin_text: &str, rendered: &str) -> Option<SourceMap> {
        self.with_pieces(origin_file, origin_text, rendered, |built, origin, patches| {
            source_map::map(built, origin, patches)
        })
    }

    /// Where each value written at one of `pointers` of `rendered`, one
    /// built object, is to be written in the user's files for the build to
    /// give it ([`source_map::target`]), given its origin file's text.
    pub fn targets(
        &self,
        origin_file: &Arc<str>,
        origin_text: &str,
        rendered: &str,
        pointers: &[String],
    ) -> Option<Vec<Option<WriteAt>>> {
        self.with_pieces(origin_file, origin_text, rendered, |built, origin, patches| {
            let target = |pointer: &String| {
                let (piece, there) = source_map::target(&built.value, pointer, origin, patches)?;
                Some(WriteAt {
                    file: Arc::clone(piece.file),
                    index: piece.index,
                    at: piece.place(&there),
                    pointer: there,
                    inline: piece.at != (1, 0),
                })
            };
            pointers.iter().map(target).collect()
        })
    }

    /// `f` on the built object of `rendered`, the document of its origin
    /// file it was built from, and the patches that apply to it, in order.
    fn with_pieces<R>(
        &self,
        origin_file: &Arc<str>,
        origin_text: &str,
        rendered: &str,
        f: impl FnOnce(&Document, Option<Piece<'_>>, &[Piece<'_>]) -> R,
    ) -> Option<R> {
        let (mut built, _) = parse_stream(rendered, &Limits::default());
        let built = built.drain(..).next()?;
        let (kind, name) = kind_and_name(&built.value);
        let (origins, _) = parse_stream(origin_text, &Limits::default());
        let origin = origins
            .iter()
            .enumerate()
            .find(|(_, d)| applies(&d.value, kind, name))
            .map(|(index, doc)| Piece { file: origin_file, doc, at: (1, 0), operations: false, index });
        let mut pieces = Vec::new();
        for patch in &self.patches {
            for (index, doc) in patch.docs.iter().enumerate() {
                let operations = doc.value.is_array();
                let targeted = patch.target.as_ref().is_some_and(|t| {
                    t.kind.as_deref().is_none_or(|k| k == kind)
                        && t.name.as_deref().is_none_or(|n| name.is_some_and(|name| name.contains(n)))
                });
                let own = patch.target.is_none() && !operations && applies(&doc.value, kind, name);
                if (targeted || own) && patch.at.0 > 0 {
                    pieces.push(Piece { file: &patch.file, doc, at: patch.at, operations, index });
                }
            }
        }
        Some(f(&built, origin, &pieces))
    }
}

fn kind_and_name(object: &Value) -> (&str, Option<&str>) {
    (object["kind"].as_str().unwrap_or(""), object["metadata"]["name"].as_str())
}

/// Whether `doc` is the object `kind`/`name` was built from: the same kind
/// and a name the built one holds (a prefix or suffix may have been added).
fn applies(doc: &Value, kind: &str, name: Option<&str>) -> bool {
    let (k, n) = kind_and_name(doc);
    k == kind
        && match (n, name) {
            (Some(n), Some(name)) => name.contains(n),
            (None, None) => true,
            _ => false,
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_origin_annotation_becomes_a_source_comment() {
        let built = "apiVersion: v1\nkind: Service\nmetadata:\n  annotations:\n    config.kubernetes.io/origin: |\n      path: ../base/svc.yaml\n  name: a\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  annotations:\n    a.example/keep: \"1\"\n    config.kubernetes.io/origin: |\n      path: ../base/app.yaml\n  name: b\n---\nkind: ConfigMap\nmetadata:\n  annotations:\n    config.kubernetes.io/origin: |\n      configuredIn: kustomization.yaml\n      configuredBy:\n        kind: ConfigMapGenerator\n  name: c\n";
        let text = headed_by_origin(built, &|p: &str| format!("X/{p}"));
        assert_eq!(
            text,
            "# Source: X/../base/svc.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: a\n---\n# Source: X/../base/app.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  annotations:\n    a.example/keep: \"1\"\n  name: b\n---\nkind: ConfigMap\nmetadata:\n  name: c\n"
        );
    }

    #[test]
    fn relative_paths_climb_to_the_common_root() {
        assert_eq!(relative_path(Path::new("/tmp/x"), Path::new("/work/a/b")), PathBuf::from("../../work/a/b"));
        assert_eq!(normalize(Path::new("/tmp/x/../../work/a")), PathBuf::from("/work/a"));
    }
}
