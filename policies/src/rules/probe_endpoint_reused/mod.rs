//! `probe-endpoint-reused`: liveness and readiness check the same handler.
//!
//! Tests: `policies/src/rules/probe_endpoint_reused/fixtures/`,
//! `policies/src/rules/probe_endpoint_reused/snapshots/rule_fixtures__probe-endpoint-reused.snap`; in CEL:
//! `policies/src/rules/probe_endpoint_reused/cel.rs`, evaluated on the fixtures
//! offline by `tests/tests/cel_fixtures.rs` and on the API server by
//! `tests/tests/cluster_vap/`.

pub(crate) mod cel;

use crate::finding::{Finding, Severity};
use crate::model::ANNOTATION_PROBE_CHECKS;
use crate::model::command::simple_commands;
use crate::model::{
    Dependency, Handler, ProbeKind, ProbeTiming, ProcessCheck, Workload, dependencies, process_existence,
    shared_liveness_readiness,
};
use crate::rules::liveness_checks_dependency::RULE as DEPENDENCY;
use crate::rules::{Checks, Ctx, FixAvailability, Harm, HarmShown, MapExport, Related, Rule, VapExport};
use crate::simulate::Verdict;
use crate::simulate::{Reach, shared_reach};

pub(crate) static RULE: Rule = Rule {
    name: "probe-endpoint-reused",
    severity: Severity::Error,
    summary: "liveness and readiness use the same handler, so they fail together",
    doc: DOC,
    fix: FixAvailability::NoFix(
        "a separate liveness endpoint must exist in the application; lifeguard cannot invent one",
    ),
    check,
    vap: VapExport::Partly(
        "every finding, at the severity the object alone settles: whether a shared exec command only \
         checks that a process exists (a warning) and what it or an httpGet `host` reaches (which can make \
         it an error) need the command line and the env read, so such a finding is reported as a warning, \
         never above the linter's severity, and in enforce mode may be warned where the linter denies; the \
         handler's reach is read from the lifeguard.dev/probe-checks annotation (an error only where it \
         declares a dependency and nothing declares local), the path and the image, and where the linter \
         may find it local (a model server, the policy's localHealthPaths and localHealthImages) it is info",
        Checks(crate::rules::probe_endpoint_reused::cel::checks),
    ),
    map: MapExport::NoFix,
    related: Related::SharedReadiness,
    harm: HarmShown::In(&[Harm { scenario: "stall:2m", verdicts: &[Verdict::RestartStorm, Verdict::Restarts] }]),
};

const DOC: &str = r#"## What it does
Flags a container whose liveness and readiness probes use the same handler:
the same `httpGet` scheme, host, port and path; the same `exec` command; or
the same `grpc` port and service. Ports given by name are resolved against
the container's `ports`, so `port: http` and `port: 8080` are the same port
when `http` is 8080.

The severity follows the harm, and the harm follows what the shared
handler reaches, which the finding names:
- error: the shared handler is known or likely to fail on what readiness
  is for (a slow dependency), and liveness is no more tolerant than
  readiness, so that failure restarts every replica at once (`lifeguard
  simulate`'s `restart-storm` in a stall). Known: declared in the pod
  template annotation `lifeguard.dev/probe-checks` (`readiness=dependency`,
  or `liveness=dependency`: one handler, one answer), or shown by the
  handler as `liveness-checks-dependency` reads it (a path that aggregates
  dependencies such as Spring Boot's `/actuator/health`, a readiness path, a
  client aimed at another host);
- warning, where the handler's reach is unknown (nothing above, nothing
  below): the message says what would make it an error and how to declare
  it (`readiness=dependency`, or `readiness=local` for a handler that
  checks nothing else);
