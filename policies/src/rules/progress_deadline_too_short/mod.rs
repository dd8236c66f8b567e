//! `progress-deadline-too-short`: a Deployment's progress deadline is
//! shorter than its pod's startup window.
//!
//! Tests: `policies/src/rules/progress_deadline_too_short/fixtures/`,
//! `policies/src/rules/progress_deadline_too_short/snapshots/rule_fixtures__progress-deadline-too-short.snap`,
//! `policies/src/rules/progress_deadline_too_short/fixtures/fix.yaml`,
//! `policies/src/rules/progress_deadline_too_short/snapshots/fix_cli__progress-deadline-too-short.snap`; on the
//! real controller: `tests/tests/node_seed/rollout.rs`.

use serde_json::Value;

use crate::finding::{Finding, Fix, Naming, Severity, add_op};
use crate::model::{DEFAULT_PROGRESS_DEADLINE_SECONDS, PROGRESS_DEADLINE_POINTER, Workload, startup_window};
use crate::rules::{Ctx, FixAvailability, Harm, HarmShown, MapExport, Related, Rule, VapExport, with_fix};
use crate::simulate::Verdict;

pub(crate) static RULE: Rule = Rule {
    name: "progress-deadline-too-short",
    severity: Severity::Warning,
    summary: "a Deployment's progressDeadlineSeconds is shorter than its pod's startup window: a rollout fails while a pod still boots",
    doc: DOC,
    fix: FixAvailability::Fix(
        "sets progressDeadlineSeconds to the pod's startup window and a minute, in whole minutes",
    ),
    check,
    vap: VapExport::No(
        "weighs the pod's whole startup window (every container's probes and assumed boot, native sidecars in turn) \
         against the Deployment's own field: not written in CEL yet",
    ),
    map: MapExport::No("its fix is not written as a mutation yet; `lifeguard fix` and the webhook's /mutate make it"),
    related: Related::Nothing,
    harm: HarmShown::InWorkload(&[Harm { scenario: "rollout", verdicts: &[Verdict::ProgressDeadlineExceeded] }]),
};

/// The slack the fix leaves over the startup window: the controller counts
/// a pod ready once the kubelet's status update has reached the ReplicaSet's
/// status and then its own sync (`pkg/controller/deployment/sync.go`,
/// `syncRolloutStatus`), a few seconds; a minute, and whole minutes, keep
/// the value readable.
const FIX_SLACK_SECONDS: i64 = 60;

const DOC: &str = r#"## What it does
Flags a Deployment whose `spec.progressDeadlineSeconds` (600 when unset) is
shorter than its pod's startup window: the time the pod's own spec gives it
to become Ready. For each container, its startup probe's
`initialDelaySeconds + failureThreshold x periodSeconds` (the kubelet
restarts a boot that takes longer); without one, the boot lint, fix and
simulate assume (`lifeguard.dev/cold-start-seconds`, else the policy's
`gpuBootSeconds` for a model server) plus `coldStartMarginPercent`; and no
shorter than its readiness probe's `initialDelaySeconds`. Native sidecars
one after another, then the longest regular container. The same window
`lifeguard export alerts` waits out.

## Why is this bad?
The Deployment controller counts progress when the new ReplicaSet grows, the
old one shrinks, or a pod becomes ready or available
(`pkg/controller/deployment/util/deployment_util.go`,
`DeploymentProgressing`); once no progress has come for
`progressDeadlineSeconds` it sets the `Progressing` condition False with
reason `ProgressDeadlineExceeded` (`DeploymentTimedOut`). Between creating a
new pod and that pod becoming Ready nothing counts, so a pod that boots for
longer than the deadline, yet within what its own probes allow, fails the
rollout while it is still loading: `kubectl rollout status` exits 1, Argo CD
marks the application Degraded, Flux's health check fails, and a pipeline
that gates on them rolls back a release that was about to be fine. The
controller itself does not stop the rollout, so the failure is a false
alarm that people learn to ignore.

