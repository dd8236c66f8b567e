//! What one kustomization file says: the directories it builds on, the
//! files it reads, and its patches, each with where its text sits in its
//! file (an inline patch's lines are those of the kustomization).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::input::source::Document;
use policies::yaml::limits::Limits;
use policies::yaml::parse::parse_stream;

/// The names kustomize looks for in a directory, in its order.
pub const FILE_NAMES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// The kustomization file of `dir`, if it has one.
pub fn file_in(dir: &Path) -> Option<PathBuf> {
    FILE_NAMES.iter().map(|name| dir.join(name)).find(|file| file.is_file())
}

/// One kustomization, as far as lifeguard reads it.
#[derive(Debug, Clone, Default)]
pub struct Kustomization {
    /// Its file.
    pub file: PathBuf,
    /// `kind: Component`: built only by the kustomizations that include it.
    pub component: bool,
    /// The directories it builds on (`resources`, `bases`), in order.
    pub resources: Vec<PathBuf>,
    /// Its `components`, in order.
    pub components: Vec<PathBuf>,
    /// The files it reads: resource files, patch files and kustomize's own
    /// configuration (`crds`, `configurations`, `generators`,
    /// `transformers`, `validators`, `replacements`), which are never
    /// manifests to lint on their own.
    pub files: Vec<PathBuf>,
    /// Its patches, in the order kustomize applies them.
    pub patches: Vec<Patch>,
}

/// One patch: a strategic-merge patch (one or more objects) or a JSON 6902
/// list of operations.
#[derive(Debug, Clone)]
pub struct Patch {
    /// The file its text is in: a patch file, or the kustomization for an
    /// inline patch.
    pub file: PathBuf,
    /// The patch's YAML.
    pub text: String,
    /// The line of `file` where `text` begins, and the columns its lines
    /// are indented by there; `None` when its lines cannot be told (a
    /// quoted inline patch).
    pub at: Option<(u32, u32)>,
    /// The objects it applies to, when its `target` names them.
    pub target: Option<Target>,
}

/// A patch's `target`, as far as lifeguard matches it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Target {
    /// `kind`, when given.
    pub kind: Option<String>,
    /// `name`, when given.
    pub name: Option<String>,
}

/// Why a kustomization could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unread {
    /// The file.
    pub file: PathBuf,
    /// Its line, when known.
    pub line: Option<u32>,
    /// What is wrong.
    pub message: String,
}

/// Reads the kustomization of `dir` (a directory holding one).
pub fn read(dir: &Path) -> Result<Kustomization, Unread> {
    let Some(file) = file_in(dir) else {
        return Err(Unread { file: dir.to_path_buf(), line: None, message: "no kustomization file".into() });
    };
    let unread = |line: Option<u32>, message: String| Unread { file: file.clone(), line, message };
    let text = std::fs::read_to_string(&file).map_err(|e| unread(None, e.to_string()))?;
    let (docs, error) = parse_stream(&text, &Limits::default());
    if let Some(e) = error {
        return Err(unread(Some(e.line), e.message));
    }
    let Some(doc) = docs.into_iter().next() else { return Ok(Kustomization { file, ..Kustomization::default() }) };
    let mut out = Kustomization { file: file.clone(), ..Kustomization::default() };
    out.component = doc.value["kind"] == "Component";
    let strings = |key: &str| -> Vec<String> {
        doc.value[key].as_array().into_iter().flatten().filter_map(|v| v.as_str().map(str::to_owned)).collect()
    };
    for reference in strings("resources").into_iter().chain(strings("bases")) {
        if is_remote(&reference) {
            continue;
        }
        let path = dir.join(&reference);
        if path.is_dir() { out.resources.push(path) } else { out.files.push(path) }
    }
    out.components = strings("components").iter().filter(|c| !is_remote(c)).map(|c| dir.join(c)).collect();
    for key in ["crds", "configurations", "generators", "transformers", "validators"] {
        out.files.extend(strings(key).iter().filter(|f| !f.contains('\n')).map(|f| dir.join(f)));
    }
    for r in doc.value["replacements"].as_array().into_iter().flatten() {
        out.files.extend(r["path"].as_str().map(|p| dir.join(p)));
    }
    // `patchesStrategicMerge` and `patchesJson6902` (deprecated, still
    // read) run before `patches`, as kustomize's own fixing-up orders them.
    for (i, entry) in doc.value["patchesStrategicMerge"].as_array().into_iter().flatten().enumerate() {
        let Some(s) = entry.as_str() else { continue };
        if s.contains('\n') || !dir.join(s).is_file() {
            out.patches.extend(inline(&doc, &file, &format!("/patchesStrategicMerge/{i}"), s, None));
        } else {
            out.patches.extend(from_file(&dir.join(s), None));
            out.files.push(dir.join(s));
        }
    }
    for key in ["patchesJson6902", "patches"] {
        for (i, entry) in doc.value[key].as_array().into_iter().flatten().enumerate() {
            let target = entry.get("target").map(target_of);
            if let Some(path) = entry["path"].as_str() {
                out.patches.extend(from_file(&dir.join(path), target));
                out.files.push(dir.join(path));
            } else if let Some(patch) = entry["patch"].as_str() {
                out.patches.extend(inline(&doc, &file, &format!("/{key}/{i}/patch"), patch, target));
            }
        }
    }
    Ok(out)
}

