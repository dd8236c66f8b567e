//! `probe-endpoint-reused` in CEL: which containers have the finding,
//! exactly, and its severity where the object alone settles it.
//!
//! Liveness and readiness share a handler when both are the same
//! `httpGet` (scheme, host, port with named ports resolved, path), the
//! same `tcpSocket` (host, port), the same `exec` command or the same
//! `grpc` port and service; the API server has already given each probe
//! exactly one handler and filled in the defaults. A shared `tcpSocket` is
//! an info finding unless the workload is long-running (then
//! `readiness-port-only`'s). The others are errors where the handler
//! reaches a dependency (declared in `lifeguard.dev/probe-checks`, or a
//! path `liveness-checks-dependency` makes an error), but warnings where
//! liveness is three times as tolerant or all three probes are copies;
//! info where the linter may find the handler local (declared, a model
//! server, a path named for liveness, a known image); else warnings. Two things only the
//! linter reads: whether a shared exec command only checks that a process
//! exists (a warning) or reaches a dependency, and where an `httpGet`
//! `host` resolves; such a finding is reported at the lowest severity it
//! can have, a warning, so in enforce mode it is warned rather than denied.

use crate::cel::check::CelCheck;
use crate::cel::fragments::present;
use crate::finding::Severity;
use crate::model::ANNOTATION_PROBE_CHECKS;
use crate::policy::Policy;
use crate::rules::Rule;
use crate::rules::liveness_checks_dependency::RULE as DEPENDENCY;

const LIVE: &str = "c.livenessProbe";
const READY: &str = "c.readinessProbe";

/// Port `port` of container `c` as the kubelet resolves it, as a CEL
/// string: a number, a declared name's number, or the undeclared name (a
/// valid port name has a letter, so it never equals a number).
pub(crate) fn port(port: &str) -> String {
    let named = format!("c.ports.filter(p, has(p.name) && p.name == {port})");
    format!(
        "(type({port}) == int ? string({port}) : has(c.ports) && size({named}) > 0 ? string({named}[0].containerPort) : string({port}))"
    )
}

/// A field of probe `probe`'s handler, or `default`.
pub(crate) fn or(path: &str, default: &str) -> String {
    format!("({} ? {path} : {default})", present(path))
}

pub(crate) fn same_http() -> String {
    let (l, r) = (format!("{LIVE}.httpGet"), format!("{READY}.httpGet"));
    let path = |h: &str| format!("({} && {h}.path != '' ? {h}.path : '/')", present(&format!("{h}.path")));
    format!(
        "({} && {} && {} == {} && {} == {} && {} == {} && {} == {})",
        present(&l),
        present(&r),
        or(&format!("{l}.scheme"), "'HTTP'"),
        or(&format!("{r}.scheme"), "'HTTP'"),
        or(&format!("{l}.host"), "''"),
        or(&format!("{r}.host"), "''"),
        port(&format!("{l}.port")),
        port(&format!("{r}.port")),
        path(&l),
        path(&r),
    )
}

pub(crate) fn same_tcp() -> String {
    let (l, r) = (format!("{LIVE}.tcpSocket"), format!("{READY}.tcpSocket"));
    format!(
        "({} && {} && {} == {} && {} == {})",
        present(&l),
        present(&r),
        or(&format!("{l}.host"), "''"),
        or(&format!("{r}.host"), "''"),
        port(&format!("{l}.port")),
        port(&format!("{r}.port")),
    )
}

pub(crate) fn same_exec() -> String {
    let (l, r) = (format!("{LIVE}.exec"), format!("{READY}.exec"));
    format!(
        "({} && {} && {} == {})",
        present(&l),
        present(&r),
        or(&format!("{l}.command"), "[]"),
        or(&format!("{r}.command"), "[]"),
    )
}

pub(crate) fn same_grpc() -> String {
    let (l, r) = (format!("{LIVE}.grpc"), format!("{READY}.grpc"));
    format!(
        "({} && {} && {l}.port == {r}.port && {} == {})",
        present(&l),
        present(&r),
        or(&format!("{l}.service"), "''"),
        or(&format!("{r}.service"), "''"),
    )
}

