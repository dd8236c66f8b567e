//! The README's example policy is a valid policy that does what its
//! comments say.

use policies::policy::AdmissionMode;
use policies::{Policy, Severity};

fn example() -> String {
    lifeguard_e2e::documented_policy_example()
}

#[test]
fn readme_example_policy_loads() {
    let policy = Policy::load(&example(), "README.md").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(policy.name(), Some("inference-platform"));
    assert_eq!(policy.settings.gpu_boot_seconds, 1200);
    assert!(policy.settings.require_startup_probe_for_gpu, "inherited from gpu-serving");
    assert!(!policy.is_enabled("exec-probe"));
    assert_eq!(policy.severity_override("liveness-too-aggressive"), Some(Severity::Error));
    assert_eq!(policy.custom_rule_names().collect::<Vec<_>>(), ["memory-limit-missing"]);
    assert_eq!(policy.to_file().exemptions.len(), 3);
    assert_eq!(policy.mode, AdmissionMode::Enforce);
}
