//! `startup-probe-missing`: a slow boot guarded only by liveness.
//!
//! Tests: `policies/src/rules/startup_probe_missing/fixtures/`,
//! `policies/src/rules/startup_probe_missing/snapshots/rule_fixtures__startup-probe-missing.snap`,
//! `policies/src/rules/startup_probe_missing/fixtures/fix.yaml`,
//! `policies/src/rules/startup_probe_missing/snapshots/fix_cli__startup-probe-missing.snap`; in CEL:
//! `policies/src/rules/startup_probe_missing/cel.rs`, evaluated on the fixtures
//! offline by `tests/tests/cel_fixtures.rs` and on the API server by
//! `tests/tests/cluster_vap/`.

pub(crate) mod cel;

use k8s_openapi::api::core::v1::Probe;
use serde_json::{Map, Value};

use crate::finding::{Finding, Fix, Naming, Severity, add_op};
use crate::model::{
    ANNOTATION_COLD_START, ContainerView, ProbeKind, ProbeTiming, Workload, assumed_boot, ceil_div,
    cold_start_required, handler_count, handler_of, serves_model_image, too_long, window_threshold,
};
use crate::rules::{
    Checks, Ctx, FixAvailability, Fixes, Harm, HarmShown, MapExport, Related, Rule, VapExport, with_fix,
};
use crate::simulate::Verdict;

pub(crate) static RULE: Rule = Rule {
    name: "startup-probe-missing",
    severity: Severity::Warning,
    summary: "a slow-booting container has a liveness probe but no startup probe",
    doc: DOC,
    fix: FixAvailability::Fix(
        "adds a startupProbe with the liveness handler and a budget covering the boot; liveness initialDelaySeconds is left as written",
    ),
    check,
    vap: VapExport::Partly(
        "all of it but two signs of a slow boot that only the linter reads: a slow-boot image with a \
         command of its own and no port or GPU (a toolbox's sleep or a server: the command line would need \
         reading) and a cold-start annotation of 19 digits or more; with slowBootImages patterns that RE2 \
         reads differently, no image counts. Such a container is reported for its other signs only",
        Checks(crate::rules::startup_probe_missing::cel::checks),
    ),
    map: MapExport::Partly(
        "the startup probe with the liveness handler copied and a budget covering the boot, and a long liveness \
         window lowered, by one JSON Patch per object (the handler is copied as it is, exec command or HTTP headers \
         included); not on \
         an object with a slow-boot image run by a command of its own and no port or GPU (whether it is a model server \
         sets the budget, and telling needs the command line read) or with a cold-start annotation of 19 digits or more",
        Fixes(crate::rules::startup_probe_missing::cel::fixes),
    ),
    related: Related::Nothing,
    harm: HarmShown::In(&[Harm { scenario: "boot", verdicts: &[Verdict::BootLoop, Verdict::Restarts] }]),
};

const DOC: &str = r#"## What it does
Flags a container that has a liveness probe, no startup probe, and a sign
that liveness is standing in for one:
- a GPU request or limit (`nvidia.com/gpu`, `amd.com/gpu`, any `*/gpu`);
- a known model-server image (`slowBootImages`: Triton, vLLM, TGI,
  TorchServe, TensorFlow Serving, KServe runtimes, ...), matched on the
  repository name, not the organisation (`ghcr.io/vllm-project/router` is
  not vLLM), and not when the container only runs `sleep` with no GPU and no
  port (a toolbox started from the image);
- a declared cold start (pod template annotation
  `lifeguard.dev/cold-start-seconds`) that is at least
  `slowBootInitialDelaySeconds`, or that the liveness probe's own
  `initialDelaySeconds + failureThreshold x periodSeconds` does not cover
  with the margin (`coldStartMarginPercent`);
- liveness `initialDelaySeconds` above `slowBootInitialDelaySeconds` (30 s:
  the tutorial default is not a sign of a slow boot);
- liveness `failureThreshold x periodSeconds` above `maxLivenessWindowSeconds`
  (600 s): thresholds stretched to survive the boot.

The severity follows the harm, under the assumptions `lifeguard simulate`
makes: an error when the liveness probe restarts the boot (its
`failureThreshold`-th failure, at `initialDelaySeconds + (failureThreshold
- 1) x periodSeconds`, comes before the declared cold start, or for a model
server without one before `gpuBootSeconds`): simulate's `boot-loop`; a
warning when liveness only stands in for a startup probe (its delay or
window waits the boot out, and a wedge after the boot goes unseen that
long). The message names the evidence and the boot it assumes; when the
only sign is the liveness probe's own delay or window, it says so rather
than calling the boot slow.

