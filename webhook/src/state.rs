//! What every request and background task shares.

use std::sync::Arc;

use arc_swap::ArcSwapOption;
use policies::Policy;

use crate::config::Config;
use crate::health::Health;
use crate::metrics::Metrics;
use crate::review::ReviewOptions;
use crate::tls::Resolver;

/// The server's shared state.
pub struct State {
    /// The configuration it started with.
    pub config: Config,
    /// How requests are judged beyond the policy.
    pub options: ReviewOptions,
    /// The policy in force (`None` until the first successful load).
    pub policy: ArcSwapOption<Policy>,
    /// The serving certificate.
    pub resolver: Arc<Resolver>,
    /// Probe state.
    pub health: Health,
    /// Prometheus metrics.
    pub metrics: Metrics,
    /// Asks for a self-test now (a new policy must be tested before the
    /// next tick, or a late first policy would leave the replica unready).
    pub self_test_now: tokio::sync::Notify,
    /// Bounds the decisions of large bodies running at once on blocking
    /// threads. The engine cannot be stopped half way, so a review past its
    /// deadline is answered but keeps its permit until it ends: a flood of
    /// pathological objects queues here instead of taking every thread and
    /// the memory they hold.
    pub decisions: Arc<tokio::sync::Semaphore>,
}

/// Decisions at once: enough to keep every core busy while others wait on I/O.
pub fn decision_slots() -> usize {
    std::thread::available_parallelism().map_or(4, |n| n.get() * 4).max(4)
}

/// [`State`] behind an `Arc`, as handlers and tasks hold it.
pub type Shared = Arc<State>;

impl State {
    /// Fresh state: nothing loaded yet, not draining.
    pub fn new(config: Config) -> Shared {
        let options = ReviewOptions {
            ratchet: config.ratchet,
            include_controlled: config.include_controlled,
            on_error: config.on_error,
        };
        let health = Health::new(config.self_test_interval * 3, config.tls.is_some());
        Arc::new(State {
            config,
            options,
            policy: ArcSwapOption::empty(),
            resolver: Arc::new(Resolver::default()),
            health,
            metrics: Metrics::new(),
            self_test_now: tokio::sync::Notify::new(),
            decisions: Arc::new(tokio::sync::Semaphore::new(decision_slots())),
        })
    }

    /// Stores a policy (startup, reload, or a test).
    pub fn set_policy(&self, policy: Policy) {
        self.policy.store(Some(Arc::new(policy)));
        self.health.policy_loaded(Ok(()));
        self.self_test_now.notify_one();
    }
}
