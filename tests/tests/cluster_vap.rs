//! `lifeguard export vap` against the real kube-apiserver: the exported
//! ValidatingAdmissionPolicies are accepted (their CEL compiles and passes
//! the cost estimate) for every pack and mode; under `Warn` every object of
//! the covered rules' fixtures and of the shared corpus gets exactly the
//! covered findings `lifeguard lint` reports on it alone (same rule, same
//! containers; for a partly covered rule, all of the part it carries), and
//! none it does not; under enforce an object is refused only where the
//! linter denies it, and a bad fixture with a rule named; cold-start values
//! and preStop hooks are read as the linter reads them; a pod of 20
//! containers is judged within the budget.
//!
//! The policies are cluster-wide, so the tests take turns.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use lifeguard::input::{Limits, parse_stream};
use lifeguard_e2e::cluster::process::wait_for;
use lifeguard_e2e::cluster::webhook::workspace_binary;
use lifeguard_e2e::cluster::{ControlPlane, Run};
use lifeguard_e2e::{corpus_dir, repo_root};
use policies::model::{ContainerView, Workload};
use policies::vap::Covered;
use policies::{Batch, Finding, Policy, lint_object, objects_in};
use serde_json::{Value, json};

static TURN: Mutex<()> = Mutex::new(());

/// `lifeguard export vap ARGS`: its YAML.
fn export(args: &[&str]) -> String {
    let binary = workspace_binary("lifeguard", "lifeguard").expect("the lifeguard binary");
    let out = std::process::Command::new(binary)
        .args(["export", "vap"])
        .args(args)
        .env_remove("LIFEGUARD_POLICY")
        .current_dir(repo_root())
        .output()
        .expect("run lifeguard export vap");
    assert!(out.status.success(), "lifeguard export vap {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// The rules the export covers, wholly or partly.
fn covered() -> Vec<&'static str> {
    policies::vap::coverage().into_iter().filter(|(_, c)| !matches!(c, Covered::No(_))).map(|(r, _)| r).collect()
}

/// Whether a finding of the linter is one the export carries: every finding
/// of a wholly covered rule, the documented part of a partly covered one
/// (`lifeguard export vap --explain` says what each misses).
fn carried(f: &Finding, object: &Value, policy: &Policy) -> bool {
    let container = || {
        let w = Workload::from_object(object).ok().flatten()?;
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
        "prestop-sleep-only" => readable(object, policy, |c| Some(c.name()) == f.container.as_deref()),
        "grace-period-too-short" => f.container.is_none() || readable(object, policy, |_| true),
        _ => true,
    }
}

/// Whether CEL reads the shutdown needs of the chosen containers as the
/// linter does (`lifeguard export vap --explain`, prestop-sleep-only).
fn readable(object: &Value, policy: &Policy, chosen: impl Fn(&ContainerView<'_>) -> bool) -> bool {
    let Some(w) = Workload::from_object(object).ok().flatten() else { return true };
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
fn prestop_readable(c: &ContainerView<'_>) -> bool {
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

/// Removes every exported policy and binding.
fn remove(plane: &ControlPlane) {
    let selector = "app.kubernetes.io/managed-by=lifeguard";
    for kind in ["validatingadmissionpolicybindings", "validatingadmissionpolicies"] {
        plane.kubectl.run(&["delete", kind, "-l", selector, "--ignore-not-found", "--wait"]).ok();
    }
}

/// Applies an export and waits until the API server enforces all of it:
/// each probe object (one per covered rule) comes back flagged by its rule.
fn install(plane: &ControlPlane, yaml: &str, namespace: &str) {
    plane.kubectl.run_with_input(&["apply", "-f", "-"], Some(yaml)).ok();
    for (rule, probe) in probe_objects() {
        wait_for("the exported policies in force", Duration::from_secs(30), || {
            let run = dry_run(plane, namespace, &probe);
            if flagged(&run).iter().any(|(r, _)| r == rule) { Ok(()) } else { Err(format!("{rule}: {run:?}")) }
        });
    }
}

/// Creates `object` in `namespace` with `--dry-run=server`: admission runs, nothing is stored.
fn dry_run(plane: &ControlPlane, namespace: &str, object: &Value) -> Run {
    let mut object = object.clone();
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("namespace");
    }
    plane.kubectl.run_with_input(&["create", "--dry-run=server", "-n", namespace, "-f", "-"], Some(&object.to_string()))
}

/// (rule, container) of every message of the exported policies in a run:
/// its warnings, or its deny; a finding of the object names no container
/// (an empty name).
fn flagged(run: &Run) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for line in run.stderr.lines() {
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
fn linted(object: &Value, policy: &Policy) -> Linted {
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
struct Linted {
    /// Every (rule, container).
    all: BTreeSet<(String, String)>,
    /// Those the export must report too.
    carried: BTreeSet<(String, String)>,
}

impl Linted {
    /// Whether admission flagged exactly what it must: everything carried,
    /// nothing the linter does not report.
    fn agrees(&self, cel: &BTreeSet<(String, String)>) -> bool {
        self.carried.is_subset(cel) && cel.is_subset(&self.all)
    }
}

/// The kinds the export matches, not owned by a controller.
fn judged(object: &Value) -> bool {
    let kinds = [
        "Pod",
        "ReplicationController",
        "PodTemplate",
        "Deployment",
        "StatefulSet",
        "DaemonSet",
        "ReplicaSet",
        "Job",
        "CronJob",
    ];
    let owned = object["metadata"]["ownerReferences"]
        .as_array()
        .is_some_and(|refs| refs.iter().any(|r| r["controller"] == true));
    object["kind"].as_str().is_some_and(|k| kinds.contains(&k)) && !owned
}

/// The objects of a manifest file.
fn objects(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("read manifest");
    let (docs, _) = parse_stream(&text, &Limits::default());
    docs.iter().flat_map(|d| objects_in(&d.value).into_iter().map(|(_, o)| o.clone())).filter(judged).collect()
}

/// The fixtures of the covered rules.
fn fixtures() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for rule in covered() {
        let dir = repo_root().join("lint/tests/fixtures/rules").join(rule);
        let mut files: Vec<_> =
            std::fs::read_dir(&dir).expect("fixtures").filter_map(|e| e.ok()).map(|e| e.path()).collect();
        files.sort();
        for file in files {
            for object in objects(&file) {
                out.push((file.display().to_string(), object));
            }
        }
    }
    out
}

/// Known-bad objects for the wait, one per covered rule, each with that
/// rule's finding alone among the rules an enforce export denies.
fn probe_objects() -> Vec<(&'static str, Value)> {
    let pod = |container: Value, annotations: Value| {
        let mut container = container;
        container["name"] = json!("app");
        container["image"] = json!("example/app:1");
        container["ports"] = json!([{"name": "http", "containerPort": 8080}]);
        json!({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "vap-probe", "annotations": annotations},
            "spec": {"containers": [container]}
        })
    };
    let http = |port: &str| json!({"httpGet": {"path": "/livez", "port": port}});
    let probes = [
        ("probe-port-unknown", json!({"livenessProbe": http("nope")})),
        (
            "liveness-too-aggressive",
            json!({"livenessProbe": {"httpGet": http("http")["httpGet"], "failureThreshold": 1}}),
        ),
        (
            "probe-window-too-long",
            json!({"readinessProbe": {"httpGet": http("http")["httpGet"], "failureThreshold": 100}}),
        ),
        ("probe-endpoint-reused", json!({"livenessProbe": http("http"), "readinessProbe": http("http")})),
        (
            "startup-probe-missing",
            json!({"livenessProbe": {"httpGet": http("http")["httpGet"], "initialDelaySeconds": 120}}),
        ),
        ("probe-invalid", json!({"livenessProbe": {"exec": {"command": [" ", "check"]}}})),
        ("readiness-port-only", json!({"readinessProbe": {"tcpSocket": {"port": 8080}}})),
    ];
    let mut out: Vec<(&str, Value)> = probes.into_iter().map(|(rule, c)| (rule, pod(c, json!({})))).collect();
    let startup = json!({"startupProbe": {"tcpSocket": {"port": 8080}}});
    out.push(("startup-budget-too-short", pod(startup, json!({"lifeguard.dev/cold-start-seconds": "5m"}))));
    let hook = json!({"lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", "sleep 28"]}}}});
    out.push(("prestop-sleep-only", pod(hook, json!({}))));
    out.push(("grace-period-too-short", pod(json!({}), json!({"lifeguard.dev/drain-seconds": "40"}))));
    let covered = covered();
    assert!(covered.iter().all(|rule| out.iter().any(|(r, _)| r == rule)), "a probe object per covered rule");
    out.retain(|(rule, _)| covered.contains(rule));
    out
}

