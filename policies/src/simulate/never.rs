//! What the model knows makes a container's liveness blind, or keeps its
//! pod from ever joining the endpoints, whatever the scenario: a port the
//! kubelet cannot resolve, readiness gates stated never True, a postStart
//! hook that never ends. Verdict lines read these reasons.

use crate::model::ProbeKind;

use super::pod::ContainerModel;

/// Why liveness never restarts the container whatever the app does: a
/// port the kubelet cannot resolve, in the startup probe (liveness never
/// runs) or in liveness itself (it never fails).
pub(super) fn blind(model: &ContainerModel) -> Option<String> {
    if let Some(port) = model.unresolved(ProbeKind::Startup).filter(|_| model.probe(ProbeKind::Liveness).is_some()) {
        return Some(format!(
            "startup's {port} is not declared: the container never counts as started, so liveness never runs"
        ));
    }
    let port = model.unresolved(ProbeKind::Liveness)?;
    Some(format!("liveness's {port} is not declared: the kubelet discards each errored check, so it never fails"))
}

/// Why a pod that never joined the endpoints never will, when the model
/// knows: a startup or readiness probe the kubelet cannot send, its
/// readiness gates stated never to be True, or its postStart hook that
/// never ends.
pub(super) fn never_serves(model: &ContainerModel) -> Option<String> {
    let cannot = "is not declared, so the kubelet cannot send the check and discards each errored one";
    if let Some(port) = model.unresolved(ProbeKind::Startup) {
        return Some(format!(
            "startup's {port} {cannot}: the container never counts as started, and liveness and readiness never run"
        ));
    }
    if let Some(port) = model.unresolved(ProbeKind::Readiness) {
        return Some(format!("readiness's {port} {cannot}"));
    }
    let gates = &model.readiness_gates;
    if gates.never() {
        let word = if gates.conditions.len() == 1 { "gate is" } else { "gates are" };
        return Some(format!("its readiness {word} never True, as stated ({})", gates.conditions.join(", ")));
    }
    let forever = model.poststart.is_some_and(|h| h.ms().is_none());
    forever.then(|| "its postStart hook never ends, so the kubelet never sees the container running".to_owned())
}
