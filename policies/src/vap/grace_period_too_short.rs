//! `grace-period-too-short` in CEL: the pod's grace period shorter than
//! what its neediest container declares (preStop sleep + drain + shutdown
//! budget), or a preStop that sleeps forever; and a drain or shutdown
//! annotation that is no number of seconds. The finding names the first
//! container that needs the most, as the linter's does; a pod where a
//! container's hook, drain or budget only the linter can read (see
//! [`super::shutdown`]) is left to it.

use super::Check;
use super::cel::annotation;
use super::shutdown::{FOREVER, GRACE};
use crate::model::{ANNOTATION_DRAIN, ANNOTATION_SHUTDOWN};
use crate::policy::Policy;
use crate::rules::grace_period_too_short::RULE;

pub(super) fn checks(policy: &Policy) -> Vec<Check> {
    let severity = policy.severity_override(RULE.name).unwrap_or(RULE.severity);
    let mut checks: Vec<Check> = [("drainAnnotation", ANNOTATION_DRAIN), ("shutdownAnnotation", ANNOTATION_SHUTDOWN)]
        .into_iter()
        .map(|(variable, key)| Check {
            rule: RULE.name,
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
    // n: [name, sleep, sleep only, native, drain, shutdown]; its total, -1
    // when it declares nothing.
    let total = format!(
        "(n[1] == -1 && n[4] == -1 && n[5] == -1 ? -1 : n[1] == {FOREVER} ? {FOREVER} : \
         (n[1] > 0 ? n[1] : 0) + (n[4] > 0 ? n[4] : 0) + (n[5] > 0 ? n[5] : 0))"
    );
    let readable = "!variables.needs.exists(n, n[1] == -2 || n[4] == -2 || n[5] == -2)";
    let totals = format!("variables.needs.map(n, {total})");
    // The first container with the largest total, when that passes the grace period.
    let worst = format!(
        "({readable} && [{totals}].exists(t, t.max() >= 0 && t.max() > {GRACE} && c.name == variables.needs.filter(n, {total} == t.max())[0][0]))"
    );
    checks.push(Check {
        rule: RULE.name,
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