## Why is this bad?
Liveness has one budget for two jobs. Either its delay or its thresholds are
long enough for the slowest boot, and then a process that wedges after the
boot goes unnoticed for that long; or they are short, and the kubelet kills
a healthy container that is still loading its model, every time, so the pod
never becomes ready. A startup probe holds liveness back only until the boot
has finished, however long it took (probes design source: "Startup covers a
long boot so liveness does not fire early").

With the policy's `requireStartupProbeForGpu` (on in the `gpu-serving`
pack), a GPU container of a long-running workload without any startup probe
is an error even without a liveness probe (no automatic fix: there is no
handler to copy).

## Not a finding
- A container without a liveness probe (nothing kills a slow boot), unless
  `requireStartupProbeForGpu` is on and it requests a GPU.
- A container that already has a startup probe (`startup-budget-too-short`
  checks its budget).
- A fast boot: `initialDelaySeconds` of 30 s or less, an ordinary image, no GPU.
- A declared cold start on a sidecar init container: it is the application's.

## Example
```yaml
image: vllm/vllm-openai:v0.6.0
resources: {limits: {nvidia.com/gpu: 1}}
livenessProbe:
  httpGet: {path: /health, port: 8000}
  initialDelaySeconds: 240
```

## Use instead
```yaml
startupProbe:
  httpGet: {path: /health, port: 8000}
  periodSeconds: 10
  failureThreshold: 67        # restarts at 660 s: 600 s + 10%
livenessProbe:
  httpGet: {path: /health, port: 8000}
  initialDelaySeconds: 240    # harmless beside a startup probe: it only delays liveness
```

## Fix
Adds a `startupProbe` with the liveness handler copied verbatim,
`periodSeconds` = `startupPeriodSeconds` (10), the liveness `timeoutSeconds`
if set (never above that period: a check longer than the period overlaps
the next), and the smallest `failureThreshold` that meets both:
- the boot plus the policy's margin (`coldStartMarginPercent`) with a whole
  period of the grid to spare, timed as the kubelet times it (the
  `failureThreshold`-th failed check, `(failureThreshold - 1) x
  periodSeconds` after the first, restarts): the declared cold start when
  one is declared (430 s at 10% gives 473 s: 49 checks, the restart at
  480 s, with any `gpuBootSeconds`); else `gpuBootSeconds` for a model
  server (600 s at 10% gives 660 s: 67 checks), the boot `lifeguard
  simulate` assumes for it, so the fixed object boots there without a
  restart; else nothing;
- never an earlier restart than before, by the kubelet's timing: the
  kubelet restarts at the `failureThreshold`-th failure, at
  `initialDelaySeconds + (failureThreshold - 1) x periodSeconds`, so the
  startup probe's `(failureThreshold - 1) x periodSeconds` must be at least
  the liveness probe's. A liveness `30 + 3 x 3` restarts at 36 s; the fix
  gives 5 checks of 10 s (restart at 40 s), not 4 (30 s, which would loop a
  boot of 31-36 s that used to pass).

A liveness window above `maxLivenessWindowSeconds` is then brought back to
3 checks (or what `liveness-too-aggressive` requires), since the startup
probe now guards the boot. No fix when the liveness probe has no single
valid handler.

Liveness `initialDelaySeconds` is left as written. The kubelet counts it
from the container's start, whatever the startup probe does: its prober
(`pkg/kubelet/prober/worker.go`) skips a check while the container has run
less than the delay before it asks whether the container has started, and
holds liveness back until then. Beside a startup probe the delay only makes
liveness wait for the later of the two, so it never restarts a boot, and
the budget above already counts it. Setting it to 0 would catch a wedge in
the first seconds sooner, but no fix of `export map` or the webhook could
keep it: a second `kubectl apply` or server-side apply of the unchanged
file (a GitOps sync) sends the file's delay back, the object then has its
startup probe and nothing to fix, and the changed template would roll the
pods out on every sync. Lower it in the file once the startup probe is
there.
"#;

