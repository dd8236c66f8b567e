//! What the simulation assumes beyond the manifest: stated on the command
//! line (or by an annotation), else the defaults below.

use super::checks::ProbeChecks;
use super::gates::GateDelay;
use super::kubelet::world::BACKOFF_MAX_MS;
use super::stop_signal::FeatureGates;

/// What the simulation assumes beyond the manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assumptions {
    /// How long endpoint removal takes to reach every proxy after deletion (default 2).
    pub endpoint_propagation_seconds: i64,
    /// The longest request the app admits (default 0).
    pub request_seconds: i64,
    /// What probes check, as stated on the command line (wins over the annotation).
    pub probe_checks: ProbeChecks,
    /// How long a preStop hook runs whose length the spec does not show (an
    /// `exec` of a script, an `httpGet`), as stated on the command line
    /// (wins over the `lifeguard.dev/prestop-seconds` annotation).
    pub prestop_seconds: Option<i64>,
    /// How long a postStart hook runs whose length the spec does not show,
    /// as stated on the command line (wins over the
    /// `lifeguard.dev/poststart-seconds` annotation).
    pub poststart_seconds: Option<i64>,
    /// When the pod's readiness gates become True, as stated on the command
    /// line (wins over the `lifeguard.dev/readiness-gates-seconds` annotation).
    pub readiness_gates: Option<GateDelay>,
    /// The cluster's feature gates the model reads (`ContainerStopSignals`).
    pub feature_gates: FeatureGates,
    /// The kubelet's CrashLoopBackOff ceiling
    /// (`crashLoopBackOff.maxContainerRestartPeriod`; default 300).
    pub max_backoff_seconds: i64,
    /// The deletion's own grace period (`kubectl delete --grace-period`),
    /// which wins over the pod's `terminationGracePeriodSeconds` (`delete`).
    pub delete_grace_seconds: Option<i64>,
    /// The nodes a DaemonSet runs on, as stated on the command line
    /// (`rollout`; else [`DEFAULT_NODES`], said so).
    pub nodes: Option<i64>,
}

/// The nodes a DaemonSet's rollout is taken to run on when nothing says.
pub const DEFAULT_NODES: i64 = 3;

impl Default for Assumptions {
    fn default() -> Assumptions {
        Assumptions {
            endpoint_propagation_seconds: 2,
            request_seconds: 0,
            probe_checks: ProbeChecks::default(),
            prestop_seconds: None,
            poststart_seconds: None,
            readiness_gates: None,
            feature_gates: FeatureGates::default(),
            max_backoff_seconds: BACKOFF_MAX_MS / 1000,
            delete_grace_seconds: None,
            nodes: None,
        }
    }
}
