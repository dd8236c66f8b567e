//! `startup-budget-too-short` in CEL: a startup probe whose
//! `initialDelaySeconds + failureThreshold x periodSeconds` is shorter than
//! the declared cold start (annotation `lifeguard.dev/cold-start-seconds`)
//! plus the policy's margin, and an annotation that is no number of
//! seconds, exactly; without the annotation, a model server's startup
//! window shorter than `gpuBootSeconds`, for the containers that are
//! certainly model servers (see [`crate::cel::containers::model_server`]).

use crate::cel::check::CelCheck;
use crate::cel::fragments::{annotation, present};
use crate::cel::int::I32_MAX;
use crate::cel::mutation::{Change, Mutation, Set, fixed_tiers};
use crate::finding::Severity;
use crate::model::ANNOTATION_COLD_START;
use crate::policy::Policy;
use crate::rules::Rule;

/// A startup field of container `c`, or its default.
pub(crate) fn field(name: &str, default: i64) -> String {
    format!("({} ? c.startupProbe.{name} : {default})", present(&format!("c.startupProbe.{name}")))
}

/// `initialDelaySeconds + failureThreshold x periodSeconds`.
pub(crate) fn budget() -> String {
    format!("({} + {} * {})", field("initialDelaySeconds", 0), field("failureThreshold", 3), field("periodSeconds", 10))
}

/// The startup probe's fields as the API server accepts them (values
/// below are probe-invalid's), on a container that is not a sidecar.
pub(crate) fn judged() -> String {
    format!(
        "(has(c.startupProbe) && !{} && {} >= 1 && {} >= 1 && {} >= 0)",
        crate::cel::containers::SIDECAR,
        field("periodSeconds", 10),
        field("failureThreshold", 3),
        field("initialDelaySeconds", 0)
    )
}

pub(crate) fn describe(what: &str) -> String {
    format!(
        "'container \"' + c.name + '\": startup probe allows ' + string({}) + 's (initialDelaySeconds ' + string({}) + \
         ' + failureThreshold ' + string({}) + ' x periodSeconds ' + string({}) + '), {what}'",
        budget(),
        field("initialDelaySeconds", 0),
        field("failureThreshold", 3),
        field("periodSeconds", 10)
    )
}

/// `cold_start_required` of the declared cold start: `cold x (100 +
/// margin) / 100`, rounded up (for a cold start of 0 or more).
pub(crate) fn required(policy: &Policy) -> String {
    format!("((variables.coldStart * {} + 99) / 100)", policy.settings.cold_start_margin_percent + 100)
}

/// When the kubelet restarts container `c`'s boot: the startup probe's
/// failureThreshold-th failed check (`earliest_restart`).
pub(crate) fn earliest() -> String {
    format!(
        "({} + ({} - 1) * {})",
        field("initialDelaySeconds", 0),
        field("failureThreshold", 3),
        field("periodSeconds", 10)
    )
}

/// Whether that restart comes before the declared boot ends: the error tier.
pub(crate) fn restarts_the_boot() -> String {
    format!("({} < variables.coldStart)", earliest())
}

/// Whether container `c`'s startup probe falls short of the declared cold start.
pub(crate) fn short_of_cold_start(policy: &Policy) -> String {
    format!(
        "variables.coldStart != -3 && variables.coldStart >= 0 && {} && {} < {}",
        judged(),
        budget(),
        required(policy)
    )
}

pub(crate) fn checks(rule: &Rule, policy: &Policy) -> Vec<CelCheck> {
    let s = &policy.settings;
    let over = policy.severity_override(rule.name);
    let cold = "variables.coldStart";
    let declared = "variables.coldStart != -3";
    let margin = s.cold_start_margin_percent;
    let required = required(policy);
    let mut checks = vec![CelCheck {
        rule: rule.name,
        severity: over.unwrap_or(Severity::Error),
        per_container: false,
        bad: format!("{declared} && {cold} == -1"),
        describe: format!(
            "'annotation {ANNOTATION_COLD_START}: \"' + {} + '\" is not a number of seconds'",
            annotation(ANNOTATION_COLD_START)
        ),
        tail: ": write the measured slowest valid start as seconds (\"430\") or a duration (\"7m10s\")".to_owned(),
    }];
    let short = CelCheck {
        rule: rule.name,
        severity: over.unwrap_or(Severity::Error),
        per_container: true,
        bad: short_of_cold_start(policy),
        describe: describe(&format!(
            "but the declared cold start ' + string({cold}) + 's + {margin}% needs ' + string({required}) + 's"
        )),
        tail: ": raise startup failureThreshold to cover the cold start plus margin".to_owned(),
    };
    // The severity follows the harm, as the linter's: an error when the
    // kubelet restarts the declared boot itself, a warning for the margin.
    match over {
        Some(_) => checks.push(short),
        None => {
            let restarts = restarts_the_boot();
            checks.push(CelCheck { bad: format!("{} && {restarts}", short.bad), ..short.clone() });
            checks.push(CelCheck {
                severity: Severity::Warning,
                bad: format!("{} && !{restarts}", short.bad),
                ..short
            });
        }
    }
    {
        let model_server = crate::cel::containers::MODEL_SERVER;
        checks.push(CelCheck {
            rule: rule.name,
            severity: over.unwrap_or(Severity::Warning),
            per_container: true,
            bad: format!("!({declared}) && {} && {model_server} && {} < {}", judged(), earliest(), s.gpu_boot_seconds),
            describe: describe(&format!(
                "less than the {}s the policy assumes for a model server (gpuBootSeconds)",
                s.gpu_boot_seconds
            )),
            tail: format!(": declare the measured cold start in annotation {ANNOTATION_COLD_START}"),
        });
    }
    checks
}

/// The fix of a declared cold start's finding: the smallest
/// failureThreshold whose kubelet restart (`initialDelaySeconds +
/// (failureThreshold - 1) x periodSeconds`) comes no earlier than the cold
/// start plus margin; nothing else changes.
pub(crate) fn fixes(rule: &Rule, policy: &Policy, _exempt: &str) -> Vec<Mutation> {
    let restarts = restarts_the_boot();
    let Some(severities) = fixed_tiers(policy, rule.name, &restarts) else { return Vec::new() };
    let period = field("periodSeconds", 10);
    // The kubelet restarts no earlier than the cold start plus margin: a
    // period of the grid to spare.
    let threshold =
        format!("(({} - {} + {period} - 1) / {period} + 1)", required(policy), field("initialDelaySeconds", 0));
    vec![Mutation {
        rule: rule.name,
        variable: "fixStartupBudget",
        as_submitted: false,
        change: Change::fields(
            format!("{} && {severities} && {threshold} <= {I32_MAX}", short_of_cold_start(policy)),
            &[Set { part: "startupProbe", field: "failureThreshold", value: threshold, when: None }],
        ),
    }]
}
