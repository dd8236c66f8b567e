//! The pod's startup window: how long its own spec gives it to become
//! Ready, over the pod as the kubelet starts it. `progress-deadline-too-short`
//! holds a Deployment's progress deadline to it and `export alerts` waits it
//! out before it calls a pod running and not Ready lost capacity, from the
//! figures the startup rules and fixes use.

use super::boot::assumed_boot;
use super::budget::cold_start_required;
use super::knowledge::Knowledge;
use super::probe::{ProbeKind, ProbeTiming};
use super::workload::{ContainerView, Workload};

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
    /// Whether the figure is only the policy's `gpuBootSeconds` for a model
    /// server (nothing in the manifest says the boot is that long).
    pub assumed: bool,
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

/// A container's startup window:
/// - with a startup probe, its `initialDelaySeconds + failureThreshold x
///   periodSeconds`: the kubelet restarts a boot that takes longer, so no
///   boot beyond it ends Ready (`startup-budget-too-short` holds it to the
///   cold start);
/// - else the boot lint, fix and simulate assume ([`assumed_boot`]) plus the
///   policy's `coldStartMarginPercent`, what `startup-probe-missing`'s fix
///   sizes a startup probe to;
/// - and no shorter than its readiness probe's `initialDelaySeconds`, before
///   which it is not Ready whatever it does.
pub fn container_window(w: &Workload, c: &ContainerView<'_>, policy: &dyn Knowledge) -> ContainerWindow {
    let mut best = (0, "no startup probe, no slow boot, no readiness delay".to_owned(), false);
    let mut consider = |seconds: i64, because: String, assumed: bool| {
        if seconds > best.0 {
            best = (seconds, because, assumed);
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
            false,
        );
    } else {
        let boot = assumed_boot(w, c, policy);
        if boot.seconds > 0 {
            let margin = policy.settings().cold_start_margin_percent;
            let required = cold_start_required(boot.seconds, margin);
            consider(
                required,
                format!("boot {}s ({}) + {margin}%", boot.seconds, boot.assumption.from),
                !boot.declared,
            );
        }
    }
    if let Some(readiness) = ProbeKind::Readiness.of(c.container) {
        let delay = ProbeTiming::of(readiness).initial_delay;
        consider(delay, format!("readiness initialDelaySeconds {delay}"), false);
    }
    ContainerWindow {
        container: c.name().to_owned(),
        sidecar: c.sidecar,
        seconds: best.0,
        because: best.1,
        assumed: best.2,
    }
}

impl StartupWindow {
    /// Whether nothing in the manifest makes it this long: every part that
    /// adds to it is only the policy's `gpuBootSeconds`.
    pub fn only_assumed(&self) -> bool {
        !self.parts.is_empty() && self.parts.iter().all(|p| p.assumed)
    }

    /// Its seconds and what makes them up, in words.
    pub fn describe(&self) -> String {
        if self.parts.is_empty() {
            return format!("{}s (no container has a startup probe, a slow boot or a readiness delay)", self.seconds);
        }
        let parts: Vec<String> = self
            .parts
            .iter()
            .map(|p| {
                let which = if p.sidecar { "native sidecar" } else { "container" };
                format!("{which} {:?}: {}", p.container, p.because)
            })
            .collect();
        format!("{}s ({})", self.seconds, parts.join("; then "))
    }
}

/// The pod's startup window.
pub fn startup_window(w: &Workload, policy: &dyn Knowledge) -> StartupWindow {
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
