//! What `lifeguard export vap` must report on an object, as the linter sees
//! it: the rules it covers, the linter's covered findings on the object
//! alone and the part of them the export carries (a partly covered rule's
//! documented part, `lifeguard export vap --explain`), which denials it
//! settles, and the `RULE: container "x": ...` messages its policies write,
//! read back. Shared by the tests that evaluate the export against the real
//! kube-apiserver (`tests/tests/cluster_vap/`) and offline with the kyverno
//! CLI (`tests/tests/cel_fixtures.rs`), so both hold it to one expectation.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use policies::model::{ContainerView, Workload};
use policies::vap::Covered;
use policies::yaml::{Limits, parse_stream};
use policies::{Batch, Finding, Policy, lint_object, objects_in};
use serde_json::Value;

use crate::cluster::webhook::workspace_binary;
use crate::{repo_root, rule_fixtures};

/// `lifeguard export vap ARGS`: its YAML (the default policy unless ARGS
/// name one, not one found above the working directory).
pub fn export(args: &[&str]) -> String {
    export_of("vap", args)
}

/// `lifeguard export WHAT ARGS` (`vap`, `map`): its YAML, as [`export`] runs it.
pub fn export_of(what: &str, args: &[&str]) -> String {
    let binary = workspace_binary("lifeguard", "lifeguard").expect("the lifeguard binary");
    let out = std::process::Command::new(binary)
        .args(["export", what])
        .args(args)
        .env_remove("LIFEGUARD_POLICY")
        .current_dir(repo_root())
        .output()
        .expect("run lifeguard export");
    assert!(out.status.success(), "lifeguard export {what} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// The rules the export covers, wholly or partly.
pub fn covered() -> Vec<&'static str> {
    policies::vap::coverage().into_iter().filter(|(_, c)| !matches!(c, Covered::No(_))).map(|(r, _)| r).collect()
}

/// (rule, container) of every message of the exported policies in `text`
/// (an API server's warnings or deny, a report's messages), each line read
/// on its own; a finding of the object names no container (an empty name).
pub fn flagged_in(text: &str) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        for rule in covered() {
            let Some(at) = line.find(&format!("{rule}: ")) else { continue };
            let rest = &line[at + rule.len() + 2..];
            if !rest.starts_with("container \"") {
                out.insert((rule.to_owned(), String::new()));
                continue;
            }
            for part in rest.split("container \"").skip(1) {
                if let Some((name, _)) = part.split_once('"') {
                    out.insert((rule.to_owned(), name.to_owned()));
                }
            }
        }
    }
    out
}

/// (rule, container) of the covered findings `lifeguard lint` reports on the
/// object alone: all of them, and those the export carries.
pub fn linted(object: &Value, policy: &Policy) -> Linted {
    let report = lint_object(object, &Batch::default(), policy).ok().flatten();
    let covered = covered();
    let mut out = Linted::default();
    for f in report.into_iter().flat_map(|r| r.findings).filter(|f| covered.contains(&f.rule.as_str())) {
        let key = (f.rule.clone(), f.container.clone().unwrap_or_default());
        if carried(&f, object, policy) {
            out.carried.insert(key.clone());
        }
        out.all.insert(key);
    }
    out
}

/// What `lifeguard lint` finds on an object, of the covered rules.
#[derive(Debug, Default, PartialEq)]
pub struct Linted {
    /// Every (rule, container).
    pub all: BTreeSet<(String, String)>,
    /// Those the export must report too.
    pub carried: BTreeSet<(String, String)>,
}

impl Linted {
    /// Whether the export flagged exactly what it must: everything carried,
    /// nothing the linter does not report.
    pub fn agrees(&self, cel: &BTreeSet<(String, String)>) -> bool {
        self.carried.is_subset(cel) && cel.is_subset(&self.all)
    }
}

/// The kinds the export matches, not owned by a controller.
pub fn judged(object: &Value) -> bool {
    let owned = object["metadata"]["ownerReferences"]
        .as_array()
        .is_some_and(|refs| refs.iter().any(|r| r["controller"] == true));
    object["kind"].as_str().is_some_and(policies::model::names_pod_kind) && !owned
}

