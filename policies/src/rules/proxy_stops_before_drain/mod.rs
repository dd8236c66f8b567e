//! `proxy-stops-before-drain`: a proxy run as a regular container (Istio,
//! Linkerd, the Cloud SQL Auth Proxy) gets SIGTERM with the app and stops
//! serving before the app's preStop and drain end.
//!
//! Tests: `policies/src/rules/proxy_stops_before_drain/fixtures/`,
//! `policies/src/rules/proxy_stops_before_drain/snapshots/rule_fixtures__proxy-stops-before-drain.snap`.

use crate::finding::{Finding, Severity};
use crate::model::{ProxyKind, ProxyStop, SleepSeconds, Workload, proxy_kind, proxy_stop};
use crate::rules::{Ctx, FixAvailability, HarmShown, MapExport, Related, Rule, VapExport};

pub(crate) static RULE: Rule = Rule {
    name: "proxy-stops-before-drain",
    severity: Severity::Warning,
    summary: "a mesh or database proxy run as a regular container stops at the deletion before the app has drained",
    doc: DOC,
    fix: FixAvailability::NoFix(
        "the proxy is the mesh's or the connector's, injected or configured by them: the help names the setting",
    ),
    check,
    vap: VapExport::No(
        "weighs the app's drain (its preStop sleep and env) against the proxy's own settings (its flags, env and \
         the mesh's annotations): beyond a fixed form CEL cannot read them exactly",
    ),
    map: MapExport::NoFix,
    related: Related::Nothing,
    harm: HarmShown::NotSimulated(
        "simulate's verdicts are each container's; the pod's stop order shows the proxy exiting before the app",
    ),
};

const DOC: &str = r#"## What it does
Flags a proxy that carries an app's traffic — Istio's `istio-proxy`,
Linkerd's `linkerd-proxy`, the Cloud SQL Auth Proxy (`cloud-sql-proxy`,
v1 `gce-proxy`), recognised by image or by the name their injectors give
it — run as a **regular** container beside an app that declares a preStop
sleep or a drain (`lifeguard.dev/drain-seconds`, a `*DRAIN_SECONDS` env var),
when the proxy stops serving before that preStop and drain end.

## Why is this bad?
At a pod's deletion the kubelet stops every regular container at once: each
runs its own preStop hook, then gets SIGTERM
(`pkg/kubelet/kuberuntime/kuberuntime_container.go`,
`killContainersWithSyncResult`, one goroutine per container). Nothing makes
a regular container wait for another. So while the app sleeps in its preStop
(for the endpoint removal to reach the load balancers) and then drains its
requests in flight, the proxy beside it has already been told to stop:
- Istio's pilot-agent drains Envoy for `terminationDrainDuration` (5 s by
  default) after SIGTERM and then exits;
- Linkerd's proxy stops accepting connections at SIGTERM;
- the Cloud SQL Auth Proxy exits at SIGTERM unless `--max-sigterm-delay`
  (v1: `-term_timeout`) lets open connections finish.
Requests the app still answers, and its database calls, go through a proxy
that is gone: they fail, in the very window the preStop and drain were meant
to protect.

A native sidecar (an init container with `restartPolicy: Always`) is
different: the kubelet stops it only after every regular container has
exited, then the sidecars in reverse order, within the same grace period
(`kuberuntime_termination_order.go`, `newTerminationOrdering`,
`waitForTurn`).

## Not a finding
- The proxy is already a native sidecar (Istio's native sidecar mode,
  `ENABLE_NATIVE_SIDECARS`; Linkerd's
  `config.alpha.linkerd.io/proxy-enable-native-sidecar`; a Cloud SQL proxy
  under `initContainers` with `restartPolicy: Always`).
- The proxy's own settings cover the app's preStop and drain: a preStop
  sleep on the proxy, Istio's `terminationDrainDuration` (the
  `proxy.istio.io/config` annotation or `TERMINATION_DRAIN_DURATION_SECONDS`)
  or `EXIT_ON_ZERO_ACTIVE_CONNECTIONS: "true"` (it waits for the
  connections to end), Linkerd's
  `config.alpha.linkerd.io/proxy-wait-before-exit-seconds`, the Cloud SQL
  proxy's `--max-sigterm-delay`.
- The app declares neither a preStop sleep nor a drain: lifeguard cannot
  say how long it needs the proxy (a drain the policy assumes for a model
  server is not enough to report this).
- The proxy's preStop hook is not a sleep lifeguard can read.

## Example
```yaml
containers:
  - name: app
    env: [{name: DRAIN_SECONDS, value: "20"}]
    lifecycle: {preStop: {sleep: {seconds: 10}}}
  - name: istio-proxy
    image: docker.io/istio/proxyv2:1.22.0   # exits 5 s after SIGTERM
```