fn check(w: &Workload, ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let settings = &ctx.policy.settings;
    // An unreadable annotation is reported by startup-budget-too-short.
    let cold = match w.annotation_seconds(ANNOTATION_COLD_START) {
        Some(Ok(s)) => Some(s),
        _ => None,
    };
    w.for_each_container(|c| {
        let container = c.container;
        if ProbeKind::Startup.of(container).is_some() {
            return;
        }
        let Some(live) = ProbeKind::Liveness.of(container) else {
            if settings.require_startup_probe_for_gpu && w.long_running {
                out.extend(gpu_without_startup(c));
            }
            return;
        };
        let t = ProbeTiming::of(live);
        let gpu = c.gpu_resource();
        let model_image = serves_model_image(&c, ctx.policy);
        let cold = cold.filter(|_| !c.sidecar).map(|s| (s, cold_start_required(s, settings.cold_start_margin_percent)));

        // Signs that the boot is slow, and signs only that liveness is
        // stretched to survive one: those are worded as what they are.
        let mut slow = Vec::new();
        if let Some(gpu) = gpu {
            slow.push(format!("requests {gpu}"));
        }
        if model_image {
            slow.push(format!("image {} looks like a model server", image_name(c.image())));
        }
        if let Some((s, required)) = cold {
            if s >= settings.slow_boot_initial_delay_seconds || required > t.boot_budget() {
                slow.push(format!("declared cold start {s}s"));
            }
        }
        let mut stretched = Vec::new();
        let mut costs = Vec::new();
        if t.initial_delay > settings.slow_boot_initial_delay_seconds {
            stretched.push(format!(
                "initialDelaySeconds {} (more than {})",
                t.initial_delay, settings.slow_boot_initial_delay_seconds
            ));
            costs.push(format!("liveness checks nothing for the first {}s of every start", t.initial_delay));
        }
        let long_window = too_long(ProbeKind::Liveness, &t, settings);
        if long_window {
            stretched.push(format!(
                "failureThreshold {} x periodSeconds {} = {}s (more than {})",
                t.failure,
                t.period,
                t.failure_window(),
                settings.max_liveness_window_seconds
            ));
            costs.push(format!(
                "a process that wedges after the boot runs for up to {}s before a restart",
                t.failure_window()
            ));
        }
        if slow.is_empty() && stretched.is_empty() {
            return;
        }

        // The boot simulate assumes: the declared cold start, else the
        // policy's GPU boot for a model server, else none. The fix covers it
        // with the margin to spare; the GPU default only stands in for a
        // declared one.
        let margin = settings.cold_start_margin_percent;
        let assumed = assumed_boot(w, &c, ctx.policy);
        let boot = assumed.seconds;
        let target = cold_start_required(boot, margin);
        // The severity follows the harm: an error when liveness restarts
        // that boot (a restart loop, simulate's `boot-loop`), a warning when
        // it only stands in for a startup probe at the cost of a slow
        // wedge detection.
        let restarts_the_boot = t.earliest_restart() < boot;
        let severity = if restarts_the_boot { Severity::Error } else { Severity::Warning };
        let short = if !slow.is_empty() {
            let why = match (gpu, cold) {
                (Some(_), _) => "GPU".to_owned(),
                _ if model_image => "model server image".to_owned(),
                (None, Some((s, _))) => format!("{s}s cold start"),
                (None, None) => "slow".to_owned(),
            };
            format!("slow boot ({why}); add a startup probe")
        } else if t.initial_delay > settings.slow_boot_initial_delay_seconds {
            format!("liveness delay {}s stands in for a startup probe; add one", t.initial_delay)
        } else {
            format!("liveness window {}s stands in for a startup probe; add one", t.failure_window())
        };
        let message = if slow.is_empty() {
            format!(
                "liveness {} stands in for a startup probe: a boot still running at {}s is restarted, and {}",
                stretched.join(" and "),
                t.earliest_restart(),
                costs.join(", and ")
            )
        } else {
            slow.extend(stretched.into_iter().map(|s| format!("liveness {s}")));
            let outcome = if restarts_the_boot {
                format!(
                    "liveness restarts it at {}s, before the {boot}s boot ends ({}), every time",
                    t.earliest_restart(),
                    boot_source(assumed.declared)
                )
            } else {
                "liveness alone must either wait out the boot or restart it".to_owned()
            };
            format!("no startup probe although the boot is slow ({}); {outcome}", slow.join(", "))
        };
        let finding = RULE.finding(
            severity,
            c.at(&[ProbeKind::Liveness.field()]),
            Some(c.name()),
            message,
            short,
            "add a startupProbe with the liveness handler whose failureThreshold x periodSeconds covers the boot",
        );
        let finding = finding.assuming([assumed.assumption]);
        let lowered = if long_window { window_threshold(ProbeKind::Liveness, &t, settings) } else { None };
        out.push(with_fix(finding, fix(c, live, target, settings.startup_period_seconds, lowered)));
    });
}

