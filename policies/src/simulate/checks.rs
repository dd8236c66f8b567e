//! What each probe checks: inferred from the handler as the rules read it,
//! or stated by the user (`lifeguard.dev/probe-checks`, `--probe-checks`).

use crate::model::ProbeKind;

/// What a probe's answer depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeCheck {
    /// The process answers from its own state: fails when it is paused,
    /// wedged or still booting.
    Local,
    /// The process answers after checking a database, cache or other
    /// service: also fails while that dependency stalls.
    Dependency,
    /// A bare `tcpSocket`: the kernel accepts the connection while the port
    /// is open, even if the process is paused or wedged.
    PortOnly,
    /// An `exec` that only checks that a process exists: passes for as long
    /// as the container runs.
    ProcessOnly,
    /// An `httpGet` or `tcpSocket` whose port is a name the container does
    /// not declare: the kubelet cannot send it, every check errors, and the
    /// probe worker discards the result, so the probe keeps its first
    /// value (readiness: not ready; liveness: alive; startup: not started).
    Unresolved,
}

impl ProbeCheck {
    /// The word in timelines and the annotation (`local`, `dependency`, ...).
    pub fn word(self) -> &'static str {
        match self {
            ProbeCheck::Local => "local",
            ProbeCheck::Dependency => "dependency",
            ProbeCheck::PortOnly => "port only",
            ProbeCheck::ProcessOnly => "process exists",
            ProbeCheck::Unresolved => "port unresolved",
        }
    }
}

/// One `[CONTAINER/]PROBE=local|dependency` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    container: Option<String>,
    probe: ProbeKind,
    check: ProbeCheck,
}

/// Stated probe checks, parsed from the annotation's or the flag's syntax.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProbeChecks {
    entries: Vec<Entry>,
}

/// A `probe-checks` value that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{given:?}: {problem}")]
pub struct ProbeChecksError {
    /// The entry that is wrong.
    pub given: String,
    /// What is wrong with it.
    pub problem: String,
}