/// The namespace's default ServiceAccount, which Pods need (no controllers run here).
fn namespace(plane: &ControlPlane, name: &str) {
    plane.kubectl.namespace(name, &[]);
    plane.kubectl.default_service_account(name);
}

#[test]
fn every_pack_and_mode_is_accepted_by_the_api_server() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().expect("tempdir");
    let readme_policy = dir.path().join("policy.yaml");
    std::fs::write(&readme_policy, lifeguard_e2e::readme_policy_example()).expect("write the README's policy");
    let policies =
        ["default".to_owned(), "strict".to_owned(), "gpu-serving".to_owned(), readme_policy.display().to_string()];
    for policy in &policies {
        for mode in ["enforce", "warn", "audit"] {
            let yaml = export(&["--policy", policy, "--mode", mode]);
            assert!(yaml.contains("kind: ValidatingAdmissionPolicyBinding"), "{policy} {mode}: {yaml}");
            let run = plane.kubectl.run_with_input(&["apply", "--dry-run=server", "-f", "-"], Some(&yaml));
            assert_eq!(run.code, 0, "{policy} {mode}: {run:#?}");
            assert_eq!(run.warnings(), Vec::<&str>::new(), "{policy} {mode}: {run:#?}");
        }
    }
}

#[test]
fn under_warn_the_fixtures_and_the_corpus_get_exactly_the_linters_covered_findings() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    // The default pack, and gpu-serving: its overrides, requireStartupProbeForGpu
    // and the drain it assumes for a model server.
    for pack in ["default", "gpu-serving"] {
        parity(plane, pack);
    }
}

