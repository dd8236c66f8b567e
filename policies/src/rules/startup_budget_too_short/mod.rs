//! `startup-budget-too-short`: the startup probe gives up before a declared cold start ends.
//!
//! Tests: `policies/src/rules/startup_budget_too_short/fixtures/`,
//! `policies/src/rules/startup_budget_too_short/snapshots/rule_fixtures__startup-budget-too-short.snap`,
//! `policies/src/rules/startup_budget_too_short/fixtures/fix.yaml`,
//! `policies/src/rules/startup_budget_too_short/snapshots/fix_cli__startup-budget-too-short.snap`; in CEL:
//! `policies/src/rules/startup_budget_too_short/cel.rs`, evaluated on the fixtures
//! offline by `tests/tests/cel_fixtures.rs` and on the API server by
//! `tests/tests/cluster_vap/`.

pub(crate) mod cel;

use crate::finding::{Finding, Fix, Severity, add_op};
use crate::model::{
    ANNOTATION_COLD_START, ContainerView, ProbeKind, ProbeTiming, Workload, assumed_boot, ceil_div,
    cold_start_required, is_model_server,
};
use crate::rules::{
    Checks, Ctx, FixAvailability, Fixes, Harm, HarmShown, MapExport, Related, Rule, VapExport, with_fix,
};
use crate::simulate::Verdict;

pub(crate) static RULE: Rule = Rule {
    name: "startup-budget-too-short",
    severity: Severity::Error,
    summary: "the startup probe restarts the container before its declared cold start can finish",
    doc: DOC,
    fix: FixAvailability::Fix(
        "raises the startup probe's failureThreshold to cover the declared cold start plus margin",
    ),
    check,
    vap: VapExport::Partly(
        "all of it with a declared cold start (annotation lifeguard.dev/cold-start-seconds, read as the linter \
         reads it; one of 19 digits or more is left to the linter); without one, a model server's window below gpuBootSeconds is found on containers with \
         a GPU or a slow-boot image run by its own entrypoint or declaring a port, not on a slow-boot image \
         with a command of its own and no port (telling a toolbox's sleep from a server needs the command \
         line read)",
        Checks(crate::rules::startup_budget_too_short::cel::checks),
    ),
    map: MapExport::Partly(
        "startup failureThreshold raised to cover the declared cold start plus margin, by a JSON Patch of the \
         containers it finds; not with a cold-start annotation of 19 digits or more (left as it came); the model-server \
         warning without a declared cold start has no fix",
        Fixes(crate::rules::startup_budget_too_short::cel::fixes),
    ),
    related: Related::Nothing,
    harm: HarmShown::In(&[Harm { scenario: "boot", verdicts: &[Verdict::BootLoop, Verdict::Restarts] }]),
};

const DOC: &str = r#"## What it does
Reads the measured slowest valid start of the pod from the pod template
annotation `lifeguard.dev/cold-start-seconds` (seconds or a Go duration such
as `7m10s`) and flags each container whose startup probe gives up sooner:
`initialDelaySeconds + failureThreshold x periodSeconds` must be at least the
cold start plus a margin (`coldStartMarginPercent`, 10% by default), rounded
up to a whole second.

