//! `grace-period-too-short`: the grace period is shorter than the preStop
//! sleep plus the drain and shutdown budgets the pod declares.
//!
//! Tests: `policies/src/rules/grace_period_too_short/fixtures/`,
//! `policies/src/rules/grace_period_too_short/snapshots/rule_fixtures__grace-period-too-short.snap`,
//! `policies/src/rules/grace_period_too_short/fixtures/fix.yaml`,
//! `policies/src/rules/grace_period_too_short/snapshots/fix_cli__grace-period-too-short.snap`; in CEL:
//! `policies/src/rules/grace_period_too_short/cel.rs`, evaluated on the fixtures
//! offline by `tests/tests/cel_fixtures.rs` and on the API server by
//! `tests/tests/cluster_vap/`.

pub(crate) mod cel;

use serde_json::Value;

use crate::finding::{Finding, Fix, Severity, add_op};
use crate::model::{ANNOTATION_DRAIN, ANNOTATION_SHUTDOWN, ShutdownNeed, SleepSeconds, Workload, join};
use crate::rules::{
    Checks, Ctx, FixAvailability, Fixes, Harm, HarmShown, MapExport, Related, Rule, VapExport, with_fix,
};
use crate::simulate::Verdict;

pub(crate) static RULE: Rule = Rule {
    name: "grace-period-too-short",
    severity: Severity::Error,
    summary: "terminationGracePeriodSeconds is shorter than preStop sleep + drain + shutdown budget",
    doc: DOC,
    fix: FixAvailability::Fix(
        "sets terminationGracePeriodSeconds to preStop sleep + drain + shutdown budget (the largest over containers)",
    ),
    check,
    vap: VapExport::Partly(
        "every finding on a pod whose containers' preStop sleeps, drains and shutdown budgets CEL reads \
         as the linter does (see prestop-sleep-only); where one of them only the linter can read, the \
         grace period is left to it (which container needs the most depends on all of them); the \
         annotations that are no number of seconds are always found",
        Checks(crate::rules::grace_period_too_short::cel::checks),
    ),
    map: MapExport::Partly(
        "terminationGracePeriodSeconds raised to the neediest container's preStop sleep + drain + shutdown budget, by a \
         JSON Patch, on a pod whose every container's preStop, drain and budget CEL reads as the linter does \
         (see prestop-sleep-only in export vap --explain); other pods are left as they came",
        Fixes(crate::rules::grace_period_too_short::cel::fixes),
    ),
    related: Related::Nothing,
    harm: HarmShown::In(&[Harm { scenario: "delete", verdicts: &[Verdict::SigkillInFlight] }]),
};

const DOC: &str = r#"## What it does
Adds up what a container needs between deletion and SIGKILL: the sleep its
preStop hook starts with, its drain time and its shutdown budget, and flags
the pod when `terminationGracePeriodSeconds` (30 when unset) is shorter.

- preStop sleep: the native `sleep` action, or an `exec` that starts with
  `sleep N` (`sleep 5`, `/bin/sleep 5s`, `sh -c "sleep 5 && ..."`).
- Drain and shutdown budget: the pod annotations
  `lifeguard.dev/drain-seconds` and `lifeguard.dev/shutdown-budget-seconds`,
  or else an env var of the container named by convention
  (`*DRAIN_SECONDS`, `*SHUTDOWN_TIMEOUT_SECONDS`, ...; the policy's
  `drainEnvPatterns` and `shutdownEnvPatterns`). A model server (a GPU
  request or a slow-boot image) of a long-running workload that declares no
  drain is assumed to need the policy's `modelServerDrainSeconds`, its
  longest admitted request (0, nothing, by default; 120 in `gpu-serving`).
  The message then calls it the assumed drain and names the policy setting,
  and the help says how to declare the server's own drain instead: the
  number is the policy's guess, not something the manifest says.

The grace period is pod-wide, so the pod is reported once, naming the
container that needs the most. A lifeguard annotation that is not a duration
is an error of its own, at the annotation.

## Why is this bad?
The grace period counts from deletion and includes the preStop hook. When it
ends, the kubelet sends SIGKILL, whatever the process is doing: in-flight
requests are cut, and the drain the application was configured for never
completes.

## Not a finding
- A pod without a preStop sleep and without any declared drain or shutdown
  budget: there is nothing to add up.
- A preStop hook lifeguard cannot time (`sleep $DELAY`, a script file,
  `httpGet`): it adds nothing to the sum.

## Example
```yaml
terminationGracePeriodSeconds: 30
containers:
  - name: app
    env:
      - {name: AISUITE_DRAIN_SECONDS, value: "15"}
      - {name: AISUITE_SHUTDOWN_TIMEOUT_SECONDS, value: "10"}
    lifecycle:
      preStop:
        sleep: {seconds: 20}        # 20 + 15 + 10 = 45 > 30
```

## Use instead
```yaml
terminationGracePeriodSeconds: 45
```

## Fix
Sets `terminationGracePeriodSeconds` to the sum (the largest over the pod's
containers). No fix when the preStop sleep never ends (`sleep infinity`, or a
day or more): no grace period covers it.
"#;

