//! `liveness-checks-dependency`: the liveness probe reaches beyond the process.
//!
//! Tests: `policies/src/rules/liveness_checks_dependency/fixtures/`,
//! `policies/src/rules/liveness_checks_dependency/snapshots/rule_fixtures__liveness-checks-dependency.snap`.

use crate::finding::{Finding, Severity};
use crate::model::{Handler, Workload, dependencies, shared_liveness_readiness};
use crate::rules::{Ctx, FixAvailability, Harm, HarmShown, MapExport, Related, Rule, VapExport};
use crate::simulate::Verdict;

/// `probe-endpoint-reused`, which reports a liveness probe that shares
/// readiness's handler: this rule leaves that probe to it (by name, so the
/// two rules' files do not import each other; a test holds the name).
pub(crate) const REUSED: &str = "probe-endpoint-reused";

pub(crate) static RULE: Rule = Rule {
    name: "liveness-checks-dependency",
    severity: Severity::Error,
    summary: "the liveness probe checks a database, cache or other service, so its failures restart the container",
    doc: DOC,
    fix: FixAvailability::NoFix("a local liveness check must exist in the application; lifeguard cannot invent one"),
    check,
    vap: VapExport::READS_SCRIPTS,
    map: MapExport::NoFix,
    related: Related::Nothing,
    harm: HarmShown::In(&[Harm { scenario: "stall:2m", verdicts: &[Verdict::RestartStorm, Verdict::Restarts] }]),
};

const DOC: &str = r#"## What it does
Flags a liveness probe that checks something other than its own process:
- an `exec` command that runs a database, cache or queue client aimed at
  another host (`pg_isready -h db`, `redis-cli -h redis-master`,
  `mongosh mongodb://mongo-0...`), or a network tool aimed at another host
  (`curl http://auth/healthz`, `nc -z db 5432`, `grpc_health_probe -addr=api:9000`).
  Shell scripts (`sh -c "..."`) are read, and host variables are resolved
  from the container's `env`;
- `httpGet.host` or `tcpSocket.host` set to another host;
- an HTTP path, on `httpGet` or on a local `curl`/`wget` URL, that
  aggregates dependencies (`/actuator/health`, `/q/health`,
  `/v2/health/ready`, paths naming a database or cache): an error;
- an HTTP path known only by its name to be a readiness endpoint (`/ready`,
  `/readyz`, `/health/ready`): a warning. Lifeguard cannot see what the
  endpoint checks, but readiness endpoints are meant to fail on drain and
  may fail on a slow dependency, and on liveness either restarts the container.

The clients, tools and paths are the policy's `dependencyClients`,
`networkTools`, `dependencyPaths` and `readinessPaths`.

## Why is this bad?
A liveness failure restarts the container. When the check depends on a
database, a cache or another service, that dependency's slowness fails the
probe in every replica at once: the whole fleet restarts together, drops its
in-flight work, and reconnects to the dependency that was already struggling
("Liveness hits a shared database" is the probes guide's first restart-storm
anti-pattern). Failing readiness instead would have shed traffic while the
process stayed up. A readiness endpoint also fails while the pod drains
(the drain guide has `/readyz` answer 503 from the start of shutdown while
`/livez` stays 200): on liveness that kills the process mid-drain.

## Not a finding
- A client with no host, or a local one (`localhost`, `127.0.0.1`, `::1`, a
  unix socket, `$(hostname)`, `$POD_IP`): it checks a process in this
  container, as `pg_isready` does in a postgres image.
- `curl localhost:8080/healthz`; `/actuator/health/liveness`, `/livez`, `/healthz`.
- A host held in a variable lifeguard cannot resolve (a secret, a
  ConfigMap): it might be local.
- Readiness and startup probes: readiness is where dependency checks belong.
- A liveness probe whose handler readiness shares: `probe-endpoint-reused`
  reports that probe once, names what the handler reaches, and is at least
  as severe as this rule would be.

