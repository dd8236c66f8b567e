//! `exec-probe`: a probe forks a command; a wrapped `grpc_health_probe`
//! should be a native `grpc` probe.
//!
//! Tests: `policies/src/rules/exec_probe/fixtures/`,
//! `policies/src/rules/exec_probe/snapshots/rule_fixtures__exec-probe.snap`.

use crate::finding::{Finding, Severity};
use crate::model::command::{SimpleCommand, simple_commands};
use crate::model::host::{Locality, host_locality};
use crate::model::{ContainerView, ProbeKind, ProbeTiming, Workload};
use crate::rules::{Ctx, FixAvailability, HarmShown, MapExport, Related, Rule, VapExport};

pub(crate) static RULE: Rule = Rule {
    name: "exec-probe",
    severity: Severity::Info,
    summary: "an exec probe forks a process on every period in every pod; a wrapped grpc_health_probe should be a grpc probe",
    doc: DOC,
    fix: FixAvailability::NoFix(
        "lifeguard cannot see which in-process endpoint could replace a command, nor whether a wrapped grpc_health_probe relies on what the native probe lacks",
    ),
    check,
    vap: VapExport::READS_SCRIPTS,
    map: MapExport::NoFix,
    related: Related::Nothing,
    harm: HarmShown::NotSimulated(
        "the cost of an exec probe is the process it starts on the node, which the probe timeline does not model",
    ),
};

const DOC: &str = r#"## What it does
Notes (info) each startup, liveness or readiness probe that uses `exec`.

Warns when the exec only wraps `grpc_health_probe` aimed at the container
itself (`-addr=:8080`, `-addr=localhost:8080`) on a Kubernetes version with
native gRPC probes (1.24 and later): a `grpc` probe does the same check
without a process.

## Why is this bad?
An exec probe forks a process inside the container on every period, in every
pod: at a few hundred replicas and a 5-second period that is a steady stream
of process starts, each paying for its runtime (a shell, a JVM client, a
Python interpreter) and counted against the container's CPU and memory. A
slow fork under CPU throttling can time out and fail the probe although the
application is fine. An `httpGet`, `tcpSocket` or `grpc` probe is made by the
kubelet itself and costs the container only the request.

Exec is still the right tool where the only check is a command (many
databases): that is why a plain exec probe is only informational, in every
pack (`strict` does not raise it, so a database's own `pg_isready` never
denies). A startup probe's exec runs only while the container boots and
stops once it succeeds: the message says so, its cost is a few forks per
start.

## Not a finding
- A `grpc_health_probe` that uses TLS or extra headers (`-tls`,
  `-rpc-header`, ...): the native probe cannot; that is still noted as an exec.
- A `grpc_health_probe` aimed at another host: that is
  `liveness-checks-dependency`'s business; here it is only noted as an exec.

## Example
```yaml
livenessProbe:
  exec:
    command: ["/bin/grpc_health_probe", "-addr=:8080"]
```

## Use instead
```yaml
livenessProbe:
  grpc: {port: 8080}
```

## Fix
No automatic fix: lifeguard cannot see which in-process endpoint could
replace a command, nor whether a wrapped `grpc_health_probe` relies on what
the native probe lacks (TLS, headers).
"#;

/// `grpc_health_probe` flags the native `grpc` probe has no equivalent for.
const NOT_NATIVE: &[&str] = &["-tls", "-alts", "-spiffe", "-rpc-header", "-user-agent", "-gzip", "-stream"];

/// What a sole, local `grpc_health_probe` translates to.
struct GrpcWrapper {
    port: Option<String>,
    service: Option<String>,
}

fn flag_value<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter().enumerate().find_map(|(i, a)| {
        let a = a.strip_prefix('-').map(|r| r.strip_prefix('-').unwrap_or(r))?;
        match a.split_once('=') {
            Some((n, v)) if n == name => Some(v),
            None if a == name => args.get(i + 1).map(String::as_str),
            _ => None,
        }
    })
}

