//! `probe-invalid`'s `pgrep` check: `pgrep PATTERN` without `-f` whose
//! pattern is longer than any process name, and its fix, `-f`.

use serde_json::Value;

use super::out::Out;
use crate::finding::{Fix, Severity, add_op};
use crate::model::command::{basename, simple_commands};
use crate::model::shell_flow::{script_commands, shell_script};
use crate::model::shell_lex::Sep;
use crate::model::{COMM_MAX, NameTooLong, pgrep_name_too_long};

/// `pgrep` without `-f` matches the process name, at most 15 characters,
/// under procps-ng; busybox's also matches the command's first word.
pub(super) fn pgrep_too_long(o: &mut Out<'_, '_>, argv: &[String]) {
    let Some(dead) = simple_commands(argv).iter().find_map(pgrep_name_too_long) else { return };
    // `busybox pgrep` is known to match the command line's first word, uncut.
    let busybox = argv.iter().any(|a| basename(a) == "busybox" || a.contains("busybox pgrep"));
    if busybox {
        return;
    }
    let outcome =
        if decides_result(argv) { "so the probe always fails" } else { "so this check of the probe's script is dead" };
    let (pattern, shortest) = (&dead.pattern, dead.shortest);
    let fix = add_full(o, argv, &dead);
    let help = if fix.is_some() {
        format!(
            "add -f to match the whole command line (`pgrep -f {pattern}`), which holds the pattern under either pgrep, or match the first {COMM_MAX} characters of the name"
        )
    } else if let Some(bracketed) = bracket_first(pattern).filter(|_| !dead.anchored) {
        format!(
            "add -f with the first character in brackets (`pgrep -f '{bracketed}'`): the whole command line holds the pattern, but not as the shell or wrapper running pgrep has it; or match the first {COMM_MAX} characters of the name"
        )
    } else {
        format!(
            "match the first {COMM_MAX} characters of the name: with -f, -x and ^...$ would apply to the whole command line, arguments included"
        )
    };
    o.push_with(
        Severity::Warning,
        &["exec", "command"],
        format!(
            "runs `pgrep {pattern}` without -f: every match is at least {shortest} characters, but pgrep (procps-ng: Debian, Ubuntu, RHEL, UBI images) matches the process name, which the kernel cuts to {COMM_MAX}: there it never matches, {outcome}; pgrep (busybox: alpine images) also matches the command's first word, so there it can match"
        ),
        format!("runs pgrep without -f on a name over {COMM_MAX} characters"),
        &help,
        fix,
    );
}

/// The exec command with `-f` right after `pgrep`, when that is exact: the
/// command is `pgrep` itself (in a script or behind a wrapper such as
/// `timeout`, the shell's or the wrapper's own command line holds the
/// pattern, and `pgrep -f` would match it: the probe would always pass), and
/// the match is not anchored (`-x` or `^...$` would then have to match the
/// whole command line). Wherever busybox matched the first word or procps-ng
/// the name, the whole command line holds the pattern too.
fn add_full(o: &Out<'_, '_>, argv: &[String], dead: &NameTooLong) -> Option<Fix> {
    let (program, args) = argv.split_first()?;
    if basename(program) != "pgrep" || dead.anchored {
        return None;
    }
    let mut fixed: Vec<Value> = vec![Value::from(program.as_str()), Value::from("-f")];
    fixed.extend(args.iter().map(|a| Value::from(a.as_str())));
    let pointer = o.c.at(&[o.kind.field(), "exec", "command"]);
    Some(Fix::new(
        format!(
            "add -f to the {} probe of container {:?}: `pgrep -f {}` matches the whole command line",
            o.kind.word(),
            o.c.name(),
            dead.pattern
        ),
        vec![add_op(&pointer, Value::Array(fixed))?],
    ))
}

/// `kube-proxy` -> `[k]ube-proxy`: the same match, but not of a command
/// line that holds the pattern as written. `None` unless the pattern starts
/// with a character that is itself in brackets (a letter, a digit, `/`, `_`, `-`).
fn bracket_first(pattern: &str) -> Option<String> {
    let first = pattern.chars().next().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '_' | '-'))?;
    Some(format!("[{first}]{}", &pattern[1..]))
}

