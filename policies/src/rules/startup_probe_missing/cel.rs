//! `startup-probe-missing` in CEL: a container without a startup probe
//! whose liveness probe must either wait out a slow boot or restart it (a
//! GPU, a model-server image, a declared cold start that liveness does not
//! cover or that is long) or stands in for a startup probe (an
//! `initialDelaySeconds` or a failure window past the policy's limits);
//! with `requireStartupProbeForGpu`, a long-running GPU container with no
//! startup probe at all. A model-server image counts as the linter counts
//! it where the object alone says so (see [`crate::cel::containers::model_server`]).

use crate::cel::check::CelCheck;
use crate::cel::fragments::present;
use crate::cel::int::{I32_MAX, ceil_div_by, max};
use crate::cel::mutation::{Change, ContainerOp, Mutation, Write, fixed_tiers};
use crate::finding::Severity;
use crate::policy::Policy;
use crate::rules::Rule;

/// A liveness field of container `c`, or its default.
pub(crate) fn field(name: &str, default: i64) -> String {
    format!("({} ? c.livenessProbe.{name} : {default})", present(&format!("c.livenessProbe.{name}")))
}

/// `(initialDelaySeconds, periodSeconds, failureThreshold)` of container `c`'s liveness probe.
pub(crate) fn timing() -> (String, String, String) {
    (field("initialDelaySeconds", 0), field("periodSeconds", 10), field("failureThreshold", 3))
}

/// `earliest_restart` of container `c`'s liveness probe: its
/// failureThreshold-th failure.
pub(crate) fn earliest() -> String {
    let (delay, period, failure) = timing();
    format!("({} + {} * {})", max(&[&delay, "0"]), max(&[&format!("{failure} - 1"), "0"]), max(&[&period, "0"]))
}

/// The boot simulate assumes for container `c`: the declared cold start,
/// else `gpuBootSeconds` for a model server, else 0.
pub(crate) fn boot(policy: &Policy) -> String {
    format!(
        "(variables.coldStart >= 0 && !{} ? variables.coldStart : {} ? {} : 0)",
        crate::cel::containers::SIDECAR,
        crate::cel::containers::MODEL_SERVER,
        policy.settings.gpu_boot_seconds
    )
}

/// Whether liveness restarts that boot: the finding's error tier.
pub(crate) fn restarts_the_boot(policy: &Policy) -> String {
    format!("({} < {})", earliest(), boot(policy))
}

/// Whether container `c` has the finding for its liveness probe (all but
/// `requireStartupProbeForGpu`'s, which has no fix).
pub(crate) fn liveness_finding(policy: &Policy) -> String {
    let s = &policy.settings;
    let (delay, period, failure) = timing();
    let required = crate::rules::startup_budget_too_short::cel::required(policy);
    let slow_delay = s.slow_boot_initial_delay_seconds;
    let cold = format!(
        "(variables.coldStart >= 0 && !{} && (variables.coldStart >= {slow_delay} || {required} > {delay} + {failure} * {period}))",
        crate::cel::containers::SIDECAR
    );
    let long_window = if s.max_liveness_window_seconds > 0 {
        format!("({period} >= 1 && {failure} >= 1 && {failure} * {period} > {})", s.max_liveness_window_seconds)
    } else {
        "false".to_owned()
    };
    let reasons = [
        crate::cel::containers::GPU.to_owned(),
        crate::cel::containers::MODEL_SERVER.to_owned(),
        cold,
        format!("{delay} > {slow_delay}"),
        long_window,
    ];
    format!("!has(c.startupProbe) && has(c.livenessProbe) && ({})", reasons.join(" || "))
}

pub(crate) fn checks(rule: &Rule, policy: &Policy) -> Vec<CelCheck> {
    let s = &policy.settings;
    let over = policy.severity_override(rule.name);
    let gpu = crate::cel::containers::GPU;
    let (delay, period, failure) = timing();
    let liveness = liveness_finding(policy);
    let describe = format!(
        "'container \"' + c.name + '\": no startup probe, so liveness (initialDelaySeconds ' + string({delay}) + ', \
         failureThreshold ' + string({failure}) + ' x periodSeconds ' + string({period}) + ') must either wait out \
         the boot or restart it' + ({gpu} ? ' (it requests a GPU)' : '')"
    );
    let tail = ": add a startupProbe with the liveness handler whose failureThreshold x periodSeconds covers the boot";
    let check = |severity: Severity, bad: String| CelCheck {
        rule: rule.name,
        severity,
        per_container: true,
        bad,
        describe: describe.clone(),
        tail: tail.to_owned(),
    };
    let restarts = restarts_the_boot(policy);
    let mut checks = match over {
        Some(severity) => vec![check(severity, liveness)],
        None => vec![
            check(Severity::Error, format!("{liveness} && {restarts}")),
            check(Severity::Warning, format!("{liveness} && !{restarts}")),
        ],
    };
    if s.require_startup_probe_for_gpu {
        let long_running = crate::cel::shutdown::LONG_RUNNING;
        checks.push(CelCheck {
            rule: rule.name,
            severity: over.unwrap_or(Severity::Error),
            per_container: true,
            bad: format!("!has(c.startupProbe) && !has(c.livenessProbe) && {long_running} && {gpu}"),
            describe: "'container \"' + c.name + '\" requests a GPU but has no startup probe'".to_owned(),
            tail: ", which the policy requires (requireStartupProbeForGpu): add one that covers the boot".to_owned(),
        });
    }
    checks
}