fn check(w: &Workload, ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    for key in [ANNOTATION_DRAIN, ANNOTATION_SHUTDOWN] {
        if let Some(Err(raw)) = w.annotation_seconds(key) {
            out.push(RULE.finding(
                Severity::Error,
                w.template_annotation_pointer(key),
                None,
                format!("annotation {key}: {raw:?} is not a number of seconds or a duration"),
                format!("annotation {key} is not seconds; write \"30\" or \"1m30s\""),
                "write whole seconds (\"30\") or a duration (\"1m30s\")",
            ));
        }
    }
    let needs = ctx.shutdown_needs(w);
    let rank = |n: &ShutdownNeed| n.total().finite().unwrap_or(i64::MAX);
    // The first container that needs the most: the grace period is pod-wide.
    let Some(worst) = needs.iter().filter(|n| n.declared()).fold(None::<&ShutdownNeed>, |best, n| match best {
        Some(b) if rank(b) >= rank(n) => Some(b),
        _ => Some(n),
    }) else {
        return;
    };
    let grace = w.grace_period();
    let field = join(&w.spec_pointer, &["terminationGracePeriodSeconds"]);
    let pointer =
        if w.spec.termination_grace_period_seconds.is_some() { field.clone() } else { w.spec_pointer.clone() };
    let name = worst.container.as_str();
    match worst.total() {
        SleepSeconds::Forever => out.push(RULE.finding(
            Severity::Error,
            pointer,
            Some(name),
            format!(
                "preStop sleeps forever (infinity, or a day or more), so terminationGracePeriodSeconds {grace} always ends in SIGKILL"
            ),
            "preStop sleeps forever, always SIGKILLed; bound the sleep".to_owned(),
            "bound the preStop sleep to the endpoint propagation delay and let the application drain on SIGTERM",
        )),
        SleepSeconds::Finite(required) if required > grace => {
            let finding = RULE.finding(
                Severity::Error,
                pointer,
                Some(name),
                format!(
                    "terminationGracePeriodSeconds {grace} < {} = {required}s",
                    terms(worst)
                ),
                if worst.drain.as_ref().is_some_and(|t| t.assumed()) {
                    format!("grace period {grace}s < {required}s with the assumed drain; raise it")
                } else {
                    format!("grace period {grace}s < {required}s needed to stop; raise it")
                },
                match worst.drain.as_ref().filter(|t| t.assumed()) {
                    // The manifest may know better than the policy's guess.
                    Some(t) => format!(
                        "raise terminationGracePeriodSeconds to at least {required}, or declare the server's own drain (annotation {ANNOTATION_DRAIN}, or a *DRAIN_SECONDS env var): the {}s drain is the policy's assumption, not this manifest's",
                        t.seconds
                    ),
                    None => format!(
                        "raise terminationGracePeriodSeconds to at least {required}, or shorten the preStop sleep or budgets"
                    ),
                },
            );
            let description = if worst.drain.as_ref().is_some_and(|t| t.assumed()) {
                format!(
                    "set terminationGracePeriodSeconds to {required} (preStop sleep + the policy's assumed drain + shutdown budget of container {name:?})"
                )
            } else {
                format!(
                    "set terminationGracePeriodSeconds to {required} (preStop sleep + drain + shutdown budget of container {name:?})"
                )
            };
            let fix = add_op(&field, Value::from(required)).map(|op| Fix::new(description, vec![op]));
            out.push(with_fix(finding.assuming(worst.assumptions()), fix));
        }
        SleepSeconds::Finite(_) => {}
    }
}

