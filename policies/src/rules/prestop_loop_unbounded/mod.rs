//! `prestop-loop-unbounded`: the preStop hook runs a loop that nothing ends.
//!
//! Tests: `policies/src/rules/prestop_loop_unbounded/fixtures/`,
//! `policies/src/rules/prestop_loop_unbounded/snapshots/rule_fixtures__prestop-loop-unbounded.snap`.

use crate::finding::{Finding, Severity};
use crate::model::reach::requests_own_server;
use crate::model::shell_flow::shell_script;
use crate::model::shell_loop::{endless_loop, guarded_loop};
use crate::model::{Workload, join};
use crate::rules::{Ctx, FixAvailability, Harm, HarmShown, MapExport, Related, Rule, VapExport};
use crate::simulate::Verdict;

pub(crate) static RULE: Rule = Rule {
    name: "prestop-loop-unbounded",
    severity: Severity::Error,
    summary: "the preStop hook loops with no deadline and no way out (or none but its own server answering), so SIGTERM only comes when the grace period runs out",
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

A warning for a loop whose every way out waits for a request to the
container's own server to succeed (an HTTP or gRPC client or netcat aimed
at loopback, the pod's IP or hostname): `until curl -f
http://127.0.0.1:8080/ready`, `while ! wget -q localhost:9090/drained`,
`curl -sf localhost:8080/drain-done && exit 0` or `if curl ...; then break;
fi` in `while true`, with nothing else that ends it (no other `exit`, no
counter or deadline, no `||`, under `sh -e` no other command that may
fail). It ends while the server answers; when the server does not, it
never ends.

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

A loop that waits on the container's own server holds it the same way
whenever that server stops answering, and the kubelet runs the preStop hook
just then: before it kills a container whose liveness (or startup) probe
failed, most often because its server stopped answering, and when a pod
is deleted before its server listens. The restart of a hung container then
waits the whole grace period (the probe's own
`terminationGracePeriodSeconds`, else the pod's). A warning, not an error:
it holds only while the server is silent.

This is a rule of its own rather than part of `prestop-sleep-only` (the hook
does more than sleep, and often polls something useful) or of
`grace-period-too-short` (no grace period is long enough, so there is no sum
to compare): its fix is to bound the loop, not the sleep or the grace period.

## Not a finding
- A loop bounded by a deadline: `timeout 25 sh -c 'while true; ...'`.
- A loop with a counter or a condition that can end:
  `while [ $i -lt 30 ]`, `for i in $(seq 1 30)`, `until curl -sf
  http://drain-coordinator/idle` (another service, not the container's own
  server), `while curl -sf localhost:8080/busy` (a silent server ends it),
  `until curl ... || [ $(date +%s) -ge $end ]`, `while pgrep -x nginx`
  after `nginx -s quit`.
- A loop whose body can leave it without its server: `[ -f /tmp/drained ]
  && break`, `curl -sf localhost:8080/idle || exit 0`, an `exit` in an
  `else`, a command that fails under `sh -e`; and a test of what the server
  answered (`[ "$(curl -s localhost/inflight)" = 0 ] && break`), which
  lifeguard cannot judge for an empty answer.
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

const HELP: &str = "bound the loop: wrap the hook in `timeout N` (N below the grace period minus the application's shutdown time), count its rounds, or break when the drain is done";

fn check(w: &Workload, ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let grace = w.grace_period();
    w.for_each_container(|c| {
        let command = c
            .container
            .lifecycle
            .as_ref()
            .and_then(|l| l.pre_stop.as_ref())
            .and_then(|h| h.exec.as_ref())
            .and_then(|e| e.command.as_deref());
        let Some(sh) = command.and_then(shell_script) else {
            return;
        };
        let pointer = join(c.pointer, &["lifecycle", "preStop", "exec", "command"]);
        if let Some(endless) = endless_loop(&sh) {
            out.push(RULE.finding(
                Severity::Error,
                pointer,
                Some(c.name()),
                format!(
                    "preStop loops forever (`{}` with no break, exit or timeout), so SIGTERM comes only when terminationGracePeriodSeconds {grace} runs out, SIGKILL 2s later",
                    endless.head
                ),
                format!("preStop loops forever, SIGKILL after {grace}s; bound the loop"),
                HELP,
            ));
            return;
        }
        let own_server = |words: &[String]| requests_own_server(words, c.container, &ctx.policy.settings.network_tools);
        if let Some(waits) = guarded_loop(&sh, own_server) {
            // `until CMD` and `while ! CMD` say no more than the request.
            let head = if waits.head.ends_with(&waits.guard) { String::new() } else { format!(" (`{}`)", waits.head) };
            out.push(RULE.finding(
                Severity::Warning,
                pointer,
                Some(c.name()),
                format!(
                    "preStop loops{head} until `{}` succeeds, a request to the container's own server, and nothing else ends it: when the server does not answer (a hung process its liveness probe kills, a pod deleted before it listens), SIGTERM comes only when terminationGracePeriodSeconds {grace} runs out, SIGKILL 2s later",
                    waits.guard
                ),
                "preStop waits on its own server with no bound; bound the loop".to_owned(),
                HELP,
            ));
        }
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
    fn a_loop_only_its_own_server_ends_is_a_warning() {
        for (cmd, says) in [
            (
                json!(["sh", "-c", "while true; do curl -sf localhost:8080/drain-done && exit 0; sleep 1; done"]),
                "preStop loops (`while true`) until `curl -sf localhost:8080/drain-done` succeeds, a request to the container's own server, and nothing else ends it",
            ),
            (
                json!(["sh", "-c", "until curl -f http://127.0.0.1:8080/ready; do sleep 1; done"]),
                "preStop loops until `curl -f http://127.0.0.1:8080/ready` succeeds, a request",
            ),
        ] {
            let f = check(&RULE, &prestop(cmd.clone()));
            assert_eq!(f.len(), 1, "{cmd}: {f:?}");
            assert_eq!(f[0].severity, Severity::Warning);
            assert_eq!(f[0].pointer, "/spec/template/spec/containers/0/lifecycle/preStop/exec/command");
            assert!(f[0].message.starts_with(says), "{}", f[0].message);
            assert!(
                f[0].message.ends_with("terminationGracePeriodSeconds 30 runs out, SIGKILL 2s later"),
                "{}",
                f[0].message
            );
        }
        // The pod's own address, through the env, is the container too.
        let mut obj = prestop(json!(["sh", "-c", "until curl -sf http://$POD_IP:8080/idle; do sleep 1; done"]));
        obj["spec"]["template"]["spec"]["containers"][0]["env"] =
            json!([{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}]);
        assert_eq!(check(&RULE, &obj).len(), 1);
        // An endless loop is the error, said once.
        let f = check(&RULE, &prestop(json!(["sh", "-c", "curl -s localhost/drain; while true; do sleep 1; done"])));
        assert_eq!((f.len(), f[0].severity), (1, Severity::Error));
    }

    #[test]
    fn a_loop_on_its_own_server_with_another_way_out_is_fine() {
        for cmd in [
            json!(["timeout", "60", "sh", "-c", "until curl -sf localhost:8080/idle; do sleep 1; done"]),
            json!(["sh", "-c", "for i in $(seq 1 60); do curl -sf localhost:8080/idle && exit 0; sleep 1; done"]),
            json!([
                "sh",
                "-c",
                "i=0; while [ $i -lt 60 ]; do curl -sf localhost:8080/idle && exit 0; i=$((i+1)); sleep 1; done"
            ]),
            json!(["sh", "-c", "while curl -sf localhost:8080/busy; do sleep 1; done"]),
            json!(["sh", "-c", "while true; do curl -sf localhost:8080/idle || exit 0; sleep 1; done"]),
            json!(["sh", "-c", "until curl -sf http://drain-coordinator:8080/idle; do sleep 1; done"]),
            json!(["sh", "-c", "until curl -sf http://$DRAIN_URL/idle; do sleep 1; done"]),
            json!(["sh", "-c", "until ping -c1 localhost; do sleep 1; done"]),
        ] {
            assert!(check(&RULE, &prestop(cmd.clone())).is_empty(), "{cmd}");
        }
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