- info, where the handler is local: declared (`readiness=local`), a model
  server's health endpoint (a GPU request or a `slowBootImages` image:
  vLLM's `/health` awaits `engine_client.check_health()`, its own engine;
  TGI's and Triton's report theirs), a path of the policy's
  `localHealthPaths` (named for liveness: `/livez`, Spring Boot's
  `/actuator/health/liveness`, whose group holds only the `livenessState`
  indicator by default), or an image of its `localHealthImages`
  (node_exporter's `/` is its landing page; the OpenTelemetry Collector's
  `health_check` extension reports the collector's own status); add your
  own there, estate-wide. Nothing restarts on a stall, but readiness can
  never fail on its own (while draining, or on a dependency) without
  liveness failing too. `simulate` stalls only handlers that reach the
  dependency, on the same reading;
- warning: liveness tolerates at least three times readiness's
  `failureThreshold x periodSeconds`, so a short blip only unreadies the pod;
  or the startup, liveness and readiness probes are copies of one another,
  thresholds included; or the shared command only checks that a process
  exists (`cat /proc/1/status`, `pgrep nginx`): it cannot fail while the
  process lives, so readiness never takes the pod out of the Service (not
  while it boots, not while it drains) and liveness never sees it wedged;
- info: a shared `tcpSocket` on a workload that runs to completion (a
  long-running workload's is `readiness-port-only`'s finding alone, whether
  or not that rule is on).

When liveness-checks-dependency would also report the shared liveness probe
(a path that aggregates dependencies, a readiness path, a database client
aimed at another host), this rule reports it alone: the message names what
the handler reaches and the severity is at least that rule's.

## Why is this bad?
Readiness and liveness have different jobs. Readiness decides Service
membership and may fail while a dependency is slow or the pod is draining;
liveness restarts the container and must only fail when the process is
wedged. One handler for both means a readiness condition (a slow database,
a full queue, draining on shutdown) also restarts the container, and every
replica fails together: a restart storm that adds load to what was already
slow ("Liveness and readiness share one heavy endpoint" is the probes
guide's second restart-storm anti-pattern; its drain sequence has `/readyz`
fail while `/livez` stays up).

## Not a finding
- Startup and liveness sharing a handler: that is the documented pattern (the
  startup probe guards boot with the liveness check and a longer budget).
- The same path on two different ports (`:8080/healthz` and `:9090/healthz`).
- One `grpc` port with two health `service` names.
- A shared `tcpSocket` on a serving workload: the kernel accepts the
  connection, so neither probe can fail on a dependency or on drain. What is
  wrong is that readiness proves nothing, which `readiness-port-only` reports.

## Example
```yaml
livenessProbe:
  httpGet: {path: /healthz, port: http}
readinessProbe:
  httpGet: {path: /healthz, port: 8080}   # same port: `http` is 8080
```

## Use instead
```yaml
livenessProbe:
  httpGet: {path: /livez, port: http}     # local: is the process wedged?
readinessProbe:
  httpGet: {path: /readyz, port: http}    # may check dependencies, fails on drain
```
For `grpc`, give each probe its own health service (the server reports
`liveness` SERVING unless wedged, `readiness` NOT_SERVING while draining):
```yaml
livenessProbe:
  grpc: {port: 9000, service: liveness}
readinessProbe:
  grpc: {port: 9000, service: readiness}
```
For a third-party image that has only one health endpoint, keep it for both
and make liveness at least three times as tolerant as readiness:
```yaml
livenessProbe:
  httpGet: {path: /health, port: 8080}
  periodSeconds: 10
  failureThreshold: 9                     # 90 s
readinessProbe:
  httpGet: {path: /health, port: 8080}
  periodSeconds: 10
  failureThreshold: 3                     # 30 s
```

## Fix
No automatic fix: a separate liveness endpoint must exist in the application,
and lifeguard cannot invent one (a made-up endpoint would restart-loop the pod).
"#;

/// `readiness-port-only` reports every bare `tcpSocket` readiness probe of a
/// long-running workload; the reuse adds nothing to that finding. Left to
/// it whether or not it runs, so no rule's findings depend on another.
fn port_only_reports(w: &Workload) -> bool {
    w.long_running
}

fn check(w: &Workload, ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    w.for_each_container(|c| {
        let container = c.container;
        let Some(h) = shared_liveness_readiness(container) else {
            return;
        };
        let (Some(live), Some(ready)) = (ProbeKind::Liveness.of(container), ProbeKind::Readiness.of(container))
        else {
            return;
        };
        let pointer = c.at(&[ProbeKind::Liveness.field()]);
        if let Handler::Tcp { .. } = h {
            if !port_only_reports(w) {
                out.push(RULE.finding(
                    Severity::Info,
                    pointer,
                    Some(c.name()),
                    format!(
                        "liveness and readiness share {}; the kernel accepts the connection, so neither can fail on a dependency or on drain",
                        h.describe()
                    ),
                    "liveness and readiness share a port check; neither can fail".to_owned(),
                    "nothing to separate; for a readiness that tracks whether the app can serve, use httpGet, grpc or exec",
                ));
            }
            return;
        }
        if let Handler::Exec { command } = &h
            && let Some(check) = process_existence(command)
        {
            let what = match check {
                ProcessCheck::Pid1 => "only checks that PID 1 exists, so it cannot fail while the container runs".to_owned(),
                ProcessCheck::Named(name) => format!("only checks that a process matching {name:?} exists"),
            };
            out.push(RULE.finding(
                Severity::Warning,
                pointer,
                Some(c.name()),
                format!(
                    "liveness and readiness both run {}, which {what}: readiness stays true while the app boots or drains, and liveness never sees it wedged",
                    h.describe()
                ),
                "both probes only check that a process exists; probe the app".to_owned(),
                "give readiness a check that the app can serve (httpGet or grpc) and liveness a cheap local endpoint; the kubelet already restarts a container whose process exits",
            ));
            return;
        }
        // What the handler reaches, as `liveness-checks-dependency` (which
        // leaves this probe to this rule) would report it: only when it runs,
        // at its severity under the policy. Reading another rule's switch is
        // what `--select probe-endpoint-reused` shows today (the snapshot of
        // cli_flags' `select`), so it stays until that output may change.
        let deps = if ctx.policy.is_enabled(DEPENDENCY.name) { dependencies(c, ctx.policy) } else { Vec::new() };
        let dep_severity = |d: &Dependency| ctx.policy.severity_override(DEPENDENCY.name).unwrap_or(d.severity);
        let worst = deps.iter().max_by_key(|d| dep_severity(d));
        let worst_severity = worst.map_or(Severity::Info, dep_severity);
        // An error-level dependency check is not cured by tolerance; its own help says what is.
        let dep_help = worst.filter(|_| worst_severity == Severity::Error).map(|d| d.help.to_owned());
        let mut described = h.describe();
        for d in &deps {
            described.push_str(", ");
            described.push_str(&d.note);
        }
        let (lt, rt) = (ProbeTiming::of(live), ProbeTiming::of(ready));
        let all_copies = ProbeKind::Startup.of(container).is_some_and(|s| s == live) && live == ready;
        let tolerant = lt.failure_window() >= rt.failure_window().saturating_mul(3);
        let grpc_help = grpc_services_help(&h);
        let (tier, message, short, help) = if all_copies {
            (
                Severity::Warning,
                format!("startup, liveness and readiness probes are copies of one another ({described})"),
                "startup, liveness and readiness are copies; give each its job".to_owned(),
                "give each probe its job: startup with a boot budget, liveness a cheap local check, readiness the serving state"
                    .to_owned(),
            )
        } else if tolerant {
            let outage = if worst_severity == Severity::Error {
                format!(", but a dependency outage longer than {}s still restarts the container", lt.failure_window())
            } else {
                String::new()
            };
            (
                Severity::Warning,
                format!(
                    "liveness and readiness use the same handler ({described}); liveness tolerates {}s of failures vs readiness {}s{outage}",
                    lt.failure_window(),
                    rt.failure_window()
                ),
                if worst_severity == Severity::Error {
                    format!("shared probe checks dependencies; a {}s outage restarts it", lt.failure_window())
                } else {
                    format!(
                        "liveness reuses readiness's handler ({}s vs {}s); split them",
                        lt.failure_window(),
                        rt.failure_window()
                    )
                },
                dep_help.clone().or(grpc_help.clone()).unwrap_or_else(|| {
                    "point liveness at a local endpoint that does not fail on drain or slow dependencies".to_owned()
                }),
            )
        } else {
            (
                Severity::Error,
                format!(
                    "liveness and readiness use the same handler ({described}), so a readiness failure also restarts the container"),
                "a readiness failure restarts it; split them".to_owned(),
                dep_help.clone().or(grpc_help.clone()).unwrap_or_else(|| {
                    separate_or_tolerate_help(lt, rt, ctx.policy.settings.max_liveness_window_seconds)
                }),
            )
        };
        // What the shared handler reaches decides whether the reuse can
        // restart anything: an error only where it is known or likely to
        // fail on what readiness is for.
        let reach = shared_reach(w, c, &h, ctx.policy);
        let severity = tier.max(worst_severity);
        let finding = match reach.reach {
            Reach::Dependency => {
                let message = if reach.evidence.starts_with("declared") {
                    format!("{message} ({})", reach.evidence)
                } else {
                    message
                };
                RULE.finding(severity, pointer, Some(c.name()), message, short, help)
            }
            // Only the error tier rests on the reach; a lower one stands as it is.
            Reach::Unknown if severity < Severity::Error => {
                RULE.finding(severity, pointer, Some(c.name()), message, short, help)
            }
            Reach::Unknown => RULE.finding(
                severity.min(Severity::Warning),
                pointer,
                Some(c.name()),
                format!(
                    "{message}; whether it checks a dependency is unknown: if it does, a dependency stall restarts every replica at once (an error), so declare it in the pod template annotation {ANNOTATION_PROBE_CHECKS} (readiness=dependency or readiness=local)"
                ),
                "shared handler of unknown reach; split or declare it".to_owned(),
                help,
            ),
            Reach::Local => RULE.finding(
                severity.min(Severity::Info),
                pointer,
                Some(c.name()),
                format!(
                    "liveness and readiness use the same handler ({described}), which is local ({}): a dependency stall restarts nothing, but readiness can never fail on its own (while draining, or on a dependency) without liveness failing too",
                    reach.evidence
                ),
                "shared handler is local; readiness cannot fail alone".to_owned(),
                "give readiness its own endpoint if it should ever take the pod out of the Service while liveness holds"
                    .to_owned(),
            ),
        };
        out.push(finding.assuming([reach.assumption()]));
    });
}

/// For a shared gRPC health check: distinct service names, not an HTTP path.
fn grpc_services_help(h: &Handler) -> Option<String> {
    let wraps_probe = |command: &[String]| simple_commands(command).iter().any(|c| c.program == "grpc_health_probe");
    match h {
        Handler::Grpc { .. } => Some(
            "give liveness and readiness distinct gRPC health `service` names (e.g. `service: liveness` and `service: readiness`), the liveness one SERVING unless the process is wedged"
                .to_owned(),
        ),
        Handler::Exec { command } if wraps_probe(command) => Some(
            "give liveness and readiness distinct gRPC health service names (`-service=liveness`, `-service=readiness`), the liveness one SERVING unless the process is wedged"
                .to_owned(),
        ),
        _ => None,
    }
}

/// A separate endpoint, or (for an image with only this one) the warning
/// tier's tolerance: liveness's failure window at least 3x readiness's. The
/// advice never asks for a liveness window beyond the policy's limit
/// (`probe-window-too-long` would report it): readiness that already fails
/// slowly is told to fail fast first (3 periods, the Kubernetes default).
fn separate_or_tolerate_help(lt: ProbeTiming, rt: ProbeTiming, max_liveness_window: i64) -> String {
    let separate = "point liveness at a cheap local endpoint (e.g. /livez) and keep dependency checks in readiness";
    let period = lt.period.max(1);
    let within = |window: i64| max_liveness_window <= 0 || window <= max_liveness_window;
    let threshold_for = |readiness_window: i64| readiness_window.saturating_mul(3).saturating_add(period - 1) / period;
    let threshold = threshold_for(rt.failure_window());
    if rt.failure_window() > 0 && threshold > lt.failure && within(threshold.saturating_mul(period)) {
        return format!(
            "{separate}; if the image has only this endpoint, keep it and make liveness 3x as tolerant as readiness: failureThreshold: {threshold} ({}s vs readiness's {}s)",
            threshold.saturating_mul(period),
            rt.failure_window()
        );
    }
    let fast = rt.period.max(1).saturating_mul(3);
    let threshold = threshold_for(fast);
    if rt.failure > 3 && within(threshold.saturating_mul(period)) {
        return format!(
            "{separate}; if the image has only this endpoint, keep it, let readiness fail fast (failureThreshold: 3, {fast}s) and make liveness 3x as tolerant: failureThreshold: {threshold} ({}s)",
            threshold.saturating_mul(period)
        );
    }
    separate.to_owned()
}

#[cfg(test)]
mod tests;
