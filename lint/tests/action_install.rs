//! The GitHub Action's install step (`action/install.sh`, run by
//! `action.yml`) against a real HTTP server on 127.0.0.1 (python3's
//! `http.server`) that serves a release built here from this build of
//! lifeguard, laid out as the releases are (`vVERSION/lifeguard-TARGET.tar.gz`,
//! `SHA256SUMS`, `SOURCE_COMMIT`), reached through the mirror variable
//! `LIFEGUARD_RELEASE_BASE_URL`:
//!
//! - a release ref (the tag, or the SHA the release was built from) with a
//!   good checksum installs the binary, which runs, and builds nothing;
//! - a wrong checksum fails the step, names the archive and both digests,
//!   and puts nothing on the PATH;
//! - a release without the runner's archive (404), a branch and a SHA that
//!   is not the release's fall back to `cargo install --locked --path lint`;
//!   the branch without asking the server anything.
//!
//! Needs python3 (for the server) and curl (for the script; on every GitHub
//! runner); without them the tests say why and skip (`LIFEGUARD_NO_SKIP=1`,
//! set by CI, fails instead).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lifeguard_e2e::cluster::process::{Supervised, free_port, wait_for};
use lifeguard_e2e::repo_root;
use lifeguard_e2e::skip;

const VERSION: &str = env!("CARGO_PKG_VERSION");
/// What the script picks for `RUNNER_OS=Linux`, `RUNNER_ARCH=X64`, which the
/// tests set; the archive holds this build's binary, which runs here.
const ASSET: &str = "lifeguard-x86_64-unknown-linux-musl.tar.gz";
/// The commit the test's release says it was built from.
const SOURCE_COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";
/// Longer than any run of the script may take (its downloads are bounded
/// too): past it the run counts as a hang.
const HANG: Duration = Duration::from_secs(90);

fn on_path(tool: &str) -> bool {
    Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success())
}

/// The tools these tests need, or why they skip.
fn tools_missing() -> Option<&'static str> {
    if !on_path("python3") {
        return Some("python3 is not on PATH (the test's HTTP server is its http.server)");
    }
    if !on_path("curl") {
        return Some("curl is not on PATH (the install script downloads with it; every GitHub runner has it)");
    }
    None
}

