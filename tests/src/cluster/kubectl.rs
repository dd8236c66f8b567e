//! `kubectl` and `helm` as a user runs them, against the test cluster's
//! kubeconfig: exit code, stdout and stderr kept for the test to assert.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

/// What a command printed and how it ended.
#[derive(Debug, Clone)]
pub struct Run {
    /// The command line, for messages.
    pub command: String,
    /// Its exit code (`-1` when killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    /// Panics unless it exited 0; returns stdout.
    pub fn ok(&self) -> &str {
        assert_eq!(self.code, 0, "{} failed:\nstdout: {}\nstderr: {}", self.command, self.stdout, self.stderr);
        &self.stdout
    }

    /// Stdout as JSON (after checking it exited 0).
    pub fn json(&self) -> Value {
        serde_json::from_str(self.ok())
            .unwrap_or_else(|e| panic!("{}: stdout is not JSON ({e}): {}", self.command, self.stdout))
    }

    /// The `Warning: ` lines of stderr, without the prefix.
    pub fn warnings(&self) -> Vec<&str> {
        self.stderr.lines().filter_map(|l| l.strip_prefix("Warning: ")).collect()
    }
}

/// A client binary (`kubectl` or `helm`) bound to one kubeconfig.
#[derive(Debug, Clone)]
pub struct Client {
    binary: PathBuf,
    kubeconfig: PathBuf,
    /// Where helm keeps its cache and config (never the user's `$HOME`).
    home: PathBuf,
}

impl Client {
    /// `binary` with `--kubeconfig`-equivalent `KUBECONFIG=kubeconfig`.
    pub fn new(binary: &Path, kubeconfig: &Path, home: &Path) -> Client {
        Client { binary: binary.to_owned(), kubeconfig: kubeconfig.to_owned(), home: home.to_owned() }
    }

    /// Runs it with `args`.
    pub fn run(&self, args: &[&str]) -> Run {
        self.run_with_input(args, None)
    }

    /// The command for `args`, its environment set, to spawn as the
    /// caller needs (a `--watch` that streams).
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.binary);
        command
            .args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("HOME", &self.home)
            .env("HELM_CACHE_HOME", self.home.join("helm-cache"))
            .env("HELM_CONFIG_HOME", self.home.join("helm-config"))
            .env("HELM_DATA_HOME", self.home.join("helm-data"))
            // kubectl colours warnings on a terminal only; keep it plain.
            .env("NO_COLOR", "1");
        command
    }

    /// Runs it with `args` and `input` on stdin (for `-f -`).
    pub fn run_with_input(&self, args: &[&str], input: Option<&str>) -> Run {
        let mut command = self.command(args);
        command
            .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let name = self.binary.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let line = format!("{name} {}", args.join(" "));
        let mut child = command.spawn().unwrap_or_else(|e| panic!("start {line}: {e}"));
        if let Some(input) = input {
            let mut stdin = child.stdin.take().expect("stdin");
            // A client that exits early closes the pipe; its output says why.
            let _ = stdin.write_all(input.as_bytes());
        }
        let out = child.wait_with_output().unwrap_or_else(|e| panic!("{line}: {e}"));
        Run {
            command: line,
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// `apply -f -` of `object` (JSON), which must succeed.
    pub fn apply(&self, object: &Value) -> Run {
        let run = self.run_with_input(&["apply", "-f", "-"], Some(&object.to_string()));
        run.ok();
        run
    }

    /// `get KIND NAME -n NAMESPACE -o json`, or `None` when it is not found.
    pub fn get(&self, namespace: &str, kind: &str, name: &str) -> Option<Value> {
        let run = self.run(&["get", kind, name, "-n", namespace, "-o", "json", "--ignore-not-found"]);
        let out = run.ok();
        if out.trim().is_empty() { None } else { Some(run.json()) }
    }

    /// A fresh namespace labelled with `labels` (`key=value`).
    pub fn namespace(&self, name: &str, labels: &[&str]) {
        self.run(&["create", "namespace", name]).ok();
        if !labels.is_empty() {
            let mut args = vec!["label", "namespace", name, "--overwrite"];
            args.extend_from_slice(labels);
            self.run(&args).ok();
        }
    }

    /// The namespace's `default` ServiceAccount, which Pods need: made here
    /// unless kube-controller-manager (when a test started it) made it first.
    pub fn default_service_account(&self, namespace: &str) {
        let run = self.run(&["create", "serviceaccount", "default", "-n", namespace]);
        assert!(run.code == 0 || run.stderr.contains("already exists"), "{run:#?}");
    }

    /// Polls `get` until `done` holds, for at most `limit`.
    pub fn wait_until(
        &self,
        what: &str,
        limit: Duration,
        args: &[&str],
        mut done: impl FnMut(&Value) -> bool,
    ) -> Value {
        super::process::wait_for(what, limit, || {
            let run = self.run(args);
            if run.code != 0 {
                return Err(run.stderr);
            }
            let value: Value = serde_json::from_str(&run.stdout).map_err(|e| e.to_string())?;
            if done(&value) { Ok(value) } else { Err(run.stdout.chars().take(400).collect()) }
        })
    }

    /// Applies a project's CRD file (server-side: a real CRD is too large
    /// for the last-applied annotation) and waits until the CRDs it holds,
    /// named `plural.group`, are Established. Idempotent: tests sharing a
    /// control plane may each install it.
    pub fn install_crds(&self, file: &Path, crds: &[&str]) {
        let file = file.to_str().expect("a UTF-8 path");
        let applied = self.run(&["apply", "--server-side", "-f", file]);
        assert_eq!(applied.code, 0, "{}", applied.stderr);
        self.wait_established(crds);
    }

    /// Waits until every CRD named (`plural.group`) is Established, for at
    /// most 60 s. Not `kubectl wait --for=condition=Established`: that fails
    /// at once ("<nil> is of the type <nil>") when it reads the CRD before
    /// the apiextensions controller has written its first condition.
    pub fn wait_established(&self, crds: &[&str]) {
        for crd in crds {
            self.wait_until(
                &format!("crd/{crd} Established"),
                Duration::from_secs(60),
                &["get", "crd", crd, "-o", "json"],
                |c| {
                    c["status"]["conditions"].as_array().is_some_and(|conditions| {
                        conditions.iter().any(|c| c["type"] == "Established" && c["status"] == "True")
                    })
                },
            );
        }
    }
}
