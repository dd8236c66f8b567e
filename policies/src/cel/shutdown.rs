//! What the linter reads about a container's shutdown (`shutdown_needs`),
//! in CEL over a container `c`, for `prestop-sleep-only` and
//! `grace-period-too-short`: its preStop sleep, its declared drain and
//! shutdown budget. Each is a CEL int: the seconds, `-1` for none, or `-2`
//! where only the linter can read it (a script beyond the fixed forms, an
//! image that may or may not serve a model); a sleep of a day or more is
//! [`FOREVER`].
//!
//! `[x].map(v, ...)[0]` binds `v` to `x`.

use super::exemptions::glob_regex;
use crate::policy::Policy;

/// A preStop sleep of a day or more (`SleepSeconds::Forever`).
pub(crate) const FOREVER: i64 = i64::MAX;

/// `sleep_args` over the CEL list `args`: the seconds, FOREVER, `-1` when
/// the linter reads no sleep, `-2` when the order of the arguments decides
/// (an `infinity` and an unreadable argument).
fn sleep_args(args: &str) -> String {
    let inf = r#"a.matches('^[\'"]*(?i:inf|infinity)[\'"]*$')"#;
    let number = r#"a.matches('^[\'"]*(?:[0-9]+(?:[.][0-9]*)?|[.][0-9]+)[smhd]?[\'"]*$')"#;
    let value = "double(a.find('[0-9.]+')) * (a.contains('m') ? 60.0 : a.contains('h') ? 3600.0 : a.contains('d') ? 86400.0 : 1.0)";
    format!(
        "[{args}].map(l, size(l) == 0 ? -1 : l.all(a, {number}) ? [l.map(a, {value}).sum()].map(t, t >= 86400.0 ? {FOREVER} : \
         int(t) + (double(int(t)) < t ? 1 : 0))[0] : l.all(a, {number} || {inf}) ? {FOREVER} : !l.exists(a, {inf}) ? -1 : -2)[0]"
    )
}

/// `script_sleep` of the CEL string `script` as a list `[seconds, sleep only]`
/// (`-2` for a script with anything but printable ASCII, tabs and newlines).
fn script_sleep(script: &str) -> String {
    let only = r"^(?:[;&|\n]+[ \t]*(?:true|:|exit 0|exit)?[ \t]*)*$";
    format!(
        "[{script}].map(s, !s.matches('^[\\x20-\\x7e\\t\\n]*$') ? [-2, 0] : [s.trim()].map(t, [t.find('^[^;&|\\n]*')].map(f, \
         [t.substring(size(f))].map(r, (r.startsWith('&') && !r.startsWith('&&')) || (r.startsWith('|') && !r.startsWith('||')) ? [-1, 0] : \
         [f.find('^[ \\t]*(?:exec[ \\t]+)?[^ \\t]+')].map(p, p.find('[^ \\t/]*$') != 'sleep' ? [-1, 0] : \
         [{}, r.matches('{only}') ? 1 : 0])[0])[0])[0])[0])[0]",
        sleep_args("f.substring(size(p)).findAll('[^ \\t]+')")
    )
}

/// `prestop_sleep` of container `c` as a CEL list `[seconds, sleep only, native]`.
pub(crate) fn prestop() -> String {
    let hook = "c.lifecycle.preStop";
    let native = format!(
        "[int({hook}.sleep.seconds) < 0 ? -1 : int({hook}.sleep.seconds) >= 86400 ? {FOREVER} : int({hook}.sleep.seconds), 1, 1]"
    );
    let exec = exec_sleep();
    // The API server has given the hook exactly one handler.
    format!(
        "(!has(c.lifecycle) || !has({hook}) ? [-1, 0, 0] : has({hook}.sleep) ? {native} : has({hook}.exec) ? ({exec}) : [-1, 0, 0])"
    )
}

/// The sleep of container `c`'s preStop `exec` as a CEL list `[seconds,
/// sleep only, 0]`, for a hook that has an `exec`: `[busybox] sleep ARGS`,
/// or a shell's `-c SCRIPT`.
pub(crate) fn exec_sleep() -> String {
    let hook = "c.lifecycle.preStop";
    let shells = "['sh', 'bash', 'ash', 'dash', 'zsh', 'ksh']";
    let base = |word: &str| format!("{word}.substring({word}.lastIndexOf('/') + 1)");
    let args = sleep_args("v.join(' ').substring(size(v[0]) + 1 + (b == 1 ? size(v[1]) + 1 : 0)).split(' ')");
    let sleep_args_of_argv = format!("(size(v) == b + 1 ? -1 : {args})");
    format!(
        "!has({hook}.exec.command) ? [-1, 0, 0] : [{hook}.exec.command].map(v, [size(v) > 0 && {b0} == 'busybox' ? 1 : 0].map(b, \
         size(v) <= b ? [-1, 0, 0] : [{bb}].map(p, p == 'sleep' ? (v.all(a, a.matches('^[!-~]+$')) ? \
         [{sleep}, 1, 0] : [-2, 0, 0]) : !(p in {shells}) ? [-1, 0, 0] : size(v) == b + 1 ? [-1, 0, 0] : !v[b + 1].startsWith('-') ? [-1, 0, 0] : \
         v[b + 1] != '--' && v[b + 1].contains('c') && size(v) >= b + 3 && !v[b + 2].startsWith('-') ? {script} + [0] : [-2, 0, 0])[0])[0])[0]",
        b0 = base("v[0]"),
        bb = base("v[b]"),
        sleep = sleep_args_of_argv,
        script = script_sleep("v[b + 2]"),
    )
}

