//! `probe-invalid`: probe values the API server rejects or that never work.
//!
//! Tests: `policies/src/rules/probe_invalid/fixtures/`,
//! `policies/src/rules/probe_invalid/snapshots/rule_fixtures__probe-invalid.snap`,
//! `policies/src/rules/probe_invalid/fixtures/fix.yaml`,
//! `policies/src/rules/probe_invalid/snapshots/fix_cli__probe-invalid.snap`; in CEL:
//! `policies/src/rules/probe_invalid/cel.rs`, evaluated on the fixtures
//! offline by `tests/tests/cel_fixtures.rs` and on the API server by
//! `tests/tests/cluster_vap/`.

pub(crate) mod cel;

use k8s_openapi::api::core::v1::Probe;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::finding::{Finding, Severity};
use crate::model::{ContainerView, ProbeKind, Workload, handler_count, is_valid_port_name};
use crate::rules::{Checks, Ctx, FixAvailability, HarmShown, MapExport, Related, Rule, VapExport};

mod out;
mod pgrep;

use out::Out;

pub(crate) static RULE: Rule = Rule {
    name: "probe-invalid",
    severity: Severity::Error,
    summary: "a probe value the API server rejects or that can never work",
    doc: DOC,
    fix: FixAvailability::Fix(
        "adds -f to an exec probe whose command is `pgrep PATTERN` that cannot match a process name (not with -x, an anchored PATTERN or pgrep inside a script); the other findings have no fix: the intended value is unknown (for a probe or hooks on an init container that runs to completion, whether they or the missing `restartPolicy: Always` are the mistake)",
    ),
    check,
    vap: VapExport::Partly(
        "only an exec command whose program is empty: what else it checks the API server rejects before \
         any admission policy runs (negative values, no or several handlers, ports out of range, a probe \
         or hooks on an init container without restartPolicy: Always) or has already defaulted (a 0 it replaces), \
         and `pgrep` patterns need the command line read",
        Checks(crate::rules::probe_invalid::cel::checks),
    ),
    map: MapExport::No(
        "its one fix (adding -f to a pgrep exec probe) needs the command line read, which CEL does not do exactly",
    ),
    related: Related::Nothing,
    harm: HarmShown::NotSimulated(
        "the API server refuses the object, or the kubelet cannot run the probe as written: there is no pod to simulate, or no probe",
    ),
};

const DOC: &str = r#"## What it does
Checks the startup, liveness and readiness probes of each container against
the rules the API server enforces, and for values that cannot work:
- an init container that runs to completion (no `restartPolicy: Always`)
  has no probe at all: the API server refuses each one ("may not be set
  for init containers without restartPolicy=Always"), whatever it holds,
  and the kubelet never probes such a container. The finding is on the
  probe's field, one per probe, and nothing inside it is checked further;
  no other rule judges it as if it ran. A sidecar (`restartPolicy: Always`)
  is probed, and checked like a regular container. Its `lifecycle` (postStart
  and preStop hooks) is refused the same way, with the same words, and is
  one finding too;
- exactly one handler (`httpGet`, `tcpSocket`, `exec` or `grpc`);
- `successThreshold` is 1 on liveness and startup probes;
- `periodSeconds`, `timeoutSeconds`, `successThreshold` and
  `failureThreshold` are not negative, `initialDelaySeconds` is not negative;
- a probe's own `terminationGracePeriodSeconds` is at least 1, and is not set
  on a readiness probe;
- `httpGet` and `tcpSocket` ports are in 1-65535 or valid port names (a
  quoted number such as `"8080"` is not a valid name); `httpGet.scheme` is
  `HTTP` or `HTTPS`; a `grpc` port is in 1-65535;
- an `exec` has a non-empty command;
- an `exec` that runs `pgrep PATTERN` without `-f` has a pattern that can
  match a process name. Which `pgrep` the image has decides: procps-ng's
  (Debian, Ubuntu, RHEL, UBI, Fedora, Amazon Linux) matches the name in
  `/proc/PID/comm`, which the kernel cuts to 15 characters, so a pattern
  whose shortest match is longer never matches there (procps-ng itself
  warns about it); busybox's (`alpine` images) matches the command line's
  first word, then the name, so `pgrep /usr/local/bin/executor` does match
  there. lifeguard cannot see inside the image, so this is a warning that
  names both: where that `pgrep` decides the probe's result (the whole
  command, or one step of an `&&` chain) the probe always fails under
  procps-ng; where it sits elsewhere in a script (after `!`, in an `if`,
  before `||`) the check it makes is dead there.

