//! An export applied over another mode's replaces it (issue 39): enforce,
//! warn, audit and enforce again, each `kubectl apply`-ed over the last;
//! after each the API server denies, warns and audits what that mode says
//! and holds no object of an earlier one. Then the removal lines of
//! docs/vap.md, run as written.

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

use std::process::Command;
use std::time::Duration;

use lifeguard_e2e::cluster::control_plane::TOOLS;
use lifeguard_e2e::cluster::process::wait_for;
use lifeguard_e2e::cluster::webhook::workspace_binary;
use lifeguard_e2e::cluster::{ControlPlane, Run};
use lifeguard_e2e::vap_parity::objects;
use lifeguard_e2e::{repo_root, rule_fixtures};
use serde_json::Value;

use crate::TURN;
use crate::support::{dry_run, flagged, namespace, probe_objects, remove};
use lifeguard_e2e::vap_parity::export;

/// The audit annotation the API server adds for a validation that fails
/// under a binding with the `Audit` action.
const VALIDATION_FAILURE: &str = "validation.policy.admission.k8s.io/validation_failure";

#[test]
fn each_mode_applied_over_the_last_replaces_it_and_nothing_of_the_old_mode_stays() {
    let Some(plane) = ControlPlane::shared() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    remove(plane);
    let ns = "vap-modes";
    namespace(plane, ns);
    let bad = |rule: &str| objects(&rule_fixtures(rule).join("bad.yaml"));
    // An error of the default pack (enforce denies it) and a warning (enforce warns).
    let error = bad("probe-port-unknown").into_iter().find(|o| o["kind"] == "Deployment").expect("a Deployment");
    let warning = bad("liveness-too-aggressive").remove(0);
    for (step, mode) in ["enforce", "warn", "audit", "enforce"].into_iter().enumerate() {
        let yaml = export(&["--policy", "default", "--mode", mode]);
        let applied = plane.kubectl.run_with_input(&["apply", "-f", "-"], Some(&yaml));
        applied.ok();
        eprintln!("{mode}: kubectl apply: {}", applied.stdout.trim_end().replace('\n', "; "));
        if step > 0 {
            // The same names: each object is replaced (or left as it was), none added.
            assert!(!applied.stdout.contains(" created"), "{mode}: {applied:#?}");
        }
        assert_eq!(stored(plane), expected(mode), "{mode}: what the cluster holds");
        let applied_at = std::time::Instant::now();
        let seen = wait_for(&format!("the {mode} export in force"), Duration::from_secs(30), || {
            behaves_as(plane, ns, mode, &error, &warning)
        });
        eprintln!("{mode}: in force {:.1?} after the apply: {seen}", applied_at.elapsed());
        if mode == "audit" {
            for (object, policy, rule) in [
                (&error, "lifeguard-deny", "probe-port-unknown"),
                (&warning, "lifeguard-warn", "liveness-too-aggressive"),
            ] {
                let failure = audited(plane, ns, object, &format!("audit-{step}"));
                let found = failure.as_array().into_iter().flatten().find(|f| f["policy"] == policy);
                let found = found.unwrap_or_else(|| panic!("{policy} audited {object}: {failure}"));
                assert_eq!(found["binding"], policy, "{found}");
                assert_eq!(found["validationActions"], serde_json::json!(["Audit"]), "{found}");
                assert!(found["message"].as_str().is_some_and(|m| m.starts_with(&format!("{rule}: "))), "{found}");
                eprintln!("audit: {VALIDATION_FAILURE} {found}");
            }
        }
    }
    removal(plane, ns, &error);
}

