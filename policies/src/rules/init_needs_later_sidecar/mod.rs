//! `init-needs-later-sidecar`: an init container that runs to completion
//! connects to a local port that only a native sidecar listed after it
//! serves, so it runs before that sidecar has started.
//!
//! Tests: `policies/src/rules/init_needs_later_sidecar/fixtures/`,
//! `policies/src/rules/init_needs_later_sidecar/snapshots/rule_fixtures__init-needs-later-sidecar.snap`.

use std::sync::LazyLock;

use regex::Regex;

use crate::finding::{Finding, Severity};
use crate::model::{ProxyKind, Workload, join, proxy_kind};
use crate::rules::{Ctx, FixAvailability, HarmShown, MapExport, Related, Rule, VapExport};

pub(crate) static RULE: Rule = Rule {
    name: "init-needs-later-sidecar",
    severity: Severity::Warning,
    summary: "an init container connects to a local port only a native sidecar listed after it serves, so it runs before that sidecar starts",
    doc: DOC,
    fix: FixAvailability::NoFix(
        "moving the sidecar up changes what it starts after (an iptables or config init it may need)",
    ),
    check,
    vap: VapExport::No(
        "reads the addresses in env values and command lines and the ports a proxy's flags open: beyond a fixed \
         form CEL cannot read them exactly",
    ),
    map: MapExport::NoFix,
    related: Related::Nothing,
    harm: HarmShown::NotSimulated("simulate takes init containers that run to completion to finish at once"),
};

const DOC: &str = r#"## What it does
Flags an init container that runs to completion (no `restartPolicy:
Always`) whose env values, command or args name a local address
(`localhost:PORT`, `127.0.0.1:PORT`, `[::1]:PORT`, in a URL or alone) whose
port only a native sidecar (an init container with `restartPolicy: Always`)
listed **after** it serves: a port the sidecar declares under `ports`, or,
for the Cloud SQL Auth Proxy, the one its `--port` flag opens. No container
listed before the init container declares that port.

## Why is this bad?
The kubelet runs init containers one at a time in the spec's order: the next
starts only once the one before has exited (or, for a native sidecar, has
started) (`pkg/kubelet/kuberuntime/kuberuntime_container.go`,
`computeInitContainerActions`). A native sidecar listed after an init
container has not started while that init container runs, so nothing listens
on its port: a database migration that reaches the database through the
Cloud SQL proxy, or a fetch through a mesh proxy's outbound port, is refused.
An init container that fails on it is restarted under the back-off, and the
pod never starts (the sidecar waits for it); one that carries on without the
connection has skipped its work.

## Not a finding
- The sidecar is listed before the init container (it is running then).
- A container listed before the init container declares the port too.
- A port the sidecar does not declare (lifeguard cannot tell it listens
  there), or an address that is not local.
- A regular container's address: regular containers start after every init
  container, whatever the order.

## Example
```yaml
initContainers:
  - name: migrate
    env: [{name: DATABASE_URL, value: "postgres://app@127.0.0.1:5432/shop"}]
  - name: cloud-sql-proxy
    image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.8.0
    restartPolicy: Always
    args: ["--port=5432", "shop-prod:europe-west1:orders"]
```

## Use instead
List the sidecar first: it starts, and the kubelet moves on to `migrate`
once it has (after its startup probe, when it has one).
```yaml
initContainers:
  - name: cloud-sql-proxy
    restartPolicy: Always
    ...
  - name: migrate
    ...
```

## Fix
No automatic fix: the sidecar may need an init container before it (an
iptables or configuration step), which lifeguard cannot see, so where it
belongs in the order is the author's.
"#;

/// A local address and its port, in a URL or alone.
static LOCAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[^A-Za-z0-9.\-])(?:localhost|127\.0\.0\.1|\[::1\]):(\d{1,5})(?:$|[^0-9])").expect("a valid regex")
});

/// The ports a container serves: those it declares, and a Cloud SQL
/// proxy's `--port`.
fn served(c: &crate::model::ContainerView<'_>) -> Vec<i64> {
    let mut out: Vec<i64> = c.container.ports.iter().flatten().map(|p| i64::from(p.container_port)).collect();
    if proxy_kind(c) == Some(ProxyKind::CloudSql) {
        let args: Vec<&str> = c.container.args.iter().flatten().map(String::as_str).collect();
        for (i, a) in args.iter().enumerate() {
            let value = match a.strip_prefix("--port") {
                Some(rest) if rest.starts_with('=') => Some(&rest[1..]),
                Some("") => args.get(i + 1).copied(),
                _ => None,
            };
            out.extend(value.and_then(|v| v.parse::<i64>().ok()));
        }
    }
    out
}

