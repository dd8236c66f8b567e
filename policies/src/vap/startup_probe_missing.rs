//! `startup-probe-missing` in CEL: a container without a startup probe
//! whose liveness probe must either wait out a slow boot or restart it (a
//! GPU, a model-server image, a declared cold start that liveness does not
//! cover or that is long) or stands in for a startup probe (an
//! `initialDelaySeconds` or a failure window past the policy's limits);
//! with `requireStartupProbeForGpu`, a long-running GPU container with no
//! startup probe at all. A model-server image counts as the linter counts
//! it where the object alone says so (see [`super::model::model_server`]).

use super::Check;
use super::cel::present;
use crate::finding::Severity;
use crate::policy::Policy;
use crate::rules::startup_probe_missing::RULE;

/// A liveness field of container `c`, or its default.
fn field(name: &str, default: i64) -> String {
    format!("({} ? c.livenessProbe.{name} : {default})", present(&format!("c.livenessProbe.{name}")))
}

pub(super) fn checks(policy: &Policy) -> Vec<Check> {
    let s = &policy.settings;
    let over = policy.severity_override(RULE.name);
    let gpu = super::model::GPU;
    let (delay, period, failure) =
        (field("initialDelaySeconds", 0), field("periodSeconds", 10), field("failureThreshold", 3));
    let required = super::startup_budget_too_short::required(policy);
    let slow_delay = s.slow_boot_initial_delay_seconds;
    let cold = format!(
        "(variables.coldStart >= 0 && !{} && (variables.coldStart >= {slow_delay} || {required} > {delay} + {failure} * {period}))",
        super::model::SIDECAR
    );
    let long_window = if s.max_liveness_window_seconds > 0 {
        format!("({period} >= 1 && {failure} >= 1 && {failure} * {period} > {})", s.max_liveness_window_seconds)
    } else {
        "false".to_owned()
    };
    let reasons =
        [gpu.to_owned(), super::model::MODEL_SERVER.to_owned(), cold, format!("{delay} > {slow_delay}"), long_window];
    let liveness = format!("!has(c.startupProbe) && has(c.livenessProbe) && ({})", reasons.join(" || "));
    let describe = format!(
        "'container \"' + c.name + '\": no startup probe, so liveness (initialDelaySeconds ' + string({delay}) + ', \
         failureThreshold ' + string({failure}) + ' x periodSeconds ' + string({period}) + ') must either wait out \
         the boot or restart it' + ({gpu} ? ' (it requests a GPU)' : '')"
    );
    let tail = ": add a startupProbe with the liveness handler whose failureThreshold x periodSeconds covers the boot";
    let check = |severity: Severity, bad: String| Check {
        rule: RULE.name,
        severity,
        per_container: true,
        bad,
        describe: describe.clone(),
        tail: tail.to_owned(),
    };
    let mut checks = match over {
        Some(severity) => vec![check(severity, liveness)],
        None => vec![
            check(Severity::Error, format!("{liveness} && {gpu}")),
            check(Severity::Warning, format!("{liveness} && !{gpu}")),
        ],
    };
    if s.require_startup_probe_for_gpu {
        let long_running = "object.kind != 'Job' && object.kind != 'CronJob' && \
                            (!has(variables.podSpec.restartPolicy) || variables.podSpec.restartPolicy == 'Always')";
        checks.push(Check {
            rule: RULE.name,
            severity: over.unwrap_or(Severity::Error),
            per_container: true,
            bad: format!("!has(c.startupProbe) && !has(c.livenessProbe) && {long_running} && {gpu}"),
            describe: "'container \"' + c.name + '\" requests a GPU but has no startup probe'".to_owned(),
            tail: ", which the policy requires (requireStartupProbeForGpu): add one that covers the boot".to_owned(),
        });
    }
    checks
}