/// The parity of one pack's export with `lifeguard lint` under that pack.
fn parity(plane: &ControlPlane, pack: &str) {
    remove(plane);
    let ns = format!("vap-parity-{pack}");
    let ns = ns.as_str();
    namespace(plane, ns);
    install(plane, &export(&["--policy", pack, "--mode", "warn"]), ns);
    let policy = Policy::pack(pack).expect("a built-in pack");

    let mut objects: Vec<(String, Value)> = fixtures();
    let fixture_count = objects.len();
    if let Some(corpus) = corpus_dir() {
        let mut files: Vec<_> = walk(&corpus);
        files.sort();
        for file in files {
            for object in self::objects(&file) {
                objects.push((file.display().to_string(), object));
            }
        }
    }
    let (mut compared, mut flagged_objects, mut refused) = (0, 0, Vec::new());
    let mut differences = Vec::new();
    // Per rule: findings both report, and the linter's the export is documented to miss.
    let mut tally: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    for (file, object) in &objects {
        let run = dry_run(plane, ns, object);
        if run.code != 0 {
            // Not admitted for a reason of its own (an unknown field's type, say).
            refused.push(format!("{file}: {}", run.stderr.lines().next().unwrap_or_default()));
            continue;
        }
        compared += 1;
        let (cel, lint) = (flagged(&run), linted(object, &policy));
        flagged_objects += usize::from(!lint.all.is_empty());
        if !lint.agrees(&cel) {
            differences.push(format!("{file} {}: admission {cel:?}, lint {lint:?}", object["metadata"]["name"]));
        }
        for (rule, _) in &cel {
            tally.entry(rule.clone()).or_default().0 += 1;
        }
        for (rule, _) in lint.all.difference(&cel) {
            tally.entry(rule.clone()).or_default().1 += 1;
        }
    }
    eprintln!(
        "{pack}: {compared} objects compared ({fixture_count} from fixtures), {flagged_objects} with covered findings, {} refused by the API server, {} disagreements",
        refused.len(),
        differences.len()
    );
    for (rule, (both, missed)) in &tally {
        eprintln!("  {rule}: {both} findings reported by both, {missed} of the linter's not carried (documented)");
    }
    assert!(differences.is_empty(), "{differences:#?}");
    assert!(flagged_objects >= 4, "the fixtures' bad objects were judged");
    // Refused for reasons of their own: placeholders (`$K8S_SA_NAME`), privileged
    // containers (this API server disallows them), names the API server rejects.
    assert!(compared >= 250, "{compared} objects compared; refused: {refused:#?}");
    remove(plane);
}

