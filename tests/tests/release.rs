//! The release assets `deploy/build-release.sh` writes into
//! `target/release-assets/` (`.ci/run` builds them before the tests; the
//! release workflow runs the same script): the aarch64 `lifeguard`, run
//! under `qemu-aarch64` from its archive, prints byte for byte what the
//! x86_64 one prints for every example of `lint/examples/`, in JSON and in
//! text, and for `--version`; the archives hold what the Action expects at
//! their root; `SHA256SUMS` verifies with `sha256sum -c`; the krew
//! manifest made of them validates with krew's own validator, and the
//! plugin krew installs from the x86_64 archive is what the real `kubectl
//! lifeguard` runs, against a real API server.
//!
//! Nothing is built here: a build in the workspace's `target/` would wait
//! for the lock the running `cargo test` holds, and the aarch64 build takes
//! minutes. Assets older than a source they are built from are a skip, so
//! `LIFEGUARD_NO_SKIP=1` fails on them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::SystemTime;

use lifeguard_e2e::{files_under, repo_root, skip};

const ASSETS: &str = "target/release-assets";
const X86_64: &str = "x86_64-unknown-linux-musl";
const AARCH64: &str = "aarch64-unknown-linux-musl";
const BUILD: &str = "run .ci/install-release-tools.sh, then sh deploy/build-release.sh TARGET for both \
                     Linux targets and sh deploy/build-release.sh --sums, as .ci/run does";

/// The archive's name for `target`: the Action downloads exactly this.
fn archive_name(target: &str) -> String {
    format!("lifeguard-{target}.tar.gz")
}

/// The assets directory when both Linux archives and `SHA256SUMS` are there
/// and newer than every source of the binaries; `None` after printing why
/// the test skips.
fn assets() -> Option<PathBuf> {
    let dir = repo_root().join(ASSETS);
    let newest_source = newest_source();
    for name in [archive_name(X86_64), archive_name(AARCH64), "SHA256SUMS".into(), "SOURCE_COMMIT".into()] {
        let path = dir.join(&name);
        let Ok(built) = std::fs::metadata(&path).and_then(|m| m.modified()) else {
            skip(&format!("{ASSETS}/{name} is not there ({BUILD})"));
            return None;
        };
        if let Some((changed, source)) = &newest_source
            && changed > &built
        {
            skip(&format!("{ASSETS}/{name} is older than {} ({BUILD})", source.display()));
            return None;
        }
    }
    Some(dir)
}

/// The newest of the files the binaries are built from, and when it changed.
fn newest_source() -> Option<(SystemTime, PathBuf)> {
    let root = repo_root();
    let mut files =
        vec![root.join("Cargo.lock"), root.join("Cargo.toml"), root.join("README.md"), root.join("LICENSE")];
    files.extend(["deploy/build-webhook.sh", "deploy/build-release.sh"].map(|f| root.join(f)));
    for dir in ["webhook", "policies", "lint"] {
        files.push(root.join(dir).join("Cargo.toml"));
        files.extend(files_under(&root.join(dir).join("src"), |_| true));
    }
    files.into_iter().filter_map(|path| Some((std::fs::metadata(&path).ok()?.modified().ok()?, path))).max()
}

/// `qemu-aarch64` on `PATH` (Debian's qemu-user), or `None` after printing
/// why the test skips.
fn qemu_aarch64() -> Option<PathBuf> {
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .map(|dir| dir.join("qemu-aarch64"))
        .find(|path| path.is_file());
    if found.is_none() {
        skip("qemu-aarch64 is not on PATH (run .ci/install-release-tools.sh, which installs qemu-user)");
    }
    found
}

/// Runs `command`, which must start.
fn output(command: &mut Command) -> Output {
    command.output().unwrap_or_else(|e| panic!("run {command:?}: {e}"))
}

/// `tar -xzf archive` into a fresh directory.
fn unpack(archive: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = output(Command::new("tar").arg("-xzf").arg(archive).arg("-C").arg(dir.path()));
    assert!(out.status.success(), "tar -xzf {}: {}", archive.display(), String::from_utf8_lossy(&out.stderr));
    dir
}

/// The ELF machine of `binary` (`e_machine`, little-endian at byte 18).
fn elf_machine(binary: &Path) -> u16 {
    let bytes = std::fs::read(binary).unwrap_or_else(|e| panic!("read {}: {e}", binary.display()));
    assert!(bytes.starts_with(b"\x7fELF"), "{} is not an ELF file", binary.display());
    u16::from_le_bytes([bytes[18], bytes[19]])
}

const EM_X86_64: u16 = 62;
const EM_AARCH64: u16 = 183;

/// One binary and how to run it: natively, or under qemu-aarch64.
struct Runner {
    binary: PathBuf,
    qemu: Option<PathBuf>,
}

