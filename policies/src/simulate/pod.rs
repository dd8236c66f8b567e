//! The container as the simulation sees it: its probes with what they
//! check, its restart policy, its hooks, the pod's readiness gates, and
//! what it needs between SIGTERM and exit.
//!
//! Over 400 lines: `ContainerModel` has twenty documented fields, and
//! `containers` (about 170 lines) fills each from the spec, the flags, the
//! annotations or the policy, with the assumption it rests on; the struct and
//! its one builder change together whenever the model learns something.

use crate::assumption::{About, Assumption, Source};
use crate::model::{
    ContainerView, ProbeKind, ProbeTiming, SleepSeconds, Workload, assumed_boot, assumed_stop as assumed_stop_of,
    shared_liveness_readiness, shutdown_needs, takes_traffic_without_services, traffic_assumption,
};
use crate::policy::Policy;

use super::assumptions::Assumptions;
use super::checks::{ProbeCheck, ProbeChecks};
use super::gates::{GateDelay, ReadinessGates};
use super::hooks::{HookLength, PostStart, hook_assumption, poststart_of, prestop_of};
use super::inference::{infer, unresolved};
use super::reach::{Reach, shared_reach};
use super::scenario::ScenarioKind;
use super::stop_signal::StopSignal;
use crate::model::{ANNOTATION_POSTSTART, ANNOTATION_PRESTOP, ANNOTATION_PROBE_CHECKS, ANNOTATION_READINESS_GATES};

/// One probe of a container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeModel {
    /// Which probe.
    pub kind: ProbeKind,
    /// Its timing, Kubernetes defaults filled in.
    pub timing: ProbeTiming,
    /// What its answer depends on.
    pub check: ProbeCheck,
    /// `terminationGracePeriodSeconds` of the probe itself, if set.
    pub grace: Option<i64>,
}

/// A container ready to simulate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerModel {
    /// Container name.
    pub name: String,
    /// Pointer to the container.
    pub pointer: String,
    /// A native sidecar: an init container with `restartPolicy: Always`,
    /// started before the regular containers, in the spec's order.
    pub sidecar: bool,
    /// Startup, liveness and readiness probes, those set.
    pub probes: Vec<ProbeModel>,
    /// Whether a killed container starts again (`restartPolicy` Always or OnFailure).
    pub restarts: bool,
    /// The pod's `terminationGracePeriodSeconds` (30 when unset).
    pub grace: i64,
    /// How long the preStop hook runs; `None` when there is none.
    pub prestop: Option<SleepSeconds>,
    /// Where that length comes from.
    pub prestop_length: HookLength,
    /// The postStart hook, if it has one.
    pub poststart: Option<PostStart>,
    /// The pod's readiness gates and when they become True.
    pub readiness_gates: ReadinessGates,
    /// The signal the runtime sends to stop it.
    pub stop_signal: StopSignal,
    /// Declared drain, seconds (0 when undeclared).
    pub drain: i64,
    /// Declared shutdown budget, seconds (0 when undeclared).
    pub shutdown: i64,
    /// How long a deleted app takes to stop after SIGTERM when it declares
    /// neither drain nor shutdown: the policy's `prestopMinRemainingSeconds`,
    /// the least lint's rules leave it (`None` when something is declared).
    pub assumed_stop: Option<i64>,
    /// How long the app takes to boot when nothing else is said: the
    /// declared cold start, the policy's GPU boot for a model server, else 0.
    pub cold_start: i64,
    /// Replicas of the workload (`spec.replicas`, 1 when unset).
    pub replicas: i64,
    /// The probes whose port the kubelet cannot resolve, each with its
    /// handler's port (`tcpSocket port "postgres"`): their check is
    /// [`ProbeCheck::Unresolved`].
    pub unresolved: Vec<(ProbeKind, String)>,
    /// `Service/name` of each Service of the input that selects the pod,
    /// once each, by namespace and name; empty when none does (or the input
    /// has none).
    pub services: Vec<String>,
    /// Whether requests reach the container: a Service of the input sends
    /// them ([`crate::model::receivers`]), or the input has no Service at
    /// all and the container declares a port Prometheus does not scrape
    /// (the assumption `readiness-probe-missing` makes).
    pub receives_traffic: bool,
    /// Everything the model assumes of the container beyond its spec, with
    /// sources: each scenario's outcome carries the ones it reads
    /// ([`ContainerModel::assumptions_for`]).
    pub assumed: Vec<Assumption>,
}

