//! What a verdict reads from a scenario's runs, and how it states a time:
//! the data the verdicts and the endpoint sentences both read, below them.

/// A run's figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Figures {
    /// Restarts by startup or liveness.
    pub restarts: u32,
    /// When the first restart was decided, ms from the scenario's start.
    pub restart_at_ms: Option<i64>,
    /// Time out of the Service's endpoints, ms.
    pub unready_ms: i64,
    /// Whether a SIGKILL ended a container.
    pub sigkill: bool,
}

/// What the verdict reads from a scenario's runs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Reading {
    pub(crate) best: Figures,
    pub(crate) worst: Figures,
    /// Time every replica is out of endpoints at once, ms: what decides
    /// the verdict (one replica: the worst offset's; several, in a stall:
    /// [`Reading::at_once_ms`]).
    pub(crate) zero_endpoints_ms: i64,
    /// How long every phase offset is out of endpoints at once, ms (a stall
    /// of several replicas): the least time they are all out together.
    pub(crate) at_once_ms: Option<i64>,
    /// `Service/name` of the Services of the input that select the pod.
    pub(crate) services: Vec<String>,
    /// Why liveness never restarts the container (a port the kubelet
    /// cannot resolve), when it never does.
    pub(crate) blind: Option<String>,
    /// Whether the app finished booting (boot).
    pub(crate) booted: bool,
    /// In-flight work SIGKILL cut, ms (delete).
    pub(crate) cut_ms: Option<i64>,
    /// How long new connections are refused, and from when, ms: a deletion's
    /// stop signal before endpoint removal reaches the proxies, or a boot in
    /// the endpoints before the app answers.
    pub(crate) refused: Option<Refused>,
    /// The endpoint propagation the scenario assumed, ms.
    pub(crate) propagation_ms: i64,
    /// Whether the container has a readiness probe.
    pub(crate) has_readiness: bool,
    /// The largest CrashLoopBackOff delay seen, ms.
    pub(crate) backoff_ms: i64,
    /// The boot the scenario assumed, ms.
    pub(crate) boot_ms: i64,
    /// Replicas of the workload.
    pub(crate) replicas: i64,
    /// Why the postStart hook failed, when a failure killed a container.
    pub(crate) hook_failure: Option<&'static str>,
    /// Whether a container was left stopped (`restartPolicy: Never`).
    pub(crate) stopped: bool,
    /// Whether the container has a postStart hook.
    pub(crate) has_poststart: bool,
    /// Why the pod never joins the endpoints, when it never does for a
    /// reason the model knows (gates never True, a hook that never ends).
    pub(crate) never_serves: Option<String>,
    /// The pod's readiness, for a pod of more than one container: what a
    /// line that speaks of the endpoints says ([`PodReading`]).
    pub(crate) pod: Option<PodReading>,
}

/// What a verdict's line says of a pod of several containers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct PodReading {
    /// Time the pod is out of the endpoints, ms.
    pub(crate) out_ms: i64,
    /// What held it out (`container "proxy"`).
    pub(crate) held_by: String,
    /// Whether something other than the container the line is about held
    /// it out (another container, the gates): a stall's line then says so.
    pub(crate) others_hold: bool,
}

/// Seconds for people: `1`, `1.5`, `300`.
pub fn seconds(ms: i64) -> String {
    if ms % 1000 == 0 { format!("{}", ms / 1000) } else { format!("{:.1}", ms as f64 / 1000.0) }
}

/// Connections sent to a process that cannot take them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Refused {
    /// From when, ms from the scenario's start.
    pub(crate) from_ms: i64,
    /// For how long, ms.
    pub(crate) for_ms: i64,
}
