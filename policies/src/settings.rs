//! Every threshold and list the rules use, with the defaults of the
//! `default` policy. A policy file overrides single values; the rules read
//! nothing else, so the linter and the webhook reach the same verdicts.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Rule parameters. Field names are the policy file's keys (camelCase).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Settings {
    /// Liveness `initialDelaySeconds` above this stands in for a startup probe
    /// (`startup-probe-missing`); 30 s itself is the tutorial default, not a
    /// sign of a slow boot.
    pub slow_boot_initial_delay_seconds: i64,
    /// Margin over a declared cold start that a startup probe must cover, in percent.
    pub cold_start_margin_percent: i64,
    /// `periodSeconds` of startup probes that fixes add.
    pub startup_period_seconds: i64,
    /// Boot budget a startup probe added by a fix covers, at the least, for a
    /// GPU container or a known slow-boot image (a larger declared cold start
    /// raises it).
    pub gpu_boot_seconds: i64,
    /// Liveness `failureThreshold x periodSeconds` below this is too aggressive.
    pub min_liveness_budget_seconds: i64,
    /// `timeoutSeconds` a liveness fix raises a 1 s timeout to.
    pub min_liveness_timeout_seconds: i64,
    /// `failureThreshold` a liveness fix raises a lower one to.
    pub min_liveness_failure_threshold: i64,
    /// Time a preStop sleep must leave to the process, at the least.
    pub prestop_min_remaining_seconds: i64,
    /// Sleep a preStop bridge gets when a fix adds one (`prestop-bridge-missing`;
    /// less than a day).
    pub prestop_bridge_seconds: i64,
    /// Whether `prestop-bridge-missing` reports containers a Service sends
    /// traffic to that have no preStop hook, and its fix adds a short sleep
    /// bridge (off by default; on in `gpu-serving`).
    pub add_prestop_bridge: bool,
    /// Whether a container that requests a GPU must have a startup probe even
    /// without a liveness probe (`startup-probe-missing`).
    pub require_startup_probe_for_gpu: bool,
    /// Drain time assumed for a model server (a GPU request or a slow-boot
    /// image) that declares none: the longest request it admits, in seconds
    /// (`grace-period-too-short`). 0 assumes nothing.
    pub model_server_drain_seconds: i64,
    /// Kubernetes version fixes target (the native `sleep` action needs 1.30).
    pub kubernetes_version: String,
    /// Env var name globs whose value is the drain time (seconds or a Go duration).
    pub drain_env_patterns: Vec<String>,
    /// Env var name globs whose value is the shutdown budget.
    pub shutdown_env_patterns: Vec<String>,
    /// Executables that talk to a database, cache or queue.
    pub dependency_clients: Vec<String>,
    /// Network tools that are dependency checks when aimed at another host.
    pub network_tools: Vec<String>,
    /// Regexes of HTTP paths that aggregate dependency checks (a framework's
    /// overall health, a model server's readiness) or name a dependency; a
    /// liveness probe on one is an error (`liveness-checks-dependency`).
    pub dependency_paths: Vec<String>,
    /// Regexes of images known to boot slowly (model servers). A pattern
    /// without `/` matches the repository name (`vllm-openai` of
    /// `vllm/vllm-openai:v0.6.3`), one with `/` the repository path without
    /// registry host and tag (`tensorflow/serving`).
    pub slow_boot_images: Vec<String>,
    /// Regexes of images of databases that may check themselves.
    pub database_images: Vec<String>,
    /// Whether info-tier findings are fixed too (`lifeguard fix`, `/mutate`).
    /// Off by default: an info finding is not wrong, and rewriting a working
    /// spec (an `exec` sleep into the native action) is not a minimal change.
    /// On in `gpu-serving`, whose `addPrestopBridge` bridges are info fixes.
    pub fix_info_findings: bool,
    /// Regexes of HTTP paths known only by their name to be readiness
    /// endpoints (`/ready`, `/readyz`); a liveness probe on one is a warning
    /// (`liveness-checks-dependency`). Paths that really aggregate
    /// dependencies belong in `dependencyPaths`.
    pub readiness_paths: Vec<String>,
    /// Regexes of HTTP paths that report the process itself, named for
    /// liveness (Kubernetes' own `/livez`; Spring Boot's
    /// `/actuator/health/liveness`, whose group holds only the
    /// `livenessState` indicator unless configured otherwise): a handler
    /// liveness and readiness share on one is local (`probe-endpoint-reused`
    /// notes it as info; `simulate` does not stall it).
    pub local_health_paths: Vec<String>,
    /// Images whose health handler reports the process itself, matched as
    /// `slowBootImages` are (a pattern without `/` on the repository's last
    /// component, one with `/` on its path): node_exporter answers `/` with
    /// its landing page (`node_exporter.go`, `web.NewLandingPage`); the
    /// OpenTelemetry Collector's `health_check` extension reports the
    /// collector's own status. Add the images whose shared health endpoint
    /// checks nothing else; `lifeguard.dev/probe-checks` says it per workload.
    pub local_health_images: Vec<String>,
    /// Readiness `failureThreshold x periodSeconds` above this keeps a broken
    /// replica in its Services too long (`probe-window-too-long`); 0 turns
    /// the check off.
    pub max_readiness_window_seconds: i64,
    /// Liveness `failureThreshold x periodSeconds` above this leaves a wedged
    /// process running too long (`probe-window-too-long`); 0 turns the check off.
    pub max_liveness_window_seconds: i64,
    /// `rollout-capacity-too-low`: the share of `spec.replicas` a rollout of a
    /// slow-booting Deployment or StatefulSet must keep available, in
    /// percent; 0 (the default) turns the check off.
    pub min_rollout_capacity_percent: i64,
    /// `lifeguard export alerts`: a pod live but unready for longer than its
    /// workload's startup window fires no earlier than this either, so a
    /// workload that boots at once is not paged for a readiness blip (the
    /// recovery objective). Seconds, at least 1.
    pub alert_recovery_seconds: i64,
    /// `lifeguard export alerts`: the `severity` label of every alert.
    pub alert_severity: String,
    /// `lifeguard export alerts`: labels added to every alert, for
    /// Alertmanager's routing (a team, a channel). Prometheus label names.
    pub alert_labels: BTreeMap<String, String>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            slow_boot_initial_delay_seconds: 30,
            cold_start_margin_percent: 10,
            startup_period_seconds: 10,
            gpu_boot_seconds: 600,
            min_liveness_budget_seconds: 10,
            min_liveness_timeout_seconds: 5,
            min_liveness_failure_threshold: 3,
            prestop_min_remaining_seconds: 5,
            prestop_bridge_seconds: 5,
            add_prestop_bridge: false,
            require_startup_probe_for_gpu: false,
            model_server_drain_seconds: 0,
            kubernetes_version: "1.30".to_owned(),
            drain_env_patterns: strings(&["*DRAIN_SECONDS", "*DRAIN_TIMEOUT_SECONDS", "*DRAIN_DELAY_SECONDS"]),
            shutdown_env_patterns: strings(&[
                "*SHUTDOWN_TIMEOUT_SECONDS",
                "*SHUTDOWN_BUDGET_SECONDS",
                "*SHUTDOWN_GRACE_SECONDS",
                "*GRACEFUL_SHUTDOWN_SECONDS",
                "*GRACEFUL_SHUTDOWN_TIMEOUT_SECONDS",
            ]),
            dependency_clients: strings(&[
                "pg_isready",
                "psql",
                "redis-cli",
                "valkey-cli",
                "keydb-cli",
                "mysqladmin",
                "mysql",
                "mariadb-admin",
                "mariadb",
                "mongosh",
                "mongo",
                "cqlsh",
                "rabbitmqctl",
                "rabbitmq-diagnostics",
                "kafka-topics",
                "kafka-topics.sh",
                "kafka-broker-api-versions",
                "kafka-broker-api-versions.sh",
                "etcdctl",
                "consul",
                "nats",
                "memcached-tool",
                "sqlcmd",
                "clickhouse-client",
                "cockroach",
            ]),
            network_tools: strings(&[
                "curl",
                "wget",
                "nc",
                "ncat",
                "netcat",
                "grpc_health_probe",
                "grpcurl",
                "telnet",
                "nslookup",
                "dig",
                "ping",
                "http",
                "https",
            ]),
            dependency_paths: strings(&[
                r"^/actuator/health/?$",
                r"^/v2/health/ready/?$",
                r"^/v1/models/[^/]+/ready/?$",
                r"^/q/health(/ready)?/?$",
                r"^/v2/models/[^/]+(/versions/[^/]+)?/ready/?$",
                r"(?i)(^|/)(db|database|redis|postgres|postgresql|mysql|mongo|mongodb|kafka|rabbitmq|cache|deps|dependencies|upstream|downstream)(/|$)",
            ]),
            // Patterns without `/` match the repository name, with `/` the
            // repository path (see `Policy::is_slow_boot_image`).
            slow_boot_images: strings(&[
                r"triton",
                r"^vllm",
                r"text-generation-inference",
                r"^tgi",
                r"torchserve",
                r"tensorflow/serving$",
                r"tensorflow-serving",
                // KServe and Seldon runtimes, not their controllers or web apps.
                r"(^|/)kserve/[a-z-]*server$",
                r"(^|/)seldonio/[a-z-]*server$",
                r"^ollama",
                r"llama\.cpp",
                r"sglang",
                r"lmdeploy",
                r"tensorrt-llm",
                r"(^|/)nim/",
                r"huggingface-text-generation",
                r"saxml",
                r"jetstream",
                r"mlserver",
                r"^ray-ml",
                r"^ray$",
                r"text-embeddings-inference",
                r"infinity-emb",
            ]),
            database_images: strings(&[
                r"postgres",
                r"postgis",
                r"pgvector",
                r"(^|/)redis",
                r"valkey",
                r"keydb",
                r"mysql",
                r"mariadb",
                r"percona",
                r"mongo",
                r"cassandra",
                r"scylla",
                r"rabbitmq",
                r"memcached",
                r"etcd",
                r"cockroach",
                r"clickhouse",
                r"nats",
                r"kafka",
                r"elasticsearch",
                r"opensearch",
                r"mssql",
                r"consul",
            ]),
            fix_info_findings: false,
            readiness_paths: strings(&[
                r"^/readyz/?$",
                r"^/ready/?$",
                r"^/readiness/?$",
                r"^/health/ready/?$",
                r"^/health/readiness/?$",
                r"^/healthz/ready/?$",
                r"^/-/ready/?$",
                // Spring Boot's readiness group holds only the readiness state
                // unless configured to include more.
                r"^/actuator/health/readiness/?$",
            ]),
            local_health_paths: strings(&[
                r"^/livez/?$",
                r"^/live/?$",
                r"^/liveness/?$",
                r"^/health/live(ness)?/?$",
                r"^/healthz/live/?$",
                r"^/actuator/health/liveness/?$",
            ]),
            local_health_images: strings(&[r"^node-exporter$", r"^opentelemetry-collector", r"^otelcol"]),
            max_readiness_window_seconds: 300,
            max_liveness_window_seconds: 600,
            min_rollout_capacity_percent: 0,
            alert_recovery_seconds: 300,
            alert_severity: "warning".to_owned(),
            alert_labels: BTreeMap::new(),
        }
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

impl Settings {
    /// `(major, minor)` of [`Settings::kubernetes_version`]; `(1, 0)` when unreadable.
    pub fn kubernetes_minor(&self) -> (u32, u32) {
        let v = self.kubernetes_version.trim_start_matches('v');
        let mut parts = v.split('.');
        let major = parts.next().and_then(|p| p.parse().ok()).unwrap_or(1);
        let minor = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        (major, minor)
    }
}
