//! What each `lifeguard.dev/*` annotation means, for the front ends that
//! explain them where they are written (`lifeguard lsp`'s hover). Every
//! annotation's name is defined here, so the model reads its own inputs
//! without importing the policy or the simulation.

/// Pod template annotation: the measured slowest valid start, in seconds.
pub const ANNOTATION_COLD_START: &str = "lifeguard.dev/cold-start-seconds";
/// Pod template annotation: time the app needs to drain, in seconds.
pub const ANNOTATION_DRAIN: &str = "lifeguard.dev/drain-seconds";
/// Pod template annotation: time the app needs to shut down after draining.
pub const ANNOTATION_SHUTDOWN: &str = "lifeguard.dev/shutdown-budget-seconds";
/// Object or pod template annotation: rules to ignore, comma-separated.
pub const ANNOTATION_IGNORE: &str = "lifeguard.dev/ignore";
/// Why the rules are ignored; required for the ignore annotation to apply.
pub const ANNOTATION_IGNORE_REASON: &str = "lifeguard.dev/ignore-reason";
/// On the pod template: how long after its containers are first ready the
/// pod's readiness gates become True, in seconds, or `never`.
pub const ANNOTATION_READINESS_GATES: &str = "lifeguard.dev/readiness-gates-seconds";
/// Pod template annotation: what the probes really check,
/// `"liveness=local,readiness=dependency"` or `"app/liveness=local"`.
pub const ANNOTATION_PROBE_CHECKS: &str = "lifeguard.dev/probe-checks";
/// On the pod template: how long a preStop hook whose length its spec
/// does not show (an `exec` of a script, an `httpGet`) runs, in seconds.
pub const ANNOTATION_PRESTOP: &str = "lifeguard.dev/prestop-seconds";
/// On the pod template: how long a postStart hook whose length its spec
/// does not show (an `exec` of a script, an `httpGet`) runs, in seconds.
pub const ANNOTATION_POSTSTART: &str = "lifeguard.dev/poststart-seconds";

/// The annotation the webhook's `/mutate` leaves on what it fixed.
pub const ANNOTATION_MUTATED: &str = "lifeguard.dev/mutated";

/// Every annotation lifeguard reads or writes, with what it means (markdown).
pub const ANNOTATIONS: &[(&str, &str)] = &[
    (
        ANNOTATION_COLD_START,
        "On the pod template: the measured slowest valid start of the app, in seconds. `startup-probe-missing` and \
         `startup-budget-too-short` hold the startup probe's window to it (plus a margin), `lifeguard fix` sizes the \
         startup probe from it, and `lifeguard simulate`'s `boot` scenario boots for that long.",
    ),
    (
        ANNOTATION_DRAIN,
        "On the pod template: how long the app needs to finish in-flight work after SIGTERM, in seconds. \
         `grace-period-too-short` adds it to the preStop and the shutdown budget; without it the policy's \
         assumption (or a `*DRAIN_SECONDS` env var) is used.",
    ),
    (
        ANNOTATION_SHUTDOWN,
        "On the pod template: how long the app needs to shut down after draining, in seconds, counted by \
         `grace-period-too-short` into the grace period the pod needs.",
    ),
    (
        ANNOTATION_PROBE_CHECKS,
        "On the pod template: what the probes really check, comma-separated `[CONTAINER/]PROBE=local|dependency` \
         (e.g. `liveness=local,readiness=dependency`), for `lifeguard simulate` when the handler's name does not say.",
    ),
    (
        ANNOTATION_PRESTOP,
        "On the pod template: how long a preStop hook whose length its spec does not show (an `exec` of a script, \
         an `httpGet`) runs, in seconds, for `lifeguard simulate`: the kubelet runs the hook before SIGTERM and \
         takes its time out of the grace period. Unstated, the simulation takes 0 s and says so.",
    ),
    (
        ANNOTATION_POSTSTART,
        "On the pod template: how long a postStart hook whose length its spec does not show (an `exec` of a \
         script, an `httpGet`) runs, in seconds, for `lifeguard simulate`: the kubelet probes the container only \
         once the hook has ended. Unstated, the simulation takes 0 s and says so.",
    ),
    (
        ANNOTATION_READINESS_GATES,
        "On the pod template: how long after its containers are first ready the pod's readiness gates become \
         True (seconds, or `never`), for `lifeguard simulate`: until then the pod stays out of the Service's \
         endpoints. Unstated, the simulation takes them as True at once and says so.",
    ),
    (
        ANNOTATION_IGNORE,
        "On the object or its pod template: rules whose findings are suppressed here, comma-separated. Applies only \
         with `lifeguard.dev/ignore-reason`; suppressed findings are counted, not hidden.",
    ),
    (
        ANNOTATION_IGNORE_REASON,
        "Why the rules of `lifeguard.dev/ignore` do not apply here. Required: without a reason the ignore annotation \
         does not apply and `ignore-annotation-invalid` reports it.",
    ),
    (
        ANNOTATION_MUTATED,
        "Written by the webhook's `/mutate`: the rules whose fixes it applied to this object, kept across calls.",
    ),
];

/// What `key` means, if it is one of lifeguard's annotations.
pub fn annotation_doc(key: &str) -> Option<&'static str> {
    ANNOTATIONS.iter().find(|(name, _)| *name == key).map(|(_, doc)| *doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_annotation_is_documented_once() {
        let mut names: Vec<&str> = ANNOTATIONS.iter().map(|(n, _)| *n).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ANNOTATIONS.len());
        assert!(names.iter().all(|n| n.starts_with("lifeguard.dev/")));
        assert!(annotation_doc("lifeguard.dev/ignore-reason").is_some_and(|d| d.contains("Required")));
        assert_eq!(annotation_doc("lifeguard.dev/other"), None);
    }
}