/// `failureThreshold x periodSeconds` of a probe (defaults filled in by the API server).
pub(crate) fn window(probe: &str) -> String {
    format!("({} * {})", or(&format!("{probe}.failureThreshold"), "3"), or(&format!("{probe}.periodSeconds"), "10"))
}

/// The path liveness requests, as `request_path` reads it.
pub(crate) fn request_path() -> String {
    let raw = format!("{LIVE}.httpGet.path.split('?')[0].split('#')[0]");
    format!(
        "({has} ? ({raw}.startsWith('/') ? {raw} : '/' + {raw}) : '/')",
        has = present(&format!("{LIVE}.httpGet.path"))
    )
}

/// Whether `liveness-checks-dependency` makes a shared `httpGet` on this
/// path an error (as the linter's rule reads that rule's switch and
/// severity); `None` when the policy's path patterns are not portable.
pub(crate) fn path_is_error(policy: &Policy) -> Option<String> {
    if !policy.is_enabled(DEPENDENCY.name) {
        return Some("false".to_owned());
    }
    let s = &policy.settings;
    let path = request_path();
    let aggregate = crate::cel::regex::any_match(&path, &s.dependency_paths)?;
    Some(match policy.severity_override(DEPENDENCY.name) {
        None => aggregate,
        Some(Severity::Error) => {
            format!("({aggregate} || {})", crate::cel::regex::any_match(&path, &s.readiness_paths)?)
        }
        Some(_) => "false".to_owned(),
    })
}

/// Whether the pod's `lifeguard.dev/probe-checks` annotation
/// (`variables.probeChecks`) has an entry `PROBE=check` for container
/// `c`'s liveness or readiness, bare or named.
pub(crate) fn declared(check: &str) -> String {
    let wanted: Vec<String> = ["liveness", "readiness"]
        .iter()
        .flat_map(|p| [format!("e == '{p}={check}'"), format!("e == c.name + '/{p}={check}'")])
        .collect();
    format!("variables.probeChecks.exists(e, {})", wanted.join(" || "))
}

/// The variables of the shared handler's reach, after the containers'
/// facts: `probeChecks` (the annotation's entries, spaces taken out), and
/// the names of the containers whose shared handler [`reach`] reads as a
/// dependency (`sharedDependency`) or as local (`sharedLocal`), each
/// computed once for every check that reads it.
pub(crate) fn variables(policy: &Policy) -> Vec<(&'static str, String)> {
    let raw = crate::cel::fragments::annotation(ANNOTATION_PROBE_CHECKS);
    let http = same_http();
    let path_error = path_is_error(policy).map_or("false".to_owned(), |e| format!("({http} && {e})"));
    let (dependency, local) = reach(&http, &path_error, policy);
    vec![
        ("probeChecks", format!("{raw}.split(',').map(r, r.replace(' ', ''))")),
        ("sharedDependency", format!("variables.containers.filter(c, {dependency}).map(c, c.name)")),
        ("sharedLocal", format!("variables.containers.filter(c, {local}).map(c, c.name)")),
    ]
}

