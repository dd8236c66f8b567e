//! The webhook's own probes, as the design sources prescribe: `/livez` is
//! cheap and local; `/readyz` says whether this replica should receive
//! admission traffic now (certificate and policy loaded, a fresh successful
//! self-test, not draining), with the reason in the body; `/startupz` turns
//! 200 once the replica has been ready once and stays so, for a startup
//! probe that must not flap during drain.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Probe state, updated by the loaders, the self-test and the drain.
pub struct Health {
    cert: Mutex<Result<(), String>>,
    policy: Mutex<Result<(), String>>,
    self_test: Mutex<Option<(Instant, Result<(), String>)>>,
    freshness: Duration,
    draining: AtomicBool,
    started: AtomicBool,
}

impl Health {
    /// Nothing loaded yet. `needs_cert` is false for `--insecure-http`.
    pub fn new(freshness: Duration, needs_cert: bool) -> Health {
        let cert = if needs_cert { Err("the serving certificate is not loaded yet".to_owned()) } else { Ok(()) };
        Health {
            cert: Mutex::new(cert),
            policy: Mutex::new(Err("the policy is not loaded yet".to_owned())),
            self_test: Mutex::new(None),
            freshness,
            draining: AtomicBool::new(false),
            started: AtomicBool::new(false),
        }
    }

    /// Records the certificate's first load (later failures keep the old
    /// pair serving, so only the first one counts here).
    pub fn cert_loaded(&self, result: Result<(), String>) {
        set(&self.cert, result);
    }

    /// Records the policy's first load.
    pub fn policy_loaded(&self, result: Result<(), String>) {
        set(&self.policy, result);
    }

    /// Records a self-test result.
    pub fn self_tested(&self, result: Result<(), String>) {
        if let Ok(mut slot) = self.self_test.lock() {
            *slot = Some((Instant::now(), result));
        }
    }

    /// Starts the drain: `/readyz` fails from now on.
    pub fn start_draining(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    /// Whether the drain has started.
    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// `Ok` when this replica should receive admission traffic, else why not.
    pub fn readiness(&self) -> Result<(), String> {
        if self.is_draining() {
            return Err("draining: shutting down".to_owned());
        }
        self.loaded()?;
        self.started.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// `Ok` once the replica has been ready once.
    pub fn startup(&self) -> Result<(), String> {
        if self.started.load(Ordering::SeqCst) {
            return Ok(());
        }
        self.loaded().inspect(|()| self.started.store(true, Ordering::SeqCst))
    }

    fn loaded(&self) -> Result<(), String> {
        get(&self.cert)?;
        get(&self.policy)?;
        let last = self.self_test.lock().map(|s| s.clone()).unwrap_or(None);
        match last {
            None => Err("the self-test has not run yet".to_owned()),
            Some((_, Err(why))) => Err(format!("the last self-test failed: {why}")),
            Some((at, Ok(()))) if at.elapsed() > self.freshness => Err(format!(
                "the last self-test is {:.0}s old (limit {}s)",
                at.elapsed().as_secs_f64(),
                self.freshness.as_secs()
            )),
            Some(_) => Ok(()),
        }
    }
}

fn set(slot: &Mutex<Result<(), String>>, value: Result<(), String>) {
    if let Ok(mut s) = slot.lock() {
        *s = value;
    }
}

fn get(slot: &Mutex<Result<(), String>>) -> Result<(), String> {
    slot.lock().map_or_else(|_| Err("health state poisoned".to_owned()), |s| s.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_needs_everything_and_drain_wins() {
        let h = Health::new(Duration::from_secs(15), true);
        assert!(h.readiness().is_err_and(|w| w.contains("certificate")));
        h.cert_loaded(Ok(()));
        assert!(h.readiness().is_err_and(|w| w.contains("policy")));
        h.policy_loaded(Ok(()));
        assert!(h.readiness().is_err_and(|w| w.contains("self-test")));
        assert!(h.startup().is_err());
        h.self_tested(Err("boom".into()));
        assert!(h.readiness().is_err_and(|w| w.contains("boom")));
        h.self_tested(Ok(()));
        assert_eq!(h.readiness(), Ok(()));
        h.start_draining();
        assert!(h.readiness().is_err_and(|w| w.starts_with("draining")));
        assert_eq!(h.startup(), Ok(()), "startup stays green during drain");
    }

    #[test]
    fn a_stale_self_test_is_not_ready() {
        let h = Health::new(Duration::ZERO, false);
        h.policy_loaded(Ok(()));
        h.self_tested(Ok(()));
        std::thread::sleep(Duration::from_millis(5));
        assert!(h.readiness().is_err_and(|w| w.contains("old")));
    }
}
