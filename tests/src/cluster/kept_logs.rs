//! The logs of a cluster whose test failed, kept where the next reader finds
//! them.
//!
//! The control plane and the node live in temporary directories that their
//! janitors remove when the test binary exits, so a failure would take the
//! evidence with it: the API server's and etcd's logs, containerd's and the
//! kubelet's, the pods' own logs and the test workload's log of every probe
//! and signal. Each directory is registered here when it is made; the first
//! panic in the process (a failed assertion, in a test's thread or any thread
//! it started) copies the logs of every registered directory under
//! `target/e2e-logs/TEST-PID/`, and says where on stderr. A later panic copies
//! them again (they have grown), into the same place.
//!
//! Only logs and configuration are copied: never containerd's root, the
//! kubelet's root (the pods' volumes and mounts), etcd's data or a private
//! key.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once, PoisonError};

/// A file larger than this keeps only its end: what led to the failure.
const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;

/// Directories whose every file is a log (the kubelet's pods' logs, the
/// test workload's kept logs), copied whole.
const LOG_TREES: [&str; 2] = ["pod-logs", "workload-logs"];

/// Top-level files copied by their extension: the components' logs and
/// configurations (no kubeconfig, no key: they hold credentials).
const KEPT_EXTENSIONS: [&str; 5] = ["log", "jsonl", "yaml", "toml", "conflist"];

/// The directories registered so far, each with what it holds.
static REGISTERED: Mutex<Vec<(String, PathBuf)>> = Mutex::new(Vec::new());

/// Keeps `dir`'s logs under `target/e2e-logs/` if a test of this process
/// fails; `what` names it there (`control plane`, `node`).
pub fn keep_on_failure(what: &str, dir: &Path) {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            previous(info);
            keep_all();
        }));
    });
    REGISTERED.lock().unwrap_or_else(PoisonError::into_inner).push((what.to_owned(), dir.to_owned()));
}

/// Copies every registered directory's logs; a panic while copying (one
/// thread's) leaves the others to be copied by the next.
fn keep_all() {
    // A second panic while this one copies waits for it, then copies again.
    static COPYING: Mutex<()> = Mutex::new(());
    let _copying = COPYING.lock().unwrap_or_else(PoisonError::into_inner);
    let registered = REGISTERED.lock().unwrap_or_else(PoisonError::into_inner).clone();
    let Some(root) = destination() else { return };
    for (what, dir) in registered {
        if !dir.is_dir() {
            continue;
        }
        let into = root.join(what.replace(' ', "-"));
        let copied = copy_logs(&dir, &into);
        let _ = writeln!(
            std::io::stderr(),
            "the logs of the {what} ({} files from {}) are kept in {}",
            copied,
            dir.display(),
            into.display()
        );
    }
}

/// `target/e2e-logs/TEST-PID`, `target` being the directory this test
/// binary was built into (`target/debug/deps/TEST-HASH`), wherever
/// `CARGO_TARGET_DIR` put it.
fn destination() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let test = exe.file_stem()?.to_string_lossy();
    // The name cargo gives it, without the hash it appends.
    let test = test.rsplit_once('-').map_or(&*test, |(name, _)| name).to_owned();
    let target = exe.parent()?.parent()?.parent()?;
    Some(target.join("e2e-logs").join(format!("{test}-{}", std::process::id())))
}

/// Copies `dir`'s logs into `into`; how many files it copied.
fn copy_logs(dir: &Path, into: &Path) -> usize {
    let mut copied = 0;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        // Never followed: a symlink may point anywhere on the host.
        let Ok(kind) = entry.file_type() else { continue };
        let name = entry.file_name();
        if kind.is_dir() && LOG_TREES.iter().any(|tree| name == *tree) {
            copied += copy_tree(&path, &into.join(&name));
        } else if kind.is_file() && path.extension().is_some_and(|e| KEPT_EXTENSIONS.iter().any(|k| e == *k)) {
            copied += usize::from(copy_file(&path, &into.join(&name)));
        }
    }
    copied
}

/// Copies every regular file under `dir` into `into`, keeping the layout.
fn copy_tree(dir: &Path, into: &Path) -> usize {
    let mut copied = 0;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let Ok(kind) = entry.file_type() else { continue };
        let target = into.join(entry.file_name());
        if kind.is_dir() {
            copied += copy_tree(&entry.path(), &target);
        } else if kind.is_file() {
            copied += usize::from(copy_file(&entry.path(), &target));
        }
    }
    copied
}

/// Copies one file (its last [`MAX_FILE_BYTES`] if larger); whether it did.
fn copy_file(from: &Path, to: &Path) -> bool {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let copy = || -> std::io::Result<()> {
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut source = std::fs::File::open(from)?;
        let length = source.metadata()?.len();
        source.seek(SeekFrom::Start(length.saturating_sub(MAX_FILE_BYTES)))?;
        let mut out = std::fs::File::create(to)?;
        std::io::copy(&mut source.take(MAX_FILE_BYTES), &mut out)?;
        Ok(())
    };
    copy().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_and_configuration_are_copied_and_nothing_else() {
        let dir = tempfile::tempdir().expect("a directory");
        let into = tempfile::tempdir().expect("a directory");
        let root = dir.path();
        for (file, text) in [
            ("kubelet.log", "probe failed"),
            ("kubelet.yaml", "kind: KubeletConfiguration"),
            ("kubelet.key", "secret"),
            ("kubelet.kubeconfig", "secret"),
            ("workload-logs/case/case.jsonl", "{}"),
            ("pod-logs/ns_pod_uid/server/0.log", "line"),
            ("containerd/root/blob", "image"),
        ] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("create");
            std::fs::write(path, text).expect("write");
        }
        let copied = copy_logs(root, into.path());
        assert_eq!(copied, 4);
        for kept in ["kubelet.log", "kubelet.yaml", "workload-logs/case/case.jsonl", "pod-logs/ns_pod_uid/server/0.log"]
        {
            assert!(into.path().join(kept).is_file(), "{kept} kept");
        }
        for left in ["kubelet.key", "kubelet.kubeconfig", "containerd"] {
            assert!(!into.path().join(left).exists(), "{left} not kept");
        }
    }

    #[test]
    fn a_large_file_keeps_its_end() {
        let dir = tempfile::tempdir().expect("a directory");
        let from = dir.path().join("big.log");
        let mut text = vec![b'a'; usize::try_from(MAX_FILE_BYTES).expect("fits")];
        text.extend_from_slice(b"the end");
        std::fs::write(&from, &text).expect("write");
        let to = dir.path().join("kept/big.log");
        assert!(copy_file(&from, &to));
        let kept = std::fs::read(&to).expect("read");
        assert_eq!(kept.len() as u64, MAX_FILE_BYTES);
        assert!(kept.ends_with(b"the end"));
    }
}
