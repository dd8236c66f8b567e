//! `liveness-too-aggressive`: one slow check restarts the container.
//!
//! Tests: `policies/src/rules/liveness_too_aggressive/fixtures/`,
//! `policies/src/rules/liveness_too_aggressive/snapshots/rule_fixtures__liveness-too-aggressive.snap`,
//! `policies/src/rules/liveness_too_aggressive/fixtures/fix.yaml`,
//! `policies/src/rules/liveness_too_aggressive/snapshots/fix_cli__liveness-too-aggressive.snap`; in CEL:
//! `policies/src/rules/liveness_too_aggressive/cel.rs`, evaluated on the fixtures
//! offline by `tests/tests/cel_fixtures.rs` and on the API server by
//! `tests/tests/cluster_vap/`.

pub(crate) mod cel;

use crate::finding::{Finding, Fix, Severity, add_op};
use crate::model::{ContainerView, ProbeKind, ProbeTiming, Workload, ceil_div};
use crate::rules::{
    Checks, Ctx, FixAvailability, Fixes, Harm, HarmShown, MapExport, Related, Rule, VapExport, with_fix,
};
use crate::settings::Settings;
use crate::simulate::Verdict;

pub(crate) static RULE: Rule = Rule {
    name: "liveness-too-aggressive",
    severity: Severity::Warning,
    summary: "a liveness probe restarts the container after a single failure or a few seconds",
    doc: DOC,
    fix: FixAvailability::Fix(
        "raises liveness failureThreshold (and a 1 s timeoutSeconds paired with failureThreshold 1)",
    ),
    check,
    vap: VapExport::Yes(Checks(crate::rules::liveness_too_aggressive::cel::checks)),
    map: MapExport::Yes(
        "liveness failureThreshold raised to the policy's minimum (and a 1 s timeoutSeconds paired with failureThreshold 1 \
         raised), by a JSON Patch of the containers it finds",
        Fixes(crate::rules::liveness_too_aggressive::cel::fixes),
    ),
    related: Related::Nothing,
    harm: HarmShown::In(&[Harm { scenario: "pause:5s", verdicts: &[Verdict::RestartStorm, Verdict::Restarts] }]),
};

const DOC: &str = r#"## What it does
Flags a liveness probe that restarts the container too eagerly:
- `failureThreshold: 1`: a single failed check restarts it;
- `failureThreshold x periodSeconds` under `minLivenessBudgetSeconds` (10 s);
- `timeoutSeconds: 1` with `failureThreshold: 1`: a single answer slower
  than one second restarts it.

Unset fields take the Kubernetes defaults (period 10 s, failure 3, timeout
1 s), which give a 30 s window: a probe with only defaults is not a finding.

## Why is this bad?
A garbage-collection pause, a CPU-throttled period, a slow disk or a burst of
requests delays one answer. With no tolerance, that one late answer restarts
a healthy container, drops its in-flight work, and moves its load onto the
other replicas, which are under the same pressure: a restart storm.

A single failure can also come at the container's start. The kubelet sees a
container running as soon as the runtime has started it, and a check whose
tick falls then reaches a process that has not bound its port yet: refused
(on a test node, 110 ms before the app itself logged its start). With
`failureThreshold: 1` and no `initialDelaySeconds` or startup probe, that
refusal restarts it, and the restart's back-off delays the next one
(`pkg/kubelet/prober/worker.go`, `doProbe`: only `initialDelaySeconds`
holds back a check of a running container).

## Not a finding
- Only defaults, or `failureThreshold: 3, periodSeconds: 5` (15 s).
- Readiness with `failureThreshold: 1`: failing readiness only removes the
  pod from its Services for a moment, it restarts nothing.

## Example
```yaml
livenessProbe:
  httpGet: {path: /livez, port: 8080}
  periodSeconds: 2
  timeoutSeconds: 1
  failureThreshold: 1
```

## Use instead
```yaml
livenessProbe:
  httpGet: {path: /livez, port: 8080}
  periodSeconds: 2
  timeoutSeconds: 5
  failureThreshold: 5         # 10 s of consecutive failures
```

