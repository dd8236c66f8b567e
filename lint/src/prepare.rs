//! What every command that reads manifests does first: the inputs found,
//! each one's policy chosen (with `--select` and `--ignore` applied), and
//! the notes a person needs when that finds nothing to read.

// The commands' edge: what cannot be read or chosen is told to the user on stderr.
#![allow(clippy::print_stderr)]

use crate::input::{Walk, discover_kustomization, discover_with};
use crate::options::{RunArgs, select_rules, unknown_selected};
use crate::policy_discovery::{Resolved, resolve};

/// The inputs and each one's policy (with `--select` and `--ignore`
/// applied; see [`crate::policy_discovery`]); on a usage error, prints it
/// and returns `None` (exit 2).
pub(crate) fn prepare(paths: &[String], policy_arg: Option<&str>, run: &RunArgs) -> Option<Resolved> {
    let mut walk = Walk::excluding(&run.exclude).map_err(|e| eprintln!("lifeguard: {e}")).ok()?;
    walk.render = run.render.options();
    let builds = &run.render.kustomize;
    let named = !paths.is_empty() || !builds.is_empty();
    let paths = if named { paths.to_vec() } else { vec![".".to_owned()] };
    let mut found = discover_with(&paths, &walk);
    for dir in builds {
        discover_kustomization(dir, &mut found);
    }
    found.allow_empty_stdin = run.allow_empty;
    let nothing = found.inputs.is_empty() && found.errors.is_empty();
    let cwd = std::env::current_dir().unwrap_or_default();
    let resolved = resolve(found, policy_arg, &cwd, |policy| select_rules(policy, &run.select, &run.ignore))
        .map_err(|e| eprintln!("lifeguard: {e}"))
        .ok()?;
    // A custom rule of one nested policy is selected where it exists; a name
    // no policy in force knows is a usage error.
    if let Some(e) = unknown_selected(resolved.policies.iter().map(|p| &p.policy), &run.select, &run.ignore) {
        eprintln!("lifeguard: {e}");
        return None;
    }
    if run.verbose {
        for line in resolved.verbose_lines() {
            eprintln!("lifeguard: {line}");
        }
    }
    if !run.quiet {
        if !named && stdin_is_piped() {
            eprintln!(
                "lifeguard: note: linting the current directory; to read the piped input, name it `-` (`... | lifeguard lint -`)"
            );
        }
        if nothing {
            eprintln!(
                "lifeguard: note: no manifest found in {} (files ending .yaml, .yml or .json, outside hidden, git-ignored and excluded paths, other than values.yaml and other tools' configuration; a directory with a Chart.yaml is rendered with helm, one with a kustomization.yaml built with kustomize)",
                paths.join(" ")
            );
        }
    }
    Some(resolved)
}

/// Whether stdin is a pipe or a file (not a terminal, not `/dev/null`): input
/// someone may have meant to lint.
fn stdin_is_piped() -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        std::fs::metadata("/dev/stdin").is_ok_and(|m| m.file_type().is_fifo() || m.file_type().is_file())
    }
    #[cfg(not(unix))]
    {
        false
    }
}