fn grpc_wrapper(cmds: &[SimpleCommand], c: ContainerView<'_>) -> Option<GrpcWrapper> {
    let [cmd] = cmds else {
        return None;
    };
    if cmd.program != "grpc_health_probe" {
        return None;
    }
    let native = !cmd.args.iter().any(|a| {
        let flag = a.split('=').next().unwrap_or(a);
        let flag = flag.strip_prefix('-').unwrap_or(flag);
        NOT_NATIVE.iter().any(|n| flag.starts_with(n) || flag.starts_with(&n[1..]))
    });
    let addr = flag_value(&cmd.args, "addr")?;
    let (host, port) = addr.rsplit_once(':').unwrap_or((addr, ""));
    if !native || host_locality(host, c.container, &cmd.assignments) != Locality::Local {
        return None;
    }
    let port = port.parse::<u16>().ok().filter(|n| *n > 0).map(|n| n.to_string());
    let service = flag_value(&cmd.args, "service").filter(|s| !s.is_empty()).map(str::to_owned);
    Some(GrpcWrapper { port, service })
}

fn short(command: &[String]) -> String {
    let joined = command.join(" ");
    let joined = joined.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.chars().count() > 60 { format!("{}...", joined.chars().take(57).collect::<String>()) } else { joined }
}

