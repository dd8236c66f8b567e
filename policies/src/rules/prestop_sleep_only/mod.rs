//! `prestop-sleep-only`: the preStop hook only sleeps.
//!
//! Tests: `policies/src/rules/prestop_sleep_only/fixtures/`,
//! `policies/src/rules/prestop_sleep_only/snapshots/rule_fixtures__prestop-sleep-only.snap`,
//! `policies/src/rules/prestop_sleep_only/fixtures/fix.yaml`,
//! `policies/src/rules/prestop_sleep_only/snapshots/fix_cli__prestop-sleep-only.snap`; in CEL:
//! `policies/src/rules/prestop_sleep_only/cel.rs`, evaluated on the fixtures
//! offline by `tests/tests/cel_fixtures.rs` and on the API server by
//! `tests/tests/cluster_vap/`.

pub(crate) mod cel;

use serde_json::{Value, json};

use crate::finding::{Finding, Fix, Severity, add_op};
use crate::model::{
    ContainerView, ShutdownNeed, SleepSeconds, Workload, exec_sleep_beside_native, join, required_grace,
};
use crate::rules::{
    Checks, Ctx, FixAvailability, Fixes, Harm, HarmShown, MapExport, Related, Rule, VapExport, with_fix,
};
use crate::simulate::Verdict;

pub(crate) static RULE: Rule = Rule {
    name: "prestop-sleep-only",
    severity: Severity::Error,
    summary: "the preStop hook only sleeps; a long sleep eats the grace period the app needs to shut down",
    doc: DOC,
    fix: FixAvailability::Fix(
        "raises terminationGracePeriodSeconds so the app keeps its shutdown budget, and on Kubernetes 1.30+ rewrites `exec: sleep N` into the native sleep action",
    ),
    check,
    vap: VapExport::Partly(
        "every finding on a container whose preStop, drain and shutdown budget CEL reads as the linter \
         does: the native sleep, `[busybox] sleep N` and a shell's `-c` script in printable ASCII are read \
         alike; a script with other characters, sleep arguments whose order decides (an `infinity` and \
         an unreadable one), a drain or budget value of 19 digits or more, or a slow-boot image with a \
         command of its own and no port (the policy may assume a model server's drain) leave the container \
         to the linter",
        Checks(crate::rules::prestop_sleep_only::cel::checks),
    ),
    map: MapExport::Partly(
        "both parts, on a pod whose every container's preStop, drain and budget CEL reads as the linter does: the exec \
         sleep rewritten into the native sleep action where the policy's kubernetesVersion allows it, by a JSON Patch \
         (exec removed, the native action added), run first, as \
         whether a container gets it is decided on the object as submitted; an exec sleep beside the native action (what a \
         re-apply of a rewritten file sends) made the native action alone again, by a JSON Patch run first; \
         terminationGracePeriodSeconds raised so each such container keeps its shutdown budget, by a JSON Patch \
         after grace-period-too-short's",
        Fixes(crate::rules::prestop_sleep_only::cel::fixes),
    ),
    related: Related::Nothing,
    harm: HarmShown::In(&[Harm { scenario: "delete", verdicts: &[Verdict::SigkillInFlight] }]),
};

const DOC: &str = r#"## What it does
Flags a container whose preStop hook does nothing but sleep: an `exec` of
`sleep N` or `sh -c "sleep N"`, or the native `sleep` action.

- Error when the sleep leaves the process less than its shutdown budget
  (`lifeguard.dev/shutdown-budget-seconds`, or a `*SHUTDOWN_TIMEOUT_SECONDS`
  style env var), and never less than the policy's
  `prestopMinRemainingSeconds` (5 s), of `terminationGracePeriodSeconds`
  (30 when unset). A sleep that never ends (`sleep infinity`, or a day or
  more) is an error too.
- Info otherwise: the sleep is a fine bridge, but it is not a drain. The
  message says how many seconds of the grace period the sleep leaves the
  application after SIGTERM, the time its own drain must fit in.