/// Runs `command` to its end, failing the test if it takes longer than `HANG`.
fn run_bounded(command: &mut Command, what: &str) -> std::process::ExitStatus {
    let mut child = command.spawn().unwrap_or_else(|e| panic!("{what}: {e}"));
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if start.elapsed() > HANG {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} ran for more than {HANG:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SHA-256 of a file, by python's hashlib (not the tool the script uses).
fn sha256(file: &Path) -> String {
    let out = Command::new("python3")
        .args(["-c", "import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], 'rb').read()).hexdigest())"])
        .arg(file)
        .output()
        .expect("python3");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8").trim().to_owned()
}

/// What the release directory of a test holds.
enum Release {
    /// The archive, with its true digest in SHA256SUMS.
    Good,
    /// The archive, with another digest in SHA256SUMS.
    WrongChecksum,
    /// SHA256SUMS lists the archive, which is not there (a 404).
    NoArchive,
}

/// A release served over HTTP on 127.0.0.1; the server is killed (by its
/// PID, `Supervised`) when this drops.
struct Served {
    base: String,
    digest: String,
    server: Supervised,
    _dir: tempfile::TempDir,
}

impl Served {
    fn start(release: Release) -> Served {
        let dir = tempfile::tempdir().expect("tempdir");
        let files = dir.path().join("www").join(format!("v{VERSION}"));
        let stage = dir.path().join("stage");
        std::fs::create_dir_all(&files).expect("mkdir");
        std::fs::create_dir_all(&stage).expect("mkdir");
        std::fs::copy(env!("CARGO_BIN_EXE_lifeguard"), stage.join("lifeguard")).expect("copy lifeguard");
        let archive = files.join(ASSET);
        let status =
            run_bounded(Command::new("tar").arg("-czf").arg(&archive).arg("-C").arg(&stage).arg("lifeguard"), "tar");
        assert!(status.success(), "tar");
        let digest = sha256(&archive);
        let listed = match release {
            Release::Good | Release::NoArchive => digest.clone(),
            // The digest of something else: the archive as if one byte had changed.
            Release::WrongChecksum => "5".repeat(64),
        };
        if matches!(release, Release::NoArchive) {
            std::fs::remove_file(&archive).expect("rm");
        }
        std::fs::write(files.join("SHA256SUMS"), format!("{listed}  {ASSET}\n")).expect("write");
        std::fs::write(files.join("SOURCE_COMMIT"), format!("{SOURCE_COMMIT}\n")).expect("write");
        let port = free_port();
        let mut command = Command::new("python3");
        command
            .args(["-u", "-m", "http.server", "--bind", "127.0.0.1", "--directory"])
            .arg(dir.path().join("www"))
            .arg(port.to_string());
        let mut server = Supervised::spawn("http.server", command, &dir.path().join("server.log"));
        let address = format!("127.0.0.1:{port}");
        wait_for("the HTTP server", Duration::from_secs(20), || {
            server.assert_running();
            std::net::TcpStream::connect(&address).map(|_| ()).map_err(|e| e.to_string())
        });
        Served { base: format!("http://{address}"), digest, server, _dir: dir }
    }

    /// The paths the server was asked for.
    fn requests(&self) -> Vec<String> {
        std::fs::read_to_string(&self.server.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_once("\"GET ").and_then(|(_, rest)| rest.split_whitespace().next()))
            .map(str::to_owned)
            .collect()
    }
}

/// What a run of the install script left behind.
struct Install {
    code: i32,
    stdout: String,
    stderr: String,
    /// What it appended to GITHUB_PATH.
    github_path: String,
    /// The arguments the `cargo` stub was called with, if it was.
    cargo: Option<Vec<String>>,
    /// RUNNER_TEMP.
    runner_temp: PathBuf,
    _dir: tempfile::TempDir,
}

/// Runs `action/install.sh` as the action's first step runs it, for the
/// ref `reference`, with the releases at `base` and a `cargo` stub first on
/// PATH: the fallback's real `cargo install` would build lifeguard for
/// minutes, and what matters here is that it is asked for, and how.
fn install(reference: &str, base: &str) -> Install {
    let dir = tempfile::tempdir().expect("tempdir");
    let (stubs, runner_temp) = (dir.path().join("stubs"), dir.path().join("runner-temp"));
    std::fs::create_dir_all(&stubs).expect("mkdir");
    std::fs::create_dir_all(&runner_temp).expect("mkdir");
    let cargo = stubs.join("cargo");
    std::fs::write(&cargo, "#!/bin/sh\nprintf '%s\\n' \"$@\" >\"$CARGO_STUB_ARGS\"\n").expect("write the stub");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let (github_path, cargo_args) = (dir.path().join("github-path"), dir.path().join("cargo-args"));
    let (stdout, stderr) = (dir.path().join("stdout"), dir.path().join("stderr"));
    let mut path = vec![stubs];
    path.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    let status = run_bounded(
        Command::new("bash")
            .arg(repo_root().join("action/install.sh"))
            .current_dir(dir.path())
            .env("PATH", std::env::join_paths(path).expect("PATH"))
            .env("RUNNER_TEMP", &runner_temp)
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", "X64")
            .env("GITHUB_PATH", &github_path)
            .env("LG_ACTION_REF", reference)
            .env("LIFEGUARD_RELEASE_BASE_URL", base)
            .env("CARGO_STUB_ARGS", &cargo_args)
            .env_remove("LG_INSTALL")
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&stdout).expect("stdout file"))
            .stderr(std::fs::File::create(&stderr).expect("stderr file")),
        "action/install.sh",
    );
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    Install {
        code: status.code().expect("exit code"),
        stdout: read(&stdout),
        stderr: read(&stderr),
        github_path: read(&github_path),
        cargo: cargo_args.is_file().then(|| read(&cargo_args).lines().map(str::to_owned).collect()),
        runner_temp,
        _dir: dir,
    }
}

impl Install {
    fn bin(&self) -> PathBuf {
        self.runner_temp.join("lifeguard/bin")
    }

    fn log(&self) -> String {
        format!("exit {}\nstdout:\n{}\nstderr:\n{}", self.code, self.stdout, self.stderr)
    }

