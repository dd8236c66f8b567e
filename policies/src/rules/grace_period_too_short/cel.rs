//! `grace-period-too-short` in CEL: the pod's grace period shorter than
//! what its neediest container declares (preStop sleep + drain + shutdown
//! budget), or a preStop that sleeps forever; and a drain or shutdown
//! annotation that is no number of seconds. The finding names the first
//! container that needs the most, as the linter's does; a pod where a
//! container's hook, drain or budget only the linter can read (see
//! [`crate::cel::shutdown`]) is left to it.

use crate::cel::check::CelCheck;
use crate::cel::fragments::annotation;
use crate::cel::mutation::{Change, Mutation, fixes_at};
use crate::cel::shutdown::{FOREVER, GRACE, READABLE, total};
use crate::finding::Severity;
use crate::model::{ANNOTATION_DRAIN, ANNOTATION_SHUTDOWN};
use crate::policy::Policy;
use crate::rules::Rule;

/// The first container with the largest total, over `t`, the list of
/// totals: the container the finding names.
pub(crate) fn worst() -> String {
    format!("variables.needs.filter(n, {} == t.max())[0][0]", total())
}

pub(crate) fn checks(rule: &Rule, policy: &Policy) -> Vec<CelCheck> {
    let severity = policy.severity_override(rule.name).unwrap_or(rule.severity);
    let mut checks: Vec<CelCheck> =
        [("drainAnnotation", ANNOTATION_DRAIN), ("shutdownAnnotation", ANNOTATION_SHUTDOWN)]
            .into_iter()
            .map(|(variable, key)| CelCheck {
                rule: rule.name,
                severity,
                per_container: false,
                bad: format!("variables.{variable} == -1"),
                describe: format!(
                    "'annotation {key}: \"' + {} + '\" is not a number of seconds or a duration'",
                    annotation(key)
                ),
                tail: ": write whole seconds (\"30\") or a duration (\"1m30s\")".to_owned(),
            })
            .collect();
    // n: [name, sleep, sleep only, native, drain, shutdown].
    let totals = format!("variables.needs.map(n, {})", total());
    // The first container with the largest total, when that passes the grace period.
    let worst =
        format!("({READABLE} && [{totals}].exists(t, t.max() >= 0 && t.max() > {GRACE} && c.name == {}))", worst());
    checks.push(CelCheck {
        rule: rule.name,
        severity,
        per_container: true,
        bad: worst,
        describe: format!(
            "'container \"' + c.name + '\": terminationGracePeriodSeconds ' + string({GRACE}) + ' < ' + [{totals}].map(t, \
             t.max() == {FOREVER} ? 'a preStop that sleeps forever' : string(t.max()) + 's of preStop sleep, drain and shutdown budget')[0]"
        ),
        tail: ": raise terminationGracePeriodSeconds, or shorten the preStop sleep or budgets".to_owned(),
    });
    checks
}

/// The fix: the grace period to the largest total, when that passes it,
/// ends (a sleep that never ends has no fix), and its container is not
/// exempt (`exempt`, over `c`); only on a pod CEL reads whole.
pub(crate) fn fixes(rule: &Rule, policy: &Policy, exempt: &str) -> Vec<Mutation> {
    if !fixes_at(policy, rule.name, Severity::Error) {
        return Vec::new();
    }
    let totals = format!("variables.needs.map(n, {})", total());
    let when = format!(
        "{READABLE} && [{totals}].exists(t, t.max() >= 0 && t.max() != {FOREVER} && t.max() > {GRACE} && \
         variables.containers.exists(c, c.name == {} && !({exempt})))",
        worst()
    );
    vec![Mutation {
        rule: rule.name,
        variable: "fixGracePeriod",
        as_submitted: false,
        change: Change::PodSpec { when, field: "terminationGracePeriodSeconds", value: format!("{totals}.max()") },
    }]
}
