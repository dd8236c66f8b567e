//! Which policy each input is linted with, the way ruff finds its config:
//! `--policy` (or `LIFEGUARD_POLICY`) for every input; otherwise, for each
//! file, the nearest `.lifeguard.yaml` or `.lifeguard.yml` from the file's
//! directory upward, no higher than the repository root; for stdin, the
//! same from the current directory; otherwise the `default` pack.
//!
//! Each policy file is read and validated once, whatever number of files it
//! governs. The inputs are then handed to the linter in runs of consecutive
//! inputs that share a policy: a file's findings do not depend on which
//! other files are linted with it (its Services are those of its own
//! directory, and one directory has one nearest policy), so splitting the
//! run changes no verdict.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use policies::{Policy, Severity};

use crate::input::{Discovered, Input, InputName};
use crate::outcome::{InputError, Outcome};
use crate::policy_source::{PolicySource, discover};

/// A policy in force for some inputs.
#[derive(Debug, Clone)]
pub struct InForce {
    /// Where it comes from.
    pub source: PolicySource,
    /// The policy, with `--select` and `--ignore` applied.
    pub policy: Policy,
}

impl InForce {
    /// How the summary names it: `pack strict`, `k8s/.lifeguard.yaml`, `pack default`.
    pub fn short_name(&self) -> String {
        match &self.source {
            PolicySource::File(p) => p.display().to_string(),
            PolicySource::Pack(name) => format!("pack {name}"),
            PolicySource::Default => "pack default".to_owned(),
        }
    }
}

/// The inputs, split into runs that share a policy, and the policies.
#[derive(Debug, Default)]
pub struct Resolved {
    /// The distinct policies in force, in the order inputs first use them.
    pub policies: Vec<InForce>,
    /// Consecutive inputs with the same policy: `(index into policies, inputs)`.
    /// The first run also carries discovery's errors and skipped charts.
    pub runs: Vec<(usize, Discovered)>,
    /// Each input (by display name) and the index of its policy, in input order.
    pub of_input: Vec<(String, usize)>,
    /// The same, by display name: findings look their file's policy up.
    by_name: HashMap<String, usize>,
    /// Discovered policy files that are not valid: each names the policy
    /// file, its line and key; the inputs it governs are not linted.
    pub errors: Vec<InputError>,
}

impl Resolved {
    /// The policy of the input named `file`, if it was linted.
    pub fn policy_of(&self, file: &str) -> Option<&InForce> {
        self.policies.get(*self.by_name.get(file)?)
    }

    /// The first policy in force (the only one, in most runs); the `default`
    /// pack when no input was linted.
    pub fn first(&self) -> Policy {
        self.policies.first().map_or_else(Policy::default, |p| p.policy.clone())
    }

    /// The summary's note: `policy k8s/.lifeguard.yaml`, or `policies a (2
    /// files), b (1 file)` when inputs use different ones; `None` when the
    /// only policy is the `default` pack nothing chose.
    pub fn summary_note(&self) -> Option<String> {
        match self.policies.as_slice() {
            [] => None,
            [only] if only.source == PolicySource::Default => None,
            [only] => Some(format!("policy {}", only.short_name())),
            many => {
                let counted: Vec<String> = many
                    .iter()
                    .enumerate()
                    .map(|(i, p)| {
                        let n = self.of_input.iter().filter(|(_, of)| *of == i).count();
                        format!("{} ({n} {})", p.short_name(), if n == 1 { "file" } else { "files" })
                    })
                    .collect();
                Some(format!("policies {}", counted.join(", ")))
            }
        }
    }

    /// `--verbose`: one line per input naming its policy.
    pub fn verbose_lines(&self) -> Vec<String> {
        self.of_input
            .iter()
            .filter_map(|(file, i)| Some(format!("{file}: policy {}", self.policies.get(*i)?.source.describe())))
            .collect()
    }

    /// `lint`'s exit code: 2 on input errors, 1 when a finding is at or
    /// above its file's [`Resolved::fail_on`], else 0.
    pub fn exit_code(&self, out: &Outcome, flag: Option<Option<Severity>>) -> u8 {
        if !out.errors.is_empty() {
            2
        } else if out.any_fails(|file, severity| self.fail_on(flag, file).is_some_and(|min| severity >= min)) {
            1
        } else {
            0
        }
    }

    /// The severity at which a finding of `file` fails the run: `--fail-on`
    /// when given, else the `denySeverity` of the file's own policy.
    pub fn fail_on(&self, flag: Option<Option<Severity>>, file: &str) -> Option<Severity> {
        flag.unwrap_or_else(|| self.policy_of(file).map_or(Some(Severity::Error), |p| Some(p.policy.deny_severity)))
    }
}