/// What the input says of the traffic a pod receives.
#[derive(Debug, Clone, Copy)]
pub struct Traffic<'a> {
    /// `Service/name` of each Service of the input that selects the pod.
    pub services: &'a [String],
    /// Pointers of the containers those Services send requests to
    /// ([`crate::model::receivers`]).
    pub receivers: &'a [String],
    /// Whether the input has any Service at all.
    pub input_has_services: bool,
}

impl ContainerModel {
    /// For tests: one container `app` with these probes and the kubelet's
    /// defaults otherwise (grace 30, restarts, nothing declared, 1 replica).
    #[cfg(test)]
    pub(crate) fn with_probes(probes: Vec<ProbeModel>) -> ContainerModel {
        ContainerModel {
            name: "app".into(),
            pointer: "/spec/containers/0".into(),
            sidecar: false,
            probes,
            restarts: true,
            grace: 30,
            prestop: None,
            prestop_length: HookLength::Read,
            poststart: None,
            readiness_gates: ReadinessGates::default(),
            stop_signal: StopSignal::Default,
            drain: 0,
            shutdown: 0,
            assumed_stop: None,
            cold_start: 0,
            replicas: 1,
            unresolved: Vec::new(),
            services: Vec::new(),
            receives_traffic: false,
            assumed: Vec::new(),
        }
    }

    /// The assumptions a scenario's verdict rests on: the boot (as the
    /// scenario states it, else as assumed) and the traffic for a boot; what
    /// each probe checks and a shared handler's reach for a stall; the
    /// app's stop, the preStop hook, the request, the endpoint propagation
    /// and the traffic for a deletion; the postStart hook wherever it runs.
    pub fn assumptions_for(&self, scenario: ScenarioKind, a: &Assumptions) -> Vec<Assumption> {
        let about: &[About] = match scenario {
            ScenarioKind::Boot(_) => &[About::Probes, About::Boot, About::Poststart, About::Traffic],
            ScenarioKind::Stall(_) => &[About::Probes, About::Checks, About::Reach],
            ScenarioKind::Delete => {
                &[About::Probes, About::Drain, About::Shutdown, About::Stop, About::Prestop, About::Traffic]
            }
            ScenarioKind::Crash(_) | ScenarioKind::PostStartFail => &[About::Probes, About::Boot, About::Poststart],
            ScenarioKind::Pause(_) | ScenarioKind::Wedge => &[About::Probes, About::Poststart],
            // A workload's pods boot and are deleted.
            ScenarioKind::Rollout | ScenarioKind::Drain => &[
                About::Probes,
                About::Boot,
                About::Poststart,
                About::Traffic,
                About::Drain,
                About::Shutdown,
                About::Stop,
                About::Prestop,
            ],
        };
        let mut out: Vec<Assumption> = self
            .assumed
            .iter()
            .filter(|x| about.contains(&x.about))
            .map(|x| match (scenario, x.about) {
                (ScenarioKind::Boot(Some(s)), About::Boot) => {
                    Assumption::new(About::Boot, format!("{s}s"), Source::CommandLine, "--scenario boot:DURATION")
                }
                _ => x.clone(),
            })
            .collect();
        if scenario == ScenarioKind::Delete {
            let defaults = Assumptions::default();
            let stated = |value: i64, default: i64, flag: &str| {
                if value == default {
                    (Source::Default, "nothing stated".to_owned())
                } else {
                    (Source::CommandLine, flag.to_owned())
                }
            };
            let (source, from) = stated(a.request_seconds, defaults.request_seconds, "--request-seconds");
            out.push(Assumption::new(About::Request, format!("{}s", a.request_seconds), source, from));
            let (source, from) = stated(
                a.endpoint_propagation_seconds,
                defaults.endpoint_propagation_seconds,
                "--endpoint-propagation-seconds",
            );
            out.push(Assumption::new(
                About::EndpointPropagation,
                format!("{}s", a.endpoint_propagation_seconds),
                source,
                from,
            ));
        }
        out
    }