impl Runner {
    /// Runs the binary with `args` from the repository root, colourless,
    /// with no environment that could change what it prints.
    fn run(&self, args: &[&str]) -> Output {
        let mut command = match &self.qemu {
            Some(qemu) => {
                let mut command = Command::new(qemu);
                command.arg(&self.binary);
                command
            }
            None => Command::new(&self.binary),
        };
        output(command.args(args).current_dir(repo_root()).env_clear().env("NO_COLOR", "1"))
    }
}

/// Both outputs, byte for byte: exit code, stdout and stderr.
fn assert_same(what: &str, x86_64: &Output, aarch64: &Output) {
    assert_eq!(x86_64.status.code(), aarch64.status.code(), "{what}: exit codes (x86_64, aarch64)");
    assert!(
        x86_64.stdout == aarch64.stdout,
        "{what}: stdout differs\nx86_64:\n{}\naarch64:\n{}",
        String::from_utf8_lossy(&x86_64.stdout),
        String::from_utf8_lossy(&aarch64.stdout)
    );
    assert!(
        x86_64.stderr == aarch64.stderr,
        "{what}: stderr differs\nx86_64:\n{}\naarch64:\n{}",
        String::from_utf8_lossy(&x86_64.stderr),
        String::from_utf8_lossy(&aarch64.stderr)
    );
}

#[test]
fn the_aarch64_binary_under_qemu_prints_what_the_x86_64_one_prints() {
    let Some(assets) = assets() else { return };
    let Some(qemu) = qemu_aarch64() else { return };
    let x86_64_dir = unpack(&assets.join(archive_name(X86_64)));
    let aarch64_dir = unpack(&assets.join(archive_name(AARCH64)));
    let x86_64 = Runner { binary: x86_64_dir.path().join("lifeguard"), qemu: None };
    let aarch64 = Runner { binary: aarch64_dir.path().join("lifeguard"), qemu: Some(qemu.clone()) };
    assert_eq!(elf_machine(&x86_64.binary), EM_X86_64, "the x86_64 archive's lifeguard");
    assert_eq!(elf_machine(&aarch64.binary), EM_AARCH64, "the aarch64 archive's lifeguard");

    // qemu-aarch64 is given no aarch64 root (-L), so a binary that needs a
    // dynamic loader would not start: a run proves it static.
    for bin in ["lifeguard", "lifeguard-webhook"] {
        let native = Runner { binary: x86_64_dir.path().join(bin), qemu: None }.run(&["--version"]);
        let emulated = Runner { binary: aarch64_dir.path().join(bin), qemu: Some(qemu.clone()) }.run(&["--version"]);
        assert!(native.status.success(), "{bin} --version (x86_64): {}", String::from_utf8_lossy(&native.stderr));
        assert!(!native.stdout.is_empty(), "{bin} --version prints its version");
        assert_same(&format!("{bin} --version"), &native, &emulated);
    }

    let examples = files_under(&repo_root().join("lint/examples"), lifeguard::input::is_manifest);
    assert!(examples.len() >= 4, "lint/examples/ holds the built-in examples: {examples:?}");
    for example in &examples {
        // Relative, as a user types it: the path is in the output.
        let relative = example.strip_prefix(repo_root()).expect("under the repository").to_str().expect("UTF-8 path");
        for format in ["json", "text"] {
            let args = ["lint", "--format", format, relative];
            let native = x86_64.run(&args);
            // 0 (clean) or 1 (findings), never an input or usage error.
            assert!(
                matches!(native.status.code(), Some(0 | 1)),
                "lifeguard {args:?}: {:?}\n{}",
                native.status,
                String::from_utf8_lossy(&native.stderr)
            );
            assert!(!native.stdout.is_empty(), "lifeguard {args:?} prints a report");
            assert_same(&format!("lifeguard {}", args.join(" ")), &native, &aarch64.run(&args));
        }
    }
}

#[test]
fn the_archives_hold_the_binaries_at_their_root() {
    let Some(assets) = assets() else { return };
    for target in [X86_64, AARCH64] {
        let archive = assets.join(archive_name(target));
        let out = output(Command::new("tar").arg("-tzf").arg(&archive));
        assert!(out.status.success(), "tar -tzf {}", archive.display());
        let mut entries: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect();
        entries.sort();
        let mut expected = vec!["README.md".to_owned(), "lifeguard".into(), "lifeguard-webhook".into()];
        expected.extend(
            ["LICENSE", "LICENSE-APACHE", "LICENSE-MIT"]
                .into_iter()
                .filter(|f| repo_root().join(f).is_file())
                .map(str::to_owned),
        );
        expected.sort();
        assert_eq!(entries, expected, "the entries of {}", archive.display());
        let unpacked = unpack(&archive);
        for bin in ["lifeguard", "lifeguard-webhook"] {
            let mode = std::os::unix::fs::PermissionsExt::mode(
                &std::fs::metadata(unpacked.path().join(bin)).expect("unpacked").permissions(),
            );
            assert_eq!(mode & 0o111, 0o111, "{target}'s {bin} is executable");
        }
    }
}

