//! `prestop-bridge-missing`: a container a Service sends traffic to has no
//! preStop hook, so SIGTERM races endpoint removal (opt-in).
//!
//! Tests: `policies/src/rules/prestop_bridge_missing/fixtures/`,
//! `policies/src/rules/prestop_bridge_missing/snapshots/rule_fixtures__prestop-bridge-missing.snap`,
//! `policies/src/rules/prestop_bridge_missing/fixtures/fix.yaml`,
//! `policies/src/rules/prestop_bridge_missing/fixtures/fix.policy.yaml`,
//! `policies/src/rules/prestop_bridge_missing/snapshots/fix_cli__prestop-bridge-missing.snap`.

use serde_json::{Value, json};

use crate::finding::{Finding, Fix, Severity, add_op};
use crate::model::{PreStopSleep, Receiver, SleepSeconds, Workload, join, receivers, required_grace, services_send};
use crate::rules::{Ctx, FixAvailability, Harm, HarmShown, MapExport, Related, Rule, VapExport, with_fix};
use crate::simulate::Verdict;

pub(crate) static RULE: Rule = Rule {
    name: "prestop-bridge-missing",
    severity: Severity::Info,
    summary: "a container a Service sends traffic to has no preStop hook, so SIGTERM races endpoint removal (opt-in: addPrestopBridge)",
    doc: DOC,
    fix: FixAvailability::Fix(
        "adds a native preStop sleep of prestopBridgeSeconds (5 s) and raises terminationGracePeriodSeconds when bridge + drain + shutdown budget needs it; no fix when kubernetesVersion is below 1.30, where only an exec sleep exists and it needs a sleep binary in the image",
    ),
    check,
    vap: VapExport::NEEDS_SERVICES,
    map: MapExport::No("its fix depends on the Services that select the pod, which an admission policy cannot see"),
    related: Related::SendingServices,
    harm: HarmShown::In(&[Harm { scenario: "delete", verdicts: &[Verdict::ConnectionsRefused] }]),
};

const DOC: &str = r#"## What it does
Opt-in: reports only when the policy sets `addPrestopBridge: true` (off in
the `default` and `strict` packs, on in `gpu-serving`). Then it flags each
container of a long-running pod that a Service sends traffic to and that
has no `lifecycle.preStop` hook at all:

- a Service in the input selects the pod (same namespace, its selector
  matches the pod template's labels) and is not headless;
- the container declares the Service's `targetPort` (`port` when
  `targetPort` is unset), or listens on a numeric target port that no
  container declares. Which container that is, is decided as
  `readiness-probe-missing` decides it, so both rules name the same one:
  for a name, the one the EndpointSlice controller sends it to (the first
  regular container that declares the name with the Service port's
  protocol, else the first sidecar); for an undeclared number, the
  container whose command line names the port (`--port 8000`,
  `--bind 0.0.0.0:8000`), else the model server (a GPU request or a
  `slowBootImages` image), else the containers that declare no ports, else
  the first container. The pod's only container is always the one.

## Why is this bad?
Deleting a pod starts two things at once: the pod leaves the Service's
endpoints, and the kubelet runs the preStop hook, then sends SIGTERM.
Endpoint removal takes a moment to reach kube-proxy on every node, the mesh
and the load balancers, and until it does they keep sending new connections
to the pod. Without a preStop hook the process gets SIGTERM at once, stops
listening, and those connections are refused: errors on every rollout and
scale-down. A short sleep in preStop bridges that gap. It is not a drain:
the application must still finish its in-flight requests after SIGTERM.

## Not a finding
- The policy does not set `addPrestopBridge` (the default): some
  applications wait on SIGTERM themselves, which lifeguard cannot see.
- No Service in the input selects the pod, or only a headless one (clients
  connect to the pod addresses, no proxy to update). Declared ports alone
  do not say that traffic arrives.