    /// The probe of a kind, if set.
    pub fn probe(&self, kind: ProbeKind) -> Option<&ProbeModel> {
        self.probes.iter().find(|p| p.kind == kind)
    }

    /// The port of a probe of this kind that the kubelet cannot resolve
    /// (`tcpSocket port "postgres"`), if it has one.
    pub fn unresolved(&self, kind: ProbeKind) -> Option<&str> {
        self.unresolved.iter().find(|(k, _)| *k == kind).map(|(_, port)| port.as_str())
    }
}

/// A `lifeguard.dev/` annotation of the simulation that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("annotation {annotation}: {detail}")]
pub struct AnnotationError {
    /// Pointer to the annotation in the object.
    pub pointer: String,
    /// The annotation.
    pub annotation: &'static str,
    /// What is wrong.
    pub detail: String,
}

/// The containers of a workload as the simulation sees them, with the
/// `services` that select the pod. A probe whose port the kubelet cannot
/// resolve checks nothing ([`ProbeCheck::Unresolved`]), whatever is stated;
/// otherwise what it checks comes from `stated` (the `--probe-checks`
/// flag) first, then the pod template's annotation, then what the handler
/// shows ([`infer`]).
pub fn containers(
    w: &Workload,
    policy: &Policy,
    assumptions: &Assumptions,
    replicas: i64,
    traffic: Traffic<'_>,
) -> Result<Vec<ContainerModel>, AnnotationError> {
    let stated = &assumptions.probe_checks;
    let error = |annotation: &'static str, detail: String| AnnotationError {
        pointer: w.annotation_pointer(annotation),
        annotation,
        detail,
    };
    let seconds = |annotation: &'static str| {
        w.annotation_seconds(annotation)
            .transpose()
            .map_err(|raw| error(annotation, format!("{raw:?}: expected whole seconds (a duration like 30s)")))
    };
    let annotated = match w.annotations.get(ANNOTATION_PROBE_CHECKS) {
        Some(raw) => ProbeChecks::parse(raw).map_err(|e| error(ANNOTATION_PROBE_CHECKS, e.to_string()))?,
        None => ProbeChecks::default(),
    };
    // The flags win over the annotations; an annotation that cannot be read
    // is an error all the same, as for probe-checks.
    let stated_prestop = assumptions.prestop_seconds.or(seconds(ANNOTATION_PRESTOP)?);
    let stated_poststart = assumptions.poststart_seconds.or(seconds(ANNOTATION_POSTSTART)?);
    let annotated_gates = w
        .annotations
        .get(ANNOTATION_READINESS_GATES)
        .map(|raw| GateDelay::parse(raw))
        .transpose()
        .map_err(|e| error(ANNOTATION_READINESS_GATES, e.to_string()))?;
    let readiness_gates = ReadinessGates {
        conditions: w.spec.readiness_gates.iter().flatten().map(|g| g.condition_type.clone()).collect(),
        stated: assumptions.readiness_gates.or(annotated_gates),
    };
    let needs = shutdown_needs(w, policy);
    let mut out = Vec::new();
    w.for_each_container(|c: ContainerView<'_>| {
        let name = c.name().to_owned();
        let kinds = [ProbeKind::Startup, ProbeKind::Liveness, ProbeKind::Readiness];
        let unresolved: Vec<(ProbeKind, String)> =
            kinds.into_iter().filter_map(|kind| Some((kind, unresolved(c.container, kind)?))).collect();
        let mut checked = Vec::new();
        let probes = kinds
            .into_iter()
            .filter_map(|kind| {
                let probe = kind.of(c.container)?;
                let check = if unresolved.iter().any(|(k, _)| *k == kind) {
                    ProbeCheck::Unresolved
                } else {
                    let shared = shared_liveness_readiness(c.container).is_some();
                    let other = match kind {
                        ProbeKind::Liveness if shared => Some(ProbeKind::Readiness),
                        ProbeKind::Readiness if shared => Some(ProbeKind::Liveness),
                        _ => None,
                    };
                    let (check, source) = said(stated, &annotated, &name, kind, other).or_else(|| {
                        infer(c, kind, policy).map(|check| (check, inferred_source(c, kind, check, policy)))
                    })?;
                    if kind != ProbeKind::Startup {
                        checked.push(Assumption::new(
                            About::Checks,
                            format!("{}={}", kind.word(), check.word()),
                            source,
                            check_evidence(source),
                        ));
                    }
                    check
                };
                Some(ProbeModel {
                    kind,
                    timing: ProbeTiming::of(probe),
                    check,
                    grace: probe.termination_grace_period_seconds,
                })
            })
            .collect();
        let need = needs.iter().find(|n| n.pointer == c.pointer);
        // The boot lint's startup rules and fix assume, from the same reading.
        let boot = assumed_boot(w, &c, policy);
        // With nothing declared of its stop, a deleted app is taken to need
        // the least lint's rules leave it after SIGTERM
        // (`prestopMinRemainingSeconds`), so a preStop sleep that leaves less
        // is the SIGKILL here that it is an error there.
        let floor = policy.settings.prestop_min_remaining_seconds;
        let undeclared = need.is_none_or(|n| n.drain.is_none() && n.shutdown.is_none());
        let assumed_stop = (undeclared && floor > 0).then_some(floor);
        let (prestop, prestop_length) = prestop_of(c.container, need.and_then(|n| n.prestop), stated_prestop);
        let poststart = poststart_of(c.container, stated_poststart);
        let receives_traffic = traffic.receivers.iter().any(|p| p == c.pointer)
            || (!traffic.input_has_services && takes_traffic_without_services(w, &c));
        let mut assumed = vec![boot.assumption];
        // A shared handler's reach says what both its probes check; a probe
        // is named apart only where what is stated of it says otherwise.
        let reach = shared_reach_of(w, c, policy, stated, &annotated);
        if let Some(r) = &reach {
            checked.retain(|a| !a.value.ends_with(&format!("={}", r.value)));
        }
        assumed.append(&mut checked);
        assumed.extend(reach);
        match need {
            Some(n) if !undeclared => assumed.extend(n.assumptions()),
            _ => assumed.extend(assumed_stop.map(|floor| assumed_stop_of(floor, false))),
        }
        let hook_source = |flag: Option<i64>| if flag.is_some() { Source::CommandLine } else { Source::Annotation };
        assumed.extend(hook_assumption(
            About::Prestop,
            prestop,
            prestop_length,
            hook_source(assumptions.prestop_seconds),
        ));
        if let Some(h) = poststart {
            assumed.extend(hook_assumption(
                About::Poststart,
                Some(h.length),
                h.source,
                hook_source(assumptions.poststart_seconds),
            ));
        }
        assumed.push(traffic_assumption(traffic.services, receives_traffic, traffic.input_has_services));
        // A controller that adds probes the template lacks (KubeRay, to its
        // Ray container, the first) runs a pod the model does not: say so.
        let injected = w.injected_probes.filter(|_| c.pointer.ends_with("/containers/0"));
        if let Some(why) =
            injected.filter(|_| c.container.liveness_probe.is_none() || c.container.readiness_probe.is_none())
        {
            assumed.push(Assumption::new(
                About::Probes,
                "as written",
                Source::Spec,
                format!("{why}; the simulation runs the template without them"),
            ));
        }
        let restart_policy = if c.sidecar { Some("Always") } else { w.spec.restart_policy.as_deref() };
        out.push(ContainerModel {
            pointer: c.pointer.to_owned(),
            sidecar: c.sidecar,
            probes,
            restarts: restart_policy != Some("Never"),
            grace: w.grace_period(),
            prestop,
            prestop_length,
            poststart,
            readiness_gates: readiness_gates.clone(),
            stop_signal: StopSignal::of(c.container, assumptions.feature_gates),
            drain: need.map_or(0, |n| n.drain_seconds()),
            shutdown: need.map_or(0, |n| n.shutdown_seconds()),
            assumed_stop,
            cold_start: boot.seconds,
            replicas,
            unresolved,
            services: traffic.services.to_vec(),
            receives_traffic,
            assumed,
            name,
        });
    });
    Ok(out)
}