## Fix
Raises `failureThreshold` to `minLivenessFailureThreshold` (3), or further
to `ceil(minLivenessBudgetSeconds / periodSeconds)` when the period is so
short that the window would stay under the minimum; `periodSeconds` is left
alone. When the probe combined a 1 s timeout with `failureThreshold: 1`, the
timeout was part of the problem and is raised to `minLivenessTimeoutSeconds`
(5); a 1 s timeout with a tolerant threshold is left as it is. Other fields
are kept.
"#;

fn check(w: &Workload, ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let s = &ctx.policy.settings;
    w.for_each_container(|c| {
        let Some(live) = ProbeKind::Liveness.of(c.container) else {
            return;
        };
        let t = ProbeTiming::of(live);
        // Values below 1 are rejected by the API server: probe-invalid reports them.
        if t.period < 1 || t.failure < 1 || t.timeout < 1 {
            return;
        }
        let single_failure = t.failure == 1 && t.failure < s.min_liveness_failure_threshold;
        let short_window = t.failure_window() < s.min_liveness_budget_seconds;
        if !single_failure && !short_window {
            return;
        }
        let slow_answer = single_failure && t.timeout <= 1;
        let mut problems = Vec::new();
        if single_failure {
            problems.push("one failed check restarts the container".to_owned());
        }
        if short_window {
            problems.push(format!(
                "{}s of failures restart it (minimum {}s)",
                t.failure_window(),
                s.min_liveness_budget_seconds
            ));
        }
        if slow_answer {
            problems.push(format!("an answer slower than {}s counts as a failure", t.timeout));
        }
        let message = format!(
            "liveness failureThreshold {} x periodSeconds {} with timeoutSeconds {}: {}",
            t.failure,
            t.period,
            t.timeout,
            problems.join("; ")
        );
        let short = if single_failure {
            "one failed liveness check restarts it; raise failureThreshold".to_owned()
        } else {
            format!(
                "liveness restarts after {}s of failures (min {}s); raise it",
                t.failure_window(),
                s.min_liveness_budget_seconds
            )
        };
        let pointer = if live.failure_threshold.is_some() {
            c.at(&[ProbeKind::Liveness.field(), "failureThreshold"])
        } else {
            c.at(&[ProbeKind::Liveness.field()])
        };
        let finding = RULE.finding(
            Severity::Warning,
            pointer,
            Some(c.name()),
            message,
            short,
            "tolerate a GC pause: failureThreshold of at least 3 and a window of 10 s or more",
        );
        out.push(with_fix(finding, fix(c, &t, slow_answer, s)));
    });
}

