//! Which Services inform a file's findings, so that they do not depend on
//! which other files are named in the same run: a manifest's Services are
//! those of its own file and of the other manifest files of its directory
//! (read for their Services even when they are not named); stdin has only
//! its own stream.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use policies::Batch;

use super::context_objects::{context_in, may_hold_context};
use super::discover::{Input, is_manifest, read_text};
use policies::yaml::limits::Limits;

/// The context of each input and what the files that were not named add.
#[derive(Debug, Default)]
pub struct Contexts {
    /// The context of each input, aligned with the inputs given.
    pub of_input: Vec<usize>,
    /// Per context, a batch holding the Services of the sibling files that
    /// were not named; the named files' own objects are added by the caller.
    pub seeds: Vec<Batch>,
    /// Sibling files read for their Services, in order.
    pub read: Vec<PathBuf>,
}

/// Groups inputs by context and reads the Services of their directories'
/// other manifest files. A sibling that cannot be read or parsed adds what
/// parsed before the problem (as it would if named) and never an error: it
/// is context, not input.
pub fn contexts(inputs: &[Input], limits: &Limits) -> Contexts {
    let mut out = Contexts::default();
    let mut by_dir: BTreeMap<PathBuf, usize> = BTreeMap::new();
    let mut named: BTreeSet<PathBuf> = BTreeSet::new();
    let mut dirs: Vec<PathBuf> = Vec::new();
    for input in inputs {
        let dir = match input {
            Input::File(path) if is_manifest(path) => shared_dir(path),
            _ => None,
        };
        let context = match dir {
            Some(dir) => {
                if let Input::File(path) = input {
                    named.insert(canonical(path));
                }
                *by_dir.entry(dir.clone()).or_insert_with(|| {
                    dirs.push(dir);
                    out.seeds.push(Batch::default());
                    out.seeds.len() - 1
                })
            }
            // Stdin, a file named whatever its extension, a chart template:
            // only its own Services.
            None => {
                out.seeds.push(Batch::default());
                out.seeds.len() - 1
            }
        };
        out.of_input.push(context);
    }
    for (dir, context) in &by_dir {
        for sibling in siblings(dir).into_iter().filter(|p| !named.contains(&canonical(p))) {
            let Ok(text) = read_text(&Input::File(sibling.clone()), limits) else { continue };
            if !may_hold_context(&text) {
                continue;
            }
            if let Some(batch) = out.seeds.get_mut(*context) {
                context_in(&text, limits).iter().for_each(|service| batch.add(service));
            }
            out.read.push(sibling);
        }
    }
    out
}

/// The directory whose manifests share Services with `path`, or `None`
/// when it has none to share: a chart's `templates/` is not manifests.
pub(crate) fn shared_dir(path: &Path) -> Option<PathBuf> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let dir = canonical(&dir);
    let chart_templates = dir.file_name().is_some_and(|n| n == "templates")
        && dir.parent().is_some_and(|p| p.join("Chart.yaml").is_file());
    (!chart_templates).then_some(dir)
}

/// One spelling per file, so a file named as `./a.yaml` is not its own sibling `a.yaml`.
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The manifest files of a directory (not its subdirectories), sorted, as
/// a directory walk would list them.
pub(crate) fn siblings(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_dir()))
        .map(|e| e.path())
        .filter(|p| is_manifest(p) && p.is_file())
        .collect();
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use policies::Policy;

    use crate::input::Limits;
    use crate::lint::lint_paths;
    use crate::outcome::Outcome;

    const WORKLOAD: &str = "kind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: web\n        ports: [{containerPort: 80}]\n";
    const SELECTING: &str = "kind: Service\nmetadata: {name: web}\nspec: {selector: {app: web}, ports: [{port: 80}]}\n";

    fn lint(paths: &[&Path]) -> Outcome {
        let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        lint_paths(&paths, &Policy::default(), &Limits::default())
    }

    /// `file: message` of each readiness-probe-missing finding.
    fn readiness(out: &Outcome) -> Vec<String> {
        out.findings
            .iter()
            .filter(|f| f.finding.rule == "readiness-probe-missing")
            .map(|f| {
                format!(
                    "{}: {}",
                    Path::new(&*f.file).file_name().map(|n| n.to_string_lossy()).unwrap_or_default(),
                    f.finding.message
                )
            })
            .collect()
    }

    fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write");
        path
    }

    #[test]
    fn a_file_sees_its_directorys_services_whether_or_not_they_are_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let deploy = write(dir.path(), "deploy.yaml", WORKLOAD);
        let service = write(dir.path(), "service.yaml", SELECTING);
        let alone = readiness(&lint(&[&deploy]));
        assert_eq!(alone.len(), 1, "{alone:?}");
        assert!(alone[0].contains("Service/web sends traffic to port 80"), "{alone:?}");
        assert_eq!(readiness(&lint(&[&deploy, &service])), alone);
        assert_eq!(readiness(&lint(&[&service, &deploy])), alone);
        assert_eq!(readiness(&lint(&[dir.path()])), alone);
        // A file of another directory does not lend its Services.
        let other = tempfile::tempdir().expect("tempdir");
        let elsewhere = write(other.path(), "deploy.yaml", WORKLOAD);
        let both = readiness(&lint(&[&elsewhere, &deploy]));
        assert_eq!(both.len(), 2);
        assert!(both[0].contains("declares ports 80"), "{both:?}");
        assert_eq!(both[1], alone[0]);
    }

    #[test]
    fn a_broken_sibling_is_context_never_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let deploy = write(dir.path(), "deploy.yaml", WORKLOAD);
        // Services before a syntax error count, as they would if the file were named.
        write(dir.path(), "broken.yaml", &format!("{SELECTING}---\nkind: Service\nspec: [1, 2\n"));
        std::fs::write(dir.path().join("binary.yaml"), b"kind: Service\0").expect("write");
        let out = lint(&[&deploy]);
        assert!(out.errors.is_empty() && out.warnings.is_empty(), "{:?} {:?}", out.errors, out.warnings);
        assert_eq!(out.files, 1);
        assert_eq!(out.exit_code(None), 0);
        assert_eq!(readiness(&out).len(), 1);
        assert!(readiness(&out)[0].contains("Service/web"), "{:?}", readiness(&out));
    }

    #[test]
    fn chart_templates_and_other_extensions_are_not_context() {
        let chart = tempfile::tempdir().expect("tempdir");
        write(chart.path(), "Chart.yaml", "apiVersion: v2\nname: demo\nversion: 1.0.0\n");
        let templates = chart.path().join("templates");
        std::fs::create_dir(&templates).expect("mkdir");
        let deploy = write(&templates, "deploy.yaml", WORKLOAD);
        write(&templates, "service.yaml", SELECTING);
        assert!(readiness(&lint(&[&deploy]))[0].contains("declares ports 80"));
        let dir = tempfile::tempdir().expect("tempdir");
        let deploy = write(dir.path(), "deploy.yaml", WORKLOAD);
        write(dir.path(), "service.txt", SELECTING);
        assert!(readiness(&lint(&[&deploy]))[0].contains("declares ports 80"));
    }
}