/// Where an inferred check comes from: what the handler shows (a port, a
/// process, a client aimed at another host), a shared handler's known
/// reach, or nothing (local by default).
fn inferred_source(c: ContainerView<'_>, kind: ProbeKind, check: ProbeCheck, policy: &Policy) -> Source {
    match check {
        ProbeCheck::PortOnly | ProbeCheck::ProcessOnly | ProbeCheck::Unresolved => Source::Spec,
        ProbeCheck::Dependency => match shared_liveness_readiness(c.container) {
            Some(shared) if kind != ProbeKind::Startup => super::reach::inferred_reach(c, &shared, policy).source,
            _ => Source::Spec,
        },
        ProbeCheck::Local => Source::Default,
    }
}

/// The words after a check's source.
fn check_evidence(source: Source) -> &'static str {
    match source {
        Source::CommandLine => "--probe-checks",
        Source::Annotation => "lifeguard.dev/probe-checks",
        Source::Spec => "what the handler shows",
        Source::KnownImage | Source::Policy => "a known local handler",
        Source::Env | Source::Default => "nothing says it reaches a dependency",
    }
}

/// What is stated of a probe (`--probe-checks` first, then the
/// annotation), and by which. For a handler shared with the `other` probe,
/// one handler checks one thing: a dependency stated of either holds for
/// both, as `probe-endpoint-reused` reads it ([`shared_reach`]); else what
/// is stated of this probe, then of the other.
fn said(
    stated: &ProbeChecks,
    annotated: &ProbeChecks,
    container: &str,
    kind: ProbeKind,
    other: Option<ProbeKind>,
) -> Option<(ProbeCheck, Source)> {
    let of = |k: ProbeKind| {
        let flag = stated.get(container, k).map(|check| (check, Source::CommandLine));
        flag.or_else(|| annotated.get(container, k).map(|check| (check, Source::Annotation)))
    };
    let (mine, theirs) = (of(kind), other.and_then(of));
    [mine, theirs].into_iter().flatten().find(|(check, _)| *check == ProbeCheck::Dependency).or(mine).or(theirs)
}

/// The reach of the handler liveness and readiness share, when they share
/// one, as the stall reads it: what is stated of either probe ([`said`]),
/// else what `probe-endpoint-reused` infers ([`shared_reach`]).
fn shared_reach_of(
    w: &Workload,
    c: ContainerView<'_>,
    policy: &Policy,
    stated: &ProbeChecks,
    annotated: &ProbeChecks,
) -> Option<Assumption> {
    let shared = shared_liveness_readiness(c.container)?;
    let declared = said(stated, annotated, c.name(), ProbeKind::Liveness, Some(ProbeKind::Readiness));
    Some(match declared {
        Some((check, source)) => {
            let reach = if check == ProbeCheck::Dependency { Reach::Dependency } else { Reach::Local };
            Assumption::new(About::Reach, reach.word(), source, check_evidence(source))
        }
        None => shared_reach(w, c, &shared, policy).assumption(),
    })
}