    /// It built from source: `cargo install --locked ... --path <checkout>/lint`
    /// into RUNNER_TEMP, put on the PATH, after one line saying why.
    fn assert_built_from_source(&self, why: &str) {
        assert_eq!(self.code, 0, "{}", self.log());
        let args = self.cargo.as_ref().unwrap_or_else(|| panic!("cargo was not called:\n{}", self.log()));
        assert_eq!(args[..2], ["install", "--locked"], "{args:?}");
        let path = args.iter().position(|a| a == "--path").and_then(|i| args.get(i + 1)).expect("--path");
        assert_eq!(
            Path::new(path).canonicalize().expect("--path exists"),
            repo_root().join("lint").canonicalize().expect("lint/"),
            "{args:?}"
        );
        let root = args.iter().position(|a| a == "--root").and_then(|i| args.get(i + 1)).expect("--root");
        assert_eq!(Path::new(root), self.runner_temp.join("lifeguard"), "{args:?}");
        assert_eq!(self.github_path, format!("{}\n", self.bin().display()));
        let said: Vec<&str> = self.stdout.lines().collect();
        assert_eq!(said.len(), 1, "one line says why:\n{}", self.log());
        assert!(said[0].contains(why) && said[0].contains("building"), "{why:?}:\n{}", self.log());
    }
}

#[test]
fn a_release_ref_with_a_good_checksum_installs_the_release_binary() {
    if let Some(reason) = tools_missing() {
        return skip(reason);
    }
    let served = Served::start(Release::Good);
    let ours = Command::new(env!("CARGO_BIN_EXE_lifeguard")).arg("--version").output().expect("lifeguard");
    // The tag, and the SHA the release was built from (a pinned release).
    for reference in [format!("v{VERSION}"), SOURCE_COMMIT.to_owned()] {
        let run = install(&reference, &served.base);
        assert_eq!(run.code, 0, "{reference}: {}", run.log());
        assert!(run.cargo.is_none(), "{reference}: no build from source:\n{}", run.log());
        assert_eq!(run.github_path, format!("{}\n", run.bin().display()), "{reference}");
        let installed =
            Command::new(run.bin().join("lifeguard")).arg("--version").output().expect("installed lifeguard");
        assert!(installed.status.success(), "{reference}");
        assert_eq!(installed.stdout, ours.stdout, "{reference}: the release's lifeguard runs");
        assert!(run.stdout.contains(&served.digest), "{reference}: the log shows the digest:\n{}", run.log());
    }
    let requests = served.requests();
    let asset = format!("/v{VERSION}/{ASSET}");
    assert_eq!(requests.iter().filter(|r| **r == asset).count(), 2, "{requests:?}");
    assert_eq!(requests.iter().filter(|r| r.ends_with("/SOURCE_COMMIT")).count(), 1, "only for the SHA: {requests:?}");
}

#[test]
fn a_wrong_checksum_is_refused_and_never_falls_back() {
    if let Some(reason) = tools_missing() {
        return skip(reason);
    }
    let served = Served::start(Release::WrongChecksum);
    let run = install(&format!("v{VERSION}"), &served.base);
    assert_ne!(run.code, 0, "{}", run.log());
    let error = run.stdout.lines().find(|l| l.starts_with("::error")).unwrap_or_else(|| panic!("{}", run.log()));
    for named in [ASSET, &"5".repeat(64), &served.digest] {
        assert!(error.contains(named), "the error names {named}: {error}");
    }
    assert_eq!(run.github_path, "", "nothing on the PATH");
    assert!(run.cargo.is_none(), "no build from source:\n{}", run.log());
    assert!(!run.bin().join("lifeguard").exists(), "nothing installed");
}

#[test]
fn a_release_without_the_archive_builds_from_source() {
    if let Some(reason) = tools_missing() {
        return skip(reason);
    }
    let served = Served::start(Release::NoArchive);
    let run = install(&format!("v{VERSION}"), &served.base);
    run.assert_built_from_source("404");
    assert!(served.requests().contains(&format!("/v{VERSION}/{ASSET}")), "{:?}", served.requests());
}

#[test]
fn a_ref_that_is_not_a_release_builds_from_source() {
    if let Some(reason) = tools_missing() {
        return skip(reason);
    }
    let served = Served::start(Release::Good);
    // A branch: nothing to ask the server.
    install("main", &served.base).assert_built_from_source("the ref main is not a release");
    assert_eq!(served.requests(), Vec::<String>::new(), "no download for a branch");
    // A SHA that is not the release's: its SOURCE_COMMIT says so, and the archive is not fetched.
    let other = "fedcba9876543210fedcba9876543210fedcba98";
    install(other, &served.base).assert_built_from_source(&format!("the ref {other} is not a release"));
    assert_eq!(served.requests(), [format!("/v{VERSION}/SOURCE_COMMIT")]);
}
