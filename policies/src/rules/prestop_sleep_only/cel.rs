//! `prestop-sleep-only` in CEL: a preStop hook that only sleeps (the native
//! action, `[busybox] sleep N` or a shell's `-c "sleep N"` with nothing
//! after it but `true`, `:` or `exit`): an error when it sleeps forever or
//! leaves less than the container's shutdown budget (at least
//! `prestopMinRemainingSeconds`) of the grace period, else an info finding
//! unless the app drains on SIGTERM in what is left and the exec cannot be
//! rewritten into the native action. A container whose hook, drain or
//! budget only the linter can read (see [`crate::cel::shutdown`]) is left to it.

use crate::cel::check::CelCheck;
use crate::cel::int::max;
use crate::cel::mutation::{Change, ContainerOp, Mutation, Write, fixes_at};
use crate::cel::shutdown::{FOREVER, GRACE, NEED, READABLE, exec_sleep, total};
use crate::finding::Severity;
use crate::policy::Policy;
use crate::rules::Rule;

/// `n` of `variables.needs` (`[name, sleep, sleep only, native, drain,
/// shutdown]`): what the container needs after its sleep, its shutdown
/// budget but at least `prestopMinRemainingSeconds`.
pub(crate) fn need(policy: &Policy) -> String {
    format!("(n[5] > {min} ? n[5] : {min})", min = policy.settings.prestop_min_remaining_seconds)
}

/// Over `n`: a sleep-only preStop CEL reads.
const SLEEPS: &str = "n[2] == 1 && n[1] >= 0 && n[5] != -2";

/// Over `n`: the error finding of a finite sleep, which has a fix.
pub(crate) fn short_changed(policy: &Policy) -> String {
    format!("({SLEEPS} && n[1] != {FOREVER} && {GRACE} - n[1] < {})", need(policy))
}

pub(crate) fn checks(rule: &Rule, policy: &Policy) -> Vec<CelCheck> {
    let s = &policy.settings;
    let native_ok = s.kubernetes_minor() >= (1, 30);
    let need = need(policy);
    let remaining = format!("({GRACE} - n[1])");
    let sleeps = SLEEPS;
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
    let check = |severity: Severity, bad: String| CelCheck {
        rule: rule.name,
        severity,
        per_container: true,
        bad,
        describe: describe.clone(),
        tail: tail.clone(),
    };
    let over = policy.severity_override(rule.name);
    vec![
        check(over.unwrap_or(Severity::Error), bound(&error)),
        check(over.unwrap_or(Severity::Info), bound(&format!("!{error} && {info}"))),
    ]
}

/// The fixes, on a pod CEL reads whole. First, as submitted: an exec that
/// only sleeps beside the native action (a re-apply of a rewritten file)
/// made the native action alone, of the exec's seconds, where the error's
/// fix is made; the rewrite of
/// an exec sleep of 1 s or more into the native action (kubernetesVersion
/// 1.30 or later), for a container whose error finding has the fix, or
/// whose info finding has it under `fixInfoFindings`; `lifeguard fix`
/// rewrites the former even when another rule's grace period has since
/// made it info. Then, after grace-period-too-short's, the grace period
/// every short-changed container needs (its sleep, drain and budget), at
/// least what grace-period-too-short asks, when one of them is not exempt.
pub(crate) fn fixes(rule: &Rule, policy: &Policy, exempt: &str) -> Vec<Mutation> {
    let s = &policy.settings;
    let (on_error, on_info) =
        (fixes_at(policy, rule.name, Severity::Error), fixes_at(policy, rule.name, Severity::Info));
    let short = short_changed(policy);
    let mut out = Vec::new();
    if s.kubernetes_minor() >= (1, 30) && on_error {
        // A re-apply's exec sleep beside the native action it was rewritten
        // into (`exec_sleep_beside_native`): the API server validates after
        // mutating admission, so the rewrite made again is what it stores.
        let hook = "c.lifecycle.preStop";
        let which = format!(
            "has(c.lifecycle) && has({hook}) && has({hook}.exec) && has({hook}.sleep) && !has({hook}.httpGet) && \
             !has({hook}.tcpSocket) && [{exec}].exists(p, p[1] == 1 && p[0] >= 1 && p[0] != {FOREVER})",
            exec = exec_sleep()
        );
        out.push(Mutation {
            rule: rule.name,
            variable: "fixPrestopExecBesideNative",
            as_submitted: true,
            change: Change::ContainerPatch {
                which,
                ops: vec![ContainerOp {
                    path: "'/lifecycle/preStop'".to_owned(),
                    write: Write::Add(format!("[{}].map(p, {{'sleep': {{'seconds': p[0]}}}})[0]", exec_sleep())),
                    when: "true".to_owned(),
                }],
                // A fixed Pod's re-apply: the stored hook is the native
                // action alone, of the exec's seconds.
                restored: Some(format!(
                    "has(o.lifecycle) && has(o.lifecycle.preStop) && has(o.lifecycle.preStop.sleep) && \
                     !has(o.lifecycle.preStop.exec) && !has(o.lifecycle.preStop.httpGet) && \
                     !has(o.lifecycle.preStop.tcpSocket) && [{}].exists(p, o.lifecycle.preStop.sleep.seconds == p[0])",
                    exec_sleep()
                )),
            },
        });
    }
    if s.kubernetes_minor() >= (1, 30) && (on_error || on_info) {
        let which = format!(
            "{READABLE} && [{NEED}].exists(n, {SLEEPS} && n[3] == 0 && n[1] >= 1 && n[1] != {FOREVER} && ({short} ? {on_error} : {on_info}))"
        );
        out.push(Mutation {
            rule: rule.name,
            variable: "fixPrestopSleepNative",
            as_submitted: true,
            change: Change::ContainerPatch {
                which,
                ops: vec![ContainerOp {
                    path: "'/lifecycle/preStop'".to_owned(),
                    write: Write::Add(format!("[{NEED}].map(n, {{'sleep': {{'seconds': n[1]}}}})[0]")),
                    when: "true".to_owned(),
                }],
                restored: None,
            },
        });
    }
    if on_error {
        let own =
            format!("variables.needs.filter(n, {short}).map(n, n[1] + (n[4] > 0 ? n[4] : 0) + {}).max()", need(policy));
        // `required_grace`: what grace-period-too-short asks, 0 for nothing declared.
        let required = format!("([0] + variables.needs.map(n, {}).filter(t, t >= 0 && t != {FOREVER})).max()", total());
        let when = format!(
            "{READABLE} && variables.needs.exists(n, {short} && variables.containers.exists(c, c.name == n[0] && !({exempt})))"
        );
        out.push(Mutation {
            rule: rule.name,
            variable: "fixPrestopSleepGrace",
            as_submitted: false,
            change: Change::PodSpec { when, field: "terminationGracePeriodSeconds", value: max(&[&own, &required]) },
        });
    }
    out
}