/// Resolves the policy of every discovered input. `adjust` applies
/// `--select`/`--ignore` to each policy loaded. `Err` is a usage error to
/// print (an invalid `--policy`, an unknown rule name): nothing is linted.
pub fn resolve(
    found: Discovered,
    arg: Option<&str>,
    cwd: &Path,
    adjust: impl Fn(Policy) -> Result<Policy, String>,
) -> Result<Resolved, String> {
    let mut resolved = Resolved::default();
    let mut finder = Finder::new(cwd);
    let Discovered { inputs, mut errors, mut warnings, mut notes, walked, allow_empty_stdin } = found;
    let mut loaded: HashMap<PolicySource, Option<usize>> = HashMap::new();
    let overriding = arg.map(|a| PolicySource::choose(Some(a), cwd));
    // With no input at all, the run still reports discovery's errors, under
    // the policy stdin would get.
    let sources: Vec<(Option<&Input>, PolicySource)> = if inputs.is_empty() {
        vec![(None, overriding.clone().unwrap_or_else(|| finder.source_for(None)))]
    } else {
        inputs.iter().map(|i| (Some(i), overriding.clone().unwrap_or_else(|| finder.source_for(Some(i))))).collect()
    };
    for (input, source) in sources {
        let index = match loaded.get(&source) {
            Some(index) => *index,
            None => {
                let index = match source.load_in(cwd) {
                    Ok(policy) => {
                        resolved.policies.push(InForce { source: source.clone(), policy: adjust(policy)? });
                        Some(resolved.policies.len() - 1)
                    }
                    Err(e) if overriding.is_some() => return Err(format!("invalid policy: {e}")),
                    Err(e) => {
                        resolved.errors.push(policy_error(&source, &e.to_string()));
                        None
                    }
                };
                loaded.insert(source, index);
                index
            }
        };
        let Some(index) = index else { continue };
        let Some(input) = input else {
            resolved
                .runs
                .push((index, Discovered { allow_empty_stdin, walked: walked.clone(), ..Discovered::default() }));
            continue;
        };
        resolved.of_input.push((input.display_name(), index));
        resolved.by_name.insert(input.display_name(), index);
        match resolved.runs.last_mut() {
            Some((last, run)) if *last == index => run.inputs.push(input.clone()),
            _ => resolved.runs.push((
                index,
                Discovered {
                    inputs: vec![input.clone()],
                    allow_empty_stdin,
                    walked: walked.clone(),
                    ..Discovered::default()
                },
            )),
        }
    }
    // Discovery's errors and notes are reported once, with the first run.
    match resolved.runs.first_mut() {
        Some((_, first)) => {
            first.errors.append(&mut errors);
            first.warnings.append(&mut warnings);
            first.notes.append(&mut notes);
        }
        None => resolved.errors.extend(errors.into_iter().map(|(file, e)| InputError {
            file,
            line: None,
            column: None,
            message: e.to_string(),
        })),
    }
    Ok(resolved)
}

/// Where the policy of the file or directory `path` (or of stdin: the
/// current directory) comes from, without `--policy` (`lifeguard policy show [PATH]`).
pub fn source_for(path: Option<&Path>, cwd: &Path) -> PolicySource {
    Finder::new(cwd).source_for(Some(&path.map_or(Input::Stdin, |p| Input::File(p.to_path_buf()))))
}

/// An invalid discovered policy as an input error at the policy file's own
/// line (the engine's message starts with `file:line:col: `).
fn policy_error(source: &PolicySource, message: &str) -> InputError {
    let file = match source {
        PolicySource::File(p) => p.display().to_string(),
        other => other.describe(),
    };
    let rest = message.strip_prefix(&format!("{file}:")).unwrap_or(message);
    let mut parts = rest.splitn(3, ':');
    let numbers = (parts.next().map(str::parse::<u32>), parts.next().map(str::parse::<u32>), parts.next());
    let (line, column, what) = match numbers {
        (Some(Ok(l)), Some(Ok(c)), Some(what)) => (Some(l), Some(c), what.trim_start()),
        _ => (None, None, rest.strip_prefix(' ').unwrap_or(rest)),
    };
    InputError {
        file,
        line,
        column,
        message: format!("invalid policy, so the files it governs were not linted: {what}"),
    }
}

/// Finds the nearest policy file of each directory once.
struct Finder {
    cwd: PathBuf,
    /// The cwd as the file system names it, to show paths under it relative.
    real_cwd: Option<PathBuf>,
    by_dir: HashMap<PathBuf, Option<PathBuf>>,
}

impl Finder {
    fn new(cwd: &Path) -> Finder {
        Finder { cwd: cwd.to_path_buf(), real_cwd: cwd.canonicalize().ok(), by_dir: HashMap::new() }
    }