fn check(w: &Workload, _ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let Some(init) = w.spec.init_containers.as_deref() else { return };
    let sidecars: Vec<_> = w.containers().filter(|c| c.sidecar).collect();
    let index_of = |pointer: &str| pointer.rsplit('/').next().and_then(|i| i.parse::<usize>().ok());
    for (i, c) in init.iter().enumerate() {
        if c.restart_policy.as_deref() == Some("Always") {
            continue;
        }
        let pointer = join(&w.spec_pointer, &["initContainers", &i.to_string()]);
        let env = c.env.iter().flatten().filter_map(|e| e.value.as_deref());
        let argv = c.command.iter().flatten().chain(c.args.iter().flatten()).map(String::as_str);
        let ports: Vec<i64> = env
            .chain(argv)
            .flat_map(|text| LOCAL.captures_iter(text).filter_map(|m| m.get(1)?.as_str().parse::<i64>().ok()))
            .collect();
        // A port an earlier init container declares is served (a sidecar's)
        // or was (its own, gone): either way not this rule's.
        let earlier: Vec<i64> =
            init[..i].iter().flat_map(|e| e.ports.iter().flatten().map(|p| i64::from(p.container_port))).collect();
        let mut named = Vec::new();
        for port in ports {
            if earlier.contains(&port) || named.contains(&port) {
                continue;
            }
            let Some(sidecar) =
                sidecars.iter().find(|s| index_of(s.pointer).is_some_and(|j| j > i) && served(s).contains(&port))
            else {
                continue;
            };
            named.push(port);
            let name = if c.name.is_empty() { "<unnamed>" } else { c.name.as_str() };
            out.push(RULE.finding(
                Severity::Warning,
                pointer.clone(),
                Some(name),
                format!(
                    "connects to local port {port}, which only the native sidecar \"{}\" serves, and it is listed \
                     after this init container: the kubelet runs this one first, before the sidecar has started, \
                     so the connection is refused, and the pod starts only if this container carries on without it",
                    sidecar.name()
                ),
                format!("needs port {port} of a sidecar listed after it; list it first"),
                format!(
                    "list \"{}\" before \"{name}\" in initContainers, so it has started when \"{name}\" runs",
                    sidecar.name()
                ),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::RULE;
    use crate::rules::testing::{check, deployment};

    fn with_init(init: Value) -> Value {
        let mut d = deployment(json!([{"name": "app", "image": "example/app:1"}]));
        d["spec"]["template"]["spec"]["initContainers"] = init;
        d
    }

    fn migrate() -> Value {
        json!({"name": "migrate", "image": "example/migrate:1",
            "env": [{"name": "DATABASE_URL", "value": "postgres://app@127.0.0.1:5432/shop"}]})
    }

    fn sql() -> Value {
        json!({"name": "sql", "image": "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.8.0", "restartPolicy": "Always",
            "args": ["--port", "5432", "p:r:db"]})
    }

    #[test]
    fn an_init_container_before_the_proxy_it_connects_through() {
        let f = check(&RULE, &with_init(json!([migrate(), sql()])));
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].pointer, "/spec/template/spec/initContainers/0");
        assert_eq!(f[0].short, "needs port 5432 of a sidecar listed after it; list it first");
        assert!(f[0].message.contains("only the native sidecar \"sql\" serves"), "{}", f[0].message);
    }

    #[test]
    fn the_sidecar_first_an_earlier_port_or_an_undeclared_one_is_fine() {
        assert!(check(&RULE, &with_init(json!([sql(), migrate()]))).is_empty());
        let mut undeclared = sql();
        undeclared["args"] = json!(["p:r:db"]);
        assert!(check(&RULE, &with_init(json!([migrate(), undeclared]))).is_empty());
        let earlier = json!({"name": "db", "image": "postgres:16", "ports": [{"containerPort": 5432}]});
        assert!(check(&RULE, &with_init(json!([earlier, migrate(), sql()]))).is_empty());
        let mut other_host = migrate();
        other_host["env"][0]["value"] = json!("postgres://app@db.internal:5432/shop");
        assert!(check(&RULE, &with_init(json!([other_host, sql()]))).is_empty());
        let mut not_native = sql();
        not_native["restartPolicy"] = Value::Null;
        assert!(check(&RULE, &with_init(json!([migrate(), not_native]))).is_empty());
    }
}
