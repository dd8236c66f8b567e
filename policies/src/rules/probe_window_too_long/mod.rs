//! `probe-window-too-long`: readiness or liveness thresholds stretched into a boot budget.
//!
//! Tests: `policies/src/rules/probe_window_too_long/fixtures/`,
//! `policies/src/rules/probe_window_too_long/snapshots/rule_fixtures__probe-window-too-long.snap`,
//! `policies/src/rules/probe_window_too_long/fixtures/fix.yaml`,
//! `policies/src/rules/probe_window_too_long/snapshots/fix_cli__probe-window-too-long.snap`; in CEL:
//! `policies/src/rules/probe_window_too_long/cel.rs`, evaluated on the fixtures
//! offline by `tests/tests/cel_fixtures.rs` and on the API server by
//! `tests/tests/cluster_vap/`.

pub(crate) mod cel;

use crate::finding::{Finding, Fix, Severity, add_op};
use crate::model::{ContainerView, ProbeKind, ProbeTiming, Workload, too_long, window_limit, window_threshold};
use crate::rules::{Checks, Ctx, FixAvailability, Fixes, HarmShown, MapExport, Related, Rule, VapExport, with_fix};
use crate::settings::Settings;

pub(crate) static RULE: Rule = Rule {
    name: "probe-window-too-long",
    severity: Severity::Warning,
    summary: "a readiness or liveness probe tolerates failures so long that a broken replica keeps its traffic or a wedged one keeps running",
    doc: DOC,
    fix: FixAvailability::Fix(
        "lowers failureThreshold so failureThreshold x periodSeconds fits the policy's limit (liveness only where a startup probe guards the boot)",
    ),
    check,
    vap: VapExport::Yes(Checks(crate::rules::probe_window_too_long::cel::checks)),
    map: MapExport::Yes(
        "readiness failureThreshold, and liveness failureThreshold beside a startup probe, lowered to fit the limit \
         (3, or what liveness-too-aggressive requires), each by a JSON Patch of the containers it finds",
        Fixes(crate::rules::probe_window_too_long::cel::fixes),
    ),
    related: Related::Nothing,
    harm: HarmShown::NotSimulated(
        "a long window delays what simulate shows (a wedge's restart, leaving the endpoints) without changing its \
         verdict: its figures show the delay",
    ),
};

const DOC: &str = r#"## What it does
Flags a probe whose failure window, `failureThreshold x periodSeconds`, is
longer than the policy allows:
- readiness above `maxReadinessWindowSeconds` (300 s);
- liveness above `maxLivenessWindowSeconds` (600 s), on a container that has
  a startup probe.

A setting of 0 turns that half of the check off.

## Why is this bad?
Large thresholds are usually a boot budget in disguise: "the model takes 40
minutes to load, so tolerate 600 failures". They keep working long after the
boot:
- readiness `failureThreshold: 600` x `periodSeconds: 5` keeps a replica that
  stopped answering in its Services for 50 minutes; every request sent to it
  in that time fails. And it buys the boot nothing: a container is not ready
  until its first successful check, whatever the threshold, which only
  counts failures after the pod was ready.
- liveness `240 x 5` takes 20 minutes to notice a wedged process.

