//! The real kustomize and helm as `lifeguard` finds them on PATH, and the
//! corpus's layouts of real repositories they build (Kustomize trees, Helm
//! charts): what the tests of `lint DIR`, `fix DIR` and `simulate DIR` on
//! those layouts share.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::cluster::webhook::workspace_binary;
use crate::{corpus_dir, installed_tool};

/// The lifeguard binary, kustomize, helm and the layouts, or `None` (skipped).
pub struct Tools {
    /// The lifeguard binary.
    pub lifeguard: PathBuf,
    /// kustomize.
    pub kustomize: PathBuf,
    /// The corpus's layouts.
    pub layouts: PathBuf,
    /// PATH with kustomize and helm first.
    pub path: String,
}

/// The tools and layouts, or `None` after saying why the test skips.
pub fn tools() -> Option<Tools> {
    let kustomize = installed_tool("target/tools/kustomize", ".ci/install-kustomize.sh")?;
    let helm = installed_tool("target/tools/helm", ".ci/install-helm.sh")?;
    let layouts = corpus_dir()?.join("layouts");
    let lifeguard = workspace_binary("lifeguard", "lifeguard")?;
    // kustomize and helm on PATH, as a user has them; nothing else of ours.
    let mut dirs: Vec<PathBuf> = vec![kustomize.parent()?.to_path_buf()];
    dirs.extend(helm.parent().map(Path::to_path_buf));
    dirs.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    let path = std::env::join_paths(dirs).ok()?.to_string_lossy().into_owned();
    Some(Tools { lifeguard, kustomize, layouts, path })
}

impl Tools {
    /// Runs lifeguard in `dir` with `args` and `stdin`.
    pub fn lifeguard(&self, dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
        let mut command = Command::new(&self.lifeguard);
        command.args(args).current_dir(dir).env("PATH", &self.path).env_remove("LIFEGUARD_POLICY");
        command.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
        let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("lifeguard runs");
        if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
            std::io::Write::write_all(&mut pipe, bytes).expect("write stdin");
        }
        child.wait_with_output().expect("lifeguard ends")
    }

    /// `lifeguard lint --format json --fail-on never ARGS`, which must exit 0.
    pub fn json(&self, dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Vec<Value> {
        let mut all = vec!["lint", "--format", "json", "--fail-on", "never"];
        all.extend_from_slice(args);
        let out = self.lifeguard(dir, &all, stdin);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).expect("a JSON report")
    }
}

/// Every file under `dir` and its bytes.
pub fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    crate::yaml_files(dir, &mut files);
    files.sort();
    files.into_iter().map(|f| (f.clone(), std::fs::read(&f).unwrap_or_default())).collect()
}