#[test]
fn under_deny_a_bad_object_is_refused_with_the_rule_named_and_a_good_one_admitted() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    remove(plane);
    let ns = "vap-deny";
    namespace(plane, ns);
    // Created before the policy: an update that leaves its template alone
    // is not judged (as the webhook's ratchet lets a relabel through).
    let dir = repo_root().join("lint/tests/fixtures/rules/probe-port-unknown");
    let old = objects(&dir.join("bad.yaml")).into_iter().find(|o| o["kind"] == "Deployment").expect("a bad Deployment");
    let name = old["metadata"]["name"].as_str().expect("name").to_owned();
    let mut stored = old.clone();
    stored["metadata"].as_object_mut().expect("metadata").remove("namespace");
    plane.kubectl.run_with_input(&["create", "-n", ns, "-f", "-"], Some(&stored.to_string())).ok();
    install(plane, &export(&["--policy", "default", "--mode", "enforce"]), ns);
    let relabel = plane.kubectl.run(&["label", "deployment", &name, "-n", ns, "team=payments"]);
    assert_eq!(relabel.code, 0, "a relabel is not judged: {relabel:#?}");
    let scale = plane.kubectl.run(&["scale", "deployment", &name, "-n", ns, "--replicas=3"]);
    assert_eq!(scale.code, 0, "a scale is not judged: {scale:#?}");
    let template = plane.kubectl.run(&[
        "patch",
        "deployment",
        &name,
        "-n",
        ns,
        "--type=merge",
        "-p",
        r#"{"spec":{"template":{"metadata":{"annotations":{"rev":"2"}}}}}"#,
    ]);
    assert_eq!(template.code, 1, "a template change is judged: {template:#?}");
    assert!(template.stderr.contains("probe-port-unknown"), "{}", template.stderr);
    for object in objects(&dir.join("bad.yaml")) {
        let run = dry_run(plane, ns, &object);
        assert_eq!(run.code, 1, "{run:#?}");
        assert!(run.stderr.contains("ValidatingAdmissionPolicy 'lifeguard-deny'"), "{}", run.stderr);
        assert!(run.stderr.contains("denied request: probe-port-unknown: container \""), "{}", run.stderr);
        eprintln!("kubectl: {}", run.stderr.trim_end());
    }
    for object in objects(&dir.join("good.yaml")) {
        let run = dry_run(plane, ns, &object);
        assert!(!run.stderr.contains("probe-port-unknown"), "{run:#?}");
    }
    // liveness-too-aggressive is a warning in the default pack: warned, admitted.
    let run = dry_run(
        plane,
        ns,
        &objects(&repo_root().join("lint/tests/fixtures/rules/liveness-too-aggressive/bad.yaml"))[0],
    );
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(run.warnings().iter().any(|w| w.contains("liveness-too-aggressive: container \"")), "{run:#?}");
    remove(plane);
}