/// The objects of a manifest file the export judges.
pub fn objects(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("read manifest");
    let (docs, _) = parse_stream(&text, &Limits::default());
    docs.iter().flat_map(|d| objects_in(&d.value).into_iter().map(|(_, o)| o.clone())).filter(judged).collect()
}

/// The files of a rule's fixtures, in name order (the lifeguard policies
/// among them hold no object the export judges).
pub fn fixture_files(rule: &str) -> Vec<PathBuf> {
    let dir = rule_fixtures(rule);
    let mut files: Vec<_> =
        std::fs::read_dir(&dir).expect("fixtures").filter_map(|e| e.ok()).map(|e| e.path()).collect();
    files.sort();
    files
}

/// The judged objects of the covered rules' fixtures, each with its file.
pub fn fixtures() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for rule in covered() {
        for file in fixture_files(rule) {
            for object in objects(&file) {
                out.push((file.display().to_string(), object));
            }
        }
    }
    out
}

/// Whether a finding of the linter is one the export carries: every finding
/// of a wholly covered rule, the documented part of a partly covered one
/// (`lifeguard export vap --explain` says what each misses).
pub fn carried(f: &Finding, object: &Value, policy: &Policy) -> bool {
    let Some(w) = workload_of(f, object, policy) else { return false };
    if !reached(&w, object) {
        return false;
    }
    let container = || {
        let c = w.containers().find(|c| Some(c.name()) == f.container.as_deref())?;
        Some((
            c.gpu_resource().is_some(),
            c.declares_ports(),
            c.container.command.as_ref().is_some_and(|c| !c.is_empty()),
        ))
    };
    match f.rule.as_str() {
        // Only an exec command whose program is empty.
        "probe-invalid" => f.pointer.ends_with("/exec/command/0"),
        // Without a declared cold start, not a slow-boot image with a command
        // of its own and no port or GPU (it may be a toolbox that sleeps).
        "startup-budget-too-short" if f.message.contains("gpuBootSeconds") => {
            container().is_some_and(|(gpu, ports, command)| gpu || ports || !command)
        }
        // Not when its only sign of a slow boot is such an image.
        "startup-probe-missing" if f.message.contains("looks like a model server") => {
            let other = ["declared cold start", "liveness initialDelaySeconds", "liveness failureThreshold"];
            other.iter().any(|o| f.message.contains(o))
                || container().is_some_and(|(gpu, ports, command)| gpu || ports || !command)
        }
        // Where CEL reads every preStop, drain and budget as the linter does:
        // the finding's container, or for the pod's grace period all of them.
        "prestop-sleep-only" => readable(&w, policy, |c| Some(c.name()) == f.container.as_deref()),
        "grace-period-too-short" => f.container.is_none() || readable(&w, policy, |_| true),
        _ => true,
    }
}

/// The pod template a finding is in: of the object's, the one whose
/// template's pointer is the longest prefix of the finding's (a KServe
/// predictor's holds its workerSpec's); for a finding outside every
/// template (an annotation of the object), the first.
pub fn workload_of(f: &Finding, object: &Value, policy: &Policy) -> Option<Workload> {
    let all = Workload::all_declared(object, policy.declared_pod_kinds()).ok()?;
    let under = |w: &Workload| in_template(&f.pointer, w);
    let first = all.first().cloned();
    all.into_iter().filter(under).max_by_key(|w| w.template_pointer.len()).or(first)
}

/// Whether `pointer` is in the workload's pod template (a Pod's is the whole object).
pub fn in_template(pointer: &str, w: &Workload) -> bool {
    pointer.starts_with(&format!("{}/", w.template_pointer))
}

/// Whether `lifeguard export vap` judges the pod template: a built-in
/// kind's, or a custom kind's that its table names without a `*` (the
/// export's header lists the others as not judged).
pub fn reached(w: &Workload, object: &Value) -> bool {
    if policies::model::names_pod_kind(&w.kind) {
        return true;
    }
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    policies::model::custom_pod_kind(&w.kind, api_version)
        .is_some_and(|k| k.templates.iter().any(|t| !t.template.contains('*') && t.template == w.template_pointer))
}