/// (kind name, and a binding's actions and mode) of every admission policy
/// and binding the cluster holds, lifeguard's or not.
fn stored(plane: &ControlPlane) -> Vec<String> {
    let list =
        plane.kubectl.run(&["get", "validatingadmissionpolicies,validatingadmissionpolicybindings", "-o", "json"]);
    let mut out: Vec<String> = list.json()["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            let (kind, name) =
                (o["kind"].as_str().unwrap_or_default(), o["metadata"]["name"].as_str().unwrap_or_default());
            match o["spec"]["validationActions"].as_array() {
                Some(actions) => {
                    let actions: Vec<&str> = actions.iter().filter_map(Value::as_str).collect();
                    let mode = o["metadata"]["annotations"]["lifeguard.dev/mode"].as_str().unwrap_or_default();
                    format!("{kind} {name} [{}] mode {mode}", actions.join(", "))
                }
                None => format!("{kind} {name}"),
            }
        })
        .collect();
    out.sort();
    out
}

/// What [`stored`] must be after an apply of `mode`'s export.
fn expected(mode: &str) -> Vec<String> {
    let (deny, warn) = match mode {
        "enforce" => ("Deny", "Warn"),
        "warn" => ("Warn", "Warn"),
        _ => ("Audit", "Audit"),
    };
    let binding = |name: &str, action: &str| format!("ValidatingAdmissionPolicyBinding {name} [{action}] mode {mode}");
    // A pair per template slot: the built-in kinds' and the custom kinds' further templates.
    let mut out = Vec::new();
    for suffix in crate::support::SLOT_SUFFIXES {
        let (d, w) = (format!("lifeguard-deny{suffix}"), format!("lifeguard-warn{suffix}"));
        out.extend([
            format!("ValidatingAdmissionPolicy {d}"),
            format!("ValidatingAdmissionPolicy {w}"),
            binding(&d, deny),
            binding(&w, warn),
        ]);
    }
    out.sort();
    out
}

/// Whether admission does what `mode` says, now: `error` (an error of the
/// default pack) denied by enforce, warned by warn; `warning` warned by
/// both; under audit neither refused nor warned; and each rule's probe
/// object flagged by its rule (in enforce and warn) and admitted (in warn
/// and audit), so both bindings have changed. What it saw, when it does.
fn behaves_as(plane: &ControlPlane, ns: &str, mode: &str, error: &Value, warning: &Value) -> Result<String, String> {
    let (e, w) = (dry_run(plane, ns, error), dry_run(plane, ns, warning));
    let denied_by_deny = e.stderr.contains(
        "ValidatingAdmissionPolicy 'lifeguard-deny' with binding 'lifeguard-deny' denied request: probe-port-unknown: ",
    );
    let warned_by = |run: &Run, policy: &str, rule: &str| {
        run.warnings().iter().any(|l| {
            l.starts_with(&format!(
                "Validation failed for ValidatingAdmissionPolicy '{policy}' with binding '{policy}': "
            )) && l.contains(&format!("{rule}: container \""))
        })
    };
    let ok = match mode {
        "enforce" => {
            e.code == 1 && denied_by_deny && w.code == 0 && warned_by(&w, "lifeguard-warn", "liveness-too-aggressive")
        }
        "warn" => {
            e.code == 0
                && warned_by(&e, "lifeguard-deny", "probe-port-unknown")
                && w.code == 0
                && warned_by(&w, "lifeguard-warn", "liveness-too-aggressive")
        }
        _ => e.code == 0 && e.warnings().is_empty() && w.code == 0 && w.warnings().is_empty(),
    };
    if !ok {
        return Err(format!("{e:?}\n{w:?}"));
    }
    let (mut refused, mut warned) = (0, 0);
    for (rule, probe) in probe_objects() {
        let run = dry_run(plane, ns, &probe);
        let flagged_by_rule = flagged(&run).iter().any(|(r, _)| r == rule);
        let ok = match mode {
            "enforce" => flagged_by_rule,
            "warn" => run.code == 0 && flagged_by_rule,
            _ => run.code == 0 && run.warnings().is_empty(),
        };
        if !ok {
            return Err(format!("{rule}: {run:?}"));
        }
        refused += usize::from(run.code != 0);
        warned += usize::from(!run.warnings().is_empty());
    }
    let line = |name: &str, run: &Run| {
        let denied = run.stderr.lines().find(|l| l.contains("denied request")).map(|l| format!(" ({})", l.trim()));
        format!("{name}: exit {}, {} warnings{}", run.code, run.warnings().len(), denied.unwrap_or_default())
    };
    Ok(format!(
        "{}; {}; {} probe objects: {refused} refused, {warned} warned",
        line("probe-port-unknown's bad Deployment", &e),
        line("liveness-too-aggressive's bad object", &w),
        probe_objects().len()
    ))
}