A startup probe is the tool for a slow boot: it holds readiness and
liveness back until the boot has finished, and stops once it has
(probes and GPU design sources: "Startup covers a long boot so liveness does
not fire early"; "once startup succeeds, liveness should detect a stuck
process").

## Not a finding
- Windows within the limits: `failureThreshold: 3` x `periodSeconds: 10`.
- A long startup probe: that is where a boot budget belongs
  (`startup-budget-too-short` checks that it is long enough).
- A long liveness window without a startup probe: the thresholds are then
  the only boot budget, and lowering them would restart slow boots;
  `startup-probe-missing` reports it and its fix moves the budget into a
  startup probe before it lowers liveness.

## Example
```yaml
readinessProbe:
  httpGet: {path: /ready, port: 8000}
  periodSeconds: 5
  failureThreshold: 600       # 50 minutes in the Service while broken
```

## Use instead
```yaml
startupProbe:
  httpGet: {path: /health, port: 8000}
  periodSeconds: 10
  failureThreshold: 300       # the boot budget lives here
readinessProbe:
  httpGet: {path: /ready, port: 8000}
  periodSeconds: 5
  failureThreshold: 3
```

## Fix
Sets `failureThreshold` to the Kubernetes default 3, or to the largest value
that keeps the window within the limit when 3 periods exceed it; for
liveness, at least `minLivenessFailureThreshold` and enough periods for
`minLivenessBudgetSeconds` (`liveness-too-aggressive`). No fix when a single
period already exceeds the limit (shorten `periodSeconds` by hand).

Lowering readiness never restarts anything. Lowering liveness only happens
where a startup probe guards the boot, so no boot is restarted earlier than
before.
"#;

fn check(w: &Workload, ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let s = &ctx.policy.settings;
    w.for_each_container(|c| {
        for kind in [ProbeKind::Readiness, ProbeKind::Liveness] {
            // Without a startup probe, liveness thresholds are the boot budget:
            // startup-probe-missing reports them and moves the budget first.
            if kind == ProbeKind::Liveness && ProbeKind::Startup.of(c.container).is_none() {
                continue;
            }
            if let Some(f) = finding(c, kind, s) {
                out.push(f);
            }
        }
    });
}

fn finding(c: ContainerView<'_>, kind: ProbeKind, s: &Settings) -> Option<Finding> {
    let probe = kind.of(c.container)?;
    let t = ProbeTiming::of(probe);
    if !too_long(kind, &t, s) {
        return None;
    }
    let limit = window_limit(kind, s);
    let (what, in_short, short_fix, key, help) = match kind {
        ProbeKind::Readiness => (
            "keeps a replica that stops answering in its Services",
            "readiness keeps a dead replica in Services",
            "",
            "maxReadinessWindowSeconds",
            "lower readiness failureThreshold (3 is the Kubernetes default); readiness failures do not count before the first success, so a slow boot needs a startupProbe, not this",
        ),
        _ => (
            "leaves a wedged process running",
            "liveness leaves a wedged process",
            "; lower it",
            "maxLivenessWindowSeconds",
            "lower liveness failureThreshold: the startup probe already guards the boot",
        ),
    };
    let message = format!(
        "{} failureThreshold {} x periodSeconds {} {what} for up to {}s (limit {limit}s, {key})",
        kind.word(),
        t.failure,
        t.period,
        t.failure_window(),
    );
    let pointer = if probe.failure_threshold.is_some() {
        c.at(&[kind.field(), "failureThreshold"])
    } else {
        c.at(&[kind.field()])
    };
    let short = format!("{in_short} {}s (max {limit}s){short_fix}", t.failure_window());
    let finding = RULE.finding(Severity::Warning, pointer, Some(c.name()), message, short, help);
    Some(with_fix(finding, fix(c, kind, &t, s)))
}

fn fix(c: ContainerView<'_>, kind: ProbeKind, t: &ProbeTiming, s: &Settings) -> Option<Fix> {
    let n = window_threshold(kind, t, s)?;
    let op = add_op(&c.at(&[kind.field(), "failureThreshold"]), n.into())?;
    Some(Fix::new(
        format!(
            "{} of container {:?}: failureThreshold {} -> {n} ({}s of failures)",
            kind.word(),
            c.name(),
            t.failure,
            n.saturating_mul(t.period)
        ),
        vec![op],
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::RULE;
    use crate::finding::Severity;
    use crate::rules::liveness_too_aggressive;
    use crate::rules::testing::{check, one_container};

    fn apply(obj: &mut Value) -> Value {
        let f = check(&RULE, obj);
        assert_eq!(f.len(), 1, "{f:?}");
        json_patch::patch(obj, &f[0].fix.clone().expect("fix").operations).expect("patch applies");
        assert!(check(&RULE, obj).is_empty(), "the fix leaves a finding");
        assert!(check(&liveness_too_aggressive::RULE, obj).is_empty(), "the fix makes liveness aggressive");
        obj["spec"]["template"]["spec"]["containers"][0].clone()
    }

    #[test]
    fn readiness_used_as_a_boot_budget_is_a_warning_with_the_window() {
        let mut obj = one_container(json!({
            "readinessProbe": {"httpGet": {"path": "/ready", "port": 8000}, "periodSeconds": 5, "failureThreshold": 600}
        }));
        let f = check(&RULE, &obj);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Warning);
        assert_eq!(f[0].pointer, "/spec/template/spec/containers/0/readinessProbe/failureThreshold");
        for part in ["failureThreshold 600 x periodSeconds 5", "up to 3000s", "limit 300s"] {
            assert!(f[0].message.contains(part), "{part}: {}", f[0].message);
        }
        // Readiness never restarts: lowered with or without a startup probe.
        assert_eq!(apply(&mut obj)["readinessProbe"]["failureThreshold"], json!(3));
    }

    #[test]
    fn liveness_is_lowered_only_behind_a_startup_probe() {
        let live = json!({"httpGet": {"path": "/livez", "port": 8080}, "periodSeconds": 5, "failureThreshold": 240});
        // No startup probe: startup-probe-missing's job.
        assert!(check(&RULE, &one_container(json!({"livenessProbe": live}))).is_empty());
        let startup = json!({"httpGet": {"path": "/livez", "port": 8080}, "failureThreshold": 150});
        let mut obj = one_container(json!({"livenessProbe": live, "startupProbe": startup}));
        let f = check(&RULE, &obj);
        assert!(f[0].message.contains("wedged process running for up to 1200s (limit 600s"), "{}", f[0].message);
        assert_eq!(apply(&mut obj)["livenessProbe"]["failureThreshold"], json!(3));
    }

    #[test]
    fn the_fix_stays_within_the_limit_and_the_liveness_minimum() {
        // 3 x 150 s would exceed 300 s: 2 checks.
        let mut obj = one_container(json!({"readinessProbe": {"tcpSocket": {"port": 80}, "periodSeconds": 150}}));
        assert_eq!(apply(&mut obj)["readinessProbe"]["failureThreshold"], json!(2));
        // A 1 s liveness period needs 10 checks for minLivenessBudgetSeconds.
        let mut obj = one_container(json!({
            "startupProbe": {"tcpSocket": {"port": 80}},
            "livenessProbe": {"tcpSocket": {"port": 80}, "periodSeconds": 1, "failureThreshold": 700}
        }));
        assert_eq!(apply(&mut obj)["livenessProbe"]["failureThreshold"], json!(10));
        // One period over the limit: nothing a threshold can do.
        let obj = one_container(json!({"readinessProbe": {"tcpSocket": {"port": 80}, "periodSeconds": 400}}));
        let f = check(&RULE, &obj);
        assert_eq!(f.len(), 1);
        assert!(f[0].fix.is_none());
        assert_eq!(f[0].pointer, "/spec/template/spec/containers/0/readinessProbe");
    }

    #[test]
    fn not_findings() {
        for fields in [
            json!({"readinessProbe": {"tcpSocket": {"port": 80}, "periodSeconds": 10, "failureThreshold": 30}}),
            json!({"startupProbe": {"tcpSocket": {"port": 80}, "periodSeconds": 10, "failureThreshold": 360}}),
            json!({"readinessProbe": {"tcpSocket": {"port": 80}, "periodSeconds": 0, "failureThreshold": 900}}),
        ] {
            assert!(check(&RULE, &one_container(fields.clone())).is_empty(), "{fields}");
        }
    }
}