/// Whether CEL reads the shutdown needs of the chosen containers as the
/// linter does (`lifeguard export vap --explain`, prestop-sleep-only).
pub fn readable(w: &Workload, policy: &Policy, chosen: impl Fn(&ContainerView<'_>) -> bool) -> bool {
    let too_long = |v: &str| {
        let digits = v.trim().trim_start_matches(['+', '-']).trim_start_matches('0');
        digits.len() >= 19 && digits.bytes().all(|b| b.is_ascii_digit())
    };
    if w.annotations.iter().any(|(k, v)| k.starts_with("lifeguard.dev/") && too_long(v)) {
        return false;
    }
    w.containers().filter(|c| chosen(c)).all(|c| {
        let env = c.container.env.iter().flatten().all(|e| !e.value.as_deref().is_some_and(too_long));
        let command = c.container.command.as_ref().is_some_and(|c| !c.is_empty());
        let unsure = policy.settings.model_server_drain_seconds > 0
            && c.gpu_resource().is_none()
            && policy.is_slow_boot_image(c.image())
            && command
            && !c.declares_ports();
        env && !unsure && prestop_readable(&c)
    })
}

/// The preStop forms CEL reads: a native sleep, any hook that is not an
/// exec, `[busybox] sleep ARGS` in printable words (no `infinity` beside
/// an unreadable one), a shell's `-c SCRIPT` in printable ASCII.
pub fn prestop_readable(c: &ContainerView<'_>) -> bool {
    let Some(argv) = c
        .container
        .lifecycle
        .as_ref()
        .and_then(|l| l.pre_stop.as_ref())
        .and_then(|h| h.exec.as_ref())
        .and_then(|e| e.command.as_ref())
    else {
        return true;
    };
    let base = |s: &str| s.rsplit('/').next().unwrap_or(s).to_owned();
    let b = usize::from(argv.first().is_some_and(|a| base(a) == "busybox"));
    let Some(program) = argv.get(b).map(|p| base(p)) else { return true };
    let printable = |s: &str| s.bytes().all(|b| (0x20..=0x7e).contains(&b) || b == b'\t' || b == b'\n');
    if program == "sleep" {
        let words = argv.iter().all(|a| !a.is_empty() && a.bytes().all(|b| (0x21..=0x7e).contains(&b)));
        let inf = argv[b + 1..].iter().any(|a| {
            let a = a.trim_matches(['"', '\'']);
            a.eq_ignore_ascii_case("inf") || a.eq_ignore_ascii_case("infinity")
        });
        let numbers = argv[b + 1..].iter().all(|a| {
            let a = a.trim_matches(['"', '\'']);
            let n = a.strip_suffix(['s', 'm', 'h', 'd']).unwrap_or(a);
            a.eq_ignore_ascii_case("inf")
                || a.eq_ignore_ascii_case("infinity")
                || n.parse::<f64>().is_ok() && n.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        });
        return words && (!inf || numbers);
    }
    if !["sh", "bash", "ash", "dash", "zsh", "ksh"].contains(&program.as_str()) {
        return true;
    }
    match (argv.get(b + 1), argv.get(b + 2)) {
        (None, _) => true,
        (Some(flag), _) if !flag.starts_with('-') => true,
        (Some(flag), Some(script)) => {
            flag != "--" && flag.contains('c') && !script.starts_with('-') && printable(script)
        }
        _ => false,
    }
}

/// Whether the linter denies an object by a covered rule: `may` by any
/// finding, `must` by one whose severity the export settles (a shared exec
/// or an `httpGet` with a `host` is reported as a warning whatever the
/// linter's severity: see `probe-endpoint-reused` in `--explain`).
pub fn denies(object: &Value, policy: &Policy) -> (bool, bool) {
    let report = lint_object(object, &Batch::default(), policy).ok().flatten();
    let covered = covered();
    let settled = |f: &Finding| {
        if f.rule != "probe-endpoint-reused" {
            return true;
        }
        let Some(live) = object.pointer(&f.pointer) else { return false };
        live.get("exec").is_none() && live.pointer("/httpGet/host").and_then(Value::as_str).is_none_or(str::is_empty)
    };
    let mut out = (false, false);
    for f in report.iter().flat_map(|r| &r.findings) {
        if covered.contains(&f.rule.as_str()) && policy.denies(f.severity) {
            out.0 = true;
            out.1 |= carried(f, object, policy) && settled(f);
        }
    }
    out
}
