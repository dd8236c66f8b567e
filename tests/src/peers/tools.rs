//! The tools a platform team would pick instead of lifeguard, as
//! `.ci/install-peers.sh` installs them into `target/tools/peers/`, and the
//! command each is run with on the same inputs: the checks a user would
//! turn on for probes and lifecycle, machine-readable output on stdout.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cluster::webhook::workspace_binary;
use crate::{installed_tool, repo_root};

/// Where `.ci/install-peers.sh` installs the peers, under the repository.
const PEERS: &str = "target/tools/peers";

/// The installer the skip messages name.
const INSTALLER: &str = ".ci/install-peers.sh";

/// The kyverno CLI, or `None` after saying why the test skips (it also
/// evaluates the exported admission policies offline: `cel_fixtures.rs`).
pub fn kyverno() -> Option<PathBuf> {
    installed_tool(&format!("{PEERS}/kyverno"), INSTALLER)
}

/// The Kyverno policy the bench and its test apply (Kyverno's published
/// probe samples: probes present, liveness and readiness different).
pub const KYVERNO_POLICY: &str = "tests/fixtures/peers/kyverno-probes.yaml";

/// A tool of the comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tool {
    /// `lifeguard lint`, on every core (the default).
    Lifeguard,
    /// `lifeguard lint` with `LIFEGUARD_THREADS=1`, so the ratio per core shows.
    LifeguardOneThread,
    /// Another build's `lifeguard lint`, on every core ([`Tools::with_before`]):
    /// a change measured against the build before it in the same rounds.
    LifeguardBefore,
    /// kube-score as shipped (`kube-score score`).
    KubeScore,
    /// The kyverno CLI (`kyverno apply`) with [`KYVERNO_POLICY`].
    Kyverno,
    /// Checkov's Kubernetes framework.
    Checkov,
}

impl Tool {
    /// Every tool, lifeguard first.
    pub const ALL: [Tool; 5] =
        [Tool::Lifeguard, Tool::LifeguardOneThread, Tool::KubeScore, Tool::Kyverno, Tool::Checkov];

    /// The peers alone.
    pub const PEERS: [Tool; 3] = [Tool::KubeScore, Tool::Kyverno, Tool::Checkov];

    /// Its name in tables.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Lifeguard => "lifeguard",
            Tool::LifeguardOneThread => "lifeguard, 1 thread",
            Tool::LifeguardBefore => "lifeguard, before",
            Tool::KubeScore => "kube-score",
            Tool::Kyverno => "kyverno",
            Tool::Checkov => "checkov",
        }
    }

    /// Whether it is lifeguard (on any number of threads).
    pub fn is_lifeguard(self) -> bool {
        matches!(self, Tool::Lifeguard | Tool::LifeguardOneThread | Tool::LifeguardBefore)
    }

    /// The tool a bench's `--tools` names: its name without blanks and commas
    /// (`lifeguard`, `lifeguard1thread`, `kube-score`, `kyverno`, `checkov`).
    pub fn by_key(key: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.name().replace([' ', ','], "") == key)
    }
}

/// What the tools read: a directory of manifests, its files (kube-score
/// takes files only; the others are given the directory, as a user would),
/// and those files in groups for the kyverno CLI, which refuses a run that
/// holds two objects of one kind, namespace and name (the corpus's
/// examples share names): one run per group.
pub struct Input {
    /// The directory.
    pub dir: PathBuf,
    /// Its manifests, in path order.
    pub files: Vec<PathBuf>,
    /// The files in groups, each a kyverno run; all files in one by default.
    pub groups: Vec<Vec<PathBuf>>,
}

impl Input {
    /// `dir` and the manifests under it, in one group.
    pub fn dir(dir: &Path) -> Input {
        let files = crate::files_under(dir, lifeguard_input_file);
        Input { dir: dir.to_owned(), groups: vec![files.clone()], files }
    }
}

/// The manifests lifeguard reads from a directory (.yaml, .yml, .json).
fn lifeguard_input_file(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| matches!(e, "yaml" | "yml" | "json"))
}

/// The installed tools and the workspace's `lifeguard`.
pub struct Tools {
    lifeguard: PathBuf,
    before: Option<PathBuf>,
    kube_score: PathBuf,
    kyverno: PathBuf,
    checkov: PathBuf,
}

impl Tools {
    /// Every tool, or `None` after saying which is missing (a skip, or a
    /// failure under `LIFEGUARD_NO_SKIP`).
    pub fn installed() -> Option<Tools> {
        let kube_score = installed_tool(&format!("{PEERS}/kube-score"), INSTALLER)?;
        let kyverno = kyverno()?;
        let checkov = installed_tool(&format!("{PEERS}/checkov/bin/checkov"), INSTALLER)?;
        let lifeguard = workspace_binary("lifeguard", "lifeguard")?;
        Some(Tools { lifeguard, before: None, kube_score, kyverno, checkov })
    }

    /// The same, with another build of `lifeguard` as [`Tool::LifeguardBefore`].
    pub fn with_before(self, before: PathBuf) -> Tools {
        Tools { before: Some(before), ..self }
    }

    /// The commands that run `tool` on `input`, one after the other, each
    /// with its report on stdout: one command, but for kyverno one per group
    /// of [`Input::groups`]. Their exit codes say whether they found
    /// anything, so callers read the reports, not the codes.
    pub fn commands(&self, tool: Tool, input: &Input) -> Vec<Command> {
        let mut commands = match tool {
            Tool::Lifeguard | Tool::LifeguardOneThread | Tool::LifeguardBefore => {
                let binary = match (tool, &self.before) {
                    (Tool::LifeguardBefore, Some(before)) => before,
                    _ => &self.lifeguard,
                };
                let mut c = Command::new(binary);
                c.args(["lint", "--format", "json", "--fail-on", "never"]).arg(&input.dir);
                // The default policy, not one found above the input.
                c.env_remove("LIFEGUARD_POLICY");
                if tool == Tool::LifeguardOneThread {
                    c.env("LIFEGUARD_THREADS", "1");
                } else {
                    c.env_remove("LIFEGUARD_THREADS");
                }
                vec![c]
            }
            Tool::KubeScore => {
                let mut c = Command::new(&self.kube_score);
                c.args(["score", "--output-format", "json"]).args(&input.files);
                vec![c]
            }
            Tool::Kyverno => input
                .groups
                .iter()
                .map(|group| {
                    let mut c = Command::new(&self.kyverno);
                    c.arg("apply").arg(repo_root().join(KYVERNO_POLICY));
                    for file in group {
                        c.arg("--resource").arg(file);
                    }
                    c.args(["--policy-report", "--output-format", "json", "--remove-color"]);
                    c
                })
                .collect(),
            Tool::Checkov => {
                let mut c = Command::new(&self.checkov);
                c.args(["--framework", "kubernetes", "--output", "json", "--quiet", "--compact", "--skip-download"])
                    .arg("--directory")
                    .arg(&input.dir);
                vec![c]
            }
        };
        for command in &mut commands {
            // Every tool from the input's directory, so none finds a
            // configuration of the repository's.
            command.current_dir(&input.dir);
        }
        commands
    }
}
