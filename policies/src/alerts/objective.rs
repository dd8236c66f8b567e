//! How long a workload's pod may be running and not Ready before that is
//! lost capacity rather than a boot: the startup window the rules and fixes
//! use, over the pod as the kubelet starts it.

use crate::Policy;
use crate::model::{ContainerView, ProbeKind, ProbeTiming, Workload, assumed_boot, cold_start_required};

/// One container's part of the pod's startup window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerWindow {
    /// The container's name.
    pub container: String,
    /// Whether it is a native sidecar (it starts before the regular
    /// containers, one at a time).
    pub sidecar: bool,
    /// Seconds from its start until it is ready at the latest, by its spec.
    pub seconds: i64,
    /// Where the figure comes from, in the rules' words.
    pub because: String,
}

/// The pod's startup window: the native sidecars' windows one after
/// another (the kubelet starts each once the one before has started,
/// `computeInitContainerActions`), then the longest regular container's (they
/// start together).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartupWindow {
    /// Seconds.
    pub seconds: i64,
    /// The containers that make it up: every sidecar with a window, and the
    /// regular container with the longest.
    pub parts: Vec<ContainerWindow>,
}

/// A container's startup window, the longest of:
/// - its startup probe's `initialDelaySeconds + failureThreshold x
///   periodSeconds`, the boot the kubelet allows before it restarts it
///   (`startup-budget-too-short` holds this to the cold start);
/// - the boot lint, fix and simulate assume ([`assumed_boot`]) plus the
///   policy's `coldStartMarginPercent`, what `startup-probe-missing`'s fix
///   sizes a startup probe to;
/// - its readiness probe's `initialDelaySeconds`, before which it is not
///   ready whatever it does.
pub fn container_window(w: &Workload, c: &ContainerView<'_>, policy: &Policy) -> ContainerWindow {
    let mut best = (0, "no startup probe, no slow boot, no readiness delay".to_owned());
    let mut consider = |seconds: i64, because: String| {
        if seconds > best.0 {
            best = (seconds, because);
        }
    };
    if let Some(startup) = ProbeKind::Startup.of(c.container) {
        let t = ProbeTiming::of(startup);
        consider(
            t.boot_budget(),
            format!(
                "startup probe allows {}s (initialDelaySeconds {} + failureThreshold {} x periodSeconds {})",
                t.boot_budget(),
                t.initial_delay,
                t.failure,
                t.period
            ),
        );
    }
    let boot = assumed_boot(w, c, policy);
    if boot.seconds > 0 {
        let margin = policy.settings.cold_start_margin_percent;
        let required = cold_start_required(boot.seconds, margin);
        consider(required, format!("boot {}s ({}) + {margin}%", boot.seconds, boot.assumption.from));
    }
    if let Some(readiness) = ProbeKind::Readiness.of(c.container) {
        let delay = ProbeTiming::of(readiness).initial_delay;
        consider(delay, format!("readiness initialDelaySeconds {delay}"));
    }
    ContainerWindow { container: c.name().to_owned(), sidecar: c.sidecar, seconds: best.0, because: best.1 }
}

/// The pod's startup window.
pub fn startup_window(w: &Workload, policy: &Policy) -> StartupWindow {
    let windows: Vec<ContainerWindow> = w.containers().map(|c| container_window(w, &c, policy)).collect();
    let mut parts: Vec<ContainerWindow> = windows.iter().filter(|p| p.sidecar && p.seconds > 0).cloned().collect();
    let mut seconds: i64 = parts.iter().map(|p| p.seconds).fold(0, i64::saturating_add);
    // The first of the longest, so the figure names one container whatever the order.
    let longest = windows.iter().filter(|p| !p.sidecar).fold(None::<&ContainerWindow>, |best, p| match best {
        Some(b) if b.seconds >= p.seconds => Some(b),
        _ => Some(p),
    });
    if let Some(regular) = longest.filter(|p| p.seconds > 0) {
        seconds = seconds.saturating_add(regular.seconds);
        parts.push(regular.clone());
    }
    StartupWindow { seconds, parts }
}