impl ProbeChecks {
    /// Reads comma-separated `[CONTAINER/]PROBE=local|dependency` entries
    /// (`PROBE` is `startup`, `liveness` or `readiness`).
    pub fn parse(text: &str) -> Result<ProbeChecks, ProbeChecksError> {
        let mut entries = Vec::new();
        for raw in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let err = |problem: &str| ProbeChecksError { given: raw.to_owned(), problem: problem.to_owned() };
            let (target, value) = raw.split_once('=').ok_or_else(|| err("expected PROBE=local|dependency"))?;
            let (container, probe) = match target.trim().split_once('/') {
                Some((c, p)) if !c.trim().is_empty() => (Some(c.trim().to_owned()), p.trim()),
                Some(_) => return Err(err("the container name before '/' is empty")),
                None => (None, target.trim()),
            };
            let probe = match probe {
                "startup" => ProbeKind::Startup,
                "liveness" => ProbeKind::Liveness,
                "readiness" => ProbeKind::Readiness,
                _ => return Err(err("the probe must be startup, liveness or readiness")),
            };
            let check = match value.trim() {
                "local" => ProbeCheck::Local,
                "dependency" => ProbeCheck::Dependency,
                _ => return Err(err("the value must be local or dependency")),
            };
            entries.push(Entry { container, probe, check });
        }
        Ok(ProbeChecks { entries })
    }

    /// What these entries say about a container's probe; a
    /// `CONTAINER/PROBE` entry wins over a bare `PROBE` one, a later over an earlier.
    pub fn get(&self, container: &str, probe: ProbeKind) -> Option<ProbeCheck> {
        let named = |e: &&Entry| e.probe == probe && e.container.as_deref() == Some(container);
        let any = |e: &&Entry| e.probe == probe && e.container.is_none();
        self.entries.iter().rev().find(named).or_else(|| self.entries.iter().rev().find(any)).map(|e| e.check)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::inference::{infer, unresolved};
    use super::{ProbeCheck, ProbeChecks};
    use crate::model::{ProbeKind, Workload};
    use crate::policy::Policy;

    fn checks(container: serde_json::Value) -> Vec<Option<ProbeCheck>> {
        let obj = json!({"kind": "Pod", "spec": {"containers": [container]}});
        let w = Workload::from_object(&obj).expect("reads").expect("a pod");
        let policy = Policy::default();
        let c = w.containers().next().expect("a container");
        [ProbeKind::Startup, ProbeKind::Liveness, ProbeKind::Readiness]
            .into_iter()
            .map(|k| infer(c, k, &policy))
            .collect()
    }

    #[test]
    fn infers_from_the_handler() {
        let http = |path: &str| json!({"httpGet": {"path": path, "port": 8080}});
        let got = checks(json!({"name": "a", "livenessProbe": http("/livez"), "readinessProbe": http("/readyz"),
            "startupProbe": {"tcpSocket": {"port": 8080}}}));
        assert_eq!(got, vec![Some(ProbeCheck::PortOnly), Some(ProbeCheck::Local), Some(ProbeCheck::Dependency)]);
        // A shared handler nothing says reaches a dependency is not stalled.
        let got = checks(json!({"name": "a", "livenessProbe": http("/healthz"), "readinessProbe": http("/healthz")}));
        assert_eq!(got, vec![None, Some(ProbeCheck::Local), Some(ProbeCheck::Local)]);
        let got = checks(json!({"name": "a", "livenessProbe": http("/ready"), "readinessProbe": http("/ready")}));
        assert_eq!(got, vec![None, Some(ProbeCheck::Dependency), Some(ProbeCheck::Dependency)]);
        let got = checks(json!({"name": "a", "livenessProbe": http("/actuator/health"),
            "readinessProbe": {"exec": {"command": ["pgrep", "java"]}}}));
        assert_eq!(got, vec![None, Some(ProbeCheck::Dependency), Some(ProbeCheck::ProcessOnly)]);
        let got = checks(
            json!({"name": "a", "livenessProbe": {"exec": {"command": ["redis-cli", "-h", "redis-master", "ping"]}}}),
        );
        assert_eq!(got, vec![None, Some(ProbeCheck::Dependency), None]);
    }

    #[test]
    fn a_model_servers_shared_handler_is_its_own_engines_health_not_a_dependency() {
        let health = json!({"httpGet": {"path": "/health", "port": 8000}});
        let vllm = |image: &str, gpu: bool| {
            let mut c = json!({"name": "vllm", "image": image, "livenessProbe": health, "readinessProbe": health});
            if gpu {
                c["resources"] = json!({"limits": {"nvidia.com/gpu": "1"}});
            }
            c
        };
        let local = vec![None, Some(ProbeCheck::Local), Some(ProbeCheck::Local)];
        // A GPU request, or a model server's image, whichever shows it.
        assert_eq!(checks(vllm("nvcr.io/nvidia/vllm:26.02-py3", true)), local);
        assert_eq!(checks(vllm("vllm/vllm-openai:v0.6.3", false)), local);
        // The same handler on any other server: nothing says it reaches a dependency.
        assert_eq!(checks(vllm("registry.example.com/shop/orders:1.4.2", false)), local);
        let shared = vec![None, Some(ProbeCheck::Dependency), Some(ProbeCheck::Dependency)];
        // What the handler itself shows still counts on a model server.
        let mut aggregate = vllm("vllm/vllm-openai:v0.6.3", true);
        aggregate["livenessProbe"] = json!({"httpGet": {"path": "/actuator/health", "port": 8000}});
        aggregate["readinessProbe"] = aggregate["livenessProbe"].clone();
        assert_eq!(checks(aggregate), shared);
    }

    #[test]
    fn a_probe_names_the_port_the_kubelet_cannot_resolve() {
        let c: k8s_openapi::api::core::v1::Container = serde_json::from_value(json!({"name": "db",
            "ports": [{"name": "http", "containerPort": 8080}, {"containerPort": 5432}],
            "startupProbe": {"httpGet": {"path": "/", "port": "http"}},
            "livenessProbe": {"httpGet": {"path": "/", "port": 5432}},
            "readinessProbe": {"tcpSocket": {"port": "postgres"}}}))
        .expect("a container");
        assert_eq!(unresolved(&c, ProbeKind::Readiness).as_deref(), Some("tcpSocket port \"postgres\""));
        // A declared name, a number: resolved. No probe: nothing to say.
        assert_eq!(unresolved(&c, ProbeKind::Startup), None);
        assert_eq!(unresolved(&c, ProbeKind::Liveness), None);
        let bare: k8s_openapi::api::core::v1::Container =
            serde_json::from_value(json!({"name": "db"})).expect("a container");
        assert_eq!(unresolved(&bare, ProbeKind::Readiness), None);
    }

    #[test]
    fn parses_stated_checks_and_the_container_form_wins() {
        let p = ProbeChecks::parse("liveness=local, readiness=dependency,app/liveness=dependency").expect("valid");
        assert_eq!(p.get("web", ProbeKind::Liveness), Some(ProbeCheck::Local));
        assert_eq!(p.get("app", ProbeKind::Liveness), Some(ProbeCheck::Dependency));
        assert_eq!(p.get("app", ProbeKind::Readiness), Some(ProbeCheck::Dependency));
        assert_eq!(p.get("app", ProbeKind::Startup), None);
        for bad in ["liveness", "live=local", "liveness=remote", "/liveness=local"] {
            let e = ProbeChecks::parse(bad).expect_err(bad);
            assert!(e.to_string().starts_with(&format!("{bad:?}: ")), "{e}");
        }
    }
}