## Example
```yaml
livenessProbe:
  exec:
    command: ["sh", "-c", "redis-cli -h redis-master ping"]
```

## Use instead
```yaml
livenessProbe:
  httpGet: {path: /livez, port: http}       # is this process wedged?
readinessProbe:
  httpGet: {path: /readyz, port: http}      # may check redis, fails softly
```

## Fix
No automatic fix: a local liveness check must exist in the application, and
lifeguard cannot invent one.
"#;

fn check(w: &Workload, ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    w.for_each_container(|c| {
        // One finding per probe: a liveness probe whose handler readiness
        // shares (a tcpSocket aside) is `probe-endpoint-reused`'s, which names
        // what the handler reaches at this rule's severity or above, when
        // that rule runs. Reading its switch is what the webhook's reload
        // test shows today, so it stays until that output may change.
        let shared = shared_liveness_readiness(c.container).is_some_and(|h| !matches!(h, Handler::Tcp { .. }));
        if shared && ctx.policy.is_enabled(REUSED) {
            return;
        }
        out.extend(
            dependencies(c, ctx.policy)
                .into_iter()
                .map(|d| RULE.finding(d.severity, d.pointer, Some(c.name()), d.message, d.short, d.help)),
        );
    });
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{REUSED, RULE};
    use crate::finding::Severity;
    use crate::model::Batch;
    use crate::policy::Policy;
    use crate::rules::testing::{check, check_with, one_container};

    const LIVE: &str = "/spec/template/spec/containers/0/livenessProbe";

    fn live_exec(image: &str, command: Value, env: Value) -> Value {
        let mut obj = one_container(json!({"env": env, "livenessProbe": {"exec": {"command": command}}}));
        obj["spec"]["template"]["spec"]["containers"][0]["image"] = json!(image);
        obj
    }

    fn flagged(image: &str, command: Value) -> Vec<String> {
        check(&RULE, &live_exec(image, command, json!([]))).into_iter().map(|f| f.message).collect()
    }

    #[test]
    fn remote_clients_and_tools_are_errors_at_the_command() {
        let f =
            check(&RULE, &live_exec("example/app:1", json!(["redis-cli", "-h", "redis-master", "ping"]), json!([])));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Error);
        assert_eq!(f[0].pointer, format!("{LIVE}/exec/command"));
        assert!(f[0].message.contains("redis-cli against \"redis-master\""), "{}", f[0].message);
        for cmd in [
            json!(["sh", "-c", "pg_isready -h postgres.db.svc -U app"]),
            json!(["/bin/bash", "-ec", "timeout 2 /usr/bin/mysqladmin -hmysql-primary ping"]),
            json!(["mysqladmin", "--host=mysql", "ping"]),
            json!(["mongosh", "mongodb://mongo-0.mongo:27017/admin", "--eval", "db.ping()"]),
            json!(["redis-cli", "-u", "redis://cache:6379", "ping"]),
            json!(["sh", "-c", "curl -fsS -H 'X: y' -m 2 http://auth.prod/healthz > /dev/null"]),
            json!(["wget", "-qO-", "api:8080/status"]),
            json!(["nc", "-z", "-w", "2", "db", "5432"]),
            json!(["/bin/grpc_health_probe", "-addr=payments:50051"]),
            json!(["bash", "-c", "exec 3<>/dev/tcp/kafka/9092"]),
            json!(["bash", "-c", "</dev/tcp/kafka/9092"]),
            json!(["sh", "-c", "PGHOST=db pg_isready"]),
        ] {
            assert_eq!(flagged("example/app:1", cmd.clone()).len(), 1, "{cmd}");
        }
    }

    #[test]
    fn host_variables_resolve_through_env() {
        let cmd = json!(["sh", "-c", "redis-cli -h $REDIS_HOST -p ${REDIS_PORT} ping"]);
        let remote = json!([{"name": "REDIS_HOST", "value": "redis-master"}]);
        let f = check(&RULE, &live_exec("example/app:1", cmd.clone(), remote));
        assert_eq!(f.len(), 1);
        assert!(f[0].message.contains("\"$REDIS_HOST (redis-master)\""), "{}", f[0].message);
        let own_ip = json!([{"name": "REDIS_HOST", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}]);
        assert!(check(&RULE, &live_exec("example/app:1", cmd.clone(), own_ip)).is_empty());
        let secret = json!([{"name": "REDIS_HOST", "valueFrom": {"secretKeyRef": {"name": "s", "key": "h"}}}]);
        assert!(check(&RULE, &live_exec("example/app:1", cmd, secret)).is_empty());
        let pg = json!([{"name": "PGHOST", "value": "db.prod"}]);
        assert_eq!(check(&RULE, &live_exec("example/app:1", json!(["pg_isready"]), pg)).len(), 1);
    }

    #[test]
    fn local_checks_are_fine() {
        for (image, cmd) in [
            ("postgres:16", json!(["pg_isready", "-U", "postgres"])),
            ("postgres:16", json!(["sh", "-c", "pg_isready -h localhost -U \"$POSTGRES_USER\""])),
            ("postgres:16", json!(["pg_isready", "-h", "/var/run/postgresql"])),
            ("redis:7", json!(["redis-cli", "ping"])),
            ("example/app:1", json!(["redis-cli", "ping"])),
            ("mysql:8", json!(["bash", "-c", "mysqladmin -uroot -p$MYSQL_ROOT_PASSWORD ping"])),
            ("mysql:8", json!(["mysql", "-h127.0.0.1", "-e", "SELECT 1"])),
            ("cassandra:4", json!(["sh", "-c", "cqlsh $(hostname -i) -e 'describe keyspaces'"])),
            ("example/app:1", json!(["curl", "-f", "localhost:8080/healthz"])),
            (
                "example/app:1",
                json!(["sh", "-c", "curl -s -o /dev/null -u admin:1234 http://127.0.0.1:8080/livez 2>&1"]),
            ),
            ("example/app:1", json!(["/bin/grpc_health_probe", "-addr=:8080"])),
            ("example/app:1", json!(["grpcurl", "-plaintext", "localhost:9000", "grpc.health.v1.Health/Check"])),
            ("example/app:1", json!(["wget", "--spider", "-q", "http://[::1]:80/"])),
            ("example/app:1", json!(["curl", "--unix-socket", "/run/app.sock", "http://app/healthz"])),
            ("example/app:1", json!(["sh", "-c", "echo ok > /tmp/db/health && cat /tmp/healthy"])),
            ("example/app:1", json!(["cat", "/tmp/healthy"])),
            ("example/app:1", json!(["sh", "/scripts/check-db.sh"])),
        ] {
            assert!(flagged(image, cmd.clone()).is_empty(), "{image} {cmd}");
        }
    }

    #[test]
    fn local_curl_on_a_dependency_or_readiness_path_is_a_finding() {
        let f = flagged("example/app:1", json!(["curl", "-f", "http://localhost:8080/actuator/health"]));
        assert_eq!(f.len(), 1);
        assert!(f[0].contains("curl on \"/actuator/health\", which aggregates dependencies"), "{}", f[0]);
        let f = check(&RULE, &live_exec("example/app:1", json!(["wget", "-qO-", "localhost:8080/readyz"]), json!([])));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Warning);
        assert!(f[0].message.contains("wget on readiness path \"/readyz\""), "{}", f[0].message);
    }

    #[test]
    fn readiness_paths_are_warnings_aggregates_errors() {
        let probe = |path: &str| one_container(json!({"livenessProbe": {"httpGet": {"path": path, "port": 80}}}));
        for path in ["/ready", "/readyz/", "/health/ready", "/-/ready", "/actuator/health/readiness"] {
            let f = check(&RULE, &probe(path));
            assert_eq!(f.len(), 1, "{path}");
            assert_eq!(f[0].severity, Severity::Warning, "{path}");
            assert!(f[0].message.contains("liveness uses a readiness path"), "{}", f[0].message);
        }
        for path in ["/actuator/health", "/q/health", "/q/health/ready", "/v2/health/ready", "/health/db"] {
            let f = check(&RULE, &probe(path));
            assert_eq!(f.len(), 1, "{path}");
            assert_eq!(f[0].severity, Severity::Error, "{path}");
            assert!(f[0].message.contains("aggregates dependencies"), "{}", f[0].message);
        }
    }

    #[test]
    fn a_probe_shared_with_readiness_is_left_to_probe_endpoint_reused() {
        let p = json!({"httpGet": {"path": "/ready", "port": 8080}});
        assert!(check(&RULE, &one_container(json!({"livenessProbe": p, "readinessProbe": p}))).is_empty());
        let redis = json!({"exec": {"command": ["redis-cli", "-h", "redis-master", "ping"]}});
        assert!(check(&RULE, &one_container(json!({"livenessProbe": redis, "readinessProbe": redis}))).is_empty());
        // Unless that rule is off.
        let text =
            "apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\nrules:\n  probe-endpoint-reused: {enabled: false}\n";
        let off = Policy::load(text, "test.yaml").expect("test policy loads");
        let obj = one_container(json!({"livenessProbe": p, "readinessProbe": p}));
        assert_eq!(check_with(&RULE, &obj, &off, &Batch::default()).len(), 1);
        // A shared tcpSocket's host is still this rule's: the reuse finding is about readiness.
        let tcp = json!({"tcpSocket": {"host": "db", "port": 5432}});
        assert_eq!(check(&RULE, &one_container(json!({"livenessProbe": tcp, "readinessProbe": tcp}))).len(), 1);
    }

    #[test]
    fn http_get_host_and_paths() {
        let probe = |http: Value| one_container(json!({"livenessProbe": {"httpGet": http}}));
        let f = check(&RULE, &probe(json!({"host": "auth.prod.svc", "path": "/livez", "port": 80})));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].pointer, format!("{LIVE}/httpGet/host"));
        let f = check(&RULE, &probe(json!({"path": "/actuator/health?show=1", "port": 8080})));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].pointer, format!("{LIVE}/httpGet/path"));
        assert!(f[0].message.contains("\"/actuator/health\""), "{}", f[0].message);
        for path in ["/v2/health/ready", "/readyz", "/ready", "/health/db", "/status/redis/", "actuator/health"] {
            assert_eq!(check(&RULE, &probe(json!({"path": path, "port": 80}))).len(), 1, "{path}");
        }
        for path in [
            "/actuator/health/liveness",
            "/livez",
            "/healthz",
            "/healthz?full=true",
            "/v2/health/live",
            "/readyz/isDirty",
        ] {
            assert!(check(&RULE, &probe(json!({"path": path, "port": 80}))).is_empty(), "{path}");
        }
        assert!(check(&RULE, &probe(json!({"host": "127.0.0.1", "path": "/", "port": 80}))).is_empty());
        let tcp = one_container(json!({"livenessProbe": {"tcpSocket": {"host": "db", "port": 5432}}}));
        assert_eq!(check(&RULE, &tcp)[0].pointer, format!("{LIVE}/tcpSocket/host"));
    }

    #[test]
    fn only_liveness_is_checked() {
        let p = json!({"httpGet": {"path": "/readyz", "port": 80}});
        let obj = one_container(json!({"readinessProbe": p, "startupProbe": p}));
        assert!(check(&RULE, &obj).is_empty());
    }

    #[test]
    fn database_replica_checking_its_primary_gets_database_help() {
        let f =
            check(&RULE, &live_exec("bitnami/redis:7", json!(["redis-cli", "-h", "redis-master", "ping"]), json!([])));
        assert_eq!(f.len(), 1);
        assert!(f[0].help.contains("database"), "{}", f[0].help);
    }

    #[test]
    fn the_rule_it_leaves_shared_probes_to_is_named_as_it_names_itself() {
        assert_eq!(REUSED, crate::rules::probe_endpoint_reused::RULE.name);
    }
}
