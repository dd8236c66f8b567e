//! What a finding or a verdict rests on beyond the manifest: one value, where
//! it came from, and how to declare it. `lint`, `fix` and `simulate` read the
//! same values from the same places ([`crate::model::assumed_boot`], the
//! declared drain and shutdown, a shared handler's reach), and every output
//! carries them with the finding or the verdict, so a reader sees which
//! assumption to change when one is wrong.

use serde::Serialize;

/// What an assumption is about. The names are a public interface (the
/// `about` field of the JSON and SARIF outputs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum About {
    /// How long the app takes to answer after its container starts.
    Boot,
    /// What the handler liveness and readiness share reaches.
    Reach,
    /// What one probe checks (`liveness: dependency`), in a stall.
    Checks,
    /// The app's own drain after SIGTERM.
    Drain,
    /// The app's shutdown after its drain.
    Shutdown,
    /// What a deleted app needs after SIGTERM when it declares neither.
    Stop,
    /// The longest request the app admits.
    Request,
    /// How long endpoint removal takes to reach every proxy.
    EndpointPropagation,
    /// How long a preStop hook runs.
    Prestop,
    /// How long a postStart hook runs.
    Poststart,
    /// Whether requests reach the container.
    Traffic,
    /// Which probes the pod runs: the template's, where its controller
    /// adds others (KubeRay's) that the model does not run.
    Probes,
    /// How many replicas a workload's controller keeps.
    Replicas,
}

impl About {
    /// The name as every output prints it (`endpoint-propagation`).
    pub fn as_str(self) -> &'static str {
        match self {
            About::Boot => "boot",
            About::Reach => "reach",
            About::Checks => "checks",
            About::Drain => "drain",
            About::Shutdown => "shutdown",
            About::Stop => "stop",
            About::Request => "request",
            About::EndpointPropagation => "endpoint-propagation",
            About::Prestop => "prestop",
            About::Poststart => "poststart",
            About::Traffic => "traffic",
            About::Probes => "probes",
            About::Replicas => "replicas",
        }
    }
}

/// Where an assumed value comes from, first found wins in this order. The
/// names are a public interface (the `source` field).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// A flag of the command (`--endpoint-propagation-seconds`,
    /// `--scenario boot:430s`).
    CommandLine,
    /// A `lifeguard.dev/` annotation on the pod template.
    Annotation,
    /// An environment variable of the container.
    Env,
    /// The spec itself shows it (a handler aimed at another host, a sleep,
    /// the Services of the input).
    Spec,
    /// A known image or handler (a model server's health endpoint).
    KnownImage,
    /// A setting of the policy (`gpuBootSeconds`, `localHealthPaths`).
    Policy,
    /// Nothing says: lifeguard's default.
    Default,
}

impl Source {
    /// The name as every output prints it (`command-line`).
    pub fn as_str(self) -> &'static str {
        match self {
            Source::CommandLine => "command-line",
            Source::Annotation => "annotation",
            Source::Env => "env",
            Source::Spec => "spec",
            Source::KnownImage => "known-image",
            Source::Policy => "policy",
            Source::Default => "default",
        }
    }
}

/// One assumption a finding or a verdict rests on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Assumption {
    /// What it is about.
    pub about: About,
    /// The value as the outputs print it (`600s`, `dependency`, `unknown`).
    pub value: String,
    /// Where it came from.
    pub source: Source,
    /// The annotation, flag, setting or evidence it was read from
    /// (`gpuBootSeconds`, `lifeguard.dev/cold-start-seconds`, `env
    /// VLLM_DRAIN_SECONDS`), or why the default holds.
    pub from: String,
    /// How to declare it when it is wrong.
    pub declare: &'static str,
}

impl Assumption {
    /// An assumption of `value` about `about`.
    pub fn new(about: About, value: impl Into<String>, source: Source, from: impl Into<String>) -> Assumption {
        Assumption { about, value: value.into(), source, from: from.into(), declare: declare(about) }
    }

    /// One line for the text outputs: `boot 600s (policy: gpuBootSeconds
    /// for a model server)`.
    pub fn line(&self) -> String {
        format!("{} {} ({}: {})", self.about.as_str(), self.value, self.source.as_str(), self.from)
    }

    /// The line in brief, for a text report: a default is named as one,
    /// without why (`endpoint-propagation 2s (default)`).
    pub fn brief(&self) -> String {
        match self.source {
            Source::Default => format!("{} {} (default)", self.about.as_str(), self.value),
            _ => self.line(),
        }
    }
}

/// The assumptions as one line: `boot 600s (policy: ...); reach unknown (...)`.
pub fn joined(assumptions: &[Assumption]) -> String {
    assumptions.iter().map(Assumption::line).collect::<Vec<_>>().join("; ")
}

/// [`joined`] in brief ([`Assumption::brief`]), for the text reports.
pub fn joined_brief(assumptions: &[Assumption]) -> String {
    assumptions.iter().map(Assumption::brief).collect::<Vec<_>>().join("; ")
}

/// How each assumption is declared: one table, which docs/simulate.md's
/// "One set of assumptions" spells out.
fn declare(about: About) -> &'static str {
    match about {
        About::Boot => "pod template annotation lifeguard.dev/cold-start-seconds, or simulate --scenario boot:DURATION",
        About::Reach | About::Checks => {
            "pod template annotation lifeguard.dev/probe-checks (readiness=dependency or readiness=local), \
             simulate --probe-checks, or the policy's localHealthPaths and localHealthImages"
        }
        About::Drain => "pod template annotation lifeguard.dev/drain-seconds, or a *DRAIN_SECONDS env var",
        About::Shutdown | About::Stop => {
            "pod template annotation lifeguard.dev/shutdown-budget-seconds, or a *SHUTDOWN_TIMEOUT_SECONDS env var"
        }
        About::Request => "simulate --request-seconds",
        About::EndpointPropagation => "simulate --endpoint-propagation-seconds",
        About::Prestop => "pod template annotation lifeguard.dev/prestop-seconds, or simulate --prestop-seconds",
        About::Poststart => "pod template annotation lifeguard.dev/poststart-seconds, or simulate --poststart-seconds",
        About::Traffic => "a Service in the input (the file's or its directory's)",
        About::Probes => "declare the probes in the template, so the controller adds none",
        About::Replicas => "the workload's spec.replicas, or simulate --nodes for a DaemonSet",
    }
}

#[cfg(test)]
mod tests {
    use super::{About, Assumption, Source, joined, joined_brief};

    #[test]
    fn an_assumption_reads_as_one_line_and_serializes_with_stable_names() {
        let boot = Assumption::new(About::Boot, "600s", Source::Policy, "gpuBootSeconds for a model server");
        let propagation = Assumption::new(About::EndpointPropagation, "2s", Source::Default, "nothing stated");
        assert_eq!(
            joined(&[boot.clone(), propagation.clone()]),
            "boot 600s (policy: gpuBootSeconds for a model server); endpoint-propagation 2s (default: nothing stated)"
        );
        assert_eq!(
            joined_brief(&[boot.clone(), propagation.clone()]),
            "boot 600s (policy: gpuBootSeconds for a model server); endpoint-propagation 2s (default)"
        );
        let json = serde_json::to_value(&propagation).expect("serializes");
        assert_eq!(json["about"], "endpoint-propagation");
        assert_eq!(json["source"], "default");
        assert_eq!(json["declare"], "simulate --endpoint-propagation-seconds");
        assert_eq!(serde_json::to_value(Source::KnownImage).expect("serializes"), "known-image");
    }
}