Seen on a node with the real controller manager (`tests/tests/node_seed/rollout.rs`):
a pod booting for 24 s within its startup probe's 40 s, under a 10 s
deadline, was marked `ProgressDeadlineExceeded` at 11 s and Ready at 26 s;
after `lifeguard fix`, the same Deployment rolled out with no such
condition.

A startup probe bounds the window whatever the assumed boot: the kubelet
restarts a boot that outlasts it.

## Not a finding
- A model server whose window is only the policy's `gpuBootSeconds`
  (no startup probe, no declared cold start): nothing in the manifest says
  how long its boot is. `startup-probe-missing` and
  `startup-budget-too-short` ask for the measured cold start; declare it in
  `lifeguard.dev/cold-start-seconds` and this rule checks it.
- A deadline at or above the startup window, or a window of 0 (no startup
  probe, no slow boot, no readiness delay).
- StatefulSets and DaemonSets: their controllers have no progress deadline.
- A `progressDeadlineSeconds` that is not an integer: the API server
  refuses the object.

## Example
```yaml
kind: Deployment
spec:                      # progressDeadlineSeconds unset: 600
  template:
    spec:
      containers:
        - name: vllm
          startupProbe:
            httpGet: {path: /health, port: 8000}
            periodSeconds: 10
            failureThreshold: 90   # the kubelet waits 900 s for the boot
```

## Use instead
```yaml
spec:
  progressDeadlineSeconds: 960     # the 900 s startup window and a minute
```

## Fix
Sets `spec.progressDeadlineSeconds` to the startup window plus a minute,
rounded up to whole minutes: the controller sees a pod ready a few seconds
after the kubelet does. A value derived from the pod's own probes and the
policy's boot; raising a deadline changes no pod and no rollout step, only
when the controller calls it failed.
"#;

fn check(w: &Workload, ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(rollout) = &w.rollout else { return };
    let Some(deadline) = rollout.progress_deadline_seconds else { return };
    let window = startup_window(w, ctx.policy);
    // Nothing in the manifest says how long the boot is, only the policy's
    // GPU default: `startup-probe-missing` and `startup-budget-too-short`
    // ask for the measured cold start, which this rule then checks.
    if window.seconds <= deadline || window.only_assumed() {
        return;
    }
    let written = if rollout.progress_deadline_set { String::new() } else { " (unset: the default)".to_owned() };
    let message = format!(
        "progressDeadlineSeconds {deadline}{written} is shorter than the pod's startup window, {}: a rollout whose \
         new pod boots within what its spec allows is marked ProgressDeadlineExceeded after {deadline}s without a \
         ready pod",
        window.describe(),
    );
    let short = format!("progress deadline {deadline}s < startup window {}s; raise it", window.seconds);
    let required = fixed_deadline(window.seconds);
    let pointer = if rollout.progress_deadline_set { PROGRESS_DEADLINE_POINTER.to_owned() } else { "/spec".to_owned() };
    let finding = RULE
        .finding(
            Severity::Warning,
            pointer,
            None,
            message,
            short,
            format!("set spec.progressDeadlineSeconds to at least {} (the startup window and a minute)", required),
        )
        .named(Naming::Subject);
    let fix = add_op(PROGRESS_DEADLINE_POINTER, Value::from(required)).map(|op| {
        Fix::new(
            format!(
                "set progressDeadlineSeconds to {required} (the pod's {}s startup window and a minute, in whole minutes)",
                window.seconds
            ),
            vec![op],
        )
    });
    out.push(with_fix(finding, fix));
}