/// Raises failureThreshold (and the timeout when it was part of the problem)
/// to the policy's minimums.
fn fix(c: ContainerView<'_>, t: &ProbeTiming, slow_answer: bool, s: &Settings) -> Option<Fix> {
    let failure =
        t.failure.max(s.min_liveness_failure_threshold).max(ceil_div(s.min_liveness_budget_seconds, t.period));
    let failure = i32::try_from(failure).ok()?;
    let field = |name: &str| c.at(&[ProbeKind::Liveness.field(), name]);
    let mut operations = Vec::new();
    let mut changes = Vec::new();
    if i64::from(failure) != t.failure {
        operations.push(add_op(&field("failureThreshold"), failure.into())?);
        changes.push(format!("failureThreshold {} -> {failure}", t.failure));
    }
    if slow_answer && t.timeout < s.min_liveness_timeout_seconds {
        let timeout = i32::try_from(s.min_liveness_timeout_seconds).ok()?;
        operations.push(add_op(&field("timeoutSeconds"), timeout.into())?);
        changes.push(format!("timeoutSeconds {} -> {timeout}", t.timeout));
    }
    if operations.is_empty() {
        return None;
    }
    Some(Fix::new(format!("liveness of container {:?}: {}", c.name(), changes.join(", ")), operations))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::RULE;
    use crate::finding::Severity;
    use crate::rules::testing::{check, one_container};

    fn live(probe: Value) -> Value {
        one_container(json!({"livenessProbe": probe}))
    }

    fn fixed(obj: &mut Value) -> Value {
        let f = check(&RULE, obj);
        assert_eq!(f.len(), 1, "{f:?}");
        json_patch::patch(obj, &f[0].fix.clone().expect("fix").operations).expect("patch applies");
        assert!(check(&RULE, obj).is_empty(), "fix leaves a finding");
        obj["spec"]["template"]["spec"]["containers"][0]["livenessProbe"].clone()
    }

    #[test]
    fn failure_one_with_one_second_timeout() {
        let mut obj = live(json!({
            "httpGet": {"path": "/livez", "port": 8080},
            "periodSeconds": 10, "timeoutSeconds": 1, "failureThreshold": 1
        }));
        let f = check(&RULE, &obj);
        assert_eq!(f[0].severity, Severity::Warning);
        assert_eq!(f[0].pointer, "/spec/template/spec/containers/0/livenessProbe/failureThreshold");
        for part in ["failureThreshold 1", "periodSeconds 10", "timeoutSeconds 1", "one failed check"] {
            assert!(f[0].message.contains(part), "{part}: {}", f[0].message);
        }
        let p = fixed(&mut obj);
        assert_eq!(p["failureThreshold"], json!(3));
        assert_eq!(p["timeoutSeconds"], json!(5));
        assert_eq!(p["periodSeconds"], json!(10));
        assert_eq!(p["httpGet"], json!({"path": "/livez", "port": 8080}));
    }

    #[test]
    fn failure_one_with_default_timeout_also_raises_the_timeout() {
        let mut obj = live(json!({"tcpSocket": {"port": 80}, "failureThreshold": 1}));
        let p = fixed(&mut obj);
        assert_eq!(p["failureThreshold"], json!(3));
        assert_eq!(p["timeoutSeconds"], json!(5));
    }

    #[test]
    fn failure_one_with_generous_timeout_keeps_it() {
        let mut obj = live(json!({
            "tcpSocket": {"port": 80}, "failureThreshold": 1, "timeoutSeconds": 3
        }));
        let p = fixed(&mut obj);
        assert_eq!(p["failureThreshold"], json!(3));
        assert_eq!(p["timeoutSeconds"], json!(3));
    }

    #[test]
    fn short_period_window_raises_failure_past_three() {
        // 3 x 1 s = 3 s < 10 s: needs 10 checks; timeout left alone.
        let mut obj = live(json!({
            "exec": {"command": ["/bin/ok"]}, "periodSeconds": 1, "failureThreshold": 3
        }));
        let f = check(&RULE, &obj);
        assert!(f[0].message.contains("3s of failures"), "{}", f[0].message);
        assert!(!f[0].message.contains("answer slower"), "{}", f[0].message);
        let p = fixed(&mut obj);
        assert_eq!(p["failureThreshold"], json!(10));
        assert_eq!(p["periodSeconds"], json!(1));
        assert!(p.get("timeoutSeconds").is_none());
    }

    #[test]
    fn period_three_needs_four() {
        let mut obj = live(json!({"tcpSocket": {"port": 80}, "periodSeconds": 3}));
        let f = check(&RULE, &obj);
        assert_eq!(f[0].pointer, "/spec/template/spec/containers/0/livenessProbe");
        let p = fixed(&mut obj);
        assert_eq!(p["failureThreshold"], json!(4));
    }

    #[test]
    fn fix_is_idempotent() {
        let mut obj = live(json!({"tcpSocket": {"port": 80}, "periodSeconds": 2, "failureThreshold": 1}));
        let once = fixed(&mut obj);
        assert_eq!(once["failureThreshold"], json!(5));
        assert!(check(&RULE, &obj).is_empty());
    }

    #[test]
    fn not_findings() {
        for probe in [
            json!({"httpGet": {"path": "/livez", "port": 8080}}),
            json!({"tcpSocket": {"port": 80}, "periodSeconds": 5, "failureThreshold": 3}),
            json!({"tcpSocket": {"port": 80}, "periodSeconds": 5, "failureThreshold": 2}),
            json!({"tcpSocket": {"port": 80}, "periodSeconds": 1, "failureThreshold": 10}),
            // Invalid values are probe-invalid's business.
            json!({"tcpSocket": {"port": 80}, "failureThreshold": 0}),
        ] {
            assert!(check(&RULE, &live(probe.clone())).is_empty(), "{probe}");
        }
        // Readiness with failureThreshold 1 restarts nothing.
        let obj = one_container(json!({
            "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8080}, "failureThreshold": 1, "periodSeconds": 1}
        }));
        assert!(check(&RULE, &obj).is_empty());
    }
}