/// A remote base (`github.com/...`, `https://...`): nothing on disk to read.
fn is_remote(reference: &str) -> bool {
    reference.contains("://") || reference.starts_with("github.com/") || reference.starts_with("git@")
}

fn target_of(target: &Value) -> Target {
    let text = |key: &str| target[key].as_str().map(str::to_owned);
    Target { kind: text("kind"), name: text("name") }
}

fn from_file(file: &Path, target: Option<Target>) -> Option<Patch> {
    let text = std::fs::read_to_string(file).ok()?;
    Some(Patch { file: file.to_path_buf(), text, at: Some((1, 0)), target })
}

/// An inline patch at `pointer` of the kustomization: a block scalar's
/// text begins on the line after its key, where the parser places the
/// scalar, at the column its lines are indented to; a patch written on its
/// key's own line (quoted) has no lines to tell.
fn inline(doc: &Document, file: &Path, pointer: &str, patch: &str, target: Option<Target>) -> Option<Patch> {
    let node = node_at(doc, pointer)?;
    let key_line = node.key.map_or(node.start.line, |k| k.line);
    let at = (node.start.line > key_line).then_some((node.start.line, node.start.col));
    Some(Patch { file: file.to_path_buf(), text: patch.to_owned(), at, target })
}

/// The position node a pointer names, when it exists.
pub(super) fn node_at<'a>(doc: &'a Document, pointer: &str) -> Option<&'a crate::input::source::Node> {
    let (mut value, mut node) = (&doc.value, &doc.root);
    for token in pointer.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        let index = match value {
            Value::Object(map) => map.keys().position(|k| *k == token)?,
            Value::Array(items) => token.parse::<usize>().ok().filter(|i| *i < items.len())?,
            _ => return None,
        };
        value = match value {
            Value::Object(map) => map.get(&token)?,
            Value::Array(items) => items.get(index)?,
            _ => return None,
        };
        node = node.kids.get(index)?;
    }
    Some(node)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_directories_files_and_patches_with_their_lines() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("base")).expect("mkdir");
        std::fs::write(root.join("base/kustomization.yaml"), "resources: [app.yaml]\n").expect("write");
        std::fs::write(root.join("probe.yaml"), "kind: Deployment\nmetadata:\n  name: app\n").expect("write");
        let text = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- base\n\
                    - https://github.com/x/y//deploy\ncomponents:\n- ../c\npatches:\n- path: probe.yaml\n\
                    - target:\n    kind: Deployment\n    name: app\n  patch: |-\n    - op: add\n      path: /spec/x\n      value: 1\n";
        std::fs::write(root.join("kustomization.yaml"), text).expect("write");
        let k = read(root).expect("read");
        assert!(!k.component);
        assert_eq!(k.resources, [root.join("base")]);
        assert_eq!(k.components, [root.join("../c")]);
        assert_eq!(k.files, [root.join("probe.yaml")]);
        assert_eq!(k.patches.len(), 2);
        assert_eq!((k.patches[0].at, k.patches[0].target.clone()), (Some((1, 0)), None));
        let inline = &k.patches[1];
        assert_eq!(inline.file, root.join("kustomization.yaml"));
        assert_eq!(inline.at, Some((14, 4)), "the line after `patch: |-`, indented by 4");
        assert_eq!(text.lines().nth(13).map(str::trim), Some("- op: add"));
        assert_eq!(inline.target, Some(Target { kind: Some("Deployment".into()), name: Some("app".into()) }));
    }

    #[test]
    fn a_component_and_an_unparsable_kustomization() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("kustomization.yaml"), "kind: Component\n").expect("write");
        assert!(read(dir.path()).expect("read").component);
        std::fs::write(dir.path().join("kustomization.yaml"), "resources: [a\n").expect("write");
        let e = read(dir.path()).expect_err("a syntax error");
        assert!(e.line.is_some() && e.file.ends_with("kustomization.yaml"), "{e:?}");
    }
}