/// The deadline the fix writes: the window and [`FIX_SLACK_SECONDS`],
/// rounded up to whole minutes, and never below the controller's default.
fn fixed_deadline(window: i64) -> i64 {
    let at_least = window.saturating_add(FIX_SLACK_SECONDS);
    let minutes = at_least / 60 + i64::from(at_least % 60 != 0);
    minutes.saturating_mul(60).max(DEFAULT_PROGRESS_DEADLINE_SECONDS)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{RULE, fixed_deadline};
    use crate::finding::Severity;
    use crate::rules::testing::{apply_fix, check, deployment, one_container};

    fn startup(failures: i64) -> serde_json::Value {
        json!({"startupProbe": {"httpGet": {"path": "/health", "port": 8000}, "periodSeconds": 10, "failureThreshold": failures}})
    }

    #[test]
    fn a_startup_probe_longer_than_the_default_deadline_is_a_warning_fixed_to_the_next_minute() {
        let obj = one_container(startup(90));
        let f = check(&RULE, &obj);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].severity, Severity::Warning);
        assert_eq!(f[0].pointer, "/spec");
        assert!(f[0].message.contains("progressDeadlineSeconds 600 (unset: the default)"), "{}", f[0].message);
        assert!(f[0].message.contains("startup probe allows 900s"), "{}", f[0].message);
        let fixed = apply_fix(&obj, &f[0]);
        assert_eq!(fixed["spec"]["progressDeadlineSeconds"], 960);
        assert!(check(&RULE, &fixed).is_empty(), "idempotent");
    }

    #[test]
    fn a_written_deadline_is_pointed_at() {
        let mut obj = one_container(startup(30));
        obj["spec"]["progressDeadlineSeconds"] = json!(120);
        let f = check(&RULE, &obj);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].pointer, "/spec/progressDeadlineSeconds");
        assert_eq!(apply_fix(&obj, &f[0])["spec"]["progressDeadlineSeconds"], 600);
    }

    #[test]
    fn only_the_policys_gpu_boot_is_not_a_finding_and_a_declared_one_is() {
        let mut obj = deployment(json!([{"name": "vllm", "image": "vllm/vllm-openai:v0.6.0",
            "resources": {"limits": {"nvidia.com/gpu": "1"}}}]));
        assert!(check(&RULE, &obj).is_empty());
        obj["spec"]["template"]["metadata"]["annotations"] = json!({"lifeguard.dev/cold-start-seconds": "600"});
        let f = check(&RULE, &obj);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].message.contains("boot 600s (lifeguard.dev/cold-start-seconds) + 10%"), "{}", f[0].message);
    }

    #[test]
    fn a_startup_probe_bounds_the_window_whatever_the_assumed_boot() {
        // The kubelet restarts a boot past 300 s: no pod is Ready later than
        // that (startup-budget-too-short speaks of the assumed 600 s boot).
        let mut obj = deployment(json!([{"name": "vllm", "image": "vllm/vllm-openai:v0.6.0",
            "resources": {"limits": {"nvidia.com/gpu": "1"}}}]));
        obj["spec"]["template"]["spec"]["containers"][0]["startupProbe"] =
            json!({"httpGet": {"path": "/health", "port": 8000}, "periodSeconds": 10, "failureThreshold": 30});
        assert!(check(&RULE, &obj).is_empty());
    }

    #[test]
    fn not_findings() {
        // Within the default deadline.
        assert!(check(&RULE, &one_container(startup(60))).is_empty());
        // A declared boot that fits.
        let mut obj = deployment(json!([{"name": "vllm", "image": "vllm/vllm-openai:v0.6.0",
            "resources": {"limits": {"nvidia.com/gpu": "1"}}}]));
        obj["spec"]["template"]["metadata"]["annotations"] = json!({"lifeguard.dev/cold-start-seconds": "430"});
        assert!(check(&RULE, &obj).is_empty());
        // A deadline that covers the window.
        let mut obj = one_container(startup(90));
        obj["spec"]["progressDeadlineSeconds"] = json!(900);
        assert!(check(&RULE, &obj).is_empty());
        // A StatefulSet has no progress deadline.
        let mut sts = one_container(startup(90));
        sts["kind"] = json!("StatefulSet");
        assert!(check(&RULE, &sts).is_empty());
        // Not an integer: the API server refuses the object.
        let mut obj = one_container(startup(90));
        obj["spec"]["progressDeadlineSeconds"] = json!("10m");
        assert!(check(&RULE, &obj).is_empty());
    }

    #[test]
    fn the_fixed_deadline_is_whole_minutes_over_the_window_and_never_below_the_default() {
        assert_eq!(fixed_deadline(900), 960);
        assert_eq!(fixed_deadline(901), 1020);
        assert_eq!(fixed_deadline(61), 600);
    }
}
