//! `prestop-loop-unbounded`: the preStop hook runs a loop that nothing ends.
//!
//! Tests: `lint/tests/fixtures/rules/prestop-loop-unbounded/`,
//! `lint/tests/snapshots/rule_fixtures__prestop-loop-unbounded.snap`.

use crate::finding::{Finding, Severity};
use crate::model::shell_flow::{endless_loop, shell_script};
use crate::model::{Workload, join};
use crate::rules::{Ctx, FixAvailability, Harm, HarmShown, MapExport, Related, Rule, VapExport};
use crate::simulate::Verdict;

pub(crate) static RULE: Rule = Rule {
    name: "prestop-loop-unbounded",
    severity: Severity::Error,
    summary: "the preStop hook loops with no deadline and no way out, so SIGTERM only comes when the grace period runs out",
    doc: DOC,
    fix: FixAvailability::NoFix(
        "the deadline the loop should have (and what it waits for) is the author's; the help says how to bound it",
    ),
    check,
    vap: VapExport::READS_SCRIPTS,
    map: MapExport::NoFix,
    related: Related::Nothing,
    harm: HarmShown::In(&[Harm { scenario: "delete", verdicts: &[Verdict::SigkillInFlight] }]),
};

const DOC: &str = r#"## What it does
Flags a container whose `exec` preStop hook is a shell script with a loop
that never ends: its condition never changes (`while true`, `while :`,
`while sleep 5`, `until false`) and its body never leaves it (no `break`,
`exit`, `return`, `exec` or `kill`, and under `sh -e` no command that may
fail), with no `timeout` around the hook.

## Why is this bad?
The kubelet sends SIGTERM only when the preStop hook returns. A hook that
never returns holds the container until `terminationGracePeriodSeconds`
runs out; the kubelet then sends SIGTERM with a one-off 2 s extension, and
SIGKILL. The application never gets its shutdown time: in-flight requests
are cut, and every rollout or scale-down waits the full grace period per
pod. It is the same outcome as `sleep infinity` (`prestop-sleep-only`),
written as a polling loop, often one that was meant to wait for a drain but
lost its exit condition. The probes and drain sources in the design notes
say the same: if preStop consumes the whole grace period, the process gets
little time before SIGKILL.

This is a rule of its own rather than part of `prestop-sleep-only` (the hook
does more than sleep, and often polls something useful) or of
`grace-period-too-short` (no grace period is long enough, so there is no sum
to compare): its fix is to bound the loop, not the sleep or the grace period.

## Not a finding
- A loop bounded by a deadline: `timeout 25 sh -c 'while true; ...'`.
- A loop with a counter or a condition that can end:
  `while [ $i -lt 30 ]`, `for i in $(seq 1 30)`, `until curl -sf .../idle`,
  `while pgrep -x nginx` after `nginx -s quit`.
- A loop whose body can leave it: `[ -f /tmp/drained ] && break`,
  `exit 0` on a condition, a command that fails under `sh -e`.
- A backgrounded loop (`... done &`), and a loop inside `if`, `case`, a
  function, a subshell or after `&&` / `||`: it may never run.
- A script file (`/bin/sh /drain.sh`): lifeguard cannot see into it.

## Example
```yaml
lifecycle:
  preStop:
    exec:
      command: ["sh", "-c", "while true; do curl -s localhost:8080/inflight; sleep 5; done"]
```

## Use instead
```yaml
lifecycle:
  preStop:
    exec:
      # Wait for the drain, 20 s at most, then let SIGTERM come.
      command: ["sh", "-c", "for i in $(seq 1 20); do curl -sf localhost:8080/idle && break; sleep 1; done"]
```

## Fix
No automatic fix: how long the loop may wait, and what it waits for, is the
author's decision. Bound it with `timeout N` (N below the grace period minus
the application's shutdown time), a counter, or a `break` when the drain is
done.
"#;

fn check(w: &Workload, _ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let grace = w.grace_period();
    w.for_each_container(|c| {
        let command = c
            .container
            .lifecycle
            .as_ref()
            .and_then(|l| l.pre_stop.as_ref())
            .and_then(|h| h.exec.as_ref())
            .and_then(|e| e.command.as_deref());
        let Some(endless) = command.and_then(shell_script).as_ref().and_then(endless_loop) else {
            return;
        };
        let name = c.name();
        out.push(RULE.finding(
            Severity::Error,
            join(c.pointer, &["lifecycle", "preStop", "exec", "command"]),
            Some(name),
            format!(
                "preStop loops forever (`{}` with no break, exit or timeout), so SIGTERM comes only when terminationGracePeriodSeconds {grace} runs out, SIGKILL 2s later",
                endless.head
            ),
            format!("preStop loops forever, SIGKILL after {grace}s; bound the loop"),
            "bound the loop: wrap the hook in `timeout N` (N below the grace period minus the application's shutdown time), count its rounds, or break when the drain is done",
        ));
    });
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::RULE;
    use crate::finding::Severity;
    use crate::rules::testing::{check, one_container};

    fn prestop(cmd: Value) -> Value {
        one_container(json!({"lifecycle": {"preStop": {"exec": {"command": cmd}}}}))
    }

    #[test]
    fn endless_loop_is_an_error_at_the_command() {
        let mut obj = prestop(json!(["/bin/sh", "-c", "while true; do echo draining; sleep 5; done"]));
        obj["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = json!(60);
        let f = check(&RULE, &obj);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Error);
        assert_eq!(f[0].pointer, "/spec/template/spec/containers/0/lifecycle/preStop/exec/command");
        assert_eq!(
            f[0].message,
            "preStop loops forever (`while true` with no break, exit or timeout), so SIGTERM comes only when terminationGracePeriodSeconds 60 runs out, SIGKILL 2s later"
        );
        assert!(f[0].fix.is_none());
    }

    #[test]
    fn bounded_loops_and_other_hooks_are_fine() {
        for cmd in [
            json!(["timeout", "25", "sh", "-c", "while true; do sleep 5; done"]),
            json!(["sh", "-c", "for i in $(seq 1 20); do curl -sf localhost:8080/idle && break; sleep 1; done"]),
            json!(["sh", "-c", "while true; do [ -f /tmp/drained ] && break; sleep 1; done"]),
            json!(["sh", "-c", "nginx -s quit; while pgrep -x nginx; do sleep 1; done"]),
            json!(["sh", "-c", "sleep 5"]),
            json!(["sh", "/drain.sh"]),
        ] {
            assert!(check(&RULE, &prestop(cmd.clone())).is_empty(), "{cmd}");
        }
        let http = one_container(json!({"lifecycle": {"preStop": {"httpGet": {"path": "/drain", "port": 8080}}}}));
        assert!(check(&RULE, &http).is_empty());
    }
}