- Error, where the policy's `kubernetesVersion` is 1.30 or later, for a
  hook that sets both an `exec` that only sleeps and the native `sleep`
  action, which the API server refuses ("may not specify more than 1
  handler type"). It is what a second `kubectl apply` or server-side apply
  of an unchanged file makes of an `exec` sleep that `export map` or the
  webhook rewrote into the native action: the file's `exec` is sent back,
  and the stored `sleep` stays beside it.

## Why is this bad?
The sleep only bridges endpoint removal: kube-proxy, the mesh and the load
balancer need a moment to stop sending new connections. It drains nothing.
The grace period counts the sleep, so a long sleep moves SIGKILL closer to
SIGTERM: the application gets SIGTERM late and is killed before it has
finished its in-flight work.

## Not a finding
- `sleep 5 && /app/drain`, `sh -c "sleep 5; nginx -s quit"`: the hook drains
  after the bridge (`grace-period-too-short` still counts the sleep).
- A native `sleep` in front of an application that declares its own drain
  on SIGTERM (`lifeguard.dev/drain-seconds`, or a `*DRAIN_SECONDS` style env
  var), when the grace period leaves it that drain and its shutdown budget
  after the sleep: the bridge plus an application drain is the pattern this
  rule recommends. (An `exec` sleep there is still reported, as info, for
  the rewrite into the native action.)
- `httpGet` to a drain endpoint, a script file, `sleep $DELAY`.

## Example
```yaml
terminationGracePeriodSeconds: 30
containers:
  - name: app
    lifecycle:
      preStop:
        exec: {command: ["sh", "-c", "sleep 28"]}   # 2 s left for shutdown
```

## Use instead
```yaml
terminationGracePeriodSeconds: 45
containers:
  - name: app
    lifecycle:
      preStop:
        httpGet: {path: /drain, port: http}   # or: short sleep + SIGTERM handling
```

## Fix
For an error: sets `terminationGracePeriodSeconds` to the sleep plus the
declared drain plus the larger of the shutdown budget and
`prestopMinRemainingSeconds` (never below what `grace-period-too-short`
requires). Where the policy's `kubernetesVersion` is 1.30 or later, an
`exec` sleep is also rewritten into the native action
(`preStop: {sleep: {seconds: N}}`): distroless images have no `sleep` binary.
The info finding gets only that rewrite, for an `exec` sleep; a native sleep
that leaves enough time has no fix.

A hook with both the `exec` sleep and the native action is made the
rewrite again: the native action alone, of the `exec`'s seconds (the
file's, so a file whose sleep changed gets its new length), then the grace
period as above. Mutating admission runs before the API server validates
the object, so `export map` and the webhook's `/mutate` repair it there and
a GitOps sync of the unchanged file stores nothing new. A file whose `exec`
becomes anything but a plain sleep still meets the stored native action
beside it, which only the file can settle: write the native action in the
file (this fix does), or remove the stored one with the change.
"#;

fn check(w: &Workload, ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let settings = &ctx.policy.settings;
    let min_remaining = settings.prestop_min_remaining_seconds;
    let native_ok = settings.kubernetes_minor() >= (1, 30);
    let grace = w.grace_period();
    let needs = ctx.shutdown_needs(w);
    let need_after = |n: &ShutdownNeed| n.shutdown_seconds().max(min_remaining);
    let sleeps = |n: &ShutdownNeed| n.prestop.filter(|p| p.sleep_only);
    // One grace period for the pod: the largest any short-changed container
    // needs, and at least what grace-period-too-short asks, so the merged
    // fixes leave neither rule firing.
    let fixed_grace = needs
        .iter()
        .filter_map(|n| {
            let s = sleeps(n)?.seconds.finite()?;
            (grace.saturating_sub(s) < need_after(n)).then(|| n.grace_after_sleep(s, min_remaining))
        })
        .max()
        .map(|own| own.max(required_grace(needs).unwrap_or(0)));
    let grace_field = join(&w.spec_pointer, &["terminationGracePeriodSeconds"]);
    if native_ok {
        w.for_each_container(|c| {
            if let Some(s) = exec_sleep_beside_native(c.container).filter(|s| *s >= 1) {
                out.push(exec_beside_native(c, s));
            }
        });
    }

    for n in needs {
        let Some(p) = sleeps(n) else { continue };
        let name = n.container.as_str();
        let pointer = if p.native {
            join(&n.pointer, &["lifecycle", "preStop", "sleep", "seconds"])
        } else {
            join(&n.pointer, &["lifecycle", "preStop", "exec", "command"])
        };
        let s = match p.seconds {
            SleepSeconds::Forever => {
                out.push(RULE.finding(
                    Severity::Error,
                    pointer,
                    Some(name),
                    format!(
                        "preStop only sleeps, forever (infinity, or a day or more): SIGTERM comes when terminationGracePeriodSeconds {grace} runs out, SIGKILL 2s later"
                    ),
                    format!("preStop only sleeps, forever: SIGKILL after {grace}s; bound it"),
                    "sleep only as long as endpoint removal takes (a few seconds) and drain on SIGTERM",
                ));
                continue;
            }
            SleepSeconds::Finite(s) => s,
        };
        let need = need_after(n);
        let remaining = grace.saturating_sub(s);
        // Native sleep must be positive and within the grace period to pass validation.
        let rewrite = (!p.native && native_ok && s >= 1)
            .then(|| add_op(&join(&n.pointer, &["lifecycle", "preStop"]), json!({"sleep": {"seconds": s}})))
            .flatten();
        // The app drains on SIGTERM and has the time to: the sleep is only the bridge.
        let app_drains = n.drain.is_some() && remaining >= n.drain_seconds() + need;
        if app_drains && rewrite.is_none() {
            continue;
        }
        if remaining < need {
            let why = match &n.shutdown {
                Some(t) if t.seconds >= min_remaining => format!("shutdown budget, {}", t.source()),
                _ => "prestopMinRemainingSeconds".to_owned(),
            };
            let finding = RULE.finding(
                Severity::Error,
                pointer,
                Some(name),
                format!(
                    "preStop only sleeps {s}s, leaving {}s of terminationGracePeriodSeconds {grace} to shut down, less than {need}s ({why})",
                    remaining.max(0)
                ),
                format!("preStop sleeps {s}s of {grace}s grace: {}s left, {need}s needed; shorten it", remaining.max(0)),
                "shorten the sleep to the endpoint propagation delay, or raise terminationGracePeriodSeconds; drain in the app on SIGTERM",
            );
            let fix = fixed_grace.and_then(|g| {
                let mut operations = vec![add_op(&grace_field, Value::from(g))?];
                let mut description =
                    format!(
                    "set terminationGracePeriodSeconds to {g} (container {name:?}: sleep {s}s + {}drain {}s + {need}s to shut down, or more if another container needs it)",
                    if n.drain.as_ref().is_some_and(|t| t.assumed()) { "the policy's assumed " } else { "" },
                    n.drain_seconds()
                );
                if let Some(op) = rewrite {
                    operations.push(op);
                    description.push_str(&format!(
                        "; rewrite container {name:?}'s exec sleep into the native sleep action"
                    ));
                }
                Some(Fix::new(description, operations))
            });
            out.push(with_fix(finding.assuming(n.stop_assumptions(min_remaining)), fix));
        } else {
            let (message, short, help) = if app_drains {
                let whose = if n.drain.as_ref().is_some_and(|t| t.assumed()) {
                    "the policy's assumed"
                } else {
                    "the application's declared"
                };
                (
                    format!(
                        "preStop sleeps {s}s with an exec before {whose} {}s drain; the native sleep action does the same without a sleep binary",
                        n.drain_seconds()
                    ),
                    format!("preStop execs sleep {s}s; use the native sleep action"),
                    "use the native `sleep` preStop action (Kubernetes 1.30+)".to_owned(),
                )
            } else {
                // The sleep is a fine bridge; what is unknown is whether the
                // app uses the time it leaves, so say how much that is.
                (
                    format!(
                        "preStop only sleeps {s}s, a bridge for endpoint removal; SIGTERM then leaves the application {remaining}s of terminationGracePeriodSeconds {grace} to finish in-flight work"
                    ),
                    format!("preStop only sleeps {s}s, leaving the app {remaining}s; declare its drain"),
                    format!(
                        "make the application finish in-flight work within {remaining}s of SIGTERM, and declare that drain (annotation lifeguard.dev/drain-seconds) so lifeguard checks it fits"
                    ),
                )
            };
            let finding = RULE.finding(Severity::Info, pointer, Some(name), message, short, help);
            let fix = rewrite.map(|op| {
                Fix::new(
                    format!(
                        "rewrite container {name:?}'s preStop `exec: sleep {s}` into the native `sleep: {{seconds: {s}}}` action (same wait, no sleep binary needed, e.g. distroless)"
                    ),
                    vec![op],
                )
            });
            out.push(with_fix(finding, fix));
        }
    }
}

/// A preStop with an exec that only sleeps `s` seconds beside the native
/// sleep action: what a re-apply of a file whose exec sleep was rewritten
/// leaves, which the API server refuses. The fix is the rewrite again, of
/// the exec's seconds (the file's), so a second apply stores what the first
/// did.
fn exec_beside_native(c: ContainerView<'_>, s: i64) -> Finding {
    let name = c.name();
    let pre_stop = join(c.pointer, &["lifecycle", "preStop"]);
    let finding = RULE.finding(
        Severity::Error,
        join(&pre_stop, &["exec", "command"]),
        Some(name),
        format!(
            "preStop sets both an exec that only sleeps {s}s and the native sleep action; the API server refuses a hook with more than one handler (a second apply of a file whose exec sleep was rewritten into the native action sends the exec back beside it)"
        ),
        format!("preStop sets both exec sleep {s}s and the native sleep; keep one"),
        "keep only the native `sleep` action (Kubernetes 1.30+), in the file too",
    );
    let fix = add_op(&pre_stop, json!({"sleep": {"seconds": s}})).map(|op| {
        Fix::new(
            format!(
                "keep container {name:?}'s preStop native `sleep: {{seconds: {s}}}` action alone, of the exec's {s}s"
            ),
            vec![op],
        )
    });
    with_fix(finding, fix)
}

#[cfg(test)]
mod tests;