/// A declared time of container `c`: annotation variable `annotation`
/// (its seconds, `-1` unreadable, `-2` too long, `-3` absent) if readable,
/// else the first env var whose name matches `env` with a readable value.
fn declared(annotation: &str, env: &[String]) -> String {
    let names: Option<Vec<String>> = env.iter().map(|g| glob_regex(g)).collect();
    let from_env = match names {
        Some(names) if names.is_empty() => "-1".to_owned(),
        Some(names) => {
            let name =
                names.iter().map(|r| format!("e.name.matches({})", super::fragments::quoted(r))).collect::<Vec<_>>();
            format!(
                "(!has(c.env) ? -1 : [c.env.filter(e, ({}) && has(e.value)).map(e, {}).filter(x, x != -1)].map(l, size(l) == 0 ? -1 : l[0])[0])",
                name.join(" || "),
                super::fragments::seconds("e.value")
            )
        }
        None => "(has(c.env) && size(c.env) > 0 ? -2 : -1)".to_owned(),
    };
    format!("({annotation} >= 0 || {annotation} == -2 ? {annotation} : {from_env})")
}

/// The variables: `drainAnnotation`, `shutdownAnnotation` (as
/// `coldStart`), and `needs`: for each of `variables.containers`, in order,
/// `[name, preStop seconds, sleep only, native, drain, shutdown budget]`.
pub(crate) fn variables(policy: &Policy) -> Vec<(&'static str, String)> {
    use super::fragments::{annotation, has_annotation, seconds};
    use crate::model::{ANNOTATION_DRAIN, ANNOTATION_SHUTDOWN};
    let s = &policy.settings;
    let read = |key: &str| format!("!{} ? -3 : {}", has_annotation(key), seconds(&annotation(key)));
    let drain = declared("variables.drainAnnotation", &s.drain_env_patterns);
    let shutdown = declared("variables.shutdownAnnotation", &s.shutdown_env_patterns);
    // `model_server_drain`: the policy's drain for a long-running model server that declares none.
    let assumed = if s.model_server_drain_seconds > 0 {
        format!(
            "{LONG_RUNNING} && !{} ? ({} ? {} : (c.name in variables.unsureModelServers) ? -2 : -1) : -1",
            super::containers::SIDECAR,
            super::containers::MODEL_SERVER,
            s.model_server_drain_seconds
        )
    } else {
        "-1".to_owned()
    };
    let needs = format!(
        "variables.containers.map(c, [{}].map(p, [[{drain}].map(d, d != -1 ? d : {assumed})[0]].map(d, [dyn(c.name), dyn(p[0]), dyn(p[1]), dyn(p[2]), dyn(d), dyn({shutdown})])[0])[0])",
        prestop()
    );
    vec![
        ("drainAnnotation", read(ANNOTATION_DRAIN)),
        ("shutdownAnnotation", read(ANNOTATION_SHUTDOWN)),
        ("needs", needs),
    ]
}

/// Whether the pod runs until deleted (`Workload::long_running`): the
/// variable each slot computes for its kinds (`cel::variables`).
pub(crate) const LONG_RUNNING: &str = "variables.longRunning";

/// `terminationGracePeriodSeconds` of the pod (the API server's default 30).
pub(crate) const GRACE: &str = "(has(variables.podSpec.terminationGracePeriodSeconds) ? \
     variables.podSpec.terminationGracePeriodSeconds : 30)";

/// Container `c`'s entry of `variables.needs`.
pub(crate) const NEED: &str = "variables.needs.filter(n, n[0] == c.name)[0]";

/// Whether CEL reads every container's preStop sleep, drain and shutdown
/// budget as the linter does (none is `-2`).
pub(crate) const READABLE: &str = "!variables.needs.exists(n, n[1] == -2 || n[4] == -2 || n[5] == -2)";

/// A container's total need, over its `n` of `variables.needs`: preStop
/// sleep + drain + shutdown budget, [`FOREVER`] for a sleep that never
/// ends, `-1` when it declares nothing.
pub(crate) fn total() -> String {
    format!(
        "(n[1] == -1 && n[4] == -1 && n[5] == -1 ? -1 : n[1] == {FOREVER} ? {FOREVER} : \
         (n[1] > 0 ? n[1] : 0) + (n[4] > 0 ? n[4] : 0) + (n[5] > 0 ? n[5] : 0))"
    )
}