/// Whether the exec's exit status is the pgrep's failure when it fails: the
/// command itself, or a script that is one `&&` chain of plain commands.
fn decides_result(argv: &[String]) -> bool {
    let Some(sh) = shell_script(argv) else { return true };
    let Some(cmds) = script_commands(sh.script) else { return false };
    let last = cmds.len().saturating_sub(1);
    !cmds.is_empty()
        && cmds.iter().enumerate().all(|(i, c)| {
            let joined = if i == last { c.sep == Sep::Seq } else { c.sep == Sep::And };
            let flow = c.words.first().is_some_and(|w| {
                matches!(w.as_str(), "if" | "!" | "while" | "until" | "for" | "case" | "{" | "(" | "then" | "do")
            });
            joined && !flow
        })
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::finding::{Finding, Severity};
    use crate::model::Batch;
    use crate::policy::Policy;
    use crate::rules::probe_invalid::RULE;
    use crate::rules::testing::{apply_fix, check, one_container};

    const C: &str = "/spec/template/spec/containers/0";

    fn run(field: &str, probe: Value) -> Vec<Finding> {
        check(&RULE, &one_container(json!({ field: probe })))
    }

    fn one(field: &str, command: Value) -> Finding {
        let mut f = run(field, json!({"exec": {"command": command.clone()}}));
        assert_eq!(f.len(), 1, "{command}: {f:?}");
        f.remove(0)
    }

    #[test]
    fn a_long_name_without_f_is_a_warning_that_names_both_pgreps() {
        let f = one("livenessProbe", json!(["pgrep", "kube-controller-manager"]));
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.pointer, format!("{C}/livenessProbe/exec/command"));
        assert_eq!(
            f.message,
            "liveness probe runs `pgrep kube-controller-manager` without -f: every match is at least 23 characters, but pgrep (procps-ng: Debian, Ubuntu, RHEL, UBI images) matches the process name, which the kernel cuts to 15: there it never matches, so the probe always fails; pgrep (busybox: alpine images) also matches the command's first word, so there it can match"
        );
        assert!(f.help.starts_with("add -f to match the whole command line (`pgrep -f kube-controller-manager`)"));
        // Elsewhere in a script than its result, the check is dead.
        let f = one("readinessProbe", json!(["sh", "-c", "pgrep celery-worker-main || pgrep -f celery"]));
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.message.contains("so this check of the probe's script is dead;"), "{}", f.message);
        // An alpine image is no exception: which pgrep it has is unknown.
        let obj = one_container(
            json!({"image": "example/app:1-alpine", "startupProbe": {"exec": {"command": ["pgrep", "my-long-service-name"]}}}),
        );
        let f = check(&RULE, &obj);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Warning);
    }

    #[test]
    fn the_fix_adds_f_right_after_pgrep_and_converges() {
        let obj = one_container(json!({
            "livenessProbe": {"exec": {"command": ["/usr/local/bin/pgrep", "-o", "/usr/local/bin/executor"]}}
        }));
        let f = check(&RULE, &obj);
        assert_eq!(f.len(), 1);
        let fix = f[0].fix.as_ref().expect("a fix");
        assert_eq!(
            serde_json::to_value(&fix.operations).expect("ops serialize"),
            json!([{"op": "add", "path": format!("{C}/livenessProbe/exec/command"),
                    "value": ["/usr/local/bin/pgrep", "-f", "-o", "/usr/local/bin/executor"]}])
        );
        assert_eq!(
            fix.description,
            "add -f to the liveness probe of container \"app\": `pgrep -f /usr/local/bin/executor` matches the whole command line"
        );
        let fixed = apply_fix(&obj, &f[0]);
        assert!(check(&RULE, &fixed).is_empty());
        // Through the planner: one fix, then nothing left to do.
        let (batch, policy) = (Batch::default(), Policy::default());
        let plan = crate::fix::plan_fixes(&obj, &batch, &policy, None).expect("lints").expect("a workload");
        assert_eq!(plan.fixed.as_ref(), Some(&fixed));
        let again = crate::fix::plan_fixes(&fixed, &batch, &policy, None).expect("lints").expect("a workload");
        assert!(again.operations.is_empty(), "{:?}", again.operations);
    }

    #[test]
    fn no_fix_where_f_would_not_be_exact() {
        for command in [
            // -f would tie -x or the anchors to the whole command line.
            json!(["pgrep", "-x", "kube-controller-manager"]),
            json!(["pgrep", "--exact", "kube-controller-manager"]),
            json!(["pgrep", "^celery-worker-main$"]),
            // The shell's or the wrapper's command line holds the pattern.
            json!(["sh", "-c", "pgrep celery-worker-main >/dev/null && test -f /tmp/ready"]),
            json!(["timeout", "3", "pgrep", "celery-worker-main"]),
        ] {
            let f = one("livenessProbe", command.clone());
            assert!(f.fix.is_none(), "{command}");
            assert_eq!(f.severity, Severity::Warning);
        }
        let f = one("livenessProbe", json!(["pgrep", "-x", "kube-controller-manager"]));
        assert!(f.help.starts_with("match the first 15 characters of the name"), "{}", f.help);
        let f = one("livenessProbe", json!(["sh", "-c", "pgrep celery-worker-main && test -f /tmp/ready"]));
        assert!(f.help.starts_with("add -f with the first character in brackets (`pgrep -f '[c]elery-worker-main'`)"));
    }

    #[test]
    fn pgrep_that_can_match_is_fine() {
        for cmd in [
            json!(["pgrep", "-f", "kube-controller-manager"]),
            json!(["pgrep", "-fx", "/usr/bin/kube-controller-manager --leader-elect"]),
            json!(["pgrep", "kube-controller"]),
            json!(["pgrep", "-x", "nginx"]),
            json!(["pgrep", "nginx|my-long-application"]),
            json!(["busybox", "pgrep", "kube-controller-manager"]),
            json!(["sh", "-c", "busybox pgrep kube-controller-manager"]),
            json!(["pidof", "kube-controller-manager"]),
            json!(["sh", "-c", "ps aux | grep -q [k]ube-controller-manager"]),
        ] {
            assert!(run("livenessProbe", json!({"exec": {"command": cmd}})).is_empty(), "{cmd}");
        }
    }
}