## Use instead
Run the proxy as a native sidecar (Kubernetes 1.29+): Istio
`values.pilot.env.ENABLE_NATIVE_SIDECARS=true`, Linkerd
`config.alpha.linkerd.io/proxy-enable-native-sidecar: "true"`, or the
Cloud SQL proxy under `initContainers` with `restartPolicy: Always`. Or make
the proxy wait as long as the app needs:
```yaml
metadata:
  annotations:
    proxy.istio.io/config: |
      terminationDrainDuration: 30s
```
(Linkerd: `config.alpha.linkerd.io/proxy-wait-before-exit-seconds: "30"`;
Cloud SQL: `--max-sigterm-delay=30s`.)

## Fix
No automatic fix. The proxy container is usually written by the mesh's
injector at admission, which would overwrite an edit to it; making it a
native sidecar is the mesh's setting and needs a cluster of 1.29 or later;
a preStop sleep on the proxy needs the `sleep` action (1.30+) or a `sleep`
binary its distroless image lacks. The help names the proxy's own setting
and the value the app's preStop and drain need.
"#;

fn check(w: &Workload, ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let needs = ctx.shutdown_needs(w);
    let grace = w.grace_period().max(0);
    // The app a proxy serves: a regular container, not a proxy, that says
    // how long it needs after the deletion (its preStop sleep and drain,
    // read from the manifest, not assumed by the policy). The longest.
    let mut app: Option<(String, i64, String)> = None;
    for c in w.containers().filter(|c| !c.sidecar && proxy_kind(c).is_none()) {
        let Some(need) = needs.iter().find(|n| n.pointer == c.pointer) else { continue };
        let drain = need.drain.as_ref().filter(|t| !t.assumed());
        let sleep = match need.prestop.map(|p| p.seconds) {
            Some(SleepSeconds::Finite(s)) => Some(s),
            Some(SleepSeconds::Forever) => Some(grace),
            None => None,
        };
        if drain.is_none() && sleep.is_none() {
            continue;
        }
        let seconds = sleep.unwrap_or(0).saturating_add(drain.map_or(0, |t| t.seconds)).min(grace);
        let mut parts = Vec::new();
        parts.extend(sleep.map(|s| format!("preStop {s}s")));
        parts.extend(drain.map(|t| format!("drain {}s from {}", t.seconds, t.source())));
        if app.as_ref().is_none_or(|(_, s, _)| seconds > *s) {
            app = Some((c.name().to_owned(), seconds, parts.join(" + ")));
        }
    }
    let Some((app, needed, why)) = app else { return };
    for c in w.containers().filter(|c| !c.sidecar) {
        let Some(kind) = proxy_kind(&c) else { continue };
        let ProxyStop::After(stops, said) = proxy_stop(w, &c, kind) else { continue };
        if stops >= needed {
            continue;
        }
        out.push(RULE.finding(
            Severity::Warning,
            c.pointer.to_owned(),
            Some(c.name()),
            format!(
                "{} runs as a regular container: at the deletion it gets SIGTERM with \"{app}\" and stops \
                 serving at {stops}s ({said}), while \"{app}\" still needs it until {needed}s ({why}); requests \
                 and connections through it fail in between",
                kind.word()
            ),
            format!("stops at {stops}s, \"{app}\" drains to {needed}s; run it native"),
            help(kind, needed),
        ));
    }
}

