//! The workload model: a pod spec found in any pod-bearing object, with the
//! containers the kubelet probes and helpers to compare probe handlers.

mod duration;
mod pointer;
mod probe;
mod service;
mod workload;

pub use duration::parse_seconds;
pub use pointer::{escape_token, join};
pub use probe::{Handler, ProbeKind, ProbeTiming, handler_count, handler_of, resolve_port};
pub use service::ServiceView;
pub use workload::{
    ANNOTATION_COLD_START, ANNOTATION_DRAIN, ANNOTATION_SHUTDOWN, ContainerView, Workload,
};