/// The fix, as `lifeguard fix` makes it: a startup probe with the liveness
/// handler, the liveness timeout, `startupPeriodSeconds` and the smallest
/// threshold that covers the boot's target (the declared cold start plus
/// margin; else `gpuBootSeconds` for a model server) and restarts no
/// earlier than liveness did, and a long liveness window lowered as
/// `probe-window-too-long` lowers it; liveness's delay left as written, so
/// a re-apply of the file that sends it back finds nothing to change. Only where every
/// container is read as the linter reads it (no unsure model server, a
/// cold start of 18 digits at most), as the target depends on it.
pub(crate) fn fixes(rule: &Rule, policy: &Policy, _exempt: &str) -> Vec<Mutation> {
    let s = &policy.settings;
    let restarts = restarts_the_boot(policy);
    let Some(severities) = fixed_tiers(policy, rule.name, &restarts) else { return Vec::new() };
    // The boot plus the policy's margin (`cold_start_required`).
    let target = format!("(({} * {} + 99) / 100)", boot(policy), s.cold_start_margin_percent + 100);
    let startup_period = s.startup_period_seconds;
    let threshold = max(&[
        &format!("{} + 1", ceil_div_by(&target, startup_period)),
        &format!("{} + 1", ceil_div_by(&earliest(), startup_period)),
        "1",
    ]);
    let handlers = "[has(c.livenessProbe.httpGet), has(c.livenessProbe.tcpSocket), has(c.livenessProbe.exec), \
                    has(c.livenessProbe.grpc)].filter(h, h).size() == 1";
    let exact = "size(variables.unsureModelServers) == 0 && variables.coldStart != -2";
    let which =
        format!("{} && {exact} && {severities} && {handlers} && {threshold} <= {I32_MAX}", liveness_finding(policy));
    // The probe's timing first, then its handler copied beside it as written.
    let handler = "(has(c.livenessProbe.httpGet) ? 'httpGet' : has(c.livenessProbe.tcpSocket) ? 'tcpSocket' : \
                   has(c.livenessProbe.exec) ? 'exec' : 'grpc')";
    // The copied timeout, bounded by the new probe's period; none where
    // liveness has none, as `lifeguard fix` writes it (a custom resource's
    // template is stored without the default the API server gives a pod's).
    let timeout = field("timeoutSeconds", 1);
    let timing = format!(
        "(has(c.livenessProbe.timeoutSeconds) ? {{'timeoutSeconds': int({timeout} > {startup_period} ? {startup_period} : {timeout}), \
         'periodSeconds': {startup_period}, 'failureThreshold': {threshold}}} : \
         {{'periodSeconds': {startup_period}, 'failureThreshold': {threshold}}})"
    );
    let long_window =
        crate::rules::probe_window_too_long::cel::too_long("livenessProbe", s.max_liveness_window_seconds);
    let (fits, lowered) = crate::rules::probe_window_too_long::cel::lowered("livenessProbe", policy);
    let op = |path: &str, write, when: &str| ContainerOp { path: path.to_owned(), write, when: when.to_owned() };
    vec![Mutation {
        rule: rule.name,
        variable: "fixStartupProbeMissing",
        as_submitted: false,
        change: Change::ContainerPatch {
            which,
            ops: vec![
                op("'/startupProbe'", Write::Add(timing), "true"),
                op(
                    &format!("'/startupProbe/' + {handler}"),
                    Write::Copy(format!("'/livenessProbe/' + {handler}")),
                    "true",
                ),
                op("'/livenessProbe/failureThreshold'", Write::Add(lowered), &format!("{long_window} && {fits}")),
            ],
            // A fixed Pod has its startup probe: the rule finds nothing on its update.
            restored: None,
        },
    }]
}