/// What to do: a native sidecar, or the proxy's own setting at `needed`.
fn help(kind: ProxyKind, needed: i64) -> String {
    let setting = match kind {
        ProxyKind::Istio => format!(
            "set proxy.istio.io/config terminationDrainDuration: {needed}s (or EXIT_ON_ZERO_ACTIVE_CONNECTIONS: \"true\")"
        ),
        ProxyKind::Linkerd => format!("set config.alpha.linkerd.io/proxy-wait-before-exit-seconds: \"{needed}\""),
        ProxyKind::CloudSql => format!("pass --max-sigterm-delay={needed}s"),
    };
    format!(
        "run the proxy as a native sidecar (an init container with restartPolicy: Always, stopped only after the app has exited), or {setting}"
    )
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::RULE;
    use crate::rules::testing::{check, deployment};

    fn app(prestop: i64, drain: &str) -> Value {
        json!({"name": "app", "image": "example/app:1", "env": [{"name": "DRAIN_SECONDS", "value": drain}],
            "lifecycle": {"preStop": {"sleep": {"seconds": prestop}}}})
    }

    fn with_annotations(mut d: Value, annotations: Value) -> Value {
        d["spec"]["template"]["metadata"]["annotations"] = annotations;
        d
    }

    #[test]
    fn an_istio_proxy_with_its_default_drain_stops_before_the_app() {
        let d = deployment(json!([app(10, "20"), {"name": "istio-proxy", "image": "docker.io/istio/proxyv2:1.22.0"}]));
        let f = check(&RULE, &d);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].pointer, "/spec/template/spec/containers/1");
        assert_eq!(f[0].container.as_deref(), Some("istio-proxy"));
        assert_eq!(
            f[0].message,
            "the Istio proxy runs as a regular container: at the deletion it gets SIGTERM with \"app\" and stops \
             serving at 5s (terminationDrainDuration 5s, the default), while \"app\" still needs it until 30s \
             (preStop 10s + drain 20s from env DRAIN_SECONDS); requests and connections through it fail in between"
        );
        assert!(f[0].help.contains("terminationDrainDuration: 30s"), "{}", f[0].help);
    }

    #[test]
    fn the_proxys_own_settings_that_cover_the_drain_are_fine() {
        let istio = json!({"name": "istio-proxy", "image": "docker.io/istio/proxyv2:1.22.0"});
        let covered = with_annotations(
            deployment(json!([app(10, "20"), istio.clone()])),
            json!({"proxy.istio.io/config": "terminationDrainDuration: 30s\n"}),
        );
        assert!(check(&RULE, &covered).is_empty());
        let short = with_annotations(
            deployment(json!([app(10, "20"), istio.clone()])),
            json!({"proxy.istio.io/config": "{\"terminationDrainDuration\": \"20s\"}"}),
        );
        assert_eq!(check(&RULE, &short).len(), 1, "20 s is short of 30 s");
        let zero = with_annotations(
            deployment(json!([app(10, "20"), istio])),
            json!({"proxy.istio.io/config": "proxyMetadata:\n  EXIT_ON_ZERO_ACTIVE_CONNECTIONS: 'true'\n"}),
        );
        assert!(check(&RULE, &zero).is_empty(), "it waits for the connections to end");
        let linkerd = with_annotations(
            deployment(
                json!([app(5, "10"), {"name": "linkerd-proxy", "image": "cr.l5d.io/linkerd/proxy:stable-2.14"}]),
            ),
            json!({"config.alpha.linkerd.io/proxy-wait-before-exit-seconds": "15"}),
        );
        assert!(check(&RULE, &linkerd).is_empty());
        let sql = deployment(json!([app(0, "25"), {"name": "sql",
            "image": "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.8.0",
            "args": ["--max-sigterm-delay=30s", "project:region:db"]}]));
        assert!(check(&RULE, &sql).is_empty());
    }

    #[test]
    fn a_cloud_sql_proxy_without_a_sigterm_delay_and_a_linkerd_proxy_are_findings() {
        let sql = deployment(json!([app(0, "25"), {"name": "sql",
            "image": "gcr.io/cloudsql-docker/gce-proxy:1.33", "command": ["/cloud_sql_proxy", "-term_timeout=10s"]}]));
        let f = check(&RULE, &sql);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].message.contains("stops serving at 10s (-term_timeout=10s)"), "{}", f[0].message);
        let linkerd = deployment(
            json!([app(5, "10"), {"name": "linkerd-proxy", "image": "cr.l5d.io/linkerd/proxy:stable-2.14"}]),
        );
        assert!(check(&RULE, &linkerd)[0].message.contains("at 0s (it stops accepting at SIGTERM)"));
    }

    #[test]
    fn native_sidecars_apps_that_declare_nothing_and_unknown_containers_are_fine() {
        let mut native = deployment(json!([app(10, "20")]));
        native["spec"]["template"]["spec"]["initContainers"] =
            json!([{"name": "istio-proxy", "image": "docker.io/istio/proxyv2:1.22.0", "restartPolicy": "Always"}]);
        assert!(check(&RULE, &native).is_empty(), "a native sidecar stops after the app");
        let silent = deployment(json!([{"name": "app", "image": "example/app:1"},
            {"name": "istio-proxy", "image": "docker.io/istio/proxyv2:1.22.0"}]));
        assert!(check(&RULE, &silent).is_empty(), "nothing says how long the app needs it");
        let other = deployment(json!([app(10, "20"), {"name": "envoy", "image": "envoyproxy/envoy:v1.30"},
            {"name": "proxy", "image": "nginx:1.25"}]));
        assert!(check(&RULE, &other).is_empty(), "not a proxy lifeguard knows");
        let hooked = deployment(
            json!([app(10, "20"), {"name": "istio-proxy", "image": "docker.io/istio/proxyv2:1.22.0",
            "lifecycle": {"preStop": {"exec": {"command": ["/usr/local/bin/pilot-agent", "request", "POST", "drain"]}}}}]),
        );
        assert!(check(&RULE, &hooked).is_empty(), "a hook lifeguard cannot time");
    }
}