Not a finding: `pgrep -f` (any cluster with `f`, such as `-fx`), `pgrep -v`,
`busybox pgrep`, a pattern that can match 15 characters or fewer
(`nginx`, `pgrep -x kube-controller`, `nginx|my-long-app-name`,
`kube-controller.*`), a pattern lifeguard cannot bound (groups, variables),
`pidof` (it compares the command's first word and the executable too) and
`ps | grep` (what `ps` prints depends on its options and implementation).

A zero `periodSeconds`, `timeoutSeconds`, `successThreshold` or
`failureThreshold` is a warning: the API server silently replaces it with
the default (10, 1, 1, 3), which is rarely what a written 0 meant.

## Why is this bad?
The API server rejects the whole object, so a `kubectl apply`, a Helm
upgrade or a GitOps sync fails, often far from where the value was written
(a chart default, an overlay). An exec whose program is empty passes
validation but fails every attempt, restarting the container forever.

## Example
```yaml
livenessProbe:
  httpGet: {path: /livez, port: "8080", scheme: http}
  successThreshold: 2
```

## Use instead
```yaml
livenessProbe:
  httpGet: {path: /livez, port: 8080, scheme: HTTP}
  successThreshold: 1
```

## Fix
For `pgrep` without `-f`: adds `-f` right after `pgrep` in the exec
command (`["pgrep", "-f", "-o", "/usr/local/bin/executor"]`). The whole
command line holds the pattern wherever busybox found it in the first word
or procps-ng in the name, so the probe matches under either `pgrep`, and a
second run finds nothing to fix. The fix is offered only where it is exact:
- the exec command is `pgrep` itself. In a `sh -c` script, or behind a
  wrapper such as `timeout`, the shell's or the wrapper's own command line
  holds the pattern, so `pgrep -f` would match that process and the probe
  would always pass; the help shows `-f` with the pattern's first character
  in brackets (`pgrep -f '[e]xecutor'`), which that command line does not
  match;
- the match is not anchored: with `-f`, `-x` and a pattern's `^` and `$`
  would apply to the whole command line, arguments included; the help says
  to match the first 15 characters of the name instead.

No automatic fix for the other findings: the intended value is unknown. The
message names the field and the rule it breaks.

A probe or a `lifecycle` on an init container that runs to completion has
no automatic fix either, although removing it is what the API server asks, and the kubelet
would never have run it: whether the probe or the missing `restartPolicy:
Always` is the mistake is the author's to say. For a sidecar moved from
`containers` to `initContainers` without its restart policy, removing the
probe would turn a refused object into one the API server accepts, whose
long-running container then holds the pod in `Init` for good; the
webhook's `/mutate` would make that change without a word. The help names
both ways out.
"#;

const KINDS: [ProbeKind; 3] = [ProbeKind::Startup, ProbeKind::Liveness, ProbeKind::Readiness];

fn check(w: &Workload, _ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    w.for_each_container(|c| {
        for kind in KINDS {
            if let Some(p) = kind.of(c.container) {
                probe(&mut Out { rule: &RULE, out, c, kind }, p);
            }
        }
    });
    for (pointer, container) in w.run_to_completion_init_containers() {
        let c = ContainerView { container, pointer: &pointer, sidecar: false };
        for kind in KINDS.into_iter().filter(|k| k.of(container).is_some()) {
            out.push(init_probe(c, kind));
        }
        if container.lifecycle.is_some() {
            out.push(init_lifecycle(c));
        }
    }
}

/// Hooks on an init container that runs to completion: the API server
/// refuses `lifecycle` as it refuses the probes (the same case of
/// `validateInitContainers`), and the kubelet would run none of them.
fn init_lifecycle(c: ContainerView<'_>) -> Finding {
    RULE.finding(
        Severity::Error,
        c.at(&["lifecycle"]),
        Some(c.name()),
        format!(
            "lifecycle is set on an init container without restartPolicy: Always, which runs to completion and whose hooks never run; the API server refuses it: {INIT_PROBE_REFUSED:?}"
        ),
        "lifecycle on a run-to-completion init container is refused".to_owned(),
        "remove the hooks if the container is a step that runs to completion; add `restartPolicy: Always` if it is a sidecar meant to run beside the app",
    )
}

/// The API server's reason, word for word (`validateInitContainers` in
/// k8s.io/kubernetes pkg/apis/core/validation), so a search for the
/// message `kubectl apply` printed finds this rule.
const INIT_PROBE_REFUSED: &str = "may not be set for init containers without restartPolicy=Always";

/// A probe on an init container that runs to completion: the API server
/// refuses the field whatever it holds (it validates nothing inside), and
/// the kubelet would never run it, so the field is the one finding.
fn init_probe(c: ContainerView<'_>, kind: ProbeKind) -> Finding {
    let field = kind.field();
    RULE.finding(
        Severity::Error,
        c.at(&[field]),
        Some(c.name()),
        format!(
            "{field} is set on an init container without restartPolicy: Always, which runs to completion and is never probed; the API server refuses it: {INIT_PROBE_REFUSED:?}"
        ),
        format!("{field} on a run-to-completion init container is refused"),
        "remove the probe if the container is a step that runs to completion; add `restartPolicy: Always` if it is a sidecar meant to run beside the app",
    )
}

fn probe(o: &mut Out<'_, '_>, p: &Probe) {
    handlers(o, p);
    let one_success = o.kind != ProbeKind::Readiness;
    let fields = [
        ("periodSeconds", p.period_seconds, 10),
        ("timeoutSeconds", p.timeout_seconds, 1),
        ("successThreshold", p.success_threshold, 1),
        ("failureThreshold", p.failure_threshold, 3),
    ];
    for (field, value, default) in fields {
        match value {
            Some(v) if v < 0 => o.error(
                &[field],
                format!("{field} is {v}; the API server rejects negative values"),
                format!("{field} {v} is negative; use 1 or more"),
                "use a value of 1 or more",
            ),
            Some(0) => o.push(
                Severity::Warning,
                &[field],
                format!("{field} is 0, which the API server replaces with the default {default}"),
                format!("{field} 0 becomes {default}; write what you mean"),
                "write the value you mean (1 or more), or drop the field to take the default",
            ),
            Some(v) if field == "successThreshold" && one_success && v != 1 => o.error(
                &[field],
                format!("{field} is {v}; the API server requires 1 on {} probes", o.kind.word()),
                format!("{field} is {v}; it must be 1"),
                "set successThreshold to 1 (only readiness may require several successes)",
            ),
            _ => {}
        }
    }
    if let Some(v) = p.initial_delay_seconds.filter(|v| *v < 0) {
        o.error(
            &["initialDelaySeconds"],
            format!("initialDelaySeconds is {v}; the API server rejects negative values"),
            format!("initialDelaySeconds {v} is negative; use 0 or more"),
            "use 0 or more",
        );
    }
    match p.termination_grace_period_seconds {
        Some(v) if o.kind == ProbeKind::Readiness => o.error(
            &["terminationGracePeriodSeconds"],
            format!("sets terminationGracePeriodSeconds ({v}); the API server forbids it on readiness probes"),
            "may not set terminationGracePeriodSeconds; remove it".to_owned(),
            "remove it: a readiness failure never kills the container",
        ),
        Some(v) if v < 1 => o.error(
            &["terminationGracePeriodSeconds"],
            format!("terminationGracePeriodSeconds is {v}; the API server requires at least 1"),
            format!("terminationGracePeriodSeconds {v} is below 1; raise it"),
            "set it to 1 or more, or remove it to use the pod's grace period",
        ),
        _ => {}
    }
}

fn handlers(o: &mut Out<'_, '_>, p: &Probe) {
    match handler_count(p) {
        0 => o.error(
            &[],
            "has no handler; the API server rejects it".to_owned(),
            "has no handler; add httpGet, tcpSocket, exec or grpc".to_owned(),
            "give it one of httpGet, tcpSocket, exec or grpc",
        ),
        1 => {}
        n => {
            let set: Vec<&str> = [
                ("httpGet", p.http_get.is_some()),
                ("tcpSocket", p.tcp_socket.is_some()),
                ("exec", p.exec.is_some()),
                ("grpc", p.grpc.is_some()),
            ]
            .into_iter()
            .filter_map(|(n, set)| set.then_some(n))
            .collect();
            o.error(
                &[],
                format!("sets {n} handlers ({}); the API server accepts exactly one", set.join(", ")),
                format!("sets {n} handlers; the API server accepts exactly one"),
                "keep the one handler that checks what this probe is for",
            );
        }
    }
    if let Some(h) = &p.http_get {
        port(o, "httpGet", &h.port);
        if let Some(s) = h.scheme.as_deref().filter(|s| !matches!(*s, "HTTP" | "HTTPS")) {
            o.error(
                &["httpGet", "scheme"],
                format!("httpGet scheme {s:?} is not HTTP or HTTPS (upper case); the API server rejects it"),
                format!("httpGet scheme {s:?} must be HTTP or HTTPS"),
                "write HTTP or HTTPS",
            );
        }
    }
    if let Some(t) = &p.tcp_socket {
        port(o, "tcpSocket", &t.port);
    }
    if let Some(g) = p.grpc.as_ref().filter(|g| !(1..=65535).contains(&g.port)) {
        o.error(
            &["grpc", "port"],
            format!("grpc port {} is outside 1-65535; the API server rejects it", g.port),
            format!("grpc port {} is outside 1-65535", g.port),
            "use the container's gRPC port number",
        );
    }
    if let Some(e) = &p.exec {
        match e.command.as_deref() {
            None | Some([]) => o.error(
                &["exec"],
                "exec has no command; the API server rejects it".to_owned(),
                "exec has no command; the API server rejects it".to_owned(),
                "give the command to run, or use another handler",
            ),
            Some([program, ..]) if program.trim().is_empty() => o.error(
                &["exec", "command", "0"],
                "exec command starts with an empty program, so every attempt fails".to_owned(),
                "exec starts with an empty program, so it always fails".to_owned(),
                "put the program to run first in the command",
            ),
            Some(argv) => pgrep::pgrep_too_long(o, argv),
        }
    }
}

fn port(o: &mut Out<'_, '_>, handler: &str, port: &IntOrString) {
    let at = [handler, "port"];
    match port {
        IntOrString::Int(n) if !(1..=65535).contains(n) => o.error(
            &at,
            format!("{handler} port {n} is outside 1-65535; the API server rejects it"),
            format!("{handler} port {n} is outside 1-65535"),
            "use the port the container listens on, or a declared port name",
        ),
        IntOrString::String(s) if s.trim().parse::<u16>().is_ok() => o.error(
            &at,
            format!("{handler} port {s:?} is a quoted number; the API server reads it as a port name and rejects it"),
            format!("{handler} port {s:?} is quoted; write a number"),
            "write the number without quotes",
        ),
        IntOrString::String(s) if !is_valid_port_name(s) => o.error(
            &at,
            format!("{handler} port {s:?} is not a valid port name; the API server rejects it"),
            format!("{handler} port {s:?} is not a valid port name"),
            "use a port number or a declared name (1-15 lower-case letters, digits, hyphens)",
        ),
        _ => {}
    }
}

#[cfg(test)]
mod tests;