/// Whether the linter denies an object by a covered rule: `may` by any
/// finding, `must` by one whose severity the export settles (a shared exec
/// or an `httpGet` with a `host` is reported as a warning whatever the
/// linter's severity: see `probe-endpoint-reused` in `--explain`).
fn denies(object: &Value, policy: &Policy) -> (bool, bool) {
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

#[test]
fn under_enforce_the_api_server_denies_what_the_linter_denies_and_nothing_more() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    remove(plane);
    let ns = "vap-enforce";
    namespace(plane, ns);
    install(plane, &export(&["--policy", "default", "--mode", "enforce"]), ns);
    let policy = Policy::default();
    // Each covered rule's bad fixtures that the linter denies for that rule
    // are refused with the rule named; its good fixtures are not flagged by it.
    let mut named_rules = 0;
    for rule in covered() {
        let dir = repo_root().join("lint/tests/fixtures/rules").join(rule);
        let mut files: Vec<_> = std::fs::read_dir(&dir).expect("fixtures").flatten().map(|e| e.path()).collect();
        files.sort();
        for file in files {
            let name = file.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
            for object in objects(&file) {
                let run = dry_run(plane, ns, &object);
                let named = run.stderr.contains(&format!("{rule}: "));
                if name.starts_with("good") {
                    assert!(!named, "{rule} {name}: {run:#?}");
                    continue;
                }
                if run.code != 0 && !run.stderr.contains("ValidatingAdmissionPolicy 'lifeguard-deny'") {
                    // Refused by the API server for a reason of its own (probe-invalid's bad
                    // fixtures: what it rejects before any admission policy runs).
                    continue;
                }
                let report = lint_object(&object, &Batch::default(), &policy).ok().flatten();
                let deny = report.iter().flat_map(|r| &r.findings).any(|f| {
                    f.rule == rule
                        && policy.denies(f.severity)
                        && carried(f, &object, &policy)
                        && denies(&object, &policy).1
                });
                if deny {
                    assert_eq!(run.code, 1, "{rule} {name}: {run:#?}");
                    assert!(
                        run.stderr.contains("ValidatingAdmissionPolicy 'lifeguard-deny'"),
                        "{rule} {name}: {run:#?}"
                    );
                    // The API server names the first failing validation: this rule,
                    // or another the linter denies the object for.
                    let denying: Vec<&str> = report
                        .iter()
                        .flat_map(|r| &r.findings)
                        .filter(|f| policy.denies(f.severity) && covered().contains(&f.rule.as_str()))
                        .map(|f| f.rule.as_str())
                        .collect();
                    let first = run.stderr.split("denied request: ").nth(1).and_then(|m| m.split(':').next());
                    assert!(named || first.is_some_and(|r| denying.contains(&r)), "{rule} {name}: {run:#?}");
                    named_rules += usize::from(named);
                }
            }
        }
    }
    assert!(named_rules >= 5, "{named_rules} bad fixtures refused with their rule named");
    // Every object: refused by the export only where the linter denies it,
    // and wherever the linter denies it by a finding whose severity the export settles.
    let mut objects: Vec<(String, Value)> = fixtures();
    if let Some(corpus) = corpus_dir() {
        let mut files: Vec<_> = walk(&corpus);
        files.sort();
        for file in files {
            for object in self::objects(&file) {
                objects.push((file.display().to_string(), object));
            }
        }
    }
    let (mut compared, mut refused, mut differences) = (0, 0, Vec::new());
    for (file, object) in &objects {
        let run = dry_run(plane, ns, object);
        let denied = run.stderr.contains("ValidatingAdmissionPolicy 'lifeguard-deny'");
        if run.code != 0 && !denied {
            continue;
        }
        compared += 1;
        refused += usize::from(denied);
        let (may, must) = denies(object, &policy);
        if denied && !may || must && !denied {
            differences.push(format!(
                "{file} {}: refused {denied}, linter denies {may}: {}",
                object["metadata"]["name"],
                run.stderr.trim()
            ));
        }
    }
    eprintln!("enforce: {compared} objects compared, {refused} refused, {} disagreements", differences.len());
    assert!(differences.is_empty(), "{differences:#?}");
    assert!(refused >= 10, "{refused} refused");
    remove(plane);
}