/// The policy's `requireStartupProbeForGpu`: a serving GPU container
/// without any startup probe, even without liveness.
fn gpu_without_startup(c: ContainerView<'_>) -> Option<Finding> {
    let gpu = c.gpu_resource()?;
    Some(
        RULE.finding(
            Severity::Error,
            c.pointer.to_owned(),
            Some(c.name()),
            format!(
                "requests {gpu} but has no startup probe; the policy requires one for GPU containers (requireStartupProbeForGpu)"
            ),
            "GPU but no startup probe, which the policy requires; add one".to_owned(),
            "add a startupProbe on a model-aware endpoint whose failureThreshold x periodSeconds covers the boot",
        )
        // The GPU request is the sentence's own fact: the container is its subject.
        .named(Naming::Subject),
    )
}

/// Where the boot a finding assumes comes from, for its message.
fn boot_source(declared: bool) -> &'static str {
    if declared {
        "the declared cold start"
    } else {
        "the policy's gpuBootSeconds for a model server; declare the measured one in lifeguard.dev/cold-start-seconds"
    }
}

/// The smallest startup `failureThreshold` whose kubelet restart (the
/// `failureThreshold`-th failed check, `(failureThreshold - 1) x period`
/// after the first) comes no earlier than `target` seconds, so the boot has
/// at least one period of the grid to spare, and no earlier than the
/// liveness probe's (see the doc's Fix section).
pub(super) fn startup_failure_threshold(live: &ProbeTiming, target: i64, period: i64) -> i64 {
    let covering = ceil_div(target, period).saturating_add(1);
    let not_earlier = ceil_div(live.earliest_restart(), period).saturating_add(1);
    covering.max(not_earlier).max(1)
}

/// The startup probe and liveness change; `None` when the liveness handler
/// cannot be copied or the budget does not fit the API's int32.
fn fix(c: ContainerView<'_>, live: &Probe, target: i64, period: i64, lowered: Option<i64>) -> Option<Fix> {
    let handler = handler_of(c.container, live)?;
    let (key, value) = copied_handler(live)?;
    let t = ProbeTiming::of(live);
    let failure = i32::try_from(startup_failure_threshold(&t, target, period)).ok()?;
    let mut probe = Map::new();
    probe.insert(key.to_owned(), value);
    // A check that may run longer than the period overlaps the next one;
    // the new probe's period bounds the copied timeout.
    if let Some(timeout) = live.timeout_seconds {
        probe.insert("timeoutSeconds".to_owned(), i64::from(timeout).min(period).into());
    }
    probe.insert("periodSeconds".to_owned(), period.into());
    probe.insert("failureThreshold".to_owned(), failure.into());
    let mut operations = vec![add_op(&c.at(&[ProbeKind::Startup.field()]), Value::Object(probe))?];
    let mut description = format!(
        "add startupProbe to container {:?} ({}, periodSeconds {period}, failureThreshold {failure}: a boot still running at {}s is restarted)",
        c.name(),
        handler.describe(),
        i64::from(failure).saturating_sub(1).saturating_mul(period)
    );
    if let Some(n) = lowered {
        operations.push(add_op(&c.at(&[ProbeKind::Liveness.field(), "failureThreshold"]), n.into())?);
        description.push_str(&format!(" and liveness failureThreshold {} -> {n}", t.failure));
    }
    Some(Fix::new(description, operations))
}

/// The liveness handler as written (field name and value), when it has exactly one.
fn copied_handler(p: &Probe) -> Option<(&'static str, Value)> {
    if handler_count(p) != 1 {
        return None;
    }
    let copied = if let Some(h) = &p.http_get {
        ("httpGet", serde_json::to_value(h))
    } else if let Some(h) = &p.tcp_socket {
        ("tcpSocket", serde_json::to_value(h))
    } else if let Some(h) = &p.exec {
        ("exec", serde_json::to_value(h))
    } else {
        ("grpc", serde_json::to_value(p.grpc.as_ref()?))
    };
    Some((copied.0, copied.1.ok()?))
}

/// The image without tag or digest, for messages.
fn image_name(image: &str) -> &str {
    let image = image.split('@').next().unwrap_or(image);
    match image.rfind(':') {
        Some(i) if !image[i..].contains('/') => &image[..i],
        _ => image,
    }
}

#[cfg(test)]
mod tests;