/// What the shared handler reaches, as far as CEL reads it (the linter's
/// `shared_reach`): `(dependency, local)`. A dependency only where the
/// linter is sure of one: declared, and nothing declared local (a named
/// entry can win over a bare one there), or an aggregate path nothing
/// declares otherwise; local where the linter may find it local: declared,
/// a model server (or one it may count), a path named for liveness, an
/// image known to answer locally. Between them, unknown: a warning.
pub(crate) fn reach(http: &str, path_error: &str, policy: &Policy) -> (String, String) {
    let (dep, local) = (declared("dependency"), declared("local"));
    // What the path shows, whatever `liveness-checks-dependency`'s switch:
    // an aggregate path or a readiness path is a dependency's evidence.
    let s = &policy.settings;
    let path = request_path();
    let shown = match (
        crate::cel::regex::any_match(&path, &s.dependency_paths),
        crate::cel::regex::any_match(&path, &s.readiness_paths),
    ) {
        (Some(aggregate), Some(readiness)) => format!("({http} && ({aggregate} || {readiness}))"),
        _ => path_error.to_owned(),
    };
    let path_error = &format!("({path_error} || {shown})");
    // The policy's local handlers, where its patterns read the same in CEL
    // (else none: a warning, never above the linter's info).
    let liveness_path = crate::cel::regex::any_match(&path, &s.local_health_paths)
        .map_or("false".to_owned(), |m| format!("({http} && {m})"));
    let local_image =
        crate::cel::containers::image_matches(&s.local_health_images).unwrap_or_else(|| "false".to_owned());
    let known_local = format!(
        "({} || c.name in variables.unsureModelServers || {liveness_path} || {local_image})",
        crate::cel::containers::MODEL_SERVER
    );
    let dependency = format!("(({dep} && !{local}) || (!{dep} && !{local} && {path_error}))");
    let local = format!("((!{dep} && {local}) || (!{dep} && !({path_error}) && {known_local}))");
    (dependency, local)
}

pub(crate) fn checks(rule: &Rule, policy: &Policy) -> Vec<CelCheck> {
    let (http, tcp, exec, grpc) = (same_http(), same_tcp(), same_exec(), same_grpc());
    let long_running = crate::cel::shutdown::LONG_RUNNING;
    // A long-running workload's shared tcpSocket is `readiness-port-only`'s.
    let tcp_finding = format!("({tcp} && !{long_running})");
    let handler = format!("({http} || {exec} || {grpc})");
    let copies = format!("(has(c.startupProbe) && c.startupProbe == {LIVE} && {LIVE} == {READY})");
    let tolerant = format!("({} >= {} * 3)", window(LIVE), window(READY));
    // Certainly an error: the error tier where the handler reaches a
    // dependency, or a dependency path that makes it one; not an exec (it
    // may only check a process: a warning).
    let path_error = path_is_error(policy).map_or("false".to_owned(), |e| format!("({http} && {e})"));
    let (dependency, local) = ("(c.name in variables.sharedDependency)", "(c.name in variables.sharedLocal)");
    let path_error = format!("({path_error} && !{})", declared("local"));
    let error = format!("(!{exec} && (((!{copies} && !{tolerant}) && {dependency}) || {path_error}))");
    let describe_tcp = "'container \"' + c.name + '\": liveness and readiness share tcpSocket port ' + string(c.livenessProbe.tcpSocket.port) + '; the kernel accepts the connection, so neither can fail'".to_owned();
    let describe = format!(
        "'container \"' + c.name + '\": liveness and readiness use the same handler (' + ({http} ? 'httpGet ' + {} : {exec} ? 'exec' : 'grpc port ' + string({LIVE}.grpc.port)) + '), liveness tolerating ' + string({}) + 's of failures vs readiness ' + string({}) + 's'",
        request_path(),
        window(LIVE),
        window(READY)
    );
    let tail = ": point liveness at a cheap local endpoint, keep dependency checks and drain in readiness".to_owned();
    let tcp_tail = ": nothing to separate; for a readiness that tracks serving, use httpGet, grpc or exec".to_owned();
    let shared = |bad: String, severity: Severity| CelCheck {
        rule: rule.name,
        severity,
        per_container: true,
        bad: format!("has({LIVE}) && has({READY}) && {bad}"),
        describe: describe.clone(),
        tail: tail.clone(),
    };
    let tcp_check = |severity: Severity| CelCheck {
        rule: rule.name,
        severity,
        per_container: true,
        bad: format!("has({LIVE}) && has({READY}) && {tcp_finding}"),
        describe: describe_tcp.clone(),
        tail: tcp_tail.clone(),
    };
    match policy.severity_override(rule.name) {
        Some(severity) => vec![shared(handler.clone(), severity), tcp_check(severity)],
        None => vec![
            shared(format!("{handler} && {error}"), Severity::Error),
            shared(format!("{handler} && !{error} && !{local}"), Severity::Warning),
            shared(format!("{handler} && !{error} && {local}"), Severity::Info),
            tcp_check(Severity::Info),
        ],
    }
}