#[test]
fn the_cold_start_annotation_is_read_as_the_linter_reads_it() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    remove(plane);
    let ns = "vap-seconds";
    namespace(plane, ns);
    install(plane, &export(&["--policy", "default", "--mode", "warn"]), ns);
    let policy = Policy::default();
    // Plain, signed, padded and too long integers, Go-style durations whose
    // doubles round up (1.1m is 66.00000000000001 s, so 67), and what is no
    // number of seconds; each against startup windows around it.
    let values = [
        "430",
        "+60",
        " 90 ",
        "-0",
        "-5",
        "007",
        "1m30s",
        "1.5m",
        "1.1m",
        "0.05m",
        "250ms",
        "1h",
        ".5m",
        "1.m",
        "1m30",
        "1.2.3s",
        "90 s",
        "1us",
        "",
        "abc",
        "99999999999999999999",
    ];
    let mut checked = 0;
    for value in values {
        for window in [10, 72, 73, 74, 99, 500] {
            let pod = json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "cold", "annotations": {"lifeguard.dev/cold-start-seconds": value}},
                "spec": {"containers": [{"name": "app", "image": "example/app:1",
                    "startupProbe": {"tcpSocket": {"port": 8080}, "periodSeconds": 1, "failureThreshold": window}}]}
            });
            let run = dry_run(plane, ns, &pod);
            assert_eq!(run.code, 0, "{run:#?}");
            let rule = |set: &BTreeSet<(String, String)>| {
                set.iter().filter(|(r, _)| r == "startup-budget-too-short").cloned().collect::<BTreeSet<_>>()
            };
            let lint = linted(&pod, &policy);
            let (cel, lint) = (rule(&flagged(&run)), rule(&lint.carried));
            // 20 digits: too long to read exactly in CEL, so left to the linter.
            if value.len() >= 19 {
                assert!(cel.is_empty(), "{value:?} against {window}s: {run:#?}");
            } else {
                assert_eq!(cel, lint, "{value:?} against {window}s: {run:#?}");
            }
            checked += 1;
        }
    }
    eprintln!("{checked} annotation values and windows judged alike");
    remove(plane);
}

#[test]
fn prestop_sleeps_are_read_as_the_linter_reads_them() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    remove(plane);
    let ns = "vap-prestop";
    namespace(plane, ns);
    install(plane, &export(&["--policy", "default", "--mode", "warn"]), ns);
    let policy = Policy::default();
    let commands: &[&[&str]] = &[
        &["sleep", "5"],
        &["/bin/sleep", "5s"],
        &["sleep", "1m", "30"],
        &["sleep", "1.5"],
        &["sleep", "27.5"],
        &["busybox", "sleep", "3"],
        &["/bin/busybox", "sleep", "28"],
        &["sh", "-c", "sleep 20"],
        &["/bin/bash", "-ec", " sleep 20;\n"],
        &["sh", "-c", "sleep 5 || true"],
        &["sh", "-c", "exec /bin/sleep '7'"],
        &["sh", "-c", "sleep 5 && /app/drain"],
        &["/bin/sh", "-c", "sleep 28; nginx -s quit"],
        &["sleep", "infinity"],
        &["sleep", "99999999"],
        &["sleep"],
        &["sleep", "$DELAY"],
        &["sh", "-c", "sleep $DELAY"],
        &["sh", "-c", "sleep 5 &"],
        &["sh", "-c", "echo bye; sleep 5"],
        &["sh", "/pre-stop.sh"],
        &["nginx", "-s", "quit"],
        &["sleep 5"],
        &["sleep", "-5"],
        &["sleep", "28"],
        &["sh", "-c", "sleep 28; exit 0"],
        &["sh", "-c", "sleep 26\n:"],
        &["sleep", "inf", "x"],
        &["sleep", "x", "inf"],
        &["sh", "-c", "sleep 0.45m"],
        &["busybox"],
        &["sh"],
        &["sh", "-x", "sleep 5"],
        &["sh", "-c", "sleep 27 | tee"],
        &["sh", "-c", "sleep 1d"],
        &["sleep", "'10'"],
        &["sleep", "\"26s\""],
        &["sh", "-c", "sleep 5 ;  exit  0"],
        &["sh", "--", "sleep 5"],
        &["bash", "-lc", "exec sleep 29 || exit"],
    ];
    let hooks = commands
        .iter()
        .map(|c| json!({"exec": {"command": c}}))
        .chain([0, 25, 29, 86_400].map(|s| json!({"sleep": {"seconds": s}})));
    let (mut alike, mut left) = (0, 0);
    for hook in hooks {
        for drain in [None, Some("10")] {
            let annotations = drain.map_or(json!({}), |d| json!({"lifeguard.dev/drain-seconds": d}));
            let pod = json!({
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "hook", "annotations": annotations},
                "spec": {"containers": [{"name": "app", "image": "example/app:1", "lifecycle": {"preStop": hook}}]}
            });
            let run = dry_run(plane, ns, &pod);
            if run.code != 0 {
                continue; // a native sleep the API server refuses (longer than the grace period)
            }
            let rules = ["prestop-sleep-only", "grace-period-too-short"];
            let only = |set: &BTreeSet<(String, String)>| {
                set.iter().filter(|(r, _)| rules.contains(&r.as_str())).cloned().collect::<BTreeSet<_>>()
            };
            let lint = linted(&pod, &policy);
            let (cel, carried, all) = (only(&flagged(&run)), only(&lint.carried), only(&lint.all));
            assert!(
                carried.is_subset(&cel) && cel.is_subset(&all),
                "{hook} drain {drain:?}: admission {cel:?}, lint {all:?}"
            );
            if carried == all { alike += 1 } else { left += 1 }
        }
    }
    eprintln!("{alike} preStop hooks judged alike, {left} left to the linter (nothing reported the linter does not)");
    remove(plane);
}

