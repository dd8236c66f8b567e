//! What a handler shared by liveness and readiness reaches: evidence, not a
//! guess. `probe-endpoint-reused` grades the reuse by it and `simulate`
//! stalls the handler only where it reaches the dependency, so both rest on
//! the same reading, which each names.

use crate::assumption::{About, Assumption, Source};
use crate::model::{ANNOTATION_PROBE_CHECKS, ProbeKind};
use crate::model::{ContainerView, Handler, Workload, dependencies, image_repository, is_model_server};
use crate::policy::Policy;

use super::checks::{ProbeCheck, ProbeChecks};

/// What a shared handler reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Only the process's own state: it fails when the process is wedged,
    /// not when a dependency stalls.
    Local,
    /// A dependency (a database, another service): it fails while that
    /// stalls, on every replica at once.
    Dependency,
    /// Nothing in the manifest, the policy or the known images says.
    Unknown,
}

/// A reach and the evidence for it, in words for a message
/// (`declared in lifeguard.dev/probe-checks`, `vLLM's /health reports its
/// own engine`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReachEvidence {
    /// What the handler reaches.
    pub reach: Reach,
    /// Why lifeguard says so; empty for [`Reach::Unknown`].
    pub evidence: String,
    /// Where the evidence comes from.
    pub source: Source,
}

impl Reach {
    /// `local`, `dependency` or `unknown`, as the outputs print it.
    pub fn word(self) -> &'static str {
        match self {
            Reach::Local => "local",
            Reach::Dependency => "dependency",
            Reach::Unknown => "unknown",
        }
    }
}

impl ReachEvidence {
    /// The reach as an assumption a finding or a verdict rests on.
    pub fn assumption(&self) -> Assumption {
        // The handler's own evidence is a relative clause (`which runs
        // psql`, `a readiness path`) made for a message about the handler.
        let from = match (self.evidence.is_empty(), self.source) {
            (true, _) => "nothing in the manifest, the policy or the known images says".to_owned(),
            (false, Source::Spec) => match self.evidence.strip_prefix("which ") {
                Some(clause) => format!("the handler {clause}"),
                None => format!("the handler is {}", self.evidence),
            },
            (false, Source::Annotation) => ANNOTATION_PROBE_CHECKS.to_owned(),
            (false, _) => self.evidence.clone(),
        };
        Assumption::new(About::Reach, self.reach.word(), self.source, from)
    }
}

/// What the handler liveness and readiness share reaches, from the first
/// evidence there is:
/// 1. stated: the pod template's `lifeguard.dev/probe-checks` annotation,
///    for either probe of the container (one handler: `dependency` for
///    either wins; `simulate`'s `--probe-checks` is read with the
///    annotation, in [`super::containers`]);
/// 2. the handler itself: what `liveness-checks-dependency` reads (a path
///    that aggregates dependencies such as `/actuator/health`, a readiness
///    path, a client aimed at another host);
/// 3. known handlers: a model server's health endpoint (a GPU request or a
///    `slowBootImages` image: vLLM's, TGI's and Triton's `/health` report
///    their own engine, and it serves from the weights it loaded), the
///    policy's `localHealthPaths` and `localHealthImages`;
/// 4. else unknown.
pub fn shared_reach(w: &Workload, c: ContainerView<'_>, handler: &Handler, policy: &Policy) -> ReachEvidence {
    let found = |reach, evidence: String| ReachEvidence { reach, evidence, source: Source::Annotation };
    let annotated = w.annotations.get(ANNOTATION_PROBE_CHECKS).and_then(|raw| ProbeChecks::parse(raw).ok());
    if let Some(checks) = &annotated {
        let said: Vec<ProbeCheck> =
            [ProbeKind::Liveness, ProbeKind::Readiness].into_iter().filter_map(|k| checks.get(c.name(), k)).collect();
        if said.contains(&ProbeCheck::Dependency) {
            return found(Reach::Dependency, format!("declared in {ANNOTATION_PROBE_CHECKS}"));
        }
        if said.contains(&ProbeCheck::Local) {
            return found(Reach::Local, format!("declared local in {ANNOTATION_PROBE_CHECKS}"));
        }
    }
    inferred_reach(c, handler, policy)
}

/// What the shared handler reaches by what it shows (steps 2 to 4 of
/// [`shared_reach`]), nothing stated.
pub fn inferred_reach(c: ContainerView<'_>, handler: &Handler, policy: &Policy) -> ReachEvidence {
    let found = |reach, evidence: String, source| ReachEvidence { reach, evidence, source };
    if let Some(d) = dependencies(c, policy).first() {
        return found(Reach::Dependency, d.note.clone(), Source::Spec);
    }
    if is_model_server(&c, policy) {
        return found(
            Reach::Local,
            "a model server's health endpoint reports its own engine".to_owned(),
            Source::KnownImage,
        );
    }
    if let Handler::Http { path, .. } = handler
        && policy.is_local_health_path(path)
    {
        return found(
            Reach::Local,
            format!("{path} reports the process itself (the policy's localHealthPaths)"),
            Source::Policy,
        );
    }
    if policy.is_local_health_image(c.image()) {
        let (_, name) = image_repository(c.image());
        return found(
            Reach::Local,
            format!("{name}'s health handler reports itself (the policy's localHealthImages)"),
            Source::Policy,
        );
    }
    found(Reach::Unknown, String::new(), Source::Default)
}