/// The audit log's `validation_failure` annotation (parsed) for a dry run
/// of `object` under a name of its own, once the API server has logged it.
fn audited(plane: &ControlPlane, ns: &str, object: &Value, suffix: &str) -> Value {
    let mut object = object.clone();
    let name = format!("{}-{suffix}", object["metadata"]["name"].as_str().expect("a name"));
    object["metadata"]["name"] = Value::String(name.clone());
    let run = dry_run(plane, ns, &object);
    assert!(run.code == 0 && run.warnings().is_empty(), "{run:#?}");
    wait_for(&format!("the audit event of {name}"), Duration::from_secs(10), || {
        let event = plane.audit_events().into_iter().find(|e| {
            e["verb"] == "create" && e["objectRef"]["namespace"] == ns && e["objectRef"]["name"] == name.as_str()
        });
        let annotation = event.as_ref().and_then(|e| e["annotations"][VALIDATION_FAILURE].as_str());
        annotation
            .map(|a| serde_json::from_str(a).unwrap_or_else(|e| panic!("{VALIDATION_FAILURE} {a}: {e}")))
            .ok_or_else(|| format!("{event:?}"))
    })
}

/// docs/vap.md's removal lines, run as a user runs them: the `--prune`
/// apply removes another export (its name another, its mode audit) and
/// keeps this one; the label `delete` removes this one, after which
/// nothing is judged.
fn removal(plane: &ControlPlane, ns: &str, error: &Value) {
    let block = lifeguard_e2e::docs::marked_block("docs/vap.md", "vap-remove");
    let commands: Vec<String> = block
        .replace("\\\n", " ")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    let prune = commands.iter().find(|c| c.contains("--prune")).expect("docs/vap.md: the --prune line");
    let delete = commands.iter().find(|c| c.starts_with("kubectl delete ")).expect("docs/vap.md: the delete line");
    plane.kubectl.run_with_input(&["apply", "-f", "-"], Some(&export(&["--mode", "audit", "--name", "other"]))).ok();
    let objects = 4 * crate::support::SLOT_SUFFIXES.len();
    assert_eq!(stored(plane).len(), 2 * objects, "{:#?}", stored(plane));
    let run = shell(plane, prune);
    eprintln!("$ {prune}\n{}", run.stdout.trim_end());
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(run.stdout.matches(" pruned").count(), objects, "{run:#?}");
    assert_eq!(stored(plane), expected("enforce"), "the other export pruned, this one kept");
    let run = shell(plane, delete);
    eprintln!("$ {delete}\n{}", run.stdout.trim_end());
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(stored(plane), Vec::<String>::new(), "nothing left");
    wait_for("the removal in force", Duration::from_secs(30), || {
        let run = dry_run(plane, ns, error);
        if run.code == 0 && run.warnings().is_empty() { Ok(()) } else { Err(format!("{run:?}")) }
    });
}

/// `sh -c LINE` from the repository root with this cluster's kubeconfig,
/// its `kubectl` and the workspace's `lifeguard` first on `PATH`.
fn shell(plane: &ControlPlane, line: &str) -> Run {
    let lifeguard = workspace_binary("lifeguard", "lifeguard").expect("the lifeguard binary");
    let path = format!(
        "{}:{}:{}",
        repo_root().join(TOOLS).display(),
        lifeguard.parent().expect("its directory").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("sh")
        .args(["-c", line])
        .env("PATH", path)
        .env("KUBECONFIG", &plane.kubeconfig)
        .env("HOME", plane.dir.join("home"))
        .env_remove("LIFEGUARD_POLICY")
        .current_dir(repo_root())
        .output()
        .expect("run sh");
    Run {
        command: line.to_owned(),
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}