The severity follows the harm, timed as the kubelet (and `lifeguard
simulate`) times it: the kubelet restarts at the `failureThreshold`-th
failed check, `initialDelaySeconds + (failureThreshold - 1) x
periodSeconds`. An error when that restart comes before the declared cold
start ends (the boot loops: simulate's `boot-loop`); a warning when the
boot fits but the margin does not.

An annotation that is not a number of seconds is reported once, at the
annotation.

Without the annotation, warns about a model server (a GPU request or a
known model-server image, as `startup-probe-missing` reads them) whose
startup probe restarts it before the policy's `gpuBootSeconds` (600): 150 s
for a server that downloads 16 GB of weights at boot may or may not be
enough, and only a measurement can say; 60 checks of 10 s restart at 590 s,
before the 600 s simulate assumes. The warning asks for the measured
cold start (the GPU design source's worked example sizes the window from
40 measured cold starts); once it is declared, the finding above applies, or
nothing. No automatic fix: lifeguard does not guess a boot time to raise
the window to.

## Why is this bad?
While the startup probe fails, liveness and readiness are held back; once it
has failed `failureThreshold` times, the kubelet restarts the container. A
budget shorter than a valid boot (model download, deserialization, moving
weights to the GPU) restarts a healthy container in the middle of its boot,
every time: the pod never becomes ready.

## Not a finding
- No annotation on a container that is not a model server: lifeguard does
  not guess how long a boot takes.
- No annotation on a model server whose startup window already covers
  `gpuBootSeconds`.
- A container with no startup probe (`startup-probe-missing` covers slow
  boots guarded only by liveness).
- Sidecar init containers: the declared cold start is the application's, not
  the proxy's.

## Example
```yaml
metadata:
  annotations:
    lifeguard.dev/cold-start-seconds: "430"
...
startupProbe:
  httpGet: {path: /livez, port: http}
  periodSeconds: 10
  failureThreshold: 30        # 300 s < 430 s x 1.1 = 473 s
```

## Use instead
```yaml
startupProbe:
  httpGet: {path: /livez, port: http}
  periodSeconds: 10
  failureThreshold: 49        # the 49th check, at 480 s, is past 473 s
```

## Fix
Sets the startup probe's `failureThreshold` to the smallest value whose
kubelet restart comes no earlier than the cold start plus margin, given the
probe's own `initialDelaySeconds` and `periodSeconds`: a whole period of the
grid to spare on top of the margin (430 s, period 10, margin 10% gives 49:
the restart at (49 - 1) x 10 = 480 s >= 473 s; the design source's nominal
48 restarts at 470 s). Nothing else changes.
"#;

fn check(w: &Workload, ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let cold = match w.annotation_seconds(ANNOTATION_COLD_START) {
        None => {
            w.for_each_container(|c| out.extend(undeclared_model_server(w, c, ctx)));
            return;
        }
        Some(Ok(cold)) => cold,
        Some(Err(raw)) => {
            out.push(RULE.finding(
                Severity::Error,
                w.template_annotation_pointer(ANNOTATION_COLD_START),
                None,
                format!("annotation {ANNOTATION_COLD_START}: {raw:?} is not a number of seconds"),
                format!("annotation {ANNOTATION_COLD_START} is not seconds; write \"430\""),
                "write the measured slowest valid start as seconds (\"430\") or a duration (\"7m10s\")",
            ));
            return;
        }
    };
    let margin = ctx.policy.settings.cold_start_margin_percent;
    let required = cold_start_required(cold, margin);
    w.for_each_container(|c| {
        if c.sidecar {
            return;
        }
        let Some(startup) = ProbeKind::Startup.of(c.container) else {
            return;
        };
        let t = ProbeTiming::of(startup);
        // Non-positive values are rejected by the API server (probe-invalid's job);
        // a budget computed from them would mean nothing.
        if t.period < 1 || t.failure < 1 || t.initial_delay < 0 || t.boot_budget() >= required {
            return;
        }
        let field = if startup.failure_threshold.is_some() {
            c.at(&[ProbeKind::Startup.field(), "failureThreshold"])
        } else {
            c.at(&[ProbeKind::Startup.field()])
        };
        // The severity follows the harm: an error when the kubelet restarts
        // the declared boot itself (simulate's boot loop), a warning when
        // only the margin is missing.
        let restarts_the_boot = t.earliest_restart() < cold;
        let outcome = if restarts_the_boot {
            format!("; the kubelet restarts it at {}s, before the boot ends, every time", t.earliest_restart())
        } else {
            String::new()
        };
        let message = format!(
            "startup probe allows {}s (initialDelaySeconds {} + failureThreshold {} x periodSeconds {}) but the declared cold start {cold}s + {margin}% needs {required}s{outcome}",
            t.boot_budget(),
            t.initial_delay,
            t.failure,
            t.period,
        );
        let threshold = covering_failure_threshold(required, t.initial_delay, t.period);
        let fix = threshold.and_then(|n| {
            let op = add_op(&c.at(&[ProbeKind::Startup.field(), "failureThreshold"]), n.into())?;
            Some(Fix::new(
                format!(
                    "set startup failureThreshold of container {:?} to {n} (the kubelet restarts at {}s with periodSeconds {})",
                    c.name(),
                    t.initial_delay.saturating_add((n - 1).saturating_mul(t.period)),
                    t.period
                ),
                vec![op],
            ))
        });
        let finding = RULE.finding(
            if restarts_the_boot { Severity::Error } else { Severity::Warning },
            field,
            Some(c.name()),
            message,
            format!("startup allows {}s, cold start needs {required}s; raise it", t.boot_budget()),
            "raise startup failureThreshold so failureThreshold x periodSeconds covers the cold start plus margin",
        )
        .assuming([assumed_boot(w, &c, ctx.policy).assumption]);
        out.push(with_fix(finding, fix));
    });
}

/// A model server's startup window shorter than the policy's GPU boot
/// default, with no measured cold start to tell whether it is enough.
fn undeclared_model_server(w: &Workload, c: ContainerView<'_>, ctx: &Ctx<'_>) -> Option<Finding> {
    let gpu_boot = ctx.policy.settings.gpu_boot_seconds;
    let startup = ProbeKind::Startup.of(c.container)?;
    let t = ProbeTiming::of(startup);
    if c.sidecar || !is_model_server(&c, ctx.policy) || t.period < 1 || t.failure < 1 || t.initial_delay < 0 {
        return None;
    }
    // As simulate times it: the kubelet restarts at the failureThreshold-th
    // failed check, so a window of exactly gpuBootSeconds restarts that boot.
    if t.earliest_restart() >= gpu_boot {
        return None;
    }
    let pointer = if startup.failure_threshold.is_some() {
        c.at(&[ProbeKind::Startup.field(), "failureThreshold"])
    } else {
        c.at(&[ProbeKind::Startup.field()])
    };
    let boot = assumed_boot(w, &c, ctx.policy);
    Some(RULE.finding(
        Severity::Warning,
        pointer,
        Some(c.name()),
        format!(
            "model server's startup probe restarts it at {}s (initialDelaySeconds {} + (failureThreshold {} - 1) x periodSeconds {}), before the {gpu_boot}s the policy assumes for a model server's boot (gpuBootSeconds), and no measured cold start is declared",
            t.earliest_restart(),
            t.initial_delay,
            t.failure,
            t.period,
        ),
        format!("restarts at {}s < {gpu_boot}s assumed; declare the cold start", t.earliest_restart()),
        format!(
            "measure the slowest valid cold start (weights download, load, warm-up) and declare it in the pod template annotation {ANNOTATION_COLD_START}; then the window is checked against it"
        ),
    ).assuming([boot.assumption]))
}

/// The smallest `failureThreshold` (at least 1) for which the kubelet's
/// restart, at `initial_delay + (failureThreshold - 1) x period`, comes no
/// earlier than `required`: the boot plus margin, with a period of the
/// grid to spare; `None` when it does not fit the API's int32.
fn covering_failure_threshold(required: i64, initial_delay: i64, period: i64) -> Option<i64> {
    let n = ceil_div(required.saturating_sub(initial_delay), period).saturating_add(1).max(1);
    i32::try_from(n).ok().map(i64::from)
}

#[cfg(test)]
mod tests;