#[test]
fn a_pod_of_20_containers_is_judged_within_the_cost_budget() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    remove(plane);
    let ns = "vap-cost";
    namespace(plane, ns);
    install(plane, &export(&["--policy", "default", "--mode", "warn"]), ns);
    let handler =
        |port: &str| json!({"httpGet": {"path": "/x", "port": port}, "periodSeconds": 10, "failureThreshold": 1});
    // Readiness on another path: compared with liveness field by field, not
    // reported (the API server cuts warnings short once they pass 4 KiB in all).
    let ready = |port: &str| json!({"httpGet": {"path": "/ready", "port": port}, "periodSeconds": 10});
    // Every other preStop a script that sleeps 0 s and lets the app drain: read, weighed, not reported.
    // The last sleeps 28 s: too long for its budget, and the pod's neediest.
    let pre_stop = |i: usize, port: &str| match i {
        19 => json!({"exec": {"command": ["/bin/sh", "-c", "sleep 28; exit 0"]}}),
        _ if i % 2 == 0 => json!({"exec": {"command": ["/bin/sh", "-c", "sleep 0; exit 0"]}}),
        _ => json!({"httpGet": {"path": "/stop", "port": port}}),
    };
    let containers: Vec<Value> = (0..20)
        .map(|i| {
            let port = if i == 19 { "missing".to_owned() } else { format!("http-{i}") };
            let port = port.as_str();
            json!({
                "name": format!("c{i}"), "image": "example/app:1",
                "ports": [{"name": format!("http-{i}"), "containerPort": 8080 + i}, {"name": format!("grpc-{i}"), "containerPort": 9000 + i}],
                "startupProbe": handler(port), "livenessProbe": handler(port), "readinessProbe": ready(port),
                "lifecycle": {"preStop": pre_stop(i, port),
                              "postStart": {"tcpSocket": {"port": port}}}
            })
        })
        .collect();
    // A cold start every startup probe covers: the annotation is read, the windows weighed, nothing found.
    let annotations = json!({"lifeguard.dev/cold-start-seconds": "0.05m", "lifeguard.dev/drain-seconds": "20"});
    let meta = json!({"name": "twenty", "annotations": annotations});
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": containers}});
    let run = dry_run(plane, ns, &pod);
    assert_eq!(run.code, 0, "{run:#?}");
    // Every container's liveness fails at once, and the last names an unknown port: both judged in full.
    assert!(linted(&pod, &Policy::default()).agrees(&flagged(&run)), "{run:#?}");
    for rule in ["probe-port-unknown", "prestop-sleep-only", "grace-period-too-short"] {
        assert!(flagged(&run).contains(&(rule.to_owned(), "c19".to_owned())), "{rule}: {run:#?}");
    }
    remove(plane);
}

/// The manifest files under a directory.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else if lifeguard::input::is_manifest(&path) {
            out.push(path);
        }
    }
    out
}
