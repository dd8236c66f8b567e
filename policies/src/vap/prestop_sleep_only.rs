//! `prestop-sleep-only` in CEL: a preStop hook that only sleeps (the native
//! action, `[busybox] sleep N` or a shell's `-c "sleep N"` with nothing
//! after it but `true`, `:` or `exit`): an error when it sleeps forever or
//! leaves less than the container's shutdown budget (at least
//! `prestopMinRemainingSeconds`) of the grace period, else an info finding
//! unless the app drains on SIGTERM in what is left and the exec cannot be
//! rewritten into the native action. A container whose hook, drain or
//! budget only the linter can read (see [`super::shutdown`]) is left to it.

use super::Check;
use super::shutdown::{FOREVER, GRACE, NEED};
use crate::finding::Severity;
use crate::policy::Policy;
use crate::rules::prestop_sleep_only::RULE;

pub(super) fn checks(policy: &Policy) -> Vec<Check> {
    let s = &policy.settings;
    let native_ok = s.kubernetes_minor() >= (1, 30);
    // n: [name, sleep, sleep only, native, drain, shutdown].
    let need = format!("(n[5] > {min} ? n[5] : {min})", min = s.prestop_min_remaining_seconds);
    let remaining = format!("({GRACE} - n[1])");
    let sleeps = "n[2] == 1 && n[1] >= 0 && n[5] != -2";
    let error = format!("({sleeps} && (n[1] == {FOREVER} || {remaining} < {need}))");
    let rewrite = if native_ok { "(n[3] == 0 && n[1] >= 1)" } else { "false" };
    let info = format!(
        "({sleeps} && n[1] != {FOREVER} && {remaining} >= {need} && ({rewrite} || (n[4] != -2 && !(n[4] >= 0 && {remaining} >= n[4] + {need}))))"
    );
    let bound = |e: &str| format!("[{NEED}].exists(n, {e})");
    let describe = format!(
        "'container \"' + c.name + '\": preStop only sleeps ' + [{NEED}].map(n, n[1] == {FOREVER} ? 'forever' : string(n[1]) + 's, \
         leaving ' + string({remaining}) + 's of terminationGracePeriodSeconds ' + string({GRACE}) + ' (' + string({need}) + 's needed to shut down)')[0]"
    );
    let tail = ": sleep only as long as endpoint removal takes and drain in the app on SIGTERM".to_owned();
    let check = |severity: Severity, bad: String| Check {
        rule: RULE.name,
        severity,
        per_container: true,
        bad,
        describe: describe.clone(),
        tail: tail.clone(),
    };
    let over = policy.severity_override(RULE.name);
    vec![
        check(over.unwrap_or(Severity::Error), bound(&error)),
        check(over.unwrap_or(Severity::Info), bound(&format!("!{error} && {info}"))),
    ]
}
