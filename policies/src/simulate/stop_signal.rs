//! The signal that stops a container, and the feature gates that decide it.
//!
//! The kubelet does not signal the container itself: it asks the runtime to
//! stop it (CRI `StopContainer`, with the grace period left), and the
//! runtime sends the container's stop signal, then SIGKILL. That signal is
//! `lifecycle.stopSignal` only with the `ContainerStopSignals` feature gate
//! on (alpha since 1.33, off by default in 1.37: pkg/features/kube_features.go):
//! the API server drops the field otherwise (pkg/api/pod/util.go,
//! `dropContainerStopSignals`), and the kubelet passes it to the runtime in
//! the container's CRI config only then (kuberuntime/helpers.go,
//! `getContainerConfigStopSignal`). A runtime that does not know that CRI
//! field (containerd 1.6) sends the image's STOPSIGNAL, SIGTERM when the
//! image sets none, as it does without the field.

use k8s_openapi::api::core::v1::Container;

/// The feature gates the model knows, by the kubelet's names.
pub const FEATURE_GATES: &[&str] = &["ContainerStopSignals"];

/// The cluster's feature gates the simulation reads (`--feature-gates`),
/// each off unless stated, as in 1.37.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FeatureGates {
    /// `ContainerStopSignals`: the API server keeps `lifecycle.stopSignal`
    /// and the kubelet passes it to the runtime.
    pub container_stop_signals: bool,
}

/// A `--feature-gates` entry that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{given:?}: {problem}")]
pub struct FeatureGateError {
    /// The entry that is wrong.
    pub given: String,
    /// What is wrong with it.
    pub problem: String,
}

impl FeatureGates {
    /// Reads comma-separated `NAME=true|false`, as the kubelet's
    /// `--feature-gates` (only the gates in [`FEATURE_GATES`]).
    pub fn parse(text: &str) -> Result<FeatureGates, FeatureGateError> {
        let mut gates = FeatureGates::default();
        for raw in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let err = |problem: String| FeatureGateError { given: raw.to_owned(), problem };
            let (name, value) = raw.split_once('=').ok_or_else(|| err("expected NAME=true|false".to_owned()))?;
            let on = match value.trim() {
                "true" => true,
                "false" => false,
                _ => return Err(err("the value must be true or false".to_owned())),
            };
            match name.trim() {
                "ContainerStopSignals" => gates.container_stop_signals = on,
                _ => return Err(err(format!("the simulation models only {}", FEATURE_GATES.join(", ")))),
            }
        }
        Ok(gates)
    }
}

/// The signal the runtime sends a container to stop it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum StopSignal {
    /// No `lifecycle.stopSignal`: the image's STOPSIGNAL, SIGTERM when it
    /// sets none (the model says SIGTERM).
    #[default]
    Default,
    /// `lifecycle.stopSignal` with `ContainerStopSignals` on: the kubelet
    /// passes it to the runtime, which sends it if it knows the CRI field.
    Sent(String),
    /// `lifecycle.stopSignal` with `ContainerStopSignals` off: dropped by
    /// the API server, so the default is sent.
    Dropped(String),
}

impl StopSignal {
    /// The container's stop signal under `gates`.
    pub fn of(c: &Container, gates: FeatureGates) -> StopSignal {
        match c.lifecycle.as_ref().and_then(|l| l.stop_signal.as_deref()) {
            None => StopSignal::Default,
            Some(signal) if gates.container_stop_signals => StopSignal::Sent(signal.to_owned()),
            Some(signal) => StopSignal::Dropped(signal.to_owned()),
        }
    }

    /// The signal the timeline names when it is `lifecycle.stopSignal`.
    pub fn sent(&self) -> Option<&str> {
        match self {
            StopSignal::Sent(signal) => Some(signal),
            _ => None,
        }
    }

    /// Whether the stop is a SIGKILL at once (`stopSignal: SIGKILL`): the
    /// app gets no chance to finish anything.
    pub fn kills(&self) -> bool {
        self.sent() == Some("SIGKILL")
    }

    /// What the stop event says of the signal: empty for the default.
    pub fn detail(&self) -> String {
        match self {
            StopSignal::Default => String::new(),
            StopSignal::Sent(_) => "lifecycle.stopSignal, if the runtime applies it".to_owned(),
            StopSignal::Dropped(signal) => format!(
                "lifecycle.stopSignal {signal} is not sent: the ContainerStopSignals feature gate is alpha, off \
                 by default in 1.37; --feature-gates ContainerStopSignals=true if your cluster has it on"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Container;
    use serde_json::json;

    use super::{FeatureGates, StopSignal};

    #[test]
    fn reads_the_gates_the_model_knows() {
        assert_eq!(FeatureGates::parse(""), Ok(FeatureGates::default()));
        assert_eq!(FeatureGates::parse("ContainerStopSignals=true"), Ok(FeatureGates { container_stop_signals: true }));
        // A later entry wins, as in the kubelet.
        let last = FeatureGates::parse("ContainerStopSignals=true, ContainerStopSignals=false");
        assert_eq!(last, Ok(FeatureGates::default()));
        for bad in ["ContainerStopSignals", "ContainerStopSignals=yes", "SidecarContainers=true"] {
            let e = FeatureGates::parse(bad).expect_err(bad);
            assert!(e.to_string().starts_with(&format!("{bad:?}: ")), "{e}");
        }
    }

    #[test]
    fn the_stop_signal_is_sent_only_with_the_gate_on() {
        let c: Container =
            serde_json::from_value(json!({"name": "app", "lifecycle": {"stopSignal": "SIGINT"}})).expect("a container");
        let on = FeatureGates { container_stop_signals: true };
        assert_eq!(StopSignal::of(&c, on), StopSignal::Sent("SIGINT".into()));
        let off = StopSignal::of(&c, FeatureGates::default());
        assert_eq!(off, StopSignal::Dropped("SIGINT".into()));
        assert_eq!(off.sent(), None);
        assert!(off.detail().contains("SIGINT is not sent"), "{}", off.detail());
        let plain: Container = serde_json::from_value(json!({"name": "app"})).expect("a container");
        assert_eq!(StopSignal::of(&plain, on), StopSignal::Default);
        let kill = StopSignal::Sent("SIGKILL".into());
        assert!(kill.kills() && !StopSignal::Sent("SIGQUIT".into()).kills());
    }
}
