//! The readiness self-test: a representative review run through the same
//! decision code as real requests, every `--self-test-interval-seconds`,
//! never on the probe's own request (so `/readyz` stays cheap and a slow
//! engine cannot make the probe itself time out).

use std::time::Duration;

use policies::Policy;
use policies::policy::AdmissionMode;
use serde_json::json;

use crate::review::{Endpoint, Reply, ReviewOptions, review};
use crate::state::Shared;

/// The uid of the self-test review.
pub const SELF_TEST_UID: &str = "lifeguard-self-test";

/// A self-test slower than this fails: a real request would be late too.
const SELF_TEST_LIMIT: Duration = Duration::from_secs(1);

/// A Deployment like the ones users send, with findings and fixes, as an
/// UPDATE so ratcheting runs too.
pub fn body() -> Vec<u8> {
    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "self-test", "namespace": "lifeguard"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "self-test"}}, "template": {
            "metadata": {"labels": {"app": "self-test"}},
            "spec": {"terminationGracePeriodSeconds": 10, "containers": [{
                "name": "app", "image": "registry.example/app:1.0",
                "ports": [{"name": "http", "containerPort": 8080}],
                "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 5, "failureThreshold": 1},
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 5},
                "lifecycle": {"preStop": {"exec": {"command": ["sleep", "30"]}}}
            }]}
        }}
    });
    let review = json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": SELF_TEST_UID,
            "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
            "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
            "name": "self-test", "namespace": "lifeguard", "operation": "UPDATE",
            "userInfo": {"username": "lifeguard-self-test"},
            "object": deployment, "oldObject": deployment, "dryRun": true
        }
    });
    serde_json::to_vec(&review).unwrap_or_default()
}

/// Runs the self-test review through every endpoint: each must answer an
/// AdmissionReview for the self-test's uid.
pub fn check(body: &[u8], policy: &Policy, options: &ReviewOptions) -> Result<(), String> {
    let endpoints = AdmissionMode::ALL.map(|m| Endpoint::Validate(Some(m)));
    for endpoint in endpoints.into_iter().chain([Endpoint::Mutate]) {
        match review(body, endpoint, policy, options) {
            Reply::Review { review, .. } => {
                let uid = review.response.as_ref().map(|r| r.uid.as_str());
                if uid != Some(SELF_TEST_UID) {
                    return Err(format!("{} answered for uid {uid:?}", endpoint.name()));
                }
            }
            Reply::Invalid(e) => return Err(format!("{} refused the review: {}", endpoint.name(), e.message)),
        }
    }
    Ok(())
}

/// Runs one self-test off the async threads, bounded in time, and records it.
pub async fn run_once(state: &Shared, body: &std::sync::Arc<Vec<u8>>) {
    let Some(policy) = state.policy.load_full() else {
        return;
    };
    let (body, options) = (body.clone(), state.options);
    let task = tokio::task::spawn_blocking(move || check(&body, &policy, &options));
    let result = match tokio::time::timeout(SELF_TEST_LIMIT, task).await {
        Ok(Ok(result)) => result,
        Ok(Err(e)) => Err(format!("the review panicked: {e}")),
        Err(_) => Err(format!("no answer within {}s", SELF_TEST_LIMIT.as_secs())),
    };
    if let Err(why) = &result {
        tracing::error!(error = %why, "self-test failed; /readyz reports not ready");
    }
    state.metrics.self_test(result.is_ok());
    state.health.self_tested(result);
}

/// Every interval, forever (the task is dropped at exit).
pub async fn watch(state: Shared) {
    let body = std::sync::Arc::new(body());
    let mut tick = tokio::time::interval(state.config.self_test_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            () = state.self_test_now.notified() => {}
        }
        run_once(&state, &body).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_self_test_passes_under_every_pack() {
        for pack in policies::policy::PACKS {
            let policy = Policy::pack(pack.name).expect("pack");
            assert_eq!(check(&body(), &policy, &ReviewOptions::default()), Ok(()), "pack {}", pack.name);
        }
    }
}