/// `preStop sleep 20s + drain 15s (env X) + shutdown budget 10s (annotation Y)`.
fn terms(n: &ShutdownNeed) -> String {
    let mut parts = Vec::new();
    if let Some(p) = n.prestop {
        parts.push(format!("preStop sleep {}", p.seconds));
    }
    if let Some(t) = &n.drain {
        let word = if t.assumed() { "assumed drain" } else { "drain" };
        parts.push(format!("{word} {}s ({})", t.seconds, t.source()));
    }
    if let Some(t) = &n.shutdown {
        parts.push(format!("shutdown budget {}s ({})", t.seconds, t.source()));
    }
    parts.join(" + ")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::RULE;
    use crate::finding::Severity;
    use crate::rules::testing::{apply_fix, check, one_container};

    #[test]
    fn sum_over_grace_is_an_error_with_every_term() {
        let mut obj = one_container(json!({
            "env": [{"name": "AISUITE_DRAIN_SECONDS", "value": "15"}],
            "lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", "sleep 20"]}}}
        }));
        obj["spec"]["template"]["metadata"]["annotations"] = json!({"lifeguard.dev/shutdown-budget-seconds": "10"});
        let f = check(&RULE, &obj);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Error);
        assert_eq!(f[0].pointer, "/spec/template/spec");
        assert_eq!(
            f[0].message,
            "terminationGracePeriodSeconds 30 < preStop sleep 20s + drain 15s (env AISUITE_DRAIN_SECONDS) + shutdown budget 10s (annotation lifeguard.dev/shutdown-budget-seconds) = 45s"
        );
        let fixed = apply_fix(&obj, &f[0]);
        assert_eq!(fixed["spec"]["template"]["spec"]["terminationGracePeriodSeconds"], 45);
        assert!(check(&RULE, &fixed).is_empty());
    }

    #[test]
    fn points_at_a_set_grace_period_and_takes_the_worst_container() {
        let mut obj = crate::rules::testing::deployment(json!([
            {"name": "a", "lifecycle": {"preStop": {"sleep": {"seconds": 10}}}},
            {"name": "b", "env": [{"name": "SHUTDOWN_TIMEOUT_SECONDS", "value": "1m"}],
             "lifecycle": {"preStop": {"exec": {"command": ["sleep", "5s"]}}}}
        ]));
        obj["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = json!(40);
        let f = check(&RULE, &obj);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].container.as_deref(), Some("b"));
        assert_eq!(f[0].pointer, "/spec/template/spec/terminationGracePeriodSeconds");
        assert!(f[0].message.ends_with("= 65s"), "{}", f[0].message);
        let fixed = apply_fix(&obj, &f[0]);
        assert_eq!(fixed["spec"]["template"]["spec"]["terminationGracePeriodSeconds"], 65);
        assert!(check(&RULE, &fixed).is_empty());
    }

    #[test]
    fn sleep_before_a_drain_command_counts() {
        let obj = one_container(json!({
            "lifecycle": {"preStop": {"exec": {"command": ["/bin/sh", "-c", "sleep 35 && /app/drain"]}}}
        }));
        let f = check(&RULE, &obj);
        assert_eq!(f.len(), 1);
        assert!(f[0].message.contains("preStop sleep 35s = 35s"), "{}", f[0].message);
    }

    #[test]
    fn endless_sleep_is_an_error_without_fix() {
        let obj = one_container(json!({
            "lifecycle": {"preStop": {"exec": {"command": ["sleep", "infinity"]}}}
        }));
        let f = check(&RULE, &obj);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Error);
        assert!(f[0].fix.is_none());
    }

    #[test]
    fn invalid_annotation_is_reported_once() {
        let mut obj = crate::rules::testing::deployment(json!([
            {"name": "a"}, {"name": "b"}
        ]));
        obj["spec"]["template"]["metadata"]["annotations"] = json!({"lifeguard.dev/drain-seconds": "soon"});
        let f = check(&RULE, &obj);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Error);
        assert_eq!(f[0].pointer, "/spec/template/metadata/annotations/lifeguard.dev~1drain-seconds");
        assert!(f[0].message.contains("\"soon\""), "{}", f[0].message);
    }

    #[test]
    fn nothing_declared_is_fine() {
        let obj = one_container(json!({
            "lifecycle": {"preStop": {"httpGet": {"path": "/drain", "port": 8080}}},
            "env": [{"name": "DRAIN_SECONDS", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}}]
        }));
        assert!(check(&RULE, &obj).is_empty());
        assert!(check(&RULE, &one_container(json!({}))).is_empty());
    }

    #[test]
    fn a_model_servers_assumed_drain_is_called_the_policys_assumption() {
        let policy = crate::policy::Policy::new(crate::settings::Settings {
            model_server_drain_seconds: 120,
            ..crate::settings::Settings::default()
        })
        .expect("valid");
        let obj =
            one_container(json!({"image": "example/vllm-openai:0.6", "resources": {"limits": {"nvidia.com/gpu": 1}}}));
        let f = crate::rules::testing::check_with(&RULE, &obj, &policy, &crate::model::Batch::default());
        assert_eq!(f.len(), 1);
        assert_eq!(
            f[0].message,
            "terminationGracePeriodSeconds 30 < assumed drain 120s (the policy's modelServerDrainSeconds for a model server that declares no drain) = 120s"
        );
        assert!(f[0].help.contains("the 120s drain is the policy's assumption, not this manifest's"), "{}", f[0].help);
        // A drain the manifest declares replaces the assumption, and is named as declared.
        let mut own = obj.clone();
        own["spec"]["template"]["metadata"]["annotations"] = json!({"lifeguard.dev/drain-seconds": "45"});
        let f = crate::rules::testing::check_with(&RULE, &own, &policy, &crate::model::Batch::default());
        assert_eq!(f.len(), 1);
        assert!(
            f[0].message.contains("< drain 45s (annotation lifeguard.dev/drain-seconds) = 45s"),
            "{}",
            f[0].message
        );
        assert!(!f[0].help.contains("assumption"), "{}", f[0].help);
    }

    #[test]
    fn sum_within_grace_is_fine() {
        let mut obj = one_container(json!({
            "env": [{"name": "APP_DRAIN_SECONDS", "value": "15"}],
            "lifecycle": {"preStop": {"sleep": {"seconds": 15}}}
        }));
        assert!(check(&RULE, &obj).is_empty());
        obj["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = json!(29);
        assert_eq!(check(&RULE, &obj).len(), 1);
    }
}