    /// The policy of an input (stdin, or none: from the current directory).
    fn source_for(&mut self, input: Option<&Input>) -> PolicySource {
        let dir = match input {
            // A directory (`policy show DIR`) starts the walk itself.
            Some(Input::File(path)) if self.cwd.join(path).is_dir() => self.cwd.join(path),
            Some(Input::File(path)) => self.cwd.join(path).parent().map_or_else(|| self.cwd.clone(), Path::to_path_buf),
            // A build or a chart: its own directory, as for its files.
            Some(Input::Rendered(r)) => self.cwd.join(&r.dir),
            Some(Input::Stdin) | None => self.cwd.clone(),
        };
        let found = match self.by_dir.get(&dir) {
            Some(found) => found.clone(),
            None => {
                // `..` and symlinks: the walk up follows the real directories.
                let real = dir.canonicalize().unwrap_or_else(|_| dir.clone());
                let found = discover(&real).map(|p| self.shown(&p));
                self.by_dir.insert(dir, found.clone());
                found
            }
        };
        found.map_or(PolicySource::Default, PolicySource::File)
    }

    /// A policy path as a person reads it: relative to the current
    /// directory when under it.
    fn shown(&self, path: &Path) -> PathBuf {
        match self.real_cwd.as_deref().and_then(|cwd| path.strip_prefix(cwd).ok()) {
            Some(relative) => relative.to_path_buf(),
            None => path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: &str = "apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\n";

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        for f in files {
            let path = dir.path().join(f);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            let text = if f.ends_with(".lifeguard.yaml") || f.ends_with(".lifeguard.yml") { POLICY } else { "" };
            std::fs::write(path, text).expect("write");
        }
        dir
    }

    fn found(paths: &[&str]) -> Discovered {
        let inputs = paths.iter().map(|p| if *p == "-" { Input::Stdin } else { Input::File(p.into()) }).collect();
        Discovered { inputs, ..Discovered::default() }
    }

    fn named(r: &Resolved) -> Vec<(String, String)> {
        r.of_input.iter().map(|(f, i)| (f.clone(), r.policies[*i].short_name())).collect()
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()
    }

    #[test]
    fn each_file_gets_its_nearest_policy_and_runs_follow_input_order() {
        let dir =
            tree(&[".git/HEAD", ".lifeguard.yaml", "a/x.yaml", "a/sub/.lifeguard.yml", "a/sub/y.yaml", "b/z.yaml"]);
        let r = resolve(found(&["a/x.yaml", "a/sub/y.yaml", "b/z.yaml", "-"]), None, dir.path(), Ok).expect("valid");
        assert_eq!(
            named(&r),
            pairs(&[
                ("a/x.yaml", ".lifeguard.yaml"),
                ("a/sub/y.yaml", "a/sub/.lifeguard.yml"),
                ("b/z.yaml", ".lifeguard.yaml"),
                ("<stdin>", ".lifeguard.yaml"),
            ])
        );
        assert_eq!(r.policies.len(), 2, "each policy file is loaded once");
        let runs: Vec<(usize, usize)> = r.runs.iter().map(|(p, d)| (*p, d.inputs.len())).collect();
        assert_eq!(runs, [(0, 1), (1, 1), (0, 2)]);
        assert_eq!(
            r.summary_note().as_deref(),
            Some("policies .lifeguard.yaml (3 files), a/sub/.lifeguard.yml (1 file)")
        );
    }

    #[test]
    fn the_repository_root_stops_the_walk_and_policy_overrides() {
        let dir = tree(&[".lifeguard.yaml", "repo/.git/HEAD", "repo/k8s/x.yaml"]);
        let repo = dir.path().join("repo");
        let r = resolve(found(&["k8s/x.yaml"]), None, &repo, Ok).expect("valid");
        assert_eq!(named(&r), pairs(&[("k8s/x.yaml", "pack default")]));
        assert_eq!(r.summary_note(), None, "the implicit default is not named in the summary");
        let r = resolve(found(&["k8s/x.yaml"]), Some("strict"), &repo, Ok).expect("valid");
        assert_eq!(named(&r), pairs(&[("k8s/x.yaml", "pack strict")]));
        assert_eq!(r.summary_note().as_deref(), Some("policy pack strict"));
    }

    #[test]
    fn a_broken_discovered_policy_is_an_error_at_its_line_and_other_files_still_run() {
        let dir = tree(&[".git/HEAD", "ok/x.yaml", "bad/y.yaml"]);
        std::fs::write(dir.path().join("bad/.lifeguard.yaml"), format!("{POLICY}denySeverity: loud\n")).expect("write");
        let r = resolve(found(&["ok/x.yaml", "bad/y.yaml"]), None, dir.path(), Ok).expect("not a usage error");
        assert_eq!(named(&r), pairs(&[("ok/x.yaml", "pack default")]));
        assert_eq!(r.errors.len(), 1);
        assert_eq!(r.errors[0].file, "bad/.lifeguard.yaml");
        assert_eq!(r.errors[0].line, Some(3), "{:?}", r.errors[0]);
        assert!(r.errors[0].message.starts_with("invalid policy, so the files it governs were not linted: "));
    }
}