- A container with any preStop hook (`prestop-sleep-only` and
  `grace-period-too-short` judge it), a container no Service port reaches
  (a metrics exporter beside the app, a runtime sidecar on its own declared
  port beside a model server that serves an undeclared one), sidecar init
  containers (a sidecar that declares the port or names it on its command
  line takes it; a name a regular container also declares is the regular
  container's).
- Jobs, CronJobs and pods with `restartPolicy` Never or OnFailure.

## Example
```yaml
kind: Service
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: http}]
---
kind: Deployment
# ...
containers:
  - name: web
    ports: [{name: http, containerPort: 8080}]
    # no preStop: SIGTERM before kube-proxy stops routing to the pod
```

## Use instead
```yaml
containers:
  - name: web
    ports: [{name: http, containerPort: 8080}]
    lifecycle:
      preStop:
        sleep: {seconds: 5}   # then SIGTERM, and the app drains
```

## Fix
Where the policy's `kubernetesVersion` is 1.30 or later, adds
`lifecycle.preStop: {sleep: {seconds: N}}` with N = `prestopBridgeSeconds`
(5): the native sleep action, which needs no `sleep` binary (distroless
images have none). When the grace period (30 when unset) is then shorter
than the bridge + the drain + the shutdown budget (at least
`prestopMinRemainingSeconds`), it also raises
`terminationGracePeriodSeconds` to that sum, so neither
`grace-period-too-short` nor `prestop-sleep-only` fires an error; the latter
keeps its info note: the bridge is not a drain. No fix before 1.30: an
`exec` of `sleep` fails in an image without the binary, and lifeguard
cannot see inside the image.
"#;

fn check(w: &Workload, ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    let settings = &ctx.policy.settings;
    if !settings.add_prestop_bridge || !w.long_running {
        return;
    }
    let missing: Vec<Receiver<'_>> = receivers(w, &ctx.batch.services, ctx.policy)
        .into_iter()
        .filter(|r| r.view.container.lifecycle.as_ref().is_none_or(|l| l.pre_stop.is_none()))
        .collect();
    if missing.is_empty() {
        return;
    }
    let bridge = settings.prestop_bridge_seconds;
    let min_remaining = settings.prestop_min_remaining_seconds;
    let native_ok = settings.kubernetes_minor() >= (1, 30);
    let grace = w.grace_period();

    // What the pod needs once every missing bridge is in: the shared sum, so
    // the merged fixes leave neither grace rule firing.
    let bridged = |pointer: &str| missing.iter().any(|r| r.view.pointer == pointer);
    let mut needs = ctx.shutdown_needs(w).to_vec();
    for n in needs.iter_mut().filter(|n| bridged(&n.pointer)) {
        n.prestop = Some(PreStopSleep { seconds: SleepSeconds::Finite(bridge), sleep_only: true, native: true });
    }
    let worst = needs
        .iter()
        .filter(|n| bridged(&n.pointer))
        .max_by_key(|n| n.grace_after_sleep(bridge, min_remaining))
        .filter(|n| n.grace_after_sleep(bridge, min_remaining) > grace);
    let raise = worst.map(|n| {
        let own = n.grace_after_sleep(bridge, min_remaining);
        let g = own.max(required_grace(&needs).unwrap_or(0));
        let description = format!(
            "set terminationGracePeriodSeconds to {g} (container {:?}: bridge {bridge}s + drain {}s + {}s to shut down, or more if another container needs it)",
            n.container,
            n.drain_seconds(),
            n.shutdown_seconds().max(min_remaining)
        );
        (g, description)
    });
    let grace_field = join(&w.spec_pointer, &["terminationGracePeriodSeconds"]);

    for r in &missing {
        let name = r.view.name();
        let lifecycle = r.view.container.lifecycle.is_some();
        let pointer = if lifecycle { r.view.at(&["lifecycle"]) } else { r.view.pointer.to_owned() };
        let noun = if r.ports.len() == 1 { "port" } else { "ports" };
        let message = format!(
            "{} traffic to {noun} {}, but the container has no preStop hook, so SIGTERM can come before endpoint removal stops new connections",
            services_send(&r.services),
            r.ports.join(", ")
        );
        let help = if native_ok {
            format!(
                "add a short preStop sleep (prestopBridgeSeconds {bridge}s) so kube-proxy and load balancers stop routing to the pod before SIGTERM; drain in the app after SIGTERM"
            )
        } else {
            format!(
                "add a preStop `exec` of `sleep {bridge}` if the image has a sleep binary (the native sleep action lifeguard would add needs Kubernetes 1.30; policy kubernetesVersion is {:?})",
                settings.kubernetes_version
            )
        };
        let short = format!("no preStop: SIGTERM may beat endpoint removal; add a {bridge}s sleep");
        let finding = RULE.finding(Severity::Info, pointer, Some(name), message, short, help);
        let fix = native_ok.then(|| bridge_fix(r, bridge, raise.as_ref(), &grace_field)).flatten();
        out.push(with_fix(finding, fix));
    }
}

/// The bridge, at the level that exists (a `lifecycle` with a postStart
/// keeps it), and the raised grace period when the sum needs it.
fn bridge_fix(r: &Receiver<'_>, bridge: i64, raise: Option<&(i64, String)>, grace_field: &str) -> Option<Fix> {
    let sleep = json!({"sleep": {"seconds": bridge}});
    let op = if r.view.container.lifecycle.is_some() {
        add_op(&r.view.at(&["lifecycle", "preStop"]), sleep)?
    } else {
        add_op(&r.view.at(&["lifecycle"]), json!({"preStop": sleep}))?
    };
    let mut operations = vec![op];
    let mut description =
        format!("add a native preStop sleep of {bridge}s to container {:?} (Kubernetes 1.30+)", r.view.name());
    if let Some((g, why)) = raise {
        operations.push(add_op(grace_field, Value::from(*g))?);
        description.push_str("; ");
        description.push_str(why);
    }
    Some(Fix::new(description, operations))
}

#[cfg(test)]
mod tests;
