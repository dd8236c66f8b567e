//! Both binaries link one allocator, mimalloc version 2 without transparent
//! huge pages, however they are built: the workspace build (`cargo build`,
//! `cargo test`) and the image's, which builds each package alone
//! (deploy/build-webhook.sh) so that features do not unify across them. The
//! setting lives once, in the workspace's Cargo.toml; a package that named
//! its own would get another allocator in the image than in the tests.

use std::path::Path;
use std::process::Command;

use lifeguard_e2e::cluster::webhook::workspace_binary;
use lifeguard_e2e::{repo_root, skip};

const IMAGE_TARGET: &str = "x86_64-unknown-linux-musl";

/// The features of `libmimalloc-sys` when `package` alone is built for the
/// image's target, as cargo resolves them (dev-dependencies left out, as in
/// a `cargo build -p`).
fn allocator_features_building_alone(package: &str) -> Vec<String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(repo_root())
        .args(["tree", "--locked", "-p", package, "-e", "features,no-dev", "-i", "libmimalloc-sys"])
        .args(["--target", IMAGE_TARGET, "--prefix", "none"])
        .output()
        .expect("run cargo tree");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "cargo tree -p {package}: {}", String::from_utf8_lossy(&out.stderr));
    let mut features: Vec<String> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("libmimalloc-sys feature \""))
        .filter_map(|l| l.split('"').next())
        .map(str::to_owned)
        .collect();
    features.sort();
    features.dedup();
    features
}

#[test]
fn each_binary_built_alone_gets_mimalloc_v2_without_huge_pages() {
    for package in ["lifeguard-webhook", "lifeguard"] {
        let features = allocator_features_building_alone(package);
        assert_eq!(features, ["no_thp", "v2"], "libmimalloc-sys features of `cargo build -p {package}`");
    }
}

/// The version mimalloc reports at start (`MIMALLOC_VERBOSE=1`), e.g. `v2.3.2`.
fn mimalloc_version(binary: &Path) -> String {
    let out = Command::new(binary)
        .arg("--version")
        .env("MIMALLOC_VERBOSE", "1")
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", binary.display()));
    assert!(out.status.success(), "{} --version", binary.display());
    let stderr = String::from_utf8_lossy(&out.stderr);
    // v2 prints `mimalloc: v2.3.2 (built on ...)`; v3 prints its version on
    // a line of its own after `mimalloc: process init: ...`.
    stderr
        .lines()
        .map(|l| l.strip_prefix("mimalloc: ").unwrap_or(l))
        .find(|l| l.starts_with('v') && l[1..].starts_with(|c: char| c.is_ascii_digit()))
        .and_then(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .unwrap_or_else(|| {
            panic!("{} does not start mimalloc (MIMALLOC_VERBOSE=1 printed {stderr:?})", binary.display())
        })
}

#[test]
fn the_workspace_binaries_run_mimalloc_v2() {
    for (package, bin) in [("lifeguard-webhook", "lifeguard-webhook"), ("lifeguard", "lifeguard")] {
        let Some(binary) = workspace_binary(package, bin) else { return };
        let version = mimalloc_version(&binary);
        assert!(version.starts_with("v2."), "{bin}: mimalloc {version}");
    }
}

#[test]
fn the_image_binaries_run_mimalloc_v2() {
    let dir = repo_root().join("target").join(IMAGE_TARGET).join("release");
    for bin in ["lifeguard-webhook", "lifeguard"] {
        let binary = dir.join(bin);
        if !binary.is_file() {
            skip(&format!("{} is not built (run sh deploy/build-webhook.sh, as .ci/run does)", binary.display()));
            return;
        }
        let version = mimalloc_version(&binary);
        assert!(version.starts_with("v2."), "the image's {bin}: mimalloc {version}");
    }
}