#[test]
fn sha256sums_verifies_and_names_every_asset() {
    let Some(assets) = assets() else { return };
    let out = output(Command::new("sha256sum").args(["-c", "--strict", "SHA256SUMS"]).current_dir(&assets));
    assert!(
        out.status.success(),
        "sha256sum -c SHA256SUMS in {}:\n{}{}",
        assets.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let sums = std::fs::read_to_string(assets.join("SHA256SUMS")).expect("read SHA256SUMS");
    // `<64 hex>  <asset name>`, one line per asset, as the Action reads it.
    let named: Vec<&str> = sums
        .lines()
        .map(|line| {
            let (hex, name) = line.split_once("  ").unwrap_or_else(|| panic!("SHA256SUMS line {line:?}"));
            assert!(hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()), "SHA256SUMS line {line:?}");
            name
        })
        .collect();
    for name in [archive_name(X86_64), archive_name(AARCH64), "SOURCE_COMMIT".into()] {
        assert!(named.contains(&name.as_str()), "SHA256SUMS names {name}: {sums}");
    }

    let commit = std::fs::read_to_string(assets.join("SOURCE_COMMIT")).expect("read SOURCE_COMMIT");
    let sha = commit.strip_suffix('\n').unwrap_or_else(|| panic!("SOURCE_COMMIT is one line: {commit:?}"));
    assert!(sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit()), "SOURCE_COMMIT: {commit:?}");
}

#[test]
fn krew_installs_the_plugin_its_manifest_describes_and_kubectl_runs_it() {
    let Some(assets) = assets() else { return };
    let Some(krew) = lifeguard_e2e::installed_tool("target/tools/krew/krew", ".ci/install-release-tools.sh") else {
        return;
    };
    let validator = krew.with_file_name("validate-krew-manifest");
    let Some(plane) = lifeguard_e2e::cluster::ControlPlane::shared() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::copy(assets.join("SHA256SUMS"), dir.path().join("SHA256SUMS")).expect("copy SHA256SUMS");
    let made = output(
        Command::new("sh")
            .arg(repo_root().join("deploy/build-release.sh"))
            .args(["--krew", "v0.1.0"])
            .arg(dir.path())
            .env_remove("GITHUB_REPOSITORY"),
    );
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let manifest = dir.path().join("lifeguard.yaml");
    let text = std::fs::read_to_string(&manifest).expect("the manifest");
    for (target, platform) in [(X86_64, "os: linux\n        arch: amd64"), (AARCH64, "os: linux\n        arch: arm64")]
    {
        let uri = format!(
            "uri: https://github.com/lifeguard-dev/lifeguard/releases/download/v0.1.0/{}",
            archive_name(target)
        );
        assert!(text.contains(&uri) && text.contains(platform), "{text}");
    }
    // krew's own checks: the schema, every platform used, none overlapping.
    let valid = output(Command::new(&validator).arg("-manifest").arg(&manifest).arg("-skip-install"));
    assert!(valid.status.success(), "{}", String::from_utf8_lossy(&valid.stderr));
    // Installed as a user installs it, from the x86_64 archive (its checksum checked by krew).
    let root = dir.path().join("krew");
    let installed = output(
        Command::new(&krew)
            .args(["install", "--manifest"])
            .arg(&manifest)
            .arg("--archive")
            .arg(assets.join(archive_name(X86_64)))
            .env("KREW_ROOT", &root)
            .env("KREW_OS", "linux")
            .env("KREW_ARCH", "amd64"),
    );
    assert!(installed.status.success(), "{}", String::from_utf8_lossy(&installed.stderr));
    let kubectl = |args: &[&str]| {
        let mut path = vec![root.join("bin"), repo_root().join("target/tools")];
        path.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
        output(
            Command::new("kubectl")
                .args(args)
                .env("PATH", std::env::join_paths(path).expect("PATH"))
                .env("KUBECONFIG", &plane.kubeconfig)
                .env("NO_COLOR", "1")
                .env_remove("LIFEGUARD_POLICY"),
        )
    };
    let version = kubectl(&["lifeguard", "--version"]);
    let unpacked = unpack(&assets.join(archive_name(X86_64)));
    let own = output(Command::new(unpacked.path().join("lifeguard")).arg("--version"));
    assert_eq!(version.stdout, own.stdout, "kubectl runs the archive's lifeguard");
    let help = kubectl(&["lifeguard", "audit", "--help"]);
    assert!(String::from_utf8_lossy(&help.stdout).contains("Usage: kubectl lifeguard audit [OPTIONS]"));
    plane.kubectl.namespace("krew-plugin", &[]);
    let audit = kubectl(&["lifeguard", "audit", "-n", "krew-plugin", "--format", "json"]);
    assert_eq!(audit.status.code(), Some(0), "{}", String::from_utf8_lossy(&audit.stderr));
    assert_eq!(String::from_utf8_lossy(&audit.stdout).trim(), "[]", "an empty namespace has no finding");
}
