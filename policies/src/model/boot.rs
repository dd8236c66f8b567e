//! The boot lint, fix and simulate assume for a container: one reading,
//! with its source, so a startup probe's finding, its fix's size and the
//! boot scenario rest on the same number.

use super::annotations::ANNOTATION_COLD_START;
use super::image::image_repository;
use super::knowledge::Knowledge;
use super::model_server::{is_model_server, serves_model_image};
use super::workload::{ContainerView, Workload};
use crate::assumption::{About, Assumption, Source};

/// The boot assumed for a container, in seconds, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Boot {
    /// Seconds from the container's start until the app answers.
    pub seconds: i64,
    /// Whether the pod template declares it (`lifeguard.dev/cold-start-seconds`).
    pub declared: bool,
    /// The value and its source, for the outputs.
    pub assumption: Assumption,
}

/// The boot, first found wins:
/// 1. the pod template's `lifeguard.dev/cold-start-seconds` (not for a
///    sidecar init container: the declared cold start is the application's);
/// 2. the policy's `gpuBootSeconds` for a model server (a GPU request or a
///    `slowBootImages` image);
/// 3. else 0: nothing says the boot is slow.
///
/// An annotation that cannot be read counts as none (the rules that read
/// it report it).
pub fn assumed_boot(w: &Workload, c: &ContainerView<'_>, policy: &dyn Knowledge) -> Boot {
    if !c.sidecar
        && let Some(Ok(seconds)) = w.annotation_seconds(ANNOTATION_COLD_START)
    {
        let assumption = Assumption::new(About::Boot, format!("{seconds}s"), Source::Annotation, ANNOTATION_COLD_START);
        return Boot { seconds, declared: true, assumption };
    }
    if is_model_server(c, policy) {
        let seconds = policy.settings().gpu_boot_seconds;
        let why = match c.gpu_resource() {
            Some(gpu) => format!("gpuBootSeconds for a model server, requests {gpu}"),
            None if serves_model_image(c, policy) => {
                format!("gpuBootSeconds for a model server, image {}", image_repository(c.image()).1)
            }
            None => "gpuBootSeconds for a model server".to_owned(),
        };
        let assumption = Assumption::new(About::Boot, format!("{seconds}s"), Source::Policy, why);
        return Boot { seconds, declared: false, assumption };
    }
    let assumption =
        Assumption::new(About::Boot, "0s", Source::Default, "no cold start declared, no GPU, no model-server image");
    Boot { seconds: 0, declared: false, assumption }
}