fn check(w: &Workload, ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let native_grpc = ctx.policy.settings.kubernetes_minor() >= (1, 24);
    w.for_each_container(|c| {
        for kind in [ProbeKind::Startup, ProbeKind::Liveness, ProbeKind::Readiness] {
            let Some(probe) = kind.of(c.container) else {
                continue;
            };
            let Some(command) = probe.exec.as_ref().and_then(|e| e.command.as_ref()) else {
                continue;
            };
            if command.is_empty() {
                continue;
            }
            let period = ProbeTiming::of(probe).period;
            let wrapper = native_grpc
                .then(|| grpc_wrapper(&simple_commands(command), c))
                .flatten();
            let finding = match wrapper {
                Some(g) => {
                    let mut grpc = format!("port: {}", g.port.as_deref().unwrap_or("<the -addr port>"));
                    if let Some(s) = &g.service {
                        grpc.push_str(&format!(", service: {s:?}"));
                    }
                    RULE.finding(
                        Severity::Warning,
                        c.at(&[kind.field(), "exec", "command"]),
                        Some(c.name()),
                        format!(
                            "{} probe wraps grpc_health_probe in an exec, forking a process every {period}s where a native grpc probe would do",
                            kind.word()
                        ),
                        format!("{} execs grpc_health_probe every {period}s; use a native grpc probe", kind.word()),
                        format!("replace the exec with `grpc: {{{grpc}}}`"),
                    )
                }
                None => {
                    let when = if kind == ProbeKind::Startup {
                        "while the container boots (a startup probe stops once it succeeds)"
                    } else {
                        "in every pod"
                    };
                    let (help, in_short) = if ctx.policy.is_database_image(c.image()) {
                        (
                            "exec is the usual check for a database server; nothing to change unless it serves a health endpoint",
                            "; usual for a database",
                        )
                    } else if kind == ProbeKind::Startup {
                        (
                            "it runs only during the boot, so this costs little; an httpGet or grpc probe is still cheaper if the app serves one",
                            ", only while it boots",
                        )
                    } else {
                        (
                            "if the app serves a health endpoint, an httpGet or grpc probe is cheaper; a command is fine where it is the only check",
                            "; httpGet or grpc is cheaper",
                        )
                    };
                    RULE.finding(
                        Severity::Info,
                        c.at(&[kind.field(), "exec"]),
                        Some(c.name()),
                        format!(
                            "{} probe runs a command ({:?}), forking a process every {period}s {when}",
                            kind.word(),
                            short(command)
                        ),
                        format!("{} probe forks a command every {period}s{in_short}", kind.word()),
                        help,
                    )
                }
            };
            out.push(finding);
        }
    });
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::RULE;
    use crate::finding::Severity;
    use crate::policy::Policy;
    use crate::rules::testing::{check, check_with, one_container};
    use crate::settings::Settings;

    fn live(command: Value) -> Value {
        one_container(json!({"livenessProbe": {"exec": {"command": command}, "periodSeconds": 5}}))
    }

    #[test]
    fn plain_exec_is_info_once_per_probe() {
        let p = json!({"exec": {"command": ["pg_isready", "-U", "postgres"]}});
        let obj = one_container(json!({"startupProbe": p, "livenessProbe": p, "readinessProbe": p}));
        let f = check(&RULE, &obj);
        assert_eq!(f.len(), 3);
        assert!(f.iter().all(|f| f.severity == Severity::Info));
        assert_eq!(f[1].pointer, "/spec/template/spec/containers/0/livenessProbe/exec");
        assert!(f[1].message.contains("\"pg_isready -U postgres\""), "{}", f[1].message);
        assert!(f[1].message.contains("every 10s"), "{}", f[1].message);
    }

    #[test]
    fn local_grpc_health_probe_is_a_warning_with_the_port() {
        for (cmd, help) in [
            (json!(["/bin/grpc_health_probe", "-addr=:8080"]), "`grpc: {port: 8080}`"),
            (json!(["grpc_health_probe", "-addr", "localhost:50051", "-rpc-timeout=5s"]), "`grpc: {port: 50051}`"),
            (
                json!(["sh", "-c", "exec grpc_health_probe --addr=127.0.0.1:9000 -service=ready"]),
                "`grpc: {port: 9000, service: \"ready\"}`",
            ),
            (json!(["grpc_health_probe", "-addr=:$(GRPC_PORT)"]), "`grpc: {port: <the -addr port>}`"),
        ] {
            let f = check(&RULE, &live(cmd.clone()));
            assert_eq!(f.len(), 1, "{cmd}");
            assert_eq!(f[0].severity, Severity::Warning, "{cmd}");
            assert_eq!(f[0].pointer, "/spec/template/spec/containers/0/livenessProbe/exec/command");
            assert!(f[0].help.contains(help), "{cmd}: {}", f[0].help);
            assert!(f[0].message.contains("every 5s"), "{}", f[0].message);
        }
    }

    #[test]
    fn grpc_health_probe_the_native_probe_cannot_replace_is_info() {
        for cmd in [
            json!(["grpc_health_probe", "-addr=payments:50051"]),
            json!(["grpc_health_probe", "-addr=:8443", "-tls", "-tls-ca-cert=/ca.pem"]),
            json!(["grpc_health_probe", "-addr=:8080", "-rpc-header=x:y"]),
            json!(["sh", "-c", "grpc_health_probe -addr=:8080 && test -f /tmp/ready"]),
        ] {
            let f = check(&RULE, &live(cmd.clone()));
            assert_eq!(f.len(), 1, "{cmd}");
            assert_eq!(f[0].severity, Severity::Info, "{cmd}");
        }
    }

    #[test]
    fn old_clusters_have_no_native_grpc_probe() {
        let policy =
            Policy::new(Settings { kubernetes_version: "1.23".into(), ..Settings::default() }).expect("policy");
        let obj = live(json!(["/bin/grpc_health_probe", "-addr=:8080"]));
        let f = check_with(&RULE, &obj, &policy, &Default::default());
        assert_eq!(f[0].severity, Severity::Info);
    }

    #[test]
    fn other_handlers_and_empty_commands_are_not_findings() {
        let obj = one_container(json!({
            "livenessProbe": {"grpc": {"port": 8080}},
            "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8080}},
            "startupProbe": {"exec": {"command": []}}
        }));
        assert!(check(&RULE, &obj).is_empty());
    }

    #[test]
    fn a_startup_exec_runs_only_during_the_boot_and_a_database_exec_is_its_usual_check() {
        let obj = one_container(json!({
            "image": "postgres:16",
            "startupProbe": {"exec": {"command": ["pg_isready"]}, "periodSeconds": 5},
            "livenessProbe": {"exec": {"command": ["pg_isready"]}}
        }));
        let f = check(&RULE, &obj);
        assert_eq!(f.len(), 2);
        assert!(f[0].message.contains("every 5s while the container boots"), "{}", f[0].message);
        assert!(f[1].message.contains("every 10s in every pod"), "{}", f[1].message);
        assert!(f.iter().all(|f| f.help.starts_with("exec is the usual check for a database")), "{f:?}");
        let app = one_container(json!({"startupProbe": {"exec": {"command": ["/bin/ready"]}}}));
        assert!(check(&RULE, &app)[0].help.starts_with("it runs only during the boot"));
    }

    #[test]
    fn strict_does_not_escalate_a_plain_exec() {
        let strict = Policy::pack("strict").expect("strict pack");
        assert_eq!(strict.severity_override("exec-probe"), None);
        let obj =
            one_container(json!({"image": "postgres:16", "livenessProbe": {"exec": {"command": ["pg_isready"]}}}));
        let f = check_with(&RULE, &obj, &strict, &Default::default());
        assert!(!strict.denies(f[0].severity));
    }

    #[test]
    fn long_scripts_are_shortened() {
        let script = format!("echo {} && exit 0", "x".repeat(100));
        let f = check(&RULE, &live(json!(["sh", "-c", script])));
        assert!(f[0].message.contains("..."), "{}", f[0].message);
        assert!(f[0].message.len() < 200, "{}", f[0].message);
    }
}
