//! The workload model: a pod spec found in any pod-bearing object, with the
//! containers the kubelet probes and helpers to compare probe handlers.

mod annotations;
mod batch;
mod boot;
mod budget;
pub mod command;
mod dependency;
mod disruption_budget;
mod duration;
pub mod host;
mod image;
mod knowledge;
mod label_selector;
mod listener;
mod model_server;
mod owner;
mod pgrep;
mod pod_kinds;
mod pointer;
mod port_name;
mod poststart;
mod prestop;
mod probe;
mod proxy;
pub mod reach;
mod rollout;
mod service;
pub(crate) mod shell_args;
pub mod shell_flow;
pub mod shell_lex;
pub mod shell_loop;
mod startup_window;
mod typed;
mod unread;
mod window;
mod workload;

pub use pod_kinds::{
    CUSTOM_POD_KINDS, CustomPodKind, DeclaredPodKind, POD_KINDS, PodKind, TemplatePath, custom_pod_kind, group_of,
    names_custom_pod_kind, names_pod_kind, pod_kind, resources_by_group,
};
pub use unread::{UnreadTemplates, unread_templates};

pub use annotations::{
    ANNOTATION_COLD_START, ANNOTATION_DRAIN, ANNOTATION_IGNORE, ANNOTATION_IGNORE_REASON, ANNOTATION_MUTATED,
    ANNOTATION_POSTSTART, ANNOTATION_PRESTOP, ANNOTATION_PROBE_CHECKS, ANNOTATION_READINESS_GATES, ANNOTATION_SHUTDOWN,
    ANNOTATIONS, annotation_doc,
};
pub use batch::{Batch, BatchMark, CONTEXT_KINDS, is_context_object, objects_in};
pub use boot::{Boot, assumed_boot};
pub use budget::{ceil_div, cold_start_required};
pub use dependency::{Dependency, dependencies};
pub use disruption_budget::{AUTOSCALER_KIND, Amount, AutoscalerView, DISRUPTION_BUDGET_KIND, DisruptionBudgetView};
pub use duration::parse_seconds;
pub use image::image_repository;
pub use knowledge::Knowledge;
pub use label_selector::LabelOperator;
pub use listener::undeclared_port_listeners;
pub use model_server::{is_model_server, serves_model_image};
pub use owner::controller_of;
pub use pgrep::{COMM_MAX, NameTooLong, pgrep_name_too_long};
pub use pointer::{escape_token, join};
pub use port_name::is_valid_port_name;
pub use poststart::{PostStartFailure, poststart_failure, poststart_handler, poststart_sleep};
pub use prestop::{
    FOREVER_SECONDS, PreStopSleep, ShutdownNeed, SleepSeconds, Term, assumed_stop, exec_sleep_beside_native,
    prestop_handler, prestop_sleep, required_grace, shutdown_needs,
};
pub use probe::{
    Handler, Port, ProbeKind, ProbeTiming, ProcessCheck, handler_count, handler_of, process_existence, request_path,
    resolve_port, shared_liveness_readiness, unresolved_ports,
};
pub use proxy::{ISTIO_PROXY_CONFIG, LINKERD_WAIT_BEFORE_EXIT, ProxyKind, ProxyStop, proxy_kind, proxy_stop};
pub(crate) use rollout::scaled;
pub use rollout::{DEFAULT_PROGRESS_DEADLINE_SECONDS, PROGRESS_DEADLINE_POINTER, Rollout, Update};
pub use service::{
    Receiver, ServiceView, TargetPort, declared_targets, port_label, receivers, services_send, services_verb,
    takes_traffic_without_services, traffic_assumption,
};
pub use startup_window::{ContainerWindow, StartupWindow, container_window, startup_window};
pub use window::{too_long, window_limit, window_threshold};
pub use workload::{ContainerView, ObjectLabel, Workload, object_label, object_label_of};
